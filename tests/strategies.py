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
  aggregates (count, sum, min, max, mean) over lower strata, expressions in heads;
- from a second random stream (``Gen.extras``), so older seeds keep their programs:
  ``match`` constraints (POSIX classes, patterns from the data, an invalid pattern),
  ``range`` generators binding or testing a variable or inside a count/sum/min/max, and
  symbol concatenation with ``+``;
- from a third stream (``Gen.later``), ``range`` over ``float`` (steps that add exactly,
  and 0.1, which does not) and ``unsigned`` (downwards too), each value only compared;
- from a fifth (``Gen.growing``), recursions that make a value no earlier round made, up
  to a bound (``r(cat(s, "b"), x) :- r(s, x), strlen(s) < 6.``, counters), so that late
  rounds read new symbols by their ids (every round rolled over once lost them).

Every program is stratified (negation and aggregates only look at lower strata), grounded
(expressions only use variables that a positive atom or a binding equality binds) and
terminates: in a recursive rule every head value that is computed rather than copied is
filtered into a small range (``t >= -8, t < 8``, ``strlen(t) <= 4``) and float arithmetic
there only adds and subtracts, so every stratum's values are drawn from a finite set.
Integer division only by nonzero constants (Soufflé would crash), floats are multiples of
1/4 (every sum and mean is exact in any order), unsigned values never go below zero.

``generate_lattice(seed)`` and ``lattice_programs()`` draw programs with lattice relations
(``$MIN``/``$MAX`` head aggregates) instead: see "Lattice programs" below. They are a
separate generator, so ``generate`` draws the same program for a seed as it always did.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

from sparklog.semantics.checks import cyclic_aggregate_variables
from sparklog.syntax.nodes import (
    Aggregate, Atom, Attribute, BinOp, BoolLit, Call, Clause, Comparison, Constraint, Decl, Directive,
    Float, HeadAggregate, LatticeDecl, LatticeOp, Literal, Negation, Number, Program, String,
    Term, TypeDecl, UnaryOp, Var, Wildcard,
)

