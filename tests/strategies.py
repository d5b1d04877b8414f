"""Random valid Soufflé programs with their input facts, to compare the engine with the
reference evaluator (tests/reference.py).

``generate(seed)`` draws one program deterministically from a seed (CI runs a fixed list of
seeds; ``tests.campaign`` runs many); ``programs()`` is the same generator as a hypothesis
strategy. What a program may contain:

- input relations ``e0..`` (arity 0 to 4) given as DataFrames (``.input``) or written as
  facts in the program; derived relations ``r0..`` in strata (groups) of one to three
  relations, recursive (linear, nonlinear, mutual) or not, with a few facts of their own;
- columns of type number, unsigned, float and symbol; up to four body atoms whose
  arguments are variables (repeated ones too), constants, wildcards or expressions;
- binding equalities (``s9 = substr(s0, x0, 2)``, ``x9 = strlen(s0)``, ``f9 = to_float(x0)``),
  comparisons of every type (symbols too), negated atoms with constants and expressions,
  aggregates (count, sum, min, max, mean) over lower strata, expressions in heads.

Every program is stratified (negation and aggregates only look at lower strata), grounded
(expressions only use variables that a positive atom or a binding equality binds) and
terminates: in a recursive rule every head value that is computed rather than copied is
filtered into a small range (``t >= -8, t < 8``, ``strlen(t) <= 4``) and float arithmetic
there only adds and subtracts, so every stratum's values are drawn from a finite set.
Integer division only by nonzero constants (Soufflé would crash), floats are multiples of
1/4 (every sum and mean is exact in any order), unsigned values never go below zero.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

from sparklog.syntax.nodes import (
    Aggregate, Atom, Attribute, BinOp, Call, Clause, Comparison, Constraint, Decl, Directive,
    Float, Literal, Negation, Number, Program, String, Term, UnaryOp, Var, Wildcard,
)

TYPES = ("number", "unsigned", "float", "symbol")
LETTER = {"number": "x", "unsigned": "u", "float": "f", "symbol": "s"}
NUMBERS = (-1, 0, 1, 2, 3, 4, 5)
FLOATS = (-1.5, -0.5, 0.0, 0.25, 1.0, 2.5, 3.0)
SYMBOLS = ("", "a", "b", "ab", "ba", "abc", "hello", "x y")
BOUND = 8
MAX_LEN = 4


@dataclass(frozen=True)
class Rel:
    """A relation being generated: its name, column types and level (0 for inputs)."""

    name: str
    types: tuple[str, ...]
    level: int


@dataclass
class Scope:
    """The variables of one rule: the bound ones by type, and those computed by an
    equality or an aggregate rather than copied from an atom."""

    bound: dict[str, list[str]] = field(default_factory=lambda: {t: [] for t in TYPES})
    computed: set[str] = field(default_factory=set)
    fresh: int = 0

    def add(self, name: str, kind: str, computed: bool = False) -> None:
        if name not in self.bound[kind]:
            self.bound[kind].append(name)
        if computed:
            self.computed.add(name)

    def new(self, kind: str, prefix: str = "") -> str:
        self.fresh += 1
        return f"{prefix}{LETTER[kind]}{self.fresh + 8}"


def _constant(rng: random.Random, kind: str) -> Term:
    """A small constant of a type."""
    if kind == "number":
        return Number(rng.choice(NUMBERS))
    if kind == "unsigned":
        return Number(rng.randint(0, 5), unsigned=True)
    if kind == "float":
        return Float(rng.choice(FLOATS))
    return String(rng.choice(SYMBOLS))


def _value(rng: random.Random, kind: str) -> object:
    """A small Python value of a type, for facts."""
    term = _constant(rng, kind)
    return term.value


class Gen:
    """Draws one program; every choice comes from ``rng``."""

    def __init__(self, rng: random.Random, prefix: str = "") -> None:
        self.rng, self.prefix = rng, prefix

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # -- expressions --------------------------------------------------------------------

    def var_of(self, scope: Scope, kind: str) -> Term | None:
        names = scope.bound[kind]
        return Var(self.rng.choice(names)) if names else None

    def expr(self, scope: Scope, kind: str, recursive: bool, depth: int = 0) -> Term:
        """An expression of type ``kind`` over bound variables (a constant if none fit)."""
        rng = self.rng
        leaf = lambda k: (self.var_of(scope, k) if self.chance(0.8) else None) or _constant(rng, k)  # noqa: E731
        if depth > 1:
            return leaf(kind)
        sub = lambda k: self.expr(scope, k, recursive, depth + 1) if self.chance(0.3) else leaf(k)  # noqa: E731
        if kind == "number":
            form = rng.choice(("+", "-", "*", "+", "-", "div", "mod", "pow", "bit", "shift",
                               "minmax", "neg", "strlen", "strlen", "logic"))
            if form in ("+", "-", "*"):
                return BinOp(form, sub("number"), sub("number"))
            if form == "div":
                return BinOp("/", sub("number"), Number(rng.choice((2, 3, -2))))
            if form == "mod":
                return BinOp("%", sub("number"), Number(rng.choice((2, 3, -2))))
            if form == "pow":
                return BinOp("^", leaf("number"), Number(rng.randint(0, 3)))
            if form == "bit":
                return BinOp(rng.choice(("band", "bor", "bxor")), sub("number"), sub("number"))
            if form == "shift":
                return BinOp(rng.choice(("bshl", "bshr", "bshru")), sub("number"),
                             Number(rng.randint(0, 2)))
            if form == "minmax":
                return Call(rng.choice(("min", "max")), (sub("number"), sub("number")))
            if form == "neg":
                return UnaryOp(rng.choice(("neg", "bnot", "lnot")), sub("number"))
            if form == "logic":
                return BinOp(rng.choice(("land", "lor", "lxor")), sub("number"), sub("number"))
            return Call("strlen", (sub("symbol"),))
        if kind == "unsigned":
            form = rng.choice(("+", "*", "band", "bor", "max", "min", "+"))
            if form in ("max", "min"):
                return Call(form, (sub("unsigned"), sub("unsigned")))
            return BinOp(form, sub("unsigned"), sub("unsigned"))
        if kind == "float":
            forms = ("+", "-", "+", "to_float", "minmax") + (() if recursive else ("*", "/"))
            form = rng.choice(forms)
            if form in ("+", "-"):
                return BinOp(form, sub("float"), Float(rng.choice((0.5, 1.0, 0.25))))
            if form == "*":
                return BinOp("*", sub("float"), Float(rng.choice((2.0, 0.5, 3.0))))
            if form == "/":
                return BinOp("/", sub("float"), Float(rng.choice((2.0, 4.0, 0.5))))
            if form == "minmax":
                return Call(rng.choice(("min", "max")), (sub("float"), sub("float")))
            return Call("to_float", (sub("number"),))
        form = rng.choice(("cat", "cat", "substr", "substr", "to_string"))
        if form == "cat":
            return Call("cat", tuple(sub("symbol") for _ in range(rng.choice((2, 2, 3)))))
        if form == "substr":
            index = leaf("number") if self.chance(0.6) else Number(rng.randint(0, 3))
            length = leaf("number") if self.chance(0.3) else Number(rng.randint(0, 3))
            return Call("substr", (sub("symbol"), index, length))
        return Call("to_string", (sub("number"),))

    def bounded(self, term: Term, kind: str) -> list[Literal]:
        """Filters that keep a computed head value of a recursive rule in a finite set."""
        if kind == "symbol":
            return [Comparison("<=", Call("strlen", (term,)), Number(MAX_LEN))]
        if kind == "unsigned":
            return [Comparison("<", term, Number(BOUND, unsigned=True))]
        low, high = (Float(-float(BOUND)), Float(float(BOUND))) if kind == "float" else \
            (Number(-BOUND), Number(BOUND))
        return [Comparison(">=", term, low), Comparison("<", term, high)]

    # -- literals -----------------------------------------------------------------------

    def atom(self, rel: Rel, scope: Scope, exprs: list) -> Atom:
        """A positive atom: variables (often shared), constants, wildcards, and slots for
        expressions filled once the rule's variables are known."""
        args: list[Term] = []
        for kind in rel.types:
            pick = self.rng.random()
            if pick < 0.72:
                pool = [f"{LETTER[kind]}{i}" for i in range(3 if kind != "number" else 4)]
                name = self.rng.choice(pool)
                scope.add(name, kind)
                args.append(Var(name))
            elif pick < 0.84:
                args.append(_constant(self.rng, kind))
            elif pick < 0.93:
                args.append(Wildcard())
            else:
                args.append(None)
                exprs.append(kind)
        return args  # type: ignore[return-value]

    def comparison(self, scope: Scope, recursive: bool) -> Comparison | None:
        kinds = [k for k in TYPES if scope.bound[k]]
        if not kinds:
            return None
        kind = self.rng.choice(kinds)
        left = self.var_of(scope, kind)
        right = (self.var_of(scope, kind) if self.chance(0.4) else
                 _constant(self.rng, kind) if self.chance(0.6) else
                 self.expr(scope, kind, recursive))
        ops = ("=", "!=", "<", "<=", ">", ">=")
        return Comparison(self.rng.choice(ops), left, right)

    def negation(self, lower: list[Rel], scope: Scope, recursive: bool) -> Negation:
        rel = self.rng.choice(lower)
        args = []
        for kind in rel.types:
            pick = self.rng.random()
            var = self.var_of(scope, kind)
            if var is not None and pick < 0.6:
                args.append(var)
            elif pick < 0.75:
                args.append(_constant(self.rng, kind))
            elif pick < 0.9:
                args.append(Wildcard())
            else:
                args.append(self.expr(scope, kind, recursive))
        return Negation(Atom(rel.name, tuple(args)))

    def aggregate(self, lower: list[Rel], scope: Scope) -> Comparison | None:
        """``v = f t : { r(...) }`` over a lower relation, grouped by bound variables."""
        rel = self.rng.choice(lower)
        numeric = [i for i, k in enumerate(rel.types) if k != "symbol"]
        func = self.rng.choice(("count", "sum", "min", "max", "mean") if numeric else ("count",))
        target_at = self.rng.choice(numeric) if func != "count" else None
        inner = Scope(fresh=scope.fresh + 20)
        args: list[Term] = []
        for i, kind in enumerate(rel.types):
            outer = self.var_of(scope, kind)
            if i == target_at:
                name = inner.new(kind, "a")
                inner.add(name, kind)
                args.append(Var(name))
            elif outer is not None and self.chance(0.5):
                args.append(outer)
            elif self.chance(0.4):
                args.append(_constant(self.rng, kind))
            elif self.chance(0.5):
                args.append(Wildcard())
            else:
                name = inner.new(kind, "a")
                inner.add(name, kind)
                args.append(Var(name))
        body: list[Literal] = [Atom(rel.name, tuple(args))]
        target = None
        if target_at is not None:
            kind = rel.types[target_at]
            target = args[target_at]
            if self.chance(0.3):
                body.append(Comparison(self.rng.choice(("<", ">=", "!=")), target,
                                       _constant(self.rng, kind)))
            if kind != "unsigned" and self.chance(0.2):
                target = BinOp("+", target, _constant(self.rng, kind))
        kind = ("number" if func == "count" else "float" if func == "mean"
                else rel.types[target_at])
        existing = self.var_of(scope, kind)
        if existing is not None and self.chance(0.2):
            result = existing  # compared with a variable another atom binds
        else:
            name = scope.new(kind)
            scope.add(name, kind, computed=True)
            result = Var(name)
        return Comparison("=", result, Aggregate(func, target, tuple(body)))

    def binding(self, scope: Scope, recursive: bool) -> Comparison:
        """``v = expression`` with a fresh variable ``v``."""
        kind = self.rng.choice(TYPES)
        term = self.expr(scope, kind, recursive)
        name = scope.new(kind)
        scope.add(name, kind, computed=True)
        return Comparison("=", Var(name), term) if self.chance(0.8) else \
            Comparison("=", term, Var(name))

    # -- rules --------------------------------------------------------------------------

    def rule(self, head: Rel, lower: list[Rel], same: list[Rel], recursive: bool) -> Clause:
        """One grounded rule for ``head``; a recursive one has 1 or 2 atoms of ``same``."""
        rng = self.rng
        picks = [rng.choice(same) for _ in range(rng.choice((1, 1, 1, 2)) if recursive else 0)]
        total = rng.choice((1, 2, 2, 3, 3, 4))
        while len(picks) < max(total, 1):
            picks.append(rng.choice(lower + (same if recursive and self.chance(0.2) else [])))
        rng.shuffle(picks)
        scope, slots, raw = Scope(), [], []
        for rel in picks:
            raw.append((rel, self.atom(rel, scope, slots)))
        body: list[Literal] = []
        for rel, args in raw:
            body.append(Atom(rel.name, tuple(
                self.expr(scope, kind, recursive) if a is None else a
                for a, kind in zip(args, rel.types, strict=True))))
        if self.chance(0.3):
            body.append(self.binding(scope, recursive))
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            literal = self.comparison(scope, recursive)
            if literal is not None:
                body.append(literal)
        if self.chance(0.1) and scope.bound["symbol"]:
            body.append(Constraint("contains", (self.expr(scope, "symbol", recursive),
                                                self.var_of(scope, "symbol")),
                                   negated=self.chance(0.3)))
        if self.chance(0.3):
            body.append(self.negation(lower, scope, recursive))
        if self.chance(0.2 if recursive else 0.3):
            literal = self.aggregate(lower, scope)
            if literal is not None:
                body.append(literal)
        args: list[Term] = []
        for kind in head.types:
            pick = rng.random()
            var = self.var_of(scope, kind)
            if var is not None and pick < 0.65:
                term = var
            elif pick < 0.8:
                term = _constant(rng, kind)
            else:
                term = self.expr(scope, kind, recursive)
            computed = not isinstance(term, (Var, Number, Float, String)) or (
                isinstance(term, Var) and term.name in scope.computed)
            if recursive and computed:
                body += self.bounded(term, kind)
            args.append(term)
        rng.shuffle(body)
        return Clause(Atom(head.name, tuple(args)), tuple(body))

    def fact(self, rel: Rel, expressions: bool = True) -> Clause:
        """A fact of ``rel``; sometimes with constant arithmetic (``r(1 + 2).``)."""
        args = []
        for kind in rel.types:
            if expressions and self.chance(0.15):
                args.append(self.expr(Scope(), kind, False))
            else:
                args.append(_constant(self.rng, kind))
        return Clause(Atom(rel.name, tuple(args)), ())

    # -- programs -----------------------------------------------------------------------

    def relation(self, name: str, level: int, max_arity: int = 4) -> Rel:
        arity = self.rng.choice(tuple(range(max_arity + 1)) + (1, 2, 2, 3)
                                if max_arity >= 3 else tuple(range(max_arity + 1)))
        types = tuple(self.rng.choice(("number", "number", "number", "symbol", "float",
                                       "unsigned")) for _ in range(arity))
        return Rel(f"{self.prefix}{name}", types, level)

    def program(self, max_inputs: int = 3, max_groups: int = 4
                ) -> tuple[Program, dict[str, set[tuple]]]:
        rng = self.rng
        inputs = [self.relation(f"e{i}", 0) for i in range(rng.randint(1, max_inputs))]
        if not any(r.types for r in inputs):
            inputs[0] = Rel(inputs[0].name, ("number", "number"), 0)
        facts: dict[str, set[tuple]] = {}
        clauses: list[Clause] = []
        directives: list[Directive] = []
        for rel in inputs:
            rows = {tuple(_value(rng, k) for k in rel.types) for _ in range(rng.randint(0, 8))}
            if rel.types and self.chance(0.75):
                facts[rel.name] = rows
                directives.append(Directive("input", rel.name))
            else:
                clauses += [Clause(Atom(rel.name, tuple(_term_of(v, k) for v, k in
                                                        zip(row, rel.types, strict=True))), ())
                            for row in sorted(rows, key=repr)]
        lower, derived, count = list(inputs), [], 0
        for _ in range(rng.randint(1, max_groups)):
            size = rng.choice((1, 1, 1, 2, 2, 3))
            group = [self.relation(f"r{count + i}", 1) for i in range(size)]
            count += size
            recursive = self.chance(0.6)
            for rel in group:
                clauses.append(self.rule(rel, lower, [], False))
                if self.chance(0.2):
                    clauses.append(self.fact(rel))
                for _ in range(rng.choice((0, 1, 1, 2)) if recursive else rng.choice((0, 0, 1))):
                    clauses.append(self.rule(rel, lower, group, recursive))
            lower += group
            derived += group
        directives += [Directive("output", r.name) for r in derived]
        program = Program(decls=tuple(_decl(r) for r in inputs + derived),
                          clauses=tuple(clauses), directives=tuple(directives))
        return program, facts