TYPES = ("number", "unsigned", "float", "symbol")
LETTER = {"number": "x", "unsigned": "u", "float": "f", "symbol": "s"}
NUMBERS = (-1, 0, 1, 2, 3, 4, 5)
FLOATS = (-1.5, -0.5, 0.0, 0.25, 1.0, 2.5, 3.0)
SYMBOLS = ("", "a", "b", "ab", "ba", "abc", "hello", "x y")
# match patterns (Soufflé's std::regex, whole-string): classes, POSIX classes, groups,
# and one that is not a regex at all (matches nothing, as Soufflé warns and goes on)
PATTERNS = ("a.*", ".*b", "[ab]*", "[[:alpha:]]+", "[[:alpha:] ]*", "(a|b)c?", "x y", "",
            "[[:digit:]]*", "h.l+o", "(", "[^a]*")
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
        # a second stream for the forms added later (match, range, symbol +): drawn from
        # the main stream's state without consuming it, so a seed still draws the program
        # it always drew, with those forms added to it
        self.extra = random.Random(hash(rng.getstate()[1]))
        # a third, for ranges over float and unsigned, so the first two draw as before
        self.later = random.Random(hash(rng.getstate()[1]) ^ 0x5EED)
        # aggregates of the rule being drawn whose result's name is also in their body,
        # with the same literal without it (see rule)
        self.renamed: list[tuple[Comparison, Comparison]] = []
        # a fourth, for the shapes of ``Gen.widen`` (aggregates as terms, witnesses,
        # conversions, rules without atoms, derived relations with input rows, ...)
        self.newest = random.Random(hash(rng.getstate()[1]) ^ 0xC0FFEE)
        # a fifth, for recursions that make a new value every round (Gen.growing)
        self.growth = random.Random(hash(rng.getstate()[1]) ^ 0x6A0)

    def place_rows(self, rel, rows: set[tuple], facts: dict[str, set[tuple]],
                   clauses: list[Clause], directives: list[Directive]) -> None:
        """An input's rows, as a facts file (mostly) or as facts in the program text."""
        if rel.types and self.chance(0.75):
            facts[rel.name] = rows
            directives.append(Directive("input", rel.name))
        else:
            clauses += [Clause(Atom(rel.name, tuple(_term_of(v, k) for v, k in
                                                    zip(row, rel.types, strict=True))), ())
                        for row in sorted(rows, key=repr)]

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
        new = self.newest
        if kind in ("number", "unsigned", "float") and new.random() < 0.12:
            return self.conversion(scope, kind, recursive, sub)
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
            parts = tuple(sub("symbol") for _ in range(rng.choice((2, 2, 3))))
            if len(parts) == 2 and self.extra.random() < 0.3:
                return BinOp("+", *parts)  # Soufflé's symbol concatenation
            return Call("cat", parts)
        if form == "substr":
            index = leaf("number") if self.chance(0.6) else Number(rng.randint(0, 3))
            length = leaf("number") if self.chance(0.3) else Number(rng.randint(0, 3))
            return Call("substr", (sub("symbol"), index, length))
        return Call("to_string", (sub("number"),))

    def conversion(self, scope: Scope, kind: str, recursive: bool, sub) -> Term:
        """Forms of the fourth stream: conversions between the numeric types and symbols
        (``to_number`` of a float, an unsigned or a printed number, ``to_unsigned``,
        ``to_float`` of an unsigned) and the unsigned operators that wrap or truncate."""
        new = self.newest
        if kind == "number":
            form = new.choice(("float", "unsigned", "string"))
            if form == "string":
                return Call("to_number", (Call("to_string", (sub("number"),)),))
            return Call("to_number", (sub(form),))
        if kind == "unsigned":
            form = new.choice(("to_unsigned", "-", "/", "%", "bxor", "bshr"))
            if form == "to_unsigned":
                return Call("to_unsigned", (sub(new.choice(("number", "float"))),))
            if form in ("/", "%"):
                return BinOp(form, sub("unsigned"), Number(new.choice((2, 3)), unsigned=True))
            if form == "bshr":
                return BinOp(form, sub("unsigned"), Number(new.randint(0, 2), unsigned=True))
            return BinOp(form, sub("unsigned"), sub("unsigned"))
        return Call("to_float", (sub("unsigned"),))

    def term_aggregate(self, lower: list[Rel], scope: Scope, kind: str
                       ) -> tuple[Aggregate, dict[str, list[str]]] | None:
        """An aggregate used as a term (in a head, inside arithmetic, in a comparison other
        than ``v = ..``, as an atom's argument) whose value has type ``kind``: count and
        sum/min/max of numbers, mean and sum/min/max of floats, sum/min/max of unsigned
        values; grouped by some of the rule's variables. Also the aggregate's own
        variables by type (fresh names)."""
        new = self.newest
        funcs = []
        for rel in lower:
            for i, k in enumerate(rel.types):
                if k == kind:
                    funcs += [(rel, f, i) for f in ("sum", "min", "max")]
                if kind == "float" and k != "symbol":
                    funcs.append((rel, "mean", i))
            if kind == "number":
                funcs.append((rel, "count", None))
        if not funcs:
            return None
        rel, func, target_at = new.choice(funcs)
        own: dict[str, list[str]] = {t: [] for t in TYPES}
        args: list[Term] = []
        for i, k in enumerate(rel.types):
            outer = scope.bound[k]
            pick = new.random()
            if i != target_at and outer and pick < 0.45:
                args.append(Var(new.choice(outer)))
            elif i != target_at and pick < 0.6:
                args.append(_constant(new, k))
            elif i != target_at and pick < 0.75:
                args.append(Wildcard())
            else:
                scope.fresh += 1
                name = f"h{LETTER[k]}{scope.fresh + 40}"
                own[k].append(name)
                args.append(Var(name))
        target: Term | None = None if target_at is None else args[target_at]
        return Aggregate(func, target, (Atom(rel.name, tuple(args)),)), own

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

    def atom(self, rel: Rel, scope: Scope, exprs: list, apart: str = "") -> Atom:
        """A positive atom: variables (often shared), constants, wildcards, and slots for
        expressions filled once the rule's variables are known; ``apart``: a suffix of
        its variables' names (so that it shares none with the other atoms)."""
        args: list[Term] = []
        for kind in rel.types:
            pick = self.rng.random()
            if pick < 0.72:
                pool = [f"{LETTER[kind]}{i}{apart}"
                        for i in range(3 if kind != "number" else 4)]
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
            if i == target_at and outer is not None and self.extra.random() < 0.15:
                args.append(outer)  # Soufflé: a target's variable is the aggregate's own
            elif i == target_at:
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
        if self.extra.random() < 0.15:
            body += self._nested_count(lower, scope, inner)
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
            # the result's name inside the body too (``y = min z + y : { a(_, z), b(y) }``):
            # only the aggregate's value binds the one outside, so the inner one is its own
            free = [i for i, a in enumerate(args) if i != target_at and rel.types[i] == kind
                    and isinstance(a, Wildcard)]
            if free and self.extra.random() < 0.2:
                plain = Comparison("=", result, Aggregate(func, target, tuple(body)))
                args[self.extra.choice(free)] = result
                body[0] = Atom(rel.name, tuple(args))
                literal = Comparison("=", result, Aggregate(func, target, tuple(body)))
                self.renamed.append((literal, plain))
                return literal
        return Comparison("=", result, Aggregate(func, target, tuple(body)))

    def _nested_count(self, lower: list[Rel], scope: Scope, inner: Scope) -> list[Literal]:
        """``t = count : { r(..) }, t >= k`` inside an aggregate's body, over the rule's
        variables and the aggregate's own: a rule variable only the nested count reads
        must still group the aggregate around it (a shape once answered wrongly)."""
        extra = self.extra
        rel = extra.choice(lower)
        args: list[Term] = []
        for kind in rel.types:
            pick, outer, own = extra.random(), scope.bound[kind], inner.bound[kind]
            args.append(Var(extra.choice(outer)) if outer and pick < 0.6
                        else Var(extra.choice(own)) if own and pick < 0.8
                        else _constant(extra, kind) if pick < 0.85 else Wildcard())
        count = inner.new("number", "t")
        return [Comparison("=", Var(count), Aggregate("count", None, (Atom(rel.name, tuple(args)),))),
                Comparison(extra.choice((">=", "<")), Var(count), Number(extra.randint(1, 2)))]

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
        """One grounded rule for ``head``; a recursive one has 1 or 2 atoms of ``same``.
        The fourth stream (``self.newest``) adds: five atoms, a recursive cross product
        (atoms that share no variable), aggregates as terms (an atom's argument, inside
        arithmetic, compared with ``<``..., in the head), min/max witnesses read by the
        head, and ``true``/``false``."""
        rng, new = self.rng, self.newest
        picks = [rng.choice(same) for _ in range(rng.choice((1, 1, 1, 2)) if recursive else 0)]
        total = rng.choice((1, 2, 2, 3, 3, 4))
        if new.random() < 0.06:
            total = 5
        while len(picks) < max(total, 1):
            picks.append(rng.choice(lower + (same if recursive and self.chance(0.2) else [])))
        rng.shuffle(picks)
        apart = recursive and len(picks) <= 3 and new.random() < 0.1
        scope, slots, raw = Scope(), [], []
        for i, rel in enumerate(picks):
            raw.append((rel, self.atom(rel, scope, slots, f"_{i}" if apart else "")))
        body: list[Literal] = []
        for rel, args in raw:
            filled = []
            for a, kind in zip(args, rel.types, strict=True):
                if a is None and kind != "symbol" and new.random() < 0.15:
                    found = self.term_aggregate(lower, scope, kind)
                    if found is not None:
                        filled.append(found[0])
                        continue
                filled.append(self.expr(scope, kind, recursive) if a is None else a)
            body.append(Atom(rel.name, tuple(filled)))
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
        witnesses: dict[str, list[str]] = {t: [] for t in TYPES}
        if self.chance(0.2 if recursive else 0.3):
            literal = self.aggregate(lower, scope)
            if literal is not None:
                body.append(literal)
                if new.random() < 0.8:
                    witnesses = self.witnesses_of(literal, lower, scope)
        if new.random() < 0.12:
            literal = self.aggregate_in_arithmetic(lower, scope)
            if literal is not None:
                body.append(literal)
        if new.random() < 0.05:
            body.append(BoolLit(new.random() < 0.8))
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
            if witnesses[kind] and new.random() < 0.8:
                term, computed = Var(new.choice(witnesses[kind])), False
            elif self.head_aggregates and kind != "symbol" and new.random() < 0.07:
                found = self.term_aggregate(lower, scope, kind)
                if found is not None:
                    term, computed = found[0], False  # a value of a lower stratum's group
                    if new.random() < 0.3:
                        term = BinOp("+", term, _constant(new, kind) if kind != "unsigned"
                                     else Number(1, unsigned=True))
            if recursive and computed:
                body += self.bounded(term, kind)
            args.append(term)
        rng.shuffle(body)
        for literal in self.extras(scope, lower):
            body.insert(self.extra.randint(0, len(body)), literal)
        return self.clause(head, args, body)

    def clause(self, head: Rel, args: list[Term], body: list[Literal]) -> Clause:
        """The drawn rule; an aggregate that has its result's name in its own body loses it
        if another literal also binds that name from what needs it (see aggregate)."""
        clause = Clause(Atom(head.name, tuple(args)), tuple(body))
        if self.renamed and cyclic_aggregate_variables(clause):
            # the name in the body is the aggregate's own only while nothing else binds
            # it; here something does, which needs it (Soufflé: an ungrounded variable)
            plain = {id(literal): original for literal, original in self.renamed}
            clause = Clause(clause.head, tuple(plain.get(id(lit), lit) for lit in body))
        self.renamed = []
        return clause

    head_aggregates = True  # LatticeGen: no (its heads get $MIN/$MAX)

    def witnesses_of(self, literal: Comparison, lower: list[Rel], scope: Scope
                     ) -> dict[str, list[str]]:
        """The variables of a min/max aggregate's atom that only it grounds (not its
        target, not the rule's): Soufflé's witnesses, which the head may read
        (``tallest(s, h) :- h = max x : { height(s, x) }``)."""
        found: dict[str, list[str]] = {t: [] for t in TYPES}
        agg = literal.right
        if not isinstance(agg, Aggregate) or agg.func not in ("min", "max"):
            return found
        atom = agg.body[0]
        rel = next((r for r in lower if r.name == atom.relation), None)
        if rel is None:
            return found
        for arg, kind in zip(atom.args, rel.types, strict=True):
            if isinstance(arg, Var) and arg != agg.target and \
                    arg.name not in scope.bound[kind] and arg.name not in found[kind]:
                found[kind].append(arg.name)
        return found

    def aggregate_in_arithmetic(self, lower: list[Rel], scope: Scope) -> Comparison | None:
        """An aggregate inside arithmetic or compared by an order: ``v = count : {..} + 1``
        with a fresh ``v``, ``x < count : {..}``, ``x * 2 >= sum y : {..}``."""
        new = self.newest
        kind = new.choice(("number", "number", "float", "unsigned"))
        found = self.term_aggregate(lower, scope, kind)
        if found is None:
            return None
        agg: Term = found[0]
        one = Number(1, unsigned=True) if kind == "unsigned" else _constant(new, kind)
        if new.random() < 0.5:
            agg = BinOp(new.choice(("+", "*")) if kind != "float" else "+", agg, one)
        var = self.var_of(scope, kind)
        if var is None or new.random() < 0.4:
            name = scope.new(kind)
            scope.add(name, kind, computed=True)
            return Comparison("=", Var(name), agg)
        return Comparison(new.choice(("<", "<=", ">", ">=", "!=", "=")), var, agg)

    def extras(self, scope: Scope, lower: list[Rel]) -> list[Literal]:
        """Forms drawn from the second stream: ``match`` constraints (POSIX classes,
        patterns from the data, an invalid pattern that matches nothing), ``range``
        generators (binding a fresh variable, testing a bound one, inside an aggregate),
        and aggregates over a join (``count : { a(x, y), b(y, z), !c(z) }``)."""
        extra, found = self.extra, []
        if extra.random() < 0.1:
            aggregate = self.join_aggregate(lower, scope)
            if aggregate is not None:
                found.append(aggregate)
        symbols, numbers = scope.bound["symbol"], scope.bound["number"]
        if symbols and extra.random() < 0.08:
            pattern = (Var(extra.choice(symbols)) if extra.random() < 0.25
                       else String(extra.choice(PATTERNS)))
            found.append(Constraint("match", (pattern, Var(extra.choice(symbols))),
                                    negated=extra.random() < 0.3))
        if extra.random() < 0.06:
            values = self.range_call(numbers)
            if numbers and extra.random() < 0.5:  # a test of a bound variable
                found.append(Comparison("=", Var(extra.choice(numbers)), values))
            else:  # a fresh variable bound to each value, then compared
                name = f"xr{len(found)}"
                found.append(Comparison("=", Var(name), values))
                other = Var(extra.choice(numbers)) if numbers else Number(extra.choice(NUMBERS))
                found.append(Comparison(extra.choice(("<", ">=", "!=")), Var(name), other))
        if numbers and extra.random() < 0.04:  # Soufflé's count/sum over a range
            inner = Var(f"xi{len(found)}")
            func = extra.choice(("count", "sum", "min", "max"))
            aggregate = Aggregate(func, None if func == "count" else inner,
                                  (Comparison("=", inner, self.range_call(numbers)),))
            found.append(Comparison(extra.choice(("=", "<=", ">")),
                                    Var(extra.choice(numbers)), aggregate))
        later = self.later
        for kind in ("float", "unsigned"):
            if later.random() < 0.02:  # each value compared, never stored (inexact floats)
                name = f"{LETTER[kind]}r{len(found)}"
                found.append(Comparison("=", Var(name), self.typed_range(kind, scope)))
                bound = scope.bound[kind]
                other = Var(later.choice(bound)) if bound else _constant(later, kind)
                found.append(Comparison(later.choice(("<", ">=", "!=", "=")), Var(name), other))
        return found

    def typed_range(self, kind: str, scope: Scope) -> Call:
        """``range(a, b[, step])`` over ``float`` (steps that add exactly and 0.1, which
        does not) or ``unsigned`` (upwards, downwards, a step of 0)."""
        later, bound = self.later, scope.bound[kind]
        start: Term = Var(later.choice(bound)) if bound and later.random() < 0.5 \
            else _constant(later, kind)
        if kind == "float":
            span = Float(later.choice((0.0, 0.5, 1.0, 2.25)))
            end: Term = BinOp(later.choice(("+", "-")), start, span)
            step = (Float(later.choice((0.25, 0.5, -0.5, 0.1, -0.1, 0.0))),)
        else:
            end = BinOp("+", start, Number(later.randint(0, 4), unsigned=True))
            if later.random() < 0.4:
                start, end = end, start  # downwards
            step = (Number(later.choice((1, 2, 0)), unsigned=True),)
        return Call("range", (start, end, *(step if later.random() < 0.6 else ())))

    def join_aggregate(self, lower: list[Rel], scope: Scope) -> Comparison | None:
        """``v = f t : { a(..), b(..)[, !c(..)] }``: two lower atoms that share an inner
        variable (sometimes an outer one too), a negation over the inner variables, and a
        fresh result ``v`` (number for count, else the target's type)."""
        extra = self.extra
        usable = [r for r in lower if r.types]
        if not usable:
            return None
        first, second = extra.choice(usable), extra.choice(usable)
        inner: dict[str, list[str]] = {t: [] for t in TYPES}
        fresh = iter(range(100))

        def args_of(rel: Rel, join: bool) -> tuple[Term, ...]:
            args: list[Term] = []
            for kind in rel.types:
                pick, outer = extra.random(), scope.bound[kind]
                if join and inner[kind] and pick < 0.5:
                    args.append(Var(extra.choice(inner[kind])))
                elif outer and pick < 0.65:
                    args.append(Var(extra.choice(outer)))
                elif pick < 0.75:
                    args.append(_constant(extra, kind))
                elif pick < 0.85:
                    args.append(Wildcard())
                else:
                    name = f"j{LETTER[kind]}{next(fresh)}"
                    inner[kind].append(name)
                    args.append(Var(name))
            return tuple(args)

        body: list[Literal] = [Atom(first.name, args_of(first, False)),
                               Atom(second.name, args_of(second, True))]
        bound = [(k, v) for k in TYPES for v in inner[k]]
        if bound and extra.random() < 0.4:
            third = extra.choice(usable)
            args = []
            for kind in third.types:
                names = inner[kind] + scope.bound[kind]
                args.append(Var(extra.choice(names)) if names and extra.random() < 0.7
                            else Wildcard() if extra.random() < 0.5 else _constant(extra, kind))
            body.append(Negation(Atom(third.name, tuple(args))))
        numeric = [(k, v) for k, v in bound if k != "symbol"]
        func = extra.choice(("count", "sum", "min", "max") if numeric else ("count",))
        target = None
        kind = "number"
        if func != "count":
            kind, name = extra.choice(numeric)
            target = Var(name)
        if scope.bound[kind] and extra.random() < 0.3:  # compared with a bound variable
            result = extra.choice(scope.bound[kind])
        else:
            result = scope.new(kind, "g")
            scope.add(result, kind, computed=True)
        return Comparison("=", Var(result), Aggregate(func, target, tuple(body)))

    def range_call(self, numbers: list[str]) -> Call:
        """``range(a, b[, step])`` over constants or a bound variable and a small span."""
        extra = self.extra
        if numbers and extra.random() < 0.6:
            start: Term = Var(extra.choice(numbers))
            end: Term = BinOp(extra.choice(("+", "-")), start, Number(extra.randint(0, 4)))
        else:
            start, end = Number(extra.choice(NUMBERS)), Number(extra.choice(NUMBERS))
        step = () if extra.random() < 0.6 else (Number(extra.choice((1, 2, -1, -2, 0))),)
        return Call("range", (start, end, *step))

    def fact(self, rel: Rel, expressions: bool = True) -> Clause:
        """A fact of ``rel``; sometimes with constant arithmetic (``r(1 + 2).``)."""
        args = []
        for kind in rel.types:
            if expressions and self.chance(0.15):
                args.append(self.expr(Scope(), kind, False))
            else:
                args.append(_constant(self.rng, kind))
        return Clause(Atom(rel.name, tuple(args)), ())

    def widened_clauses(self, rel: Rel, lower: list[Rel]) -> list[Clause]:
        """Clauses of the fourth stream for a relation: a rule without positive atoms
        (``r(1, z) :- z = 2 + 3, z > 1.``, ``r(..) :- true.``), a fact with an aggregate
        (``r(count : { e0(_, 1) }).``), a fact with symbols that need escapes."""
        new, out = self.newest, []
        if new.random() < 0.08:
            kinds = sorted(set(rel.types))
            body: list[Literal] = [BoolLit(True)]
            names: dict[str, str] = {}
            if kinds and new.random() < 0.7:
                kind = new.choice(kinds)
                names[kind] = f"z{LETTER[kind]}"
                body = [Comparison("=", Var(names[kind]), self.expr(Scope(), kind, False))]
                if new.random() < 0.5:
                    body.append(Comparison(new.choice(("<", ">=", "!=")), Var(names[kind]),
                                           _constant(new, kind)))
            args = tuple(Var(names[k]) if k in names and new.random() < 0.7
                         else _constant(new, k) for k in rel.types)
            if not any(isinstance(a, Var) for a in args) and names:
                body = [BoolLit(True)]
            out.append(Clause(Atom(rel.name, args), tuple(body)))
        numeric = [i for i, k in enumerate(rel.types) if k != "symbol"]
        if numeric and new.random() < 0.06:
            at = new.choice(numeric)
            found = self.term_aggregate(lower, Scope(), rel.types[at])
            if found is not None:
                args = [_constant(new, k) for k in rel.types]
                args[at] = found[0]
                out.append(Clause(Atom(rel.name, tuple(args)), ()))
        if "symbol" in rel.types and new.random() < 0.06:
            out.append(Clause(Atom(rel.name, tuple(
                String(new.choice(('q"t', "b\\", "t\tab", "a\\\"", "\n"))) if k == "symbol"
                else _constant(new, k) for k in rel.types)), ()))
        return out

    def growing(self, rel: Rel, group: list[Rel]) -> list[Clause]:
        """Clauses of the fifth stream for a relation of a recursive group: a recursion
        that makes a value no round has seen before, round after round, up to a bound
        (``r(cat(s, "b"), x) :- r(s, x), strlen(s) < 6.``, ``r(x + 1) :- r(x), x < 7.``),
        sometimes with a rule that cuts the new strings down again (``substr``) or reads
        a number off them (``strlen``) into another relation of the group. So a round late
        in a recursion derives from values the rounds before it made: new symbols must
        reach the symbol table whatever the round runs as (one job, inner iterations of a
        roll-over, a rerun plan)."""
        g = self.growth
        symbols = [i for i, k in enumerate(rel.types) if k == "symbol"]
        # mostly strings, which make symbols; counters are what staged programs draw
        if not rel.types or g.random() >= (0.25 if symbols else 0.05):
            return []
        at = g.choice(symbols) if symbols else g.randrange(len(rel.types))
        kind = rel.types[at]
        body_args = [Var(f"g{i}") for i in range(len(rel.types))]
        v = body_args[at]
        if kind == "symbol":
            piece = String(g.choice(("a", "b", "ab", " ")))
            step = Call("cat", (v, piece) if g.random() < 0.6 else (piece, v))
            bound = Comparison("<", Call("strlen", (v,)), Number(MAX_LEN + 2))
        elif kind == "float":
            step = BinOp("+", v, Float(g.choice((0.25, 1.0))))
            bound = Comparison("<", v, Float(3.0))
        elif kind == "unsigned":
            step = BinOp("+", v, Number(1, unsigned=True))
            bound = Comparison("<", v, Number(BOUND - 1, unsigned=True))
        else:
            step = BinOp(g.choice(("+", "-")), v, Number(1))
            bound = Comparison("<" if step.op == "+" else ">", v,
                               Number(BOUND - 1 if step.op == "+" else -BOUND + 1))
        head = list(body_args)
        head[at] = step
        out = [Clause(Atom(rel.name, tuple(head)), (Atom(rel.name, tuple(body_args)), bound))]
        if kind == "symbol" and g.random() < 0.5:
            cut = list(body_args)
            cut[at] = Call("substr", (v, Number(g.choice((0, 1))), Number(2)))
            out.append(Clause(Atom(rel.name, tuple(cut)),
                              (Atom(rel.name, tuple(body_args)),
                               Comparison(">", Call("strlen", (v,)), Number(2)))))
        other = [r for r in group if r is not rel and "number" in r.types]
        if kind == "symbol" and other and g.random() < 0.5:
            target = g.choice(other)
            col = target.types.index("number")
            args = [_constant(g, k) for k in target.types]
            args[col] = Call("strlen", (v,))
            out.append(Clause(Atom(target.name, tuple(args)), (Atom(rel.name, tuple(body_args)),)))
        return out

    def equivalence(self, name: str, lower: list[Rel]) -> tuple[Rel, list[Clause]]:
        """``.decl r(a: T, b: T) eqrel`` as its rules (the parser expands it so):
        symmetric and transitive, with one or two random rules feeding it."""
        new = self.newest
        kind = new.choice(("number", "number", "symbol", "unsigned", "float"))
        rel = Rel(f"{self.prefix}{name}", (kind, kind), 1)
        clauses = [self.rule(rel, lower, [], False) for _ in range(new.choice((1, 2)))]
        if new.random() < 0.3:
            clauses.append(self.fact(rel, expressions=False))
        x, y, z = Var("x"), Var("y"), Var("z")
        clauses.append(Clause(Atom(rel.name, (y, x)), (Atom(rel.name, (x, y)),)))
        clauses.append(Clause(Atom(rel.name, (x, z)),
                              (Atom(rel.name, (x, y)), Atom(rel.name, (y, z)))))
        return rel, clauses

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
            self.place_rows(rel, rows, facts, clauses, directives)
        lower, derived, count = list(inputs), [], 0
        new = self.newest
        for _ in range(rng.randint(1, max_groups)):
            if new.random() < 0.12:  # an equivalence relation (what ``eqrel`` expands to)
                rel, more = self.equivalence(f"r{count}", lower)
                clauses += more
                count += 1
                lower.append(rel)
                derived.append(rel)
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
                clauses += self.widened_clauses(rel, lower)
                if recursive:
                    clauses += self.growing(rel, group)
                if rel.types and new.random() < 0.08:  # rules and input rows both
                    facts[rel.name] = {tuple(_value(new, k) for k in rel.types)
                                       for _ in range(new.randint(1, 4))}
                    directives.append(Directive("input", rel.name))
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


# ---------------------------------------------------------------------------------------
# Lattice programs: relations with a $MIN / $MAX head column (semantics/lattices.py)
#
# A separate generator, so that ``generate`` draws the same programs as before for every
# seed. Its programs read weighted edges, unweighted edges and nodes (values drawn from small
# non-negative domains) and a few inputs of random types, and build strata of three sorts:
#
# - recursive lattice strata of one to three lattice relations (mutual recursion), each with
#   one to three independent columns (one of them the node that moves along edges, the others
#   carried along, copied or set to constants) and its dependent column anywhere; seeds from
#   facts, from rules over the inputs (with or without the head aggregate) and from random
#   rules over lower strata; recursive rules that step along an edge (SSSP ``$MIN(d + w)``,
#   widest path ``$MAX(min(d, w))``, label propagation ``$MIN(d)``, ...), join two lattice
#   atoms (``$MIN(a + b)``, ``$MAX(min(a, b))``), or copy between the stratum's relations
#   (``to_float`` from a number lattice into a float one); sometimes a set relation in the
#   stratum that reads a lattice relation through wildcards and feeds it back; seed facts
#   of unsigned relations above 2^63 (the engine flips the sign bit to order them), and
#   seeds given as a DataFrame (a lattice relation that is also ``.input``);
# - non-recursive lattice strata (``best(x, $MIN(c)) :- cost(x, c).``) whose rules are the
#   random rules of ``Gen.rule`` with the dependent head argument wrapped, sometimes of a
#   relation with no independent column (one value for the whole relation);
# - later set strata that read lattice relations through negation and body aggregates.
#
# Every program converges: recursive rules only use the monotone operators the checker
# accepts, in forms that cannot improve a value forever along a cycle: under $MIN only
# non-negative addends (weights, constants), ``max``/``min`` with a weight, ``* w`` over
# unsigned values, ``/ 2`` over integers; under $MAX ``min``/``max`` with a weight, ``- w``
# (number and float) and ``/ 2``. The nonlinear ``$MIN(a + b)`` only appears in strata whose
# seeds are all non-negative. Float weights are multiples of 1/4, so every sum is exact.