def _term_of(value: object, kind: str) -> Term:
    """The constant term of a Python value of a column type."""
    if kind == "symbol":
        return String(value)  # type: ignore[arg-type]
    if kind == "float":
        return Float(value)  # type: ignore[arg-type]
    return Number(value, unsigned=kind == "unsigned")  # type: ignore[arg-type]


def _decl(rel: Rel) -> Decl:
    """``.decl r(c0:number, c1:symbol, ...)``."""
    return Decl(rel.name, tuple(Attribute(f"c{i}", k) for i, k in enumerate(rel.types)))


def generate(seed: int, prefix: str = "", max_inputs: int = 3,
             max_groups: int = 4) -> tuple[Program, dict[str, set[tuple]]]:
    """The program (and the facts of its ``.input`` relations) of a seed; the same seed
    always gives the same program, whatever ``prefix`` its relation names get."""
    return Gen(random.Random(seed), prefix).program(max_inputs, max_groups)


def programs(max_inputs: int = 3, max_groups: int = 4
             ) -> st.SearchStrategy[tuple[Program, dict[str, set[tuple]]]]:
    """``generate`` as a hypothesis strategy (a seed is what hypothesis draws)."""
    return st.integers(0, 2**32 - 1).map(
        lambda seed: generate(seed, max_inputs=max_inputs, max_groups=max_groups))