NODES = {"number": (0, 1, 2, 3, 4, 5), "unsigned": (0, 1, 2, 3, 4, 5),
         "symbol": ("a", "b", "c", "ab", "")}
WEIGHTS = {"number": (0, 1, 1, 2, 3, 5), "unsigned": (0, 1, 1, 2, 3, 5),
           "float": (0.0, 0.25, 0.5, 1.0, 1.0, 2.5)}
DEPENDENT = ("number", "unsigned", "float")
HUGE = (1 << 63, (1 << 63) + 5, (1 << 64) - 1)  # unsigned, above every signed long


@dataclass(frozen=True)
class Lat:
    """A lattice relation being generated: its dependent column, lattice (``min`` or
    ``max``) and node column (the independent column that moves along edges; -1 for a
    relation without independent columns, which only non-recursive strata draw)."""

    rel: Rel
    column: int
    func: str
    node: int

    @property
    def kind(self) -> str:
        return self.rel.types[self.column]


@dataclass(frozen=True)
class Edge:
    """An input relation of edges: the columns of source, target and weight (or None)."""

    rel: Rel
    src: int
    dst: int
    weight: int | None


class LatticeGen(Gen):
    """Draws one program with lattice relations; every choice comes from ``rng``."""

    head_aggregates = False

    # -- inputs -------------------------------------------------------------------------

    def edge_relation(self, name: str, weight: str | None) -> Edge:
        """Edges over nodes, with a weight column of a kind and sometimes an extra column,
        in any column order."""
        cols = [("src", self.node), ("dst", self.node)]
        if weight is not None:
            cols.append(("w", weight))
        if self.chance(0.25):
            cols.append(("extra", self.rng.choice(TYPES)))
        self.rng.shuffle(cols)
        at = {role: i for i, (role, _) in enumerate(cols)}
        rel = Rel(f"{self.prefix}{name}", tuple(k for _, k in cols), 0)
        return Edge(rel, at["src"], at["dst"], at.get("w"))

    def edge_rows(self, edge: Edge) -> set[tuple]:
        rows = set()
        for _ in range(self.rng.randint(2, 10)):
            row = []
            for i, kind in enumerate(edge.rel.types):
                if i in (edge.src, edge.dst):
                    row.append(self.rng.choice(NODES[kind]))
                elif i == edge.weight:
                    row.append(self.rng.choice(WEIGHTS[kind]))
                else:
                    row.append(_value(self.rng, kind))
            rows.add(tuple(row))
        return rows

    # -- lattice relations --------------------------------------------------------------

    def lattice_relation(self, name: str, func: str | None = None,
                         kind: str | None = None) -> Lat:
        """One to three independent columns (one of them the node) and a dependent column
        of a numeric kind at any position."""
        rng = self.rng
        kind = kind or (self.weight if self.chance(0.6) else rng.choice(DEPENDENT))
        if self.chance(0.15) and self.node in DEPENDENT:
            kind = self.node  # label propagation: the values are node names
        independent = [self.node if self.chance(0.5) else rng.choice(TYPES)
                       for _ in range(rng.choice((0, 0, 1, 1, 2)))]
        node = rng.randint(0, len(independent))
        independent.insert(node, self.node)
        column = rng.randint(0, len(independent))
        types = independent[:column] + [kind] + independent[column:]
        func = func or rng.choice(("min", "min", "max"))
        return Lat(Rel(f"{self.prefix}{name}", tuple(types), 1), column, func,
                   node if node < column else node + 1)

    def nonneg_constant(self, kind: str) -> Term:
        return _term_of(self.rng.choice(WEIGHTS[kind]), kind)

    def wrap(self, clause: Clause, lat: Lat, p: float) -> Clause:
        """The clause with its dependent head argument as ``$MIN(..)``/``$MAX(..)``, with
        probability ``p`` (a rule without it is a seed combined by the same lattice)."""
        if not self.chance(p):
            return clause
        args = list(clause.head.args)
        args[lat.column] = HeadAggregate(lat.func, args[lat.column])
        return Clause(Atom(clause.head.relation, tuple(args)), clause.body)

    def head_args(self, lat: Lat, scope: Scope, value: Term, copy: dict[int, Term],
                  node: Term) -> tuple[Term, ...]:
        """A lattice head: ``node`` in its node column, ``value`` in its dependent column,
        the other independent columns copied (``copy``), other variables or constants."""
        args: list[Term] = []
        for i, kind in enumerate(lat.rel.types):
            if i == lat.column:
                args.append(value)
            elif i == lat.node:
                args.append(node)
            elif i in copy and self.chance(0.8):
                args.append(copy[i])
            else:
                var = self.var_of(scope, kind)
                args.append(var if var is not None and self.chance(0.7)
                            else _constant(self.rng, kind))
        return tuple(args)

    def filters(self, scope: Scope, lower: list[Rel], recursive: bool) -> list[Literal]:
        """Comparisons and negations over the independent variables of a rule."""
        out: list[Literal] = []
        if self.chance(0.25):
            literal = self.comparison(scope, recursive)
            if literal is not None:
                out.append(literal)
        if lower and self.chance(0.15):
            out.append(self.negation(lower, scope, recursive))
        return out

    # -- seeds --------------------------------------------------------------------------

    def seed_rows(self, lat: Lat, nonneg: bool, huge: bool = False) -> list[tuple]:
        """A few tuples of ``lat``, often several for one key; ``huge``: unsigned values
        may have the top bit set (only in the program text: a DataFrame holds longs)."""
        out = []
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            row = []
            for i, kind in enumerate(lat.rel.types):
                if i == lat.column and huge and kind == "unsigned" and self.chance(0.3):
                    row.append(self.rng.choice(HUGE))
                elif i == lat.column:
                    row.append(self.rng.choice(WEIGHTS[kind]) if nonneg or self.chance(0.5)
                               else _value(self.rng, kind))
                elif i == lat.node or (kind == self.node and self.chance(0.6)):
                    row.append(self.rng.choice(NODES[kind]))
                else:
                    row.append(_value(self.rng, kind))
            out.append(tuple(row))
        return out

    def seed_facts(self, lat: Lat, nonneg: bool) -> list[Clause]:
        """Facts of ``lat`` in the program text."""
        return [Clause(Atom(lat.rel.name, tuple(_term_of(v, k) for v, k in
                                                zip(row, lat.rel.types, strict=True))), ())
                for row in self.seed_rows(lat, nonneg, huge=not nonneg)]

    def seed_rule(self, lat: Lat, nonneg: bool, lower: list[Rel]) -> Clause:
        """``L(.., x, .., v) :- e(x, y, w).``: a seed from an input of edges or nodes."""
        rng = self.rng
        source = rng.choice(self.edges + ([self.nodes] if self.nodes else []))
        rel = source.rel if isinstance(source, Edge) else source
        scope, safe, args = Scope(), {k: [] for k in TYPES}, []
        for i, kind in enumerate(rel.types):
            pick = rng.random()
            if pick < 0.85:
                name = f"q{i}"
                scope.add(name, kind)
                # node and weight columns hold non-negative values, others anything
                if not isinstance(source, Edge) or i in (source.src, source.dst, source.weight):
                    safe[kind].append(name)
                args.append(Var(name))
            elif pick < 0.95:
                args.append(Wildcard())
            else:
                args.append(_constant(rng, kind))
        body: list[Literal] = [Atom(rel.name, tuple(args))]
        kind = lat.kind
        if safe[kind] and self.chance(0.6):
            value: Term = Var(rng.choice(safe[kind]))
        elif not nonneg and scope.bound[kind] and self.chance(0.5):
            value = self.expr(scope, kind, False)
        else:
            value = self.nonneg_constant(kind) if nonneg else _constant(rng, kind)
        node = self.var_of(scope, self.node) or _term_of(rng.choice(NODES[self.node]), self.node)
        body += self.filters(scope, lower, False)
        head = Atom(lat.rel.name, self.head_args(lat, scope, value, {}, node))
        return self.wrap(Clause(head, tuple(body)), lat, 0.5)

    # -- recursive rules ----------------------------------------------------------------

    def read(self, lat: Lat, scope: Scope, node: str, dep: str | None,
             share: bool, fixed: dict[int, str] | None = None) -> tuple[Atom, dict[int, Term]]:
        """``lat`` in the body of a recursive rule: ``node`` in its node column, its value
        into ``dep`` (``_`` if None), the other columns variables (shared with the rule's
        other atoms if ``share``), constants or wildcards."""
        args: list[Term] = []
        carried: dict[int, Term] = {}
        for i, kind in enumerate(lat.rel.types):
            if i == lat.column:
                args.append(Var(dep) if dep else Wildcard())
                continue
            if i == lat.node or i in (fixed or {}):
                name = node if i == lat.node else fixed[i]  # type: ignore[index]
                args.append(Var(name))
                scope.add(name, kind)
                continue
            pick = self.rng.random()
            if pick < 0.8:
                var = self.var_of(scope, kind) if share and self.chance(0.5) else None
                if var is None:
                    var = Var(scope.new(kind, "k"))
                    scope.add(var.name, kind)
                args.append(var)
                carried[i] = var
            elif pick < 0.92:
                args.append(_constant(self.rng, kind))
                carried[i] = args[-1]
            else:
                args.append(Wildcard())
        return Atom(lat.rel.name, tuple(args)), carried

    def step_atom(self, edge: Edge, scope: Scope, src: str, dst: str) -> Atom:
        args: list[Term] = []
        for i, kind in enumerate(edge.rel.types):
            if i == edge.src:
                args.append(Var(src))
            elif i == edge.dst:
                args.append(Var(dst))
                scope.add(dst, kind)
            elif i == edge.weight:
                args.append(Var("w"))
                scope.add("w", kind)
            elif self.chance(0.5):
                args.append(Wildcard())
            else:
                name = scope.new(kind, "o")
                scope.add(name, kind)
                args.append(Var(name))
        return Atom(edge.rel.name, tuple(args))

    def addends(self, kind: str, edge: Edge | None) -> list[Term]:
        """Non-negative terms of a kind: the edge's weight if it fits, small constants."""
        out = [self.nonneg_constant(kind)]
        if edge is not None and edge.weight is not None:
            w = edge.rel.types[edge.weight]
            if w == kind:
                out += [Var("w")] * 3
            elif w == "number" and kind == "float":
                out.append(Call("to_float", (Var("w"),)))
        return out

    def step_value(self, lat: Lat, d: Term | None, ts: list[Term]) -> Term:
        """A value monotone in ``d`` that no cycle improves forever (see the top)."""
        rng, kind = self.rng, lat.kind
        t = rng.choice(ts)
        if d is None:
            return t
        if lat.func == "min":
            forms = ["d", "+", "+", "t+", "max", "min", "++"]
            forms += ["*"] if kind == "unsigned" else []
            forms += ["/"] if kind != "float" else []
        else:
            forms = ["d", "min", "min", "max"]
            forms += ["-"] if kind != "unsigned" else []
            forms += ["/"] if kind != "float" else []
        form = rng.choice(forms)
        if form == "d":
            return d
        if form in ("+", "-", "*"):
            return BinOp(form, d, t)
        if form == "t+":
            return BinOp("+", t, d)
        if form == "++":
            return BinOp("+", BinOp("+", d, t), self.nonneg_constant(kind))
        if form == "/":
            return BinOp("/", d, _term_of(2, kind))
        return Call(form, (d, t) if self.chance(0.5) else (t, d))

    def readable(self, source: Lat, target: Lat) -> Term | None:
        """How ``target`` may use the value of ``source`` (None: not at all)."""
        if source.func != target.func:
            return None
        if source.kind == target.kind:
            return Var("d")
        if source.kind == "number" and target.kind == "float":
            return Call("to_float", (Var("d"),))
        return None

    def step_rule(self, lat: Lat, group: list[Lat], lower: list[Rel],
                  links: list[Rel]) -> Clause:
        """``L(.., z, .., f(d, w)) :- M(.., y, .., d), e(y, z, w).`` with M in the stratum
        (often L itself); without the edge the value is copied across the stratum."""
        rng = self.rng
        source = lat if self.chance(0.6) else rng.choice(group)
        scope = Scope()
        value_of = self.readable(source, lat)
        if value_of is not None and self.chance(0.1):
            value_of = None  # read through a wildcard
        atom, carried = self.read(source, scope, "y", "d" if value_of is not None else None,
                                  False)
        body: list[Literal] = [atom]
        edge, node = None, Var("y")
        if self.chance(0.85) or source is lat:
            edge = rng.choice(self.edges)
            body.append(self.step_atom(edge, scope, "y", "z"))
            node = Var("z")
        links_here = [r for r in links if self.chance(0.5)]
        for rel in links_here:
            body.append(Atom(rel.name, (node if self.chance(0.5) else Var("y"),)))
        value = self.step_value(lat, value_of, self.addends(lat.kind, edge))
        body += self.filters(scope, lower, True)
        if self.chance(0.2) and not isinstance(value, Var):
            body.append(Comparison("=", Var("v"), value))
            value = Var("v")
        copy = carried if source is lat else {}
        clause = Clause(Atom(lat.rel.name, self.head_args(lat, scope, value, copy, node)),
                        tuple(body))
        return self.wrap(clause, lat, 0.85)

    def join_rule(self, lat: Lat, group: list[Lat], lower: list[Rel], nonneg: bool) -> Clause:
        """Two lattice atoms of the stratum: path concatenation ``L(x, z, $MIN(a + b)) :-
        L(x, y, a), L(y, z, b).`` when L has a second node column, else two relations
        joined on the node (and maybe carried columns), sometimes then along an edge."""
        rng = self.rng
        same = [m for m in group if self.readable(m, lat) == Var("d")]
        scope = Scope()
        other_nodes = [i for i, k in enumerate(lat.rel.types)
                       if k == self.node and i not in (lat.node, lat.column)]
        first = lat if self.chance(0.6) else rng.choice(same)
        second = lat if self.chance(0.6) else rng.choice(same)
        if other_nodes and first is lat and second is lat and self.chance(0.7):
            at = rng.choice(other_nodes)
            a1, c1 = self.read(lat, scope, "y", "a", False, {at: "x"})
            a2, _ = self.read(lat, scope, "z", "b", True, {at: "y"})
            body: list[Literal] = [a1, a2]
            copy = {**c1, at: Var("x")}
            node: Term = Var("z")
            edge = None
        else:
            a1, c1 = self.read(first, scope, "y", "a", False)
            a2, _ = self.read(second, scope, "y", "b", True)
            body = [a1, a2]
            copy = c1 if first is lat else {}
            node, edge = Var("y"), None
            if self.chance(0.6):
                edge = rng.choice(self.edges)
                body.append(self.step_atom(edge, scope, "y", "z"))
                node = Var("z")
        a, b = Var("a"), Var("b")
        if lat.func == "min":
            forms = ["max", "min"] + (["+", "+", "++"] if nonneg else [])
        else:
            forms = ["min", "min", "max"]
        form = rng.choice(forms)
        if form == "+":
            value: Term = BinOp("+", a, b)
        elif form == "++":
            value = BinOp("+", BinOp("+", a, b), rng.choice(self.addends(lat.kind, edge)))
        else:
            value = Call(form, (a, b))
        body += self.filters(scope, lower, True)
        clause = Clause(Atom(lat.rel.name, self.head_args(lat, scope, value, copy, node)),
                        tuple(body))
        return self.wrap(clause, lat, 0.85)

    # -- strata -------------------------------------------------------------------------

    def recursive_group(self, start: int, lower: list[Rel]
                        ) -> tuple[list[Rel], list[Rel], list[Clause]]:
        """A recursive stratum of lattice relations (and maybe a set relation): its
        relations, the lattice ones, its clauses."""
        rng = self.rng
        func = rng.choice(("min", "min", "max"))
        size = rng.choice((1, 1, 2, 2, 3))
        group = [self.lattice_relation(f"r{start + i}",
                                       func if self.chance(0.75) else None)
                 for i in range(size)]
        if size >= 2 and self.chance(0.2):  # to_float from a number lattice to a float one
            group[:2] = [self.lattice_relation(f"r{start}", func, "number"),
                         self.lattice_relation(f"r{start + 1}", func, "float")]
        nonneg = self.chance(0.5)
        links: list[Rel] = []
        clauses: list[Clause] = []
        if self.chance(0.2):  # a set relation of the stratum that reads a lattice one
            link = Rel(f"{self.prefix}r{start + size}", (self.node,), 1)
            source = rng.choice(group)
            args = tuple(Var("y") if i == source.node else Wildcard()
                         for i in range(len(source.rel.types)))
            clauses.append(Clause(Atom(link.name, (Var("y"),)),
                                  (Atom(source.rel.name, args),)))
            links.append(link)
        for lat in group:
            seeds = 0
            if self.chance(0.4):
                clauses += self.seed_facts(lat, nonneg)
                seeds += 1
            elif self.chance(0.12):  # given as a DataFrame (.input)
                self.lattice_inputs[lat.rel.name] = set(self.seed_rows(lat, nonneg))
                seeds += 1
            if seeds == 0 or self.chance(0.5):
                clauses.append(self.seed_rule(lat, nonneg, lower))
            if not nonneg and self.chance(0.3):
                clauses.append(self.wrap(self.rule(lat.rel, lower, [], False), lat, 0.5))
            for _ in range(rng.choice((1, 1, 2))):
                if self.chance(0.3) and any(self.readable(m, lat) == Var("d") for m in group):
                    clauses.append(self.join_rule(lat, group, lower, nonneg))
                else:
                    clauses.append(self.step_rule(lat, group, lower, links))
        lats = [lat.rel for lat in group]
        self.drawn += group
        return lats + links, lats, self.declared(clauses, group)

    def declared(self, clauses: list[Clause], lats: list[Lat]) -> list[Clause]:
        """The clauses, with a head aggregate in a rule of every lattice relation (the
        first rule of one without any)."""
        out = list(clauses)
        for lat in lats:
            mine = [i for i, c in enumerate(out) if c.head.relation == lat.rel.name]
            if not any(isinstance(out[i].head.args[lat.column], HeadAggregate) for i in mine):
                at = next((i for i in mine if out[i].body), mine[0])
                out[at] = self.wrap(out[at], lat, 1.0)
        return out

    def stratified_group(self, start: int, lower: list[Rel]
                         ) -> tuple[list[Rel], list[Rel], list[Clause]]:
        """Non-recursive lattice relations: ``best(x, $MIN(c)) :- cost(x, c).``, each rule a
        random rule over lower strata."""
        group = [self.lattice_relation(f"r{start + i}") for i in range(self.rng.choice((1, 1, 2)))]
        if self.chance(0.15):  # no independent column: one value for the whole relation
            kind = self.rng.choice(DEPENDENT)
            group[0] = Lat(Rel(group[0].rel.name, (kind,), 1), 0, group[0].func, -1)
        clauses = []
        for lat in group:
            for _ in range(self.rng.choice((1, 2, 2, 3))):
                clauses.append(self.wrap(self.rule(lat.rel, lower, [], False), lat, 0.7))
            if self.chance(0.2):
                clauses += self.seed_facts(lat, False)
        lats = [lat.rel for lat in group]
        return lats, lats, self.declared(clauses, group)

    def reader_rule(self, head: Rel, lower: list[Rel], lats: list[Rel]) -> Clause:
        """A rule of a later stratum that reads lattice relations through a negation or a
        body aggregate (or both), after one or two positive atoms."""
        rng = self.rng
        scope, slots = Scope(), []
        raw = []
        for rel in [rng.choice(lower) for _ in range(rng.choice((1, 1, 2)))]:
            raw.append((rel, self.atom(rel, scope, slots)))
        body: list[Literal] = [Atom(rel.name, tuple(
            self.expr(scope, kind, False) if a is None else a
            for a, kind in zip(args, rel.types, strict=True))) for rel, args in raw]
        negate = self.chance(0.6)
        if negate:
            body.append(self.negation(lats, scope, False))
        if not negate or self.chance(0.4):
            body.append(self.aggregate(lats, scope))
        args: list[Term] = []
        for kind in head.types:
            pick = rng.random()
            var = self.var_of(scope, kind)
            if var is not None and pick < 0.65:
                args.append(var)
            elif pick < 0.8:
                args.append(_constant(rng, kind))
            else:
                args.append(self.expr(scope, kind, False))
        rng.shuffle(body)
        for literal in self.extras(scope, lower):
            body.insert(self.extra.randint(0, len(body)), literal)
        return self.clause(head, args, body)

    def total_group(self, start: int, lats: list[Lat]) -> tuple[list[Rel], list[Clause]]:
        """A $SUM/$COUNT relation ``t(node, value)``: counts of distinct neighbours, sums of
        edge weights or of a lower lattice's values (numbers only: a float sum's last bits
        depend on the order of addition), and, over numeric nodes, paths counted or
        weighed along the edges that go up (``x < y``: a DAG, so the sums converge), where a
        contribution's value changes as the total it reads grows."""
        rng = self.rng
        rel = Rel(f"{self.prefix}r{start}", (self.node, "number"), 1)
        clauses: list[Clause] = []
        edge = rng.choice(self.edges)
        forms = ["lattice", "path", "path", "weighed"]  # one aggregate per relation
        if edge.weight is not None and edge.rel.types[edge.weight] == "number":
            forms.append("weights")
        if self.chance(0.35):
            forms = ["count", "count"]
        numeric = [m for m in lats if m.kind == "number" and m.node >= 0]
        for form in rng.sample(forms, min(len(forms), rng.choice((1, 2, 2, 3)))):
            scope = Scope()
            scope.add("x", self.node)
            if form == "count":  # distinct sources into each node, or destinations out
                atom = self.step_atom(edge, scope, "x", "y")
                head, agg = ((Var("y"), Var("x")) if self.chance(0.5)
                             else (Var("x"), Var("y")))
                clauses.append(Clause(Atom(rel.name, (head, HeadAggregate("count", agg))),
                                      (atom,)))
            elif form == "weights":
                atom = self.step_atom(edge, scope, "x", "y")
                clauses.append(Clause(Atom(rel.name, (Var("x"), HeadAggregate("sum", Var("w")))),
                                      (atom,)))
            elif form == "lattice" and numeric:
                lat = rng.choice(numeric)
                atom, _ = self.read(lat, scope, "x", "d", False)
                clauses.append(Clause(Atom(rel.name, (Var("x"), HeadAggregate("sum", Var("d")))),
                                      (atom,)))
            elif form in ("path", "weighed") and self.node != "symbol":
                seed = self.step_atom(edge, Scope(), "x", "y")
                clauses.append(Clause(Atom(rel.name, (Var("x"), Number(1))), (seed,)))
                atom = self.step_atom(edge, scope, "x", "y")
                value: Term = Var("c")
                if form == "weighed" and "w" in scope.bound["number"]:
                    value = BinOp("+", Var("c"), Var("w"))
                body = (Atom(rel.name, (Var("x"), Var("c"))), atom,
                        Comparison("<", Var("x"), Var("y")))
                clauses.append(Clause(Atom(rel.name, (Var("y"), HeadAggregate("sum", value))),
                                      body))
        if not clauses:  # every drawn form needed what this program lacks
            atom = self.step_atom(edge, Scope(), "x", "y")
            clauses.append(Clause(Atom(rel.name, (Var("x"), HeadAggregate("count", Var("y")))),
                                  (atom,)))
        elif not any(isinstance(c.head.args[1], HeadAggregate) for c in clauses):
            head = clauses[0].head
            clauses[0] = Clause(Atom(head.relation, (head.args[0], HeadAggregate(
                "sum", head.args[1]))), clauses[0].body)
        return [rel], clauses

    def program(self, max_inputs: int = 2, max_groups: int = 3
                ) -> tuple[Program, dict[str, set[tuple]]]:
        rng = self.rng
        self.drawn: list[Lat] = []  # the lattice relations of the recursive strata
        self.node = rng.choice(("number", "number", "number", "number", "symbol", "unsigned"))
        self.weight = rng.choice(("number", "number", "unsigned", "float"))
        self.edges = [self.edge_relation("e0", self.weight)]
        if self.chance(0.4):
            self.edges.append(self.edge_relation(
                "e1", None if self.chance(0.5) else rng.choice(DEPENDENT)))
        count = len(self.edges)
        self.nodes = None
        if self.chance(0.6):
            self.nodes = Rel(f"{self.prefix}e{count}", (self.node,), 0)
            count += 1
        others = [self.relation(f"e{count + i}", 0, 3)
                  for i in range(rng.randint(0, max_inputs))]
        inputs = [e.rel for e in self.edges] + ([self.nodes] if self.nodes else []) + others
        facts: dict[str, set[tuple]] = {}
        clauses: list[Clause] = []
        directives: list[Directive] = []
        for rel in inputs:
            edge = next((e for e in self.edges if e.rel is rel), None)
            if edge is not None:
                rows = self.edge_rows(edge)
            elif rel is self.nodes:
                rows = {(v,) for v in NODES[self.node] if self.chance(0.6)}
            else:
                rows = {tuple(_value(rng, k) for k in rel.types)
                        for _ in range(rng.randint(0, 6))}
            self.place_rows(rel, rows, facts, clauses, directives)
        lower, derived, lats, count = list(inputs), [], [], 0
        self.lattice_inputs: dict[str, set[tuple]] = {}
        groups = rng.randint(1, max_groups)
        for g in range(groups):
            pick = rng.random()
            if lats and (pick < 0.2 or g == groups - 1 and self.chance(0.5)):
                group = [self.relation(f"r{count + i}", 1, 3)
                         for i in range(rng.choice((1, 1, 2)))]
                for rel in group:
                    clauses.append(self.reader_rule(rel, lower, lats))
                    if self.chance(0.5):
                        clauses.append(self.rule(rel, lower, [], False))
                new, new_lats = group, []
            else:
                make = self.stratified_group if pick < 0.3 else self.recursive_group
                new, new_lats, more = make(count, lower)
                clauses += more
            count += len(new)
            lower += new
            derived += new
            lats += new_lats
        if self.chance(0.5):
            new, more = self.total_group(count, self.drawn)
            clauses += more
            derived += new
        types, user, user_decls = [], [], []
        if self.node == "number" and self.chance(0.3):
            rel, lattice, more = self.user_lattice(count + 1)
            types.append(TypeDecl(lattice.name, "number", False))
            user.append(lattice)
            user_decls.append(Decl(rel.name, (Attribute("c0", "number"),
                                              Attribute("c1", lattice.name, lattice=True))))
            clauses += more
            directives.append(Directive("output", rel.name))
        for name, rows in self.lattice_inputs.items():
            facts[name] = rows
            directives.append(Directive("input", name))
        directives += [Directive("output", r.name) for r in derived]
        program = Program(types=tuple(types),
                          decls=tuple(_decl(r) for r in inputs + derived) + tuple(user_decls),
                          clauses=tuple(clauses), directives=tuple(directives),
                          lattices=tuple(user))
        return program, facts

    def user_lattice(self, start: int) -> tuple[Rel, LatticeDecl, list[Clause]]:
        """``.lattice L<>`` (a bit set under ``bor``, or numbers under ``max``) and a relation
        ``r(x, m: L<>)`` propagated along an edge relation, sometimes with a bit added."""
        rng = self.rng
        name = f"{self.prefix}L{start}"
        x, y = Var("x"), Var("y")
        lub = BinOp("bor", x, y) if self.chance(0.6) else Call("max", (x, y))
        lattice = LatticeDecl(name, (LatticeOp("Bottom", (), Number(0)),
                                     LatticeOp("Lub", ("x", "y"), lub)))
        rel = Rel(f"{self.prefix}r{start}", ("number", "number"), 1)
        edge = rng.choice(self.edges)
        seed = self.step_atom(edge, Scope(), "x", "y")
        clauses = [Clause(Atom(rel.name, (x, BinOp("bshl", Number(1), x))), (seed,))]
        for _ in range(rng.choice((1, 2))):
            scope = Scope()
            step = self.step_atom(rng.choice(self.edges), scope, "x", "y")
            value: Term = Var("m")
            if self.chance(0.3):
                value = BinOp("bor", Var("m"), Number(rng.choice((1, 32))))
            clauses.append(Clause(Atom(rel.name, (y, value)),
                                  (Atom(rel.name, (x, Var("m"))), step)))
        return rel, lattice, clauses


def generate_lattice(seed: int, prefix: str = "", max_inputs: int = 2,
                     max_groups: int = 3) -> tuple[Program, dict[str, set[tuple]]]:
    """A program with lattice relations (and the facts of its ``.input`` relations) of a
    seed; deterministic and prefix-blind like ``generate``."""
    return LatticeGen(random.Random(seed), prefix).program(max_inputs, max_groups)


def lattice_programs(max_inputs: int = 2, max_groups: int = 3
                     ) -> st.SearchStrategy[tuple[Program, dict[str, set[tuple]]]]:
    """``generate_lattice`` as a hypothesis strategy."""
    return st.integers(0, 2**32 - 1).map(
        lambda seed: generate_lattice(seed, max_inputs=max_inputs, max_groups=max_groups))
