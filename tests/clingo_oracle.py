"""A second oracle for the random programs, independent of sparklog's evaluation: a drawn
program's syntax tree (tests/strategies.py) written as an answer-set program and grounded
by clingo (Potassco's solver and grounder, ``pip install clingo``).

The reference evaluator (tests/reference.py) walks the same syntax tree the engine lowers,
and its authors read Soufflé the way the engine's authors do: a misreading shared by both
passes every agreement test. clingo shares none of the evaluation. Its grounder computes
the unique answer set of a stratified program, its perfect model, with its own joins,
negation, aggregates, recursion, integer arithmetic (C's truncating division and
remainder) and term order (strings by their bytes).

What is shared: the functors on symbols (``cat``, ``substr``, ``strlen``, ``to_string``,
``to_number``, ``match``, ``contains``) and ``range``, which clingo does not have, are
called from the grounder (``@substr(S, I, N)``) and computed by the reference's own
functions; and the reading of an aggregate's scope (below). Everything else is clingo's.

Values: numbers and unsigned values are clingo integers (32-bit: a program whose values
leave that range is skipped); symbols are strings; floats are integers times SCALE, exact
for the generator's floats (multiples of 1/4, added, subtracted, multiplied or divided by
0.5, 2, 3 or 4); a program whose reference result holds any other float is skipped.

Aggregates take Soufflé's scoping as the reference documents it (Evaluator._outer_vars): a
variable of an aggregate's body is the rule's if the rest of the rule grounds it, and the
aggregate's own if not, or if it is in the target; every wildcard of the body is a
position of its own, so ``count : { a(x, _) }`` counts ``a``'s tuples; a min or max whose
body grounds a variable the rule reads outside it (a witness) binds it from the body's
solutions that reach the value, written as the body again with the target equal to it.

An aggregate inside another one's body (``t = count : {...}``), which clingo does not
nest, is read from an auxiliary relation computed over a domain of its grouping variables
(_Clause.nested).

$MIN and $MAX relations are sets of candidate values with the best one per key taken
after them, bounded where that is needed and sound (:class:`_Lattices`); $SUM and $COUNT
outside recursion are sums over their distinct contributions (:class:`_Totals`). Where a
component's candidates cannot be kept finite as a set (rules that both improve and worsen
values) and for a recursive $SUM or $COUNT, the component is solved in rounds, one clingo
grounding each (:class:`_Iterated`).

Only what translates faithfully is translated; anything else raises :class:`Unsupported`
and the program is skipped, never approximated: user types and lattices, ``ord``, three
aggregates deep, a float that is not a multiple of 1/SCALE (0.1), and a value clingo
cannot hold (a number outside 32 bits, a negative number's ``bshru``, ``to_float`` of an
unsigned value above 2^63).
An operation clingo leaves undefined (arithmetic on the ``#sup`` an empty min binds
before its guard drops it) makes its literal false, as it should.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from sparklog.semantics.checks import typed_literals
from sparklog.syntax.nodes import (
    Aggregate, Atom, BinOp, BoolLit, Call, Clause, Comparison, Constraint, Float, HeadAggregate,
    Negation, Number, Program, String, Term, UnaryOp, Var, Wildcard,
)

INT32 = 2**31
SCALE = 1024  # a float f is the integer f * SCALE
UNSIGNED_HIGH = "sparklog__unsigned_high"  # derived if a lattice's unsigned value is >= 2^63


class Unsupported(Exception):
    """The program has a form this oracle does not translate."""


def _children(node) -> list:
    if isinstance(node, tuple | list):
        return list(node)
    if hasattr(node, "__dataclass_fields__"):
        return [getattr(node, f) for f in node.__dataclass_fields__ if f != "span"]
    return []


def _vars(node) -> set[str]:
    """Every variable name in a syntax node, aggregates included."""
    if isinstance(node, Var):
        return {node.name}
    return set().union(set(), *(_vars(c) for c in _children(node)))


def _outside(node) -> set[str]:
    """The variable names in a syntax node outside its aggregates."""
    if isinstance(node, Var):
        return {node.name}
    if isinstance(node, Aggregate):
        return set()
    return set().union(set(), *(_outside(c) for c in _children(node)))


def _has_aggregate(node) -> bool:
    return any(True for _ in _nodes(node, Aggregate))


def _nodes(node, kind: type):
    """Every node of a type in a syntax node, inside negations and aggregates too."""
    if isinstance(node, kind):
        yield node
    for c in _children(node):
        yield from _nodes(c, kind)


class _Types:
    """The type (number, unsigned, float, symbol) of each variable of a clause and of each
    term: columns give atoms' variables theirs, equalities and aggregates the rest."""

    def __init__(self, decls: dict[str, list[str]], clause: Clause) -> None:
        self.of: dict[str, str] = {}
        for atom in _nodes(clause, Atom):
            for arg, kind in zip(atom.args, decls.get(atom.relation, ())):
                if isinstance(arg, Var):
                    self.of.setdefault(arg.name, kind)
        equations = [c for c in _nodes(clause, Comparison) if c.op == "="]
        for _ in range(len(equations) + 1):
            for c in equations:
                for var, other in ((c.left, c.right), (c.right, c.left)):
                    if isinstance(var, Var) and var.name not in self.of:
                        kind = self.term(other)
                        if kind is not None:
                            self.of[var.name] = kind

    def term(self, term: Term) -> str | None:
        match term:
            case Var(name):
                return self.of.get(name)
            case Number(unsigned=unsigned):
                return "unsigned" if unsigned else "number"
            case Float():
                return "float"
            case String():
                return "symbol"
            case BinOp(op, left, right):
                if op in ("land", "lor", "lxor"):
                    return "number"
                return self.term(left) or self.term(right)
            case UnaryOp(op, arg):
                return "number" if op == "lnot" else self.term(arg)
            case Call(name, args):
                fixed = {"to_float": "float", "to_number": "number", "strlen": "number",
                         "ord": "number", "to_unsigned": "unsigned", "to_string": "symbol",
                         "cat": "symbol", "substr": "symbol"}
                if name in fixed:
                    return fixed[name]
                return next((k for k in map(self.term, args) if k is not None), None)
            case Aggregate(func, target):
                if func == "count":
                    return "number"
                if func == "mean":
                    return "float"
                return self.term(target)
        return None


def _string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _int(value: int) -> str:
    return f"({value})" if value < 0 else str(value)


def _unsigned_order(x: str) -> str:
    """``x`` as a pair that orders as Soufflé orders unsigned values: a negative clingo
    integer is a 64-bit pattern above every non-negative one, (1 if x < 0 else 0, x)."""
    return f"(1 - ({x} + |{x}| + 1) / (|{x}| + 1), {x})"


def _nonzero(x: str) -> str:
    """1 if ``x`` is not 0, else 0 (integer division truncates: 1 / (|x| + 1) is 0 or 1)."""
    return f"(1 - 1 / (|{x}| + 1))"


class _Clause:
    """Writes one clause. ``names`` maps the variables in scope to clingo's; the literals
    that hoisted aggregates become collect in ``extra``."""

    def __init__(self, types: _Types, grounded: set[str], counter: itertools.count) -> None:
        self.types, self.grounded, self.counter = types, grounded, counter
        self.extra: list[str] = []
        self.read_outside: set[str] = set()  # the rule's variables read outside aggregates
        self.around: list = []  # the rule's literals around the one being written
        self.aux: list[str] = []  # rules of auxiliary relations (nested aggregates)

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    def term(self, term: Term, names: dict[str, str]) -> str:
        match term:
            case Var(name):
                return names.get(name) or "V" + re.sub(r"\W", "_", name)
            case Wildcard():
                return "_"
            case Number(value):
                return _int(_held(value))
            case String(value):
                return _string(value)
            case Float(value):
                scaled = value * SCALE
                if scaled != int(scaled):
                    raise Unsupported(f"float {value}")
                return _int(int(scaled))
            case BinOp(op, left, right):
                return self.binop(op, left, right, names)
            case UnaryOp(op, arg):
                a = self.term(arg, names)
                return {"neg": f"(-{a})", "bnot": f"(~{a})", "lnot": f"(1 - {_nonzero(a)})"}[op]
            case Call(name, args):
                return self.call(name, args, names)
            case Aggregate():
                var = self.fresh("H")
                self.extra += self.aggregate(var, term, names)
                return var
        raise Unsupported(type(term).__name__)

    def binop(self, op: str, left: Term, right: Term, names: dict[str, str]) -> str:
        a, b = self.term(left, names), self.term(right, names)
        kind = self.types.term(left) or self.types.term(right)
        if kind == "symbol":
            if op != "+":
                raise Unsupported(f"symbol {op}")
            return f"@cat({a}, {b})"
        if kind == "float":
            floats = {"+": f"({a} + {b})", "-": f"({a} - {b})",
                      "*": f"(({a} * {b}) / {SCALE})", "/": f"(({a} * {SCALE}) / {b})"}
            if op not in floats:
                raise Unsupported(f"float {op}")
            return floats[op]
        if op == "bshru":  # of the 64-bit pattern: a negative number's is out of range
            return f"@bshru({a}, {b})"
        simple = {"+": "+", "-": "-", "*": "*", "/": "/", "%": "\\", "^": "**",
                  "band": "&", "bor": "?", "bxor": "^"}
        if op in simple:
            return f"({a} {simple[op]} {b})"
        if op == "bshl":
            return f"({a} * (2 ** {b}))"
        if op == "bshr":  # arithmetic: floor division by 2^b
            d = f"(2 ** {b})"
            return f"(({a} - (({a} \\ {d}) + {d}) \\ {d}) / {d})"
        if op == "land":
            return f"({_nonzero(a)} * {_nonzero(b)})"
        if op == "lor":
            return f"({_nonzero(a)} + {_nonzero(b)} - {_nonzero(a)} * {_nonzero(b)})"
        if op == "lxor":
            return f"|{_nonzero(a)} - {_nonzero(b)}|"
        raise Unsupported(f"operator {op}")

    def call(self, name: str, args: tuple[Term, ...], names: dict[str, str]) -> str:
        written = [self.term(a, names) for a in args]
        kinds = [self.types.term(a) for a in args]
        if name in ("min", "max") and "unsigned" in kinds:  # in unsigned order
            out = written[0]
            for b in written[1:]:
                out = f"@u{name}({out}, {b})"
            return out
        if name in ("min", "max"):
            out = written[0]
            for b in written[1:]:  # exact for integers: a + b +- |a - b| is even
                sign = "-" if name == "min" else "+"
                out = f"(({out} + {b} {sign} |{out} - {b}|) / 2)"
            if kinds[0] == "symbol":
                raise Unsupported("min of symbols")
            return out
        if name == "to_float":  # of an unsigned value: a negative one is 2^64 more
            if kinds[0] == "unsigned":
                return f"@to_float_unsigned({written[0]})"
            return f"({written[0]} * {SCALE})"
        if name == "to_number":
            if kinds[0] == "float":
                return f"({written[0]} / {SCALE})"
            if kinds[0] == "symbol":
                return f"@to_number({written[0]})"
            return written[0]  # of a number or a small unsigned value: the same value
        if name == "to_unsigned":  # a negative value is 2^64 less, outside the checked range
            return f"({written[0]} / {SCALE})" if kinds[0] == "float" else written[0]
        if name == "to_string":
            if kinds[0] == "float":
                return f"@to_string_float({written[0]})"
            return f"@to_string({written[0]})"
        if name == "cat":
            out = written[0]
            for b in written[1:]:
                out = f"@cat({out}, {b})"
            return out
        if name in ("substr", "strlen"):
            return f"@{name}({', '.join(written)})"
        if name == "range":
            scaled = "_float" if "float" in kinds else ""
            return f"@range{scaled}({', '.join(written)})"
        raise Unsupported(f"functor {name}")

    def atom(self, atom: Atom, names: dict[str, str]) -> str:
        if not atom.args:
            return atom.relation
        return f"{atom.relation}({', '.join(self.term(a, names) for a in atom.args)})"

    def literal(self, literal, names: dict[str, str]) -> list[str]:
        match literal:
            case Atom():
                return [self.atom(literal, names)]
            case Negation(atom=atom):
                return ["not " + self.atom(atom, names)]
            case Comparison(op="=", left=Var() as v, right=Aggregate() as agg) | \
                    Comparison(op="=", left=Aggregate() as agg, right=Var() as v):
                return self.aggregate(self.term(v, names), agg, names, binds=v.name)
            case Comparison(op, left, right):
                a, b = self.term(left, names), self.term(right, names)
                if op not in ("=", "!=") and "unsigned" in (self.types.term(left),
                                                             self.types.term(right)):
                    a, b = _unsigned_order(a), _unsigned_order(b)
                return [f"{a} {op} {b}"]
            case BoolLit(value):
                return ["#true" if value else "#false"]
            case Constraint(name, args, negated) if name in ("match", "contains"):
                test = f"@{name}({', '.join(self.term(a, names) for a in args)})"
                return [f"{test} {'!=' if negated else '='} 1"]
        raise Unsupported(type(literal).__name__)

    def aggregate(self, result: str, agg: Aggregate, names: dict[str, str],
                  binds: str | None = None) -> list[str]:
        """``result = #f{...}``: literals that bind or test ``result`` (the variable
        ``binds``, if it is one); an empty min or max binds nothing; a mean is a sum over
        a count."""
        if agg.func not in ("count", "sum", "min", "max", "mean"):
            raise Unsupported(f"aggregate {agg.func}")
        target = _vars(agg.target) if agg.target is not None else set()
        own = {v for v in _vars(agg.body) | target if v not in self.grounded or v in target}
        condition, value, positions, inner = self.scope(agg, own, names)
        atoms = {a.name for lit in agg.body if isinstance(lit, Atom)
                 for a in lit.args if isinstance(a, Var)}
        # a min or max's witnesses; the variable its value binds is not one, even if its
        # body has one of that name (that one is its own), nor are they of other aggregates
        witnesses = (atoms & self.read_outside) - self.grounded - {binds} \
            if agg.func in ("min", "max") else set()
        element = ", ".join([value] + positions)
        if agg.func == "mean":
            kind = self.types.term(agg.target)
            total, count = self.fresh("S"), self.fresh("C")
            scaled = total if kind == "float" else f"{total} * {SCALE}"
            out = [f"{total} = #sum{{ {element} : {condition} }}",
                   f"{count} = #count{{ {element} : {condition} }}", f"{count} > 0",
                   f"{result} = ({scaled}) / {count}"]
        elif agg.func == "count":
            out = [f"{result} = #count{{ {', '.join(positions) or '0'} : {condition} }}"]
        else:
            out = [f"{result} = #{agg.func}{{ {element} : {condition} }}",
                   f"{result} < #sup" if agg.func == "min" else f"{result} > #inf"]
        if witnesses:  # the body again, its witnesses the rule's, its target the value
            again, _, _, inner = self.scope(agg, own - witnesses, names)
            out += [again, f"{self.term(agg.target, inner)} = {result}"]
        return out

    def scope(self, agg: Aggregate, own: set[str], names: dict[str, str]
              ) -> tuple[str, str, list[str], dict[str, str]]:
        """The aggregate's condition, its target's value and its positions (every own
        variable and wildcard) with its own variables renamed apart; and the names. An
        aggregate in its body (``t = count : {...}``) is read from an auxiliary relation
        (:meth:`nested`)."""
        k = next(self.counter)
        inner = {**names, **{v: f"L{k}_" + re.sub(r"\W", "_", v) for v in own}}
        positions = [inner[v] for v in sorted(own)]
        body = []
        for lit in agg.body:
            if isinstance(lit, Atom):
                args = []
                for a in lit.args:
                    if isinstance(a, Wildcard):
                        name = f"@w{len(positions)}"
                        inner[name] = f"W{k}_{len(positions)}"
                        positions.append(inner[name])
                        a = Var(name)
                    args.append(a)
                lit = Atom(lit.relation, tuple(args), lit.span)
            body.append(lit)
        condition = []
        for lit in body:
            if _has_aggregate(lit):
                condition.append(self.nested(lit, agg, inner))
            else:
                condition += self.literal(lit, inner)
        value = self.term(agg.target, inner) if agg.target is not None else "1"
        return ", ".join(condition), value, positions, inner

    def nested(self, holder, outer: Aggregate, names: dict[str, str]) -> str:
        """``t = count : {...}`` in the body of ``outer``, which clingo does not nest:
        ``aux(g.., T) :- <domain of g..>, T = #count{...}.``, read as ``aux(g.., t)``.
        The grouping variables g are those the literals around it ground (the rest of
        ``outer``'s body and of the rule); the domain, their positive atoms and plain
        equalities, may hold more bindings than the rule reaches, never fewer."""
        match holder:
            case Comparison(op="=", left=Var() as var, right=Aggregate() as agg) | \
                    Comparison(op="=", left=Aggregate() as agg, right=Var() as var):
                pass
            case _:
                raise Unsupported("an aggregate inside an aggregate, not as v = aggregate")
        if _has_aggregate(agg.body):
            raise Unsupported("three aggregates deep")
        inside = [lit for lit in outer.body if lit is not holder]
        around = inside + self.around
        grounded = _grounded(around)
        target = _vars(agg.target) if agg.target is not None else set()
        groups = sorted((_vars(agg.body) & grounded) - target)
        # the domain's literals in the scope each is written in (the outer aggregate's
        # own variables renamed apart from the rule's of the same name); bound: clingo's
        # names of what they bind
        literals = [(lit, names) for lit in inside] + [(lit, {}) for lit in self.around]
        named = lambda vs, scope: {self.term(Var(v), scope) for v in vs}  # noqa: E731
        atoms = [(lit, scope) for lit, scope in literals if isinstance(lit, Atom)]
        domain = [s for lit, scope in atoms for s in self.literal(lit, scope)]
        bound = set().union(set(), *(named(_grounded([lit]), scope) for lit, scope in atoms))
        equalities = [(lit, scope) for lit, scope in literals if isinstance(lit, Comparison)
                      and lit.op == "=" and not _has_aggregate(lit)]
        changed = True
        while changed:  # the equalities that bind a variable from what the domain binds
            changed = False
            for lit, scope in equalities:
                for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(side, Var) and named({side.name}, scope) - bound and \
                            named(_vars(other), scope) <= bound:
                        domain += self.literal(lit, scope)
                        bound |= named({side.name}, scope)
                        changed = True
        if not named(set(groups), names) <= bound:
            raise Unsupported("a nested aggregate's group without a domain")
        saved, self.grounded = self.grounded, set(groups)
        value = "T"
        literals = self.aggregate(value, agg, names)
        self.grounded = saved
        aux = f"aux{next(self.counter)}"
        args = [self.term(Var(g), names) for g in groups]
        self.aux.append(f"{aux}({', '.join(args + [value])}) :- "
                        f"{', '.join(domain + literals)}.")
        return f"{aux}({', '.join(args + [self.term(var, names)])})"


def _grounded(literals: list) -> set[str]:
    """Variables the literals ground: positive atoms' variables, and ``v = e`` once every
    variable of ``e`` outside its aggregates is (an aggregate's value counts as ground)."""
    grounded = {a.name for lit in literals if isinstance(lit, Atom)
                for a in lit.args if isinstance(a, Var)}
    changed = True
    while changed:
        changed = False
        for lit in literals:
            if isinstance(lit, Comparison) and lit.op == "=":
                for var, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(var, Var) and var.name not in grounded and \
                            _outside(other) <= grounded:
                        grounded.add(var.name)
                        changed = True
    return grounded


def _clause(clause: Clause, decls: dict[str, list[str]], counter: itertools.count,
            lattices: _Lattices | None = None) -> str:
    cap = None
    if lattices is not None:
        clause, cap = lattices.rewrite(clause)
    if any(isinstance(a, HeadAggregate) for a in clause.head.args):
        raise Unsupported("head aggregate")
    writer = _Clause(_Types(decls, clause), set(), counter)
    writer.read_outside = _outside(clause.head.args) | _outside(clause.body)
    body = []
    for i, lit in enumerate(clause.body):  # an aggregate's scope: the literals around it
        around = list(clause.body[:i] + clause.body[i + 1:])
        if isinstance(lit, Atom):  # b(x, max s : {...}) grounds x
            around.append(Atom(lit.relation, tuple(a if isinstance(a, Var) else Wildcard()
                                                   for a in lit.args)))
        writer.grounded, writer.around = _grounded(around), around
        body += writer.literal(lit, {})
    writer.grounded = _grounded(list(clause.body))
    head = writer.atom(clause.head, {})
    if cap is not None:  # a candidate worse than the key's value is not derived
        relation, dependent = cap
        args = [writer.term(a, {}) for a in clause.head.args]
        keys = [a for i, a in enumerate(args) if i != dependent]
        body.append(f'@keep("{relation}", {", ".join([args[dependent], *keys])}) = 1')
    literals = writer.extra + body
    rule = f"{head} :- {', '.join(literals)}." if literals else f"{head}."
    return "\n".join(writer.aux + [rule])


def _value(value: object, kind: str) -> str:
    if kind == "float":
        scaled = value * SCALE  # type: ignore[operator]
        if scaled != int(scaled):
            raise Unsupported("float value")
        return _int(int(scaled))
    if kind == "symbol":
        return _string(str(value))
    return _int(_held(int(value)))  # type: ignore[call-overload]


def _held(value: int) -> int:
    """A number as clingo holds it: an unsigned value just below 2^64 is the negative
    number of its bits (a 64-bit pattern, as Soufflé computes); anything else outside 32
    bits clingo would take modulo 2^32, so it is refused."""
    if value >= 2**64 - INT32:
        value -= 2**64
    if not -INT32 <= value < INT32:
        raise Unsupported(f"the value {value}")
    return value


def translate(program: Program, facts: dict[str, set[tuple]],
              lattices: _Lattices | None = None) -> str:
    """The answer-set program of ``program`` and its input ``facts``; ``lattices``: how
    its $MIN/$MAX relations are written (required if it has any)."""
    if program.lattices or program.types:
        raise Unsupported("lattice or type declarations")
    decls = {d.name: [a.type for a in d.attributes] for d in program.decls}
    if any(k not in ("number", "unsigned", "symbol", "float") for ks in decls.values() for k in ks):
        raise Unsupported("a column of a user type")
    if lattices is None and _lattice_columns(program):
        raise Unsupported("lattice relations without their values to bound candidates")
    counter = itertools.count()
    lines = []
    if lattices is not None:
        decls.update({lattices.candidates(r): decls[r] for r in lattices.columns})
        decls.update(lattices.totals.decls)
        decls.update({lattices.keys(r): [k for i, k in enumerate(decls[r])
                                         if i != lattices.columns[r][0]]
                      for r in lattices.bounded if r in lattices.columns})
        lines += [lattices.best(r, len(decls[r])) for r in sorted(lattices.columns)]
        lines += [lattices.totals.total(r) for r in sorted(lattices.totals.columns)]
    lines += [_clause(c, decls, counter, lattices) for c in program.clauses]
    if lattices is not None:
        lines += [_clause(c, decls, counter) for c in lattices.key_clauses]
    for name, rows in sorted(facts.items()):
        written = lattices.candidates(name) if lattices and name in lattices.columns else name
        for row in sorted(rows, key=repr):
            values = [_value(v, k) for v, k in zip(row, decls[name])]
            lines.append(f"{written}({', '.join(values)})." if row else f"{written}.")
            if lattices and name in lattices.bounded and name in lattices.columns:
                del values[lattices.columns[name][0]]
                lines.append(f"{lattices.keys(name)}({', '.join(values)}).")
    return "\n".join(lines) + "\n"


def _lattice_columns(program: Program) -> dict[str, tuple[int, str]]:
    """Each lattice relation's dependent column and its join ("min" or "max")."""
    found: dict[str, tuple[int, str]] = {}
    for clause in program.clauses:
        for i, arg in enumerate(clause.head.args):
            if isinstance(arg, HeadAggregate):
                if found.setdefault(clause.head.relation, (i, arg.func)) != (i, arg.func):
                    raise Unsupported("a relation with two dependent columns")
    return found


class _Lattices:
    """$MIN and $MAX relations, written as the set of every candidate value derived for a
    key (``r__all``) and the best of them per key (``r``). For monotone rules (a value read
    from the rule's own recursive component reaches only the head's value, through an
    expression non-decreasing in it, under the same join) the set's best per key is the
    lattice's least fixed point. A read from a later stratum reads ``r``.

    That set may be infinite: d + w around a cycle under $MIN worsens a value forever. A
    component is translated in one of two ways, or not at all:

    - Every rule improves or keeps the values it reads (``min(d, w)`` or ``d - w`` with
      ``w >= 0`` under $MIN): values only improve along a derivation, and the set is finite
      whenever the lattice's fixed point exists (a cycle improving forever has none: the
      reference fails, and the program is not compared).
    - Every rule worsens or keeps each value that reaches its head (``d + w``,
      ``max(d, w)`` under $MIN; Knuth's superior functions): a candidate worse than the
      reference's value for its key is then not derived (``@keep``). A read that only
      tests whether a key has a value (``r(x, _)``, or a value that does not reach the
      head) reads ``r__key``, the keys, derived by the rules without their values (no
      value is compared or joined, and no value expression can fail). Sound: take a best
      value that the bounded program misses, least in value, then in the round the
      unbounded program first derives it. Its derivation reads values no worse than it
      (superior), each no better than its key's best, and keys; reading each key's best
      instead derives a value as good (monotone), hence the same one, from best values
      that are better, or as good and derived earlier: all derived by the bounded
      program, a contradiction. If the reference is wrong at a key, clingo finds a better
      value there or none within the bound, so the two differ. A key the reference lacks
      has no bound.

    A grounding past LIMIT candidates is outside the translation. The sign of a weight
    comes from the facts of the relation that binds it (a relation with facts only).
    """

    LIMIT = 200_000

    def __init__(self, program: Program, facts: dict[str, set[tuple]],
                 reference: dict[str, set[tuple]]) -> None:
        import networkx as nx

        found = _lattice_columns(program)
        self.columns = {r: c for r, c in found.items() if c[1] in ("min", "max")}
        self.kinds = {d.name: [a.type for a in d.attributes] for d in program.decls}
        self.totals = _Totals(program, {r: c for r, c in found.items() if r not in self.columns},
                              self.kinds)
        graph = _dependencies(program)
        self.component: dict[str, frozenset[str]] = {}
        for scc in nx.strongly_connected_components(graph):
            recursive = len(scc) > 1 or any(graph.has_edge(r, r) for r in scc)
            for r in scc:
                self.component[r] = frozenset(scc) if recursive else frozenset()
        self.ranges = _fact_ranges(program, facts)
        self.unsigned = {r for r, (i, _) in self.columns.items()
                         if self.kinds[r][i] == "unsigned"}
        self.bounds: dict[str, dict[tuple, object]] = {}
        for r, (i, _) in self.columns.items():
            if r not in reference:
                raise Unsupported(f"no reference values for {r}")
            table = {}
            for row in reference[r]:
                scaled = [_scaled(v, k) for v, k in zip(row, self.kinds[r])]
                table[tuple(scaled[:i] + scaled[i + 1:])] = scaled[i]
            self.bounds[r] = table
        self.bounded: set[str] = set()  # relations whose candidates @keep bounds
        if any(self.component[r] for r in self.totals.columns):
            raise Unsupported("a recursive $SUM or $COUNT")
        self.existence: dict[int, set[int]] = {}  # see _shape
        self.carrying: dict[int, set[int]] = {}
        shapes: dict[frozenset[str], set[str]] = {}
        for clause in program.clauses:
            scc = self.component[clause.head.relation]
            if scc & set(self.columns):
                shapes.setdefault(scc, set()).add(self._shape(clause))
        for scc, found in shapes.items():
            if found <= {"none", "keeps", "improves"}:
                continue
            if found <= {"none", "keeps", "worsens"}:
                self.bounded |= scc
                continue
            raise Unsupported(f"a component whose rules {sorted(found)} its values")
        self.key_clauses = [self.key_clause(c) for c in program.clauses
                            if c.head.relation in self.bounded and c.head.relation in self.columns]
        self.calls = 0
        self.outside: str | None = None

    @staticmethod
    def candidates(relation: str) -> str:
        return f"{relation}__all"

    def best(self, relation: str, arity: int) -> str:
        """``r(K.., V)``: the best candidate of each key."""
        dependent, func = self.columns[relation]
        keys = [f"K{i}" for i in range(arity) if i != dependent]
        row = lambda value: ", ".join(keys[:dependent] + [value] + keys[dependent:])  # noqa: E731
        best = (f"{relation}({row('V')}) :- {self.candidates(relation)}({row('_')}), "
                f"V = #{func}{{ W : {self.candidates(relation)}({row('W')}) }}.")
        if relation not in self.unsigned:
            return best
        # an unsigned value at or above 2^63 is negative here, and #min orders it first
        return best + f"\n{UNSIGNED_HIGH} :- {self.candidates(relation)}({row('W')}), W < 0."

    def _own(self, clause: Clause) -> set[str]:
        return set(self.component[clause.head.relation]) & set(self.columns)

    def rewrite(self, clause: Clause) -> tuple[Clause, tuple[str, int] | None]:
        """The clause reading its component's lattice relations' candidates, and deriving
        candidates if its head is a lattice relation (bounded by @keep if it is bounded)."""
        if clause.head.relation in self.totals.columns:
            return self.totals.contributions(clause), None
        own = self._own(clause)
        existence = self.existence.get(id(clause), set())
        body = tuple(
            (self._key_atom(lit) if i in existence and lit.relation in self.bounded
             else replace(lit, relation=self.candidates(lit.relation)))
            if isinstance(lit, Atom) and lit.relation in own else lit
            for i, lit in enumerate(clause.body))
        head = clause.head.relation
        if head not in self.columns:
            return replace(clause, body=body), None
        dependent, _ = self.columns[head]
        args = list(clause.head.args)
        if isinstance(args[dependent], HeadAggregate):
            args[dependent] = args[dependent].arg
        atom = replace(clause.head, relation=self.candidates(head), args=tuple(args))
        cap = (head, dependent) if head in self.bounded else None
        return replace(clause, head=atom, body=body), cap

    def _shape(self, clause: Clause) -> str:
        """How the clause's head value follows the component's lattice values it reads:
        "none" (it reads none but whether keys have one), "keeps", "improves" or "worsens"
        (each value that reaches it), or "mixed"; refuses what is not monotone. Records
        which body atoms read only whether a key has a value (``existence``) and which
        bindings carry values to the head (``carrying``)."""
        own = self._own(clause)
        values: dict[str, str] = {}  # variable -> the relation whose value it holds
        reads: dict[str, int] = {}  # variable -> the body literal that reads it
        existence: set[int] = set()
        for i, literal in enumerate(clause.body):
            if isinstance(literal, Atom) and literal.relation in own:
                value = literal.args[self.columns[literal.relation][0]]
                if isinstance(value, Var):
                    values[value.name], reads[value.name] = literal.relation, i
                elif isinstance(value, Wildcard):
                    existence.add(i)
                else:
                    raise Unsupported("a lattice value of the component compared with a constant")
            elif any(a.relation in own for a in _nodes(literal, Atom)):
                raise Unsupported("a lattice relation of the component read inside a literal")
        self.existence[id(clause)], self.carrying[id(clause)] = existence, set()
        if not values:
            return "none"
        head = clause.head.relation
        if head not in self.columns:
            raise Unsupported("a lattice value of the component in a set relation's head")
        dependent, func = self.columns[head]
        if any(self.columns[r][1] != func for r in values.values()):
            raise Unsupported("a $MIN value feeding a $MAX relation, or the reverse")
        term, ranges, carrying = self._flow(clause, values, dependent)
        self.carrying[id(clause)] = carrying
        if not _monotone(term, set(values)):
            raise Unsupported("a lattice value of the component through a non-monotone "
                              "expression")
        existence |= {reads[v] for v in values if v not in _vars(term)}
        reaching = set(values) & _vars(term)
        if not reaching:
            return "none"
        unsigned = self.kinds[head][dependent] == "unsigned"
        ge, le = _order(term, reaching, ranges, unsigned)
        worse, better = (ge, le) if func == "min" else (le, ge)
        return ("keeps" if worse and better else "worsens" if worse
                else "improves" if better else "mixed")

    def key_clause(self, clause: Clause) -> Clause:
        """``r__key(k..) :- body``: the clause without values, for the keys of a bounded
        component (a key exists whatever the values: none is compared or joined)."""
        body = []
        for i, lit in enumerate(clause.body):
            if i in self.carrying[id(clause)]:
                continue
            if isinstance(lit, Atom) and lit.relation in self.columns and \
                    lit.relation in self._own(clause):
                lit = self._key_atom(lit)
            body.append(lit)
        return Clause(self._key_atom(replace(clause.head, args=tuple(
            a.arg if isinstance(a, HeadAggregate) else a for a in clause.head.args))),
            tuple(body))

    def _key_atom(self, atom: Atom) -> Atom:
        dependent, _ = self.columns[atom.relation]
        return replace(atom, relation=self.keys(atom.relation),
                       args=atom.args[:dependent] + atom.args[dependent + 1:])

    @staticmethod
    def keys(relation: str) -> str:
        return f"{relation}__key"

    def _flow(self, clause: Clause, values: dict[str, str], dependent: int
              ) -> tuple[Term, dict[str, tuple[float, float]], set[int]]:
        """The head's value as an expression of the values read (bindings substituted),
        after refusing any other use of them; and the range of each variable an atom of a
        relation with facts only binds."""
        atoms = {a.name for lit in clause.body if isinstance(lit, Atom)
                 for a in lit.args if isinstance(a, Var)}
        flow, bindings = set(values), {}
        changed = True
        while changed:  # v = e(d): v carries d's value on
            changed = False
            for lit in clause.body:
                if (isinstance(lit, Comparison) and lit.op == "=" and isinstance(lit.left, Var)
                        and lit.left.name not in atoms | set(bindings)
                        and _vars(lit.right) & flow):
                    bindings[lit.left.name] = lit.right
                    flow.add(lit.left.name)
                    changed = True
        for i, arg in enumerate(clause.head.args):
            if i != dependent and _vars(arg) & flow:
                raise Unsupported("a lattice value of the component in a key column")
        reads = 0
        ranges: dict[str, tuple[float, float]] = {}
        carrying = set()
        for i, lit in enumerate(clause.body):
            if isinstance(lit, Atom):
                names = [a.name if isinstance(a, Var) else None for a in lit.args]
                reads += sum(1 for v in names if v in values)
                if set(names) & (flow - set(values)):
                    raise Unsupported("a lattice value of the component joined")
                for j, v in enumerate(names):
                    span = self.ranges.get((lit.relation, j))
                    if v is not None and span is not None:
                        old = ranges.get(v, span)  # a variable in two columns: both hold
                        ranges[v] = (max(old[0], span[0]), min(old[1], span[1]))
                continue
            if isinstance(lit, Comparison) and isinstance(lit.left, Var) and \
                    bindings.get(lit.left.name) is lit.right:
                carrying.add(i)
                continue
            if _vars(lit) & flow:
                raise Unsupported("a lattice value of the component in a body literal")
        if reads != len(values):
            raise Unsupported("a lattice value of the component read twice")
        value = clause.head.args[dependent]
        if isinstance(value, HeadAggregate):
            value = value.arg
        return _substituted(value, bindings), ranges, carrying

    def keep(self, relation: str, value: int, keys: tuple) -> bool:
        """Whether a candidate is no worse than the reference's value for its key."""
        self.calls += 1
        if self.calls > self.LIMIT:
            self.outside = f"more than {self.LIMIT} lattice candidates"
            return False
        if relation in self.unsigned and value < 0:
            self.outside = "an unsigned lattice value at or above 2^63"
            return False
        bound = self.bounds[relation].get(keys)
        if bound is None:
            return True
        return value <= bound if self.columns[relation][1] == "min" else value >= bound


class _Totals:
    """$SUM and $COUNT relations outside recursion, as the reference and the engine read
    them (DeALS' msum and mcount): a key's value sums, over each rule ``j``, the rule's
    distinct contributions. A $SUM contribution is identified by the values of every
    variable of the rule's atoms, each ``_`` a variable of its own (``$SUM(x) :- e(x, _)``
    adds x once per edge); a $COUNT contribution by its value. Rule j derives
    ``r__cj(key.., identity.., value)``, and ``#sum`` adds one element per tuple."""

    def __init__(self, program: Program, columns: dict[str, tuple[int, str]],
                 kinds: dict[str, list[str]]) -> None:
        self.columns, self.kinds = columns, kinds
        self.decls: dict[str, list[str]] = {}
        self.written: dict[int, Clause] = {}
        self.rules: dict[str, list[tuple[str, int]]] = {}  # relation -> (r__cj, identity width)
        for clause in program.clauses:
            if clause.head.relation in columns:
                self._contributing(clause)

    def _contributing(self, clause: Clause) -> None:
        relation = clause.head.relation
        column, func = self.columns[relation]
        body, fresh = [], itertools.count()
        for lit in clause.body:
            if isinstance(lit, Atom):
                lit = replace(lit, args=tuple(Var(f"w__{next(fresh)}") if isinstance(a, Wildcard)
                                              else a for a in lit.args))
            body.append(lit)
        kind_of: dict[str, str] = {}
        for lit in body:
            if isinstance(lit, Atom):
                for arg, kind in zip(lit.args, self.kinds[lit.relation]):
                    for v in sorted(_vars(arg)):
                        kind_of.setdefault(v, kind if isinstance(arg, Var) else None)
        ids = [] if func == "count" else list(kind_of)
        if any(kind_of[v] is None for v in ids):
            raise Unsupported("a contribution identified by a variable inside an expression")
        value = clause.head.args[column]
        value = value.arg if isinstance(value, HeadAggregate) else value
        keys = [a for i, a in enumerate(clause.head.args) if i != column]
        rules = self.rules.setdefault(relation, [])
        name = f"{relation}__c{len(rules)}"
        rules.append((name, len(ids)))
        key_kinds = [k for i, k in enumerate(self.kinds[relation]) if i != column]
        self.decls[name] = key_kinds + [kind_of[v] for v in ids] + [self.kinds[relation][column]]
        head = Atom(name, tuple(keys + [Var(v) for v in ids] + [value]))
        self.written[id(clause)] = Clause(head, tuple(body))

    def contributions(self, clause: Clause) -> Clause:
        return self.written[id(clause)]

    def total(self, relation: str) -> str:
        """``r(K.., S)``: the sum over every rule's contributions to the key."""
        column, func = self.columns[relation]
        keys = [f"K{i}" for i in range(len(self.kinds[relation])) if i != column]
        elements = []
        for j, (name, width) in enumerate(self.rules[relation]):
            ids = [f"I{i}" for i in range(width)]
            weight = "1" if func == "count" else "E"
            elements.append(f"{weight}, {j}, {', '.join(ids + ['E'])} : "
                            f"{name}({', '.join(keys + ids + ['E'])})")
        row = ", ".join(keys[:column] + ["S"] + keys[column:])
        lines = []
        for name, width in self.rules[relation]:
            lines.append(f"{relation}({row}) :- {name}({', '.join(keys + ['_'] * (width + 1))}), "
                         f"S = #sum{{ {'; '.join(elements)} }}.")
        return "\n".join(lines)


def _dependencies(program: Program):
    """The relations' dependency graph (networkx): an arc from each relation a rule reads
    (inside negations and aggregates too) to the relation it derives."""
    import networkx as nx

    graph = nx.DiGraph()
    for clause in program.clauses:
        graph.add_node(clause.head.relation)
        for atom in _nodes(clause.body, Atom):
            graph.add_edge(atom.relation, clause.head.relation)
    return graph


def _fact_ranges(program: Program, facts: dict[str, set[tuple]]
                 ) -> dict[tuple[str, int], tuple[float, float]]:
    """(least, greatest) value of each numeric column of the relations with facts only."""
    ruled = {c.head.relation for c in program.clauses if c.body}
    rows: dict[str, list[tuple]] = {}
    for name, given in facts.items():
        rows.setdefault(name, []).extend(given)
    for clause in program.clauses:
        if not clause.body:
            rows.setdefault(clause.head.relation, []).append(tuple(
                a.value if isinstance(a, Number | Float) else None for a in clause.head.args))
    out = {}
    for name, given in rows.items():
        if name in ruled or not given:
            continue
        for j in range(len(given[0])):
            column = [row[j] for row in given]
            if all(isinstance(v, int | float) and not isinstance(v, bool) for v in column):
                out[(name, j)] = (min(column), max(column))
    return out


def _order(term: Term, values: set[str], ranges: dict[str, tuple[float, float]],
           unsigned: bool) -> tuple[bool, bool]:
    """(ge, le): whether ``term`` is at least (at most) each variable of ``values`` in it,
    for a monotone ``term`` (_monotone). Unknown is False."""
    def span(t: Term) -> tuple[float, float] | None:  # of a term without those variables
        match t:
            case Number(value) | Float(value):
                return (value, value)
            case Var(name):
                return ranges.get(name)
            case Call("to_float", (arg,)):
                return span(arg)
        return None

    if not _vars(term) & values:
        return False, False
    match term:
        case Var():
            return True, True
        case Call("to_float", (arg,)):
            return _order(arg, values, ranges, unsigned)
        case BinOp("+" | "-" as op, left, right):
            if _vars(left) & values and _vars(right) & values:
                return False, False
            inner, other = (left, right) if _vars(left) & values else (right, left)
            s = span(other)
            if s is None:
                return False, False
            lo, hi = (s[0], s[1]) if op == "+" else (-s[1], -s[0])
            ge, le = _order(inner, values, ranges, unsigned)
            return ge and lo >= 0, le and hi <= 0
        case BinOp("*", left, right) if unsigned:  # non-negative values only
            inner, other = (left, right) if _vars(left) & values else (right, left)
            s = span(other)
            if s is None or _vars(other) & values:
                return False, False
            ge, le = _order(inner, values, ranges, unsigned)
            return ge and s[0] >= 1, le and s[1] <= 1
        case BinOp("/", left, right) if unsigned:
            s = span(right)
            ge, le = _order(left, values, ranges, unsigned)
            return ge and s is not None and s[1] <= 1, le and s is not None and s[0] >= 1
        case Call("min" | "max" as name, args):
            orders = [_order(a, values, ranges, unsigned) if _vars(a) & values else None
                      for a in args]
            # max is at least each argument, so at least what each is at least; at most a
            # variable only if every argument is at most it (min: the reverse)
            alike = len({frozenset(_vars(a) & values) for a in args}) == 1
            outer = all(o is None or o[0 if name == "max" else 1] for o in orders)
            inner = alike and all(o[1 if name == "max" else 0] for o in orders)
            return (outer, inner) if name == "max" else (inner, outer)
    return False, False


def _scaled(value: object, kind: str) -> object:
    if kind == "float":
        return int(value * SCALE)  # type: ignore[operator]
    return value if isinstance(value, str) else int(value)  # type: ignore[call-overload]


def _substituted(term: Term, bindings: dict[str, Term], depth: int = 0) -> Term:
    """``term`` with each bound variable replaced by what it is bound to."""
    if depth > len(bindings):
        raise Unsupported("bindings in a cycle")
    match term:
        case Var(name) if name in bindings:
            return _substituted(bindings[name], bindings, depth + 1)
        case BinOp():
            return replace(term, left=_substituted(term.left, bindings, depth),
                           right=_substituted(term.right, bindings, depth))
        case Call():
            return replace(term, args=tuple(_substituted(a, bindings, depth) for a in term.args))
        case UnaryOp():
            return replace(term, arg=_substituted(term.arg, bindings, depth))
    return term


def _monotone(term: Term, values: set[str]) -> bool:
    """Whether ``term`` does not decrease when any variable of ``values`` grows."""
    if not _vars(term) & values:
        return True
    match term:
        case Var():
            return True
        case BinOp("+", left, right):
            return _monotone(left, values) and _monotone(right, values)
        case BinOp("-", left, right):
            return _monotone(left, values) and not _vars(right) & values
        case BinOp("*", left, right):
            for factor, other in ((left, right), (right, left)):
                if isinstance(factor, Number | Float) and factor.value >= 0:
                    return _monotone(other, values)
            return False
        case BinOp("/", left, right):
            return (isinstance(right, Number | Float) and right.value > 0
                    and _monotone(left, values))
        case Call("min" | "max" | "to_float", args):
            return all(_monotone(a, values) for a in args)
    return False


class _Functors:
    """The functors clingo calls while grounding (``@substr(S, I, N)``): the reference's."""

    def __init__(self, lattices: _Lattices | None = None) -> None:
        from tests import reference
        self.ref = reference
        self.lattices = lattices
        self.outside: str | None = None  # a value clingo cannot hold was computed

    @staticmethod
    def _py(symbol):
        import clingo
        if symbol.type == clingo.SymbolType.Number:
            return symbol.number
        if symbol.type == clingo.SymbolType.String:
            return symbol.string
        raise Unsupported(str(symbol))

    def _call(self, fn, *args):
        import clingo
        try:
            value = fn(*(self._py(a) for a in args))
        except self.ref.Fail:
            return []  # no value: the rule instance does not fire
        if isinstance(value, bool):
            value = int(value)
        return clingo.String(value) if isinstance(value, str) else clingo.Number(value)

    def cat(self, a, b):
        return self._call(lambda x, y: x + y, a, b)

    def substr(self, s, i, n):
        return self._call(self.ref._substr, s, i, n)

    def strlen(self, s):
        return self._call(self.ref._strlen, s)

    def to_number(self, s):
        return self._call(self.ref._to_number, s)

    def to_string(self, x):
        return self._call(self.ref._to_string, x)

    def to_string_float(self, x):
        return self._call(lambda v: self.ref._to_string(v / SCALE), x)

    def match(self, pattern, s):
        return self._call(self.ref._regex_match, pattern, s)

    def contains(self, sub, s):
        return self._call(lambda a, b: a in b, sub, s)

    def range(self, *args):
        import clingo
        return [clingo.Number(v) for v in self.ref._range(*(self._py(a) for a in args))]

    def umin(self, a, b):  # a negative clingo integer is an unsigned value >= 2^63
        return min(a, b, key=lambda v: self._py(v) % 2**64)

    def umax(self, a, b):
        return max(a, b, key=lambda v: self._py(v) % 2**64)

    def to_float_unsigned(self, x):
        if self._py(x) >= 0:
            return self._call(lambda v: v * SCALE, x)
        self.outside = f"to_float of the unsigned {self._py(x) + 2**64}"
        return []

    def bshru(self, a, b):
        value = self.ref.binop("bshru", self._py(a), self._py(b))
        if -INT32 <= value < INT32:
            return self._call(lambda: value)
        self.outside = f"bshru gives {value}, outside clingo's integers"
        return []

    def keep(self, relation, value, *keys):
        lattices = self.lattices
        kept = lattices.keep(self._py(relation), self._py(value),
                             tuple(self._py(k) for k in keys))
        if lattices.outside:
            self.outside = lattices.outside
        import clingo
        return clingo.Number(int(kept))

    def range_float(self, *args):
        import clingo
        values = self.ref._range(*(self._py(a) / SCALE for a in args))
        if any(v * SCALE != int(v * SCALE) for v in values):
            raise Unsupported("a float range off the scale")
        return [clingo.Number(int(v * SCALE)) for v in values]


def solve(text: str, relations: dict[str, int], lattices: _Lattices | None = None
          ) -> dict[str, set[tuple]]:
    """The answer set's tuples of ``relations`` (name -> arity); raises Unsupported if
    clingo finds no unique answer set."""
    import clingo

    # An undefined operation only makes its literal false, as it should: arithmetic on
    # the #sup an empty min binds before its guard drops it, for instance. Its messages
    # (and those about relations no rule derives) are not errors.
    ctl = clingo.Control(["--warn=none"], logger=lambda code, message: None)
    ctl.add("base", [], text)
    functors = _Functors(lattices)
    ctl.ground([("base", [])], context=functors)
    if functors.outside:
        raise Unsupported(functors.outside)
    models: list[list] = []
    ctl.solve(on_model=lambda m: models.append(m.symbols(atoms=True)))
    if len(models) != 1:
        raise Unsupported(f"{len(models)} answer sets")
    out: dict[str, set[tuple]] = {name: set() for name in relations}
    for symbol in models[0]:
        if symbol.name in relations and len(symbol.arguments) == relations[symbol.name]:
            out[symbol.name].add(tuple(_Functors._py(a) for a in symbol.arguments))
    return out


class _Iterated:
    """Lattice relations by naive iteration, for the components :class:`_Lattices` cannot
    keep finite as sets (rules that both improve and worsen values) and recursive $SUM and
    $COUNT. Components are solved in dependency order, each by rounds: one clingo grounding
    derives every candidate (or contribution) of the component's lattice relations from
    the values of the round before (``r__prev``), its set relations natively; the new
    values are the best of the old and the candidates ($MIN, $MAX), or the totals of the
    contributions ($SUM, $COUNT: a contribution identified as in :class:`_Totals`, but for
    values read from the component, which are the contribution's current value). Rounds
    end when no value changes. A solved component's values are facts for the later ones,
    and the last grounding derives every set relation from all of them. The joins,
    negation, aggregates and arithmetic are clingo's; this loop only takes the best or the
    sum of what clingo derived. For the monotone programs the engine accepts, that is the
    least fixed point."""

    ROUNDS = 300

    def __init__(self, program: Program, facts: dict[str, set[tuple]]) -> None:
        import networkx as nx

        if program.lattices or program.types:
            raise Unsupported("lattice or type declarations")
        self.program, self.facts = program, facts
        self.columns = _lattice_columns(program)
        self.decls = {d.name: [a.type for a in d.attributes] for d in program.decls}
        graph = _dependencies(program)
        condensed = nx.condensation(graph)
        self.order = [frozenset(condensed.nodes[c]["members"])
                      for c in nx.topological_sort(condensed)]
        self.solved: dict[str, dict[tuple, int]] = {}  # relation -> key -> value
        self.candidate_decls: dict[str, list[str]] = {}  # the running component's

    def solve(self, outputs: dict[str, int]) -> dict[str, set[tuple]]:
        for members in self.order:
            lattices = members & set(self.columns)
            if lattices:
                self._component(members, lattices)
        clauses = [c for c in self.program.clauses if c.head.relation not in self.columns]
        return solve(self._text(clauses, set()), outputs)

    def _text(self, clauses: list[Clause], prev: set[str]) -> str:
        decls = dict(self.decls)
        decls.update({f"{r}__prev": self.decls[r] for r in prev})
        decls.update(self.candidate_decls)
        counter = itertools.count()
        lines = [_clause(c, decls, counter) for c in clauses]
        for name, rows in sorted(self.facts.items()):
            if name in self.columns:
                continue  # a lattice relation's facts seed its values (_component)
            for row in sorted(rows, key=repr):
                values = ", ".join(_value(v, k) for v, k in zip(row, decls[name]))
                lines.append(f"{name}({values})." if row else f"{name}.")
        for relation, values in sorted(self.solved.items()):
            written = f"{relation}__prev" if relation in prev else relation
            dependent = self.columns[relation][0]
            for key, value in sorted(values.items(), key=repr):
                row = [_py_term(v) for v in key]
                row.insert(dependent, _py_term(value))
                lines.append(f"{written}({', '.join(row)}).")
        return "\n".join(lines) + "\n"

    def _component(self, members: frozenset[str], lattices: set[str]) -> None:
        for r in lattices:  # the facts of a $MIN/$MAX relation are its first candidates
            self.solved[r] = {}
            rows = {tuple(_held(_scaled(v, k)) if not isinstance(v, str) else v
                          for v, k in zip(row, self.decls[r])) for row in self.facts.get(r, ())}
            self._join(r, rows)
        lower = [c for c in self.program.clauses
                 if c.head.relation not in self.columns and c.head.relation not in members]
        own_sets = [c for c in self.program.clauses
                    if c.head.relation in members and c.head.relation not in lattices]
        derived, extra_decls, outputs = [], {}, {}
        for j, clause in enumerate(c for c in self.program.clauses
                                   if c.head.relation in lattices):
            body = tuple(replace(lit, relation=f"{lit.relation}__prev")
                         if isinstance(lit, Atom) and lit.relation in lattices else lit
                         for lit in clause.body)
            if any(a.relation in lattices for lit in body if not isinstance(lit, Atom)
                   for a in _nodes(lit, Atom)):
                raise Unsupported("a lattice relation read inside a literal of its component")
            written, name, kinds = self._candidate(replace(clause, body=body), j, lattices)
            derived.append(written)
            extra_decls[name], outputs[name] = kinds, len(kinds)
        sets = [replace(c, body=tuple(replace(lit, relation=f"{lit.relation}__prev")
                                      if isinstance(lit, Atom) and lit.relation in lattices
                                      else lit for lit in c.body)) for c in own_sets]
        self.candidate_decls = extra_decls
        for _ in range(self.ROUNDS):
            text = self._text(lower + sets + derived, lattices)
            got = solve(text, outputs)
            changed = self._round(lattices, got)
            if not changed:
                break
        else:
            raise Unsupported(f"no fixed point within {self.ROUNDS} rounds")
        self.candidate_decls = {}

    def _candidate(self, clause: Clause, j: int, lattices: set[str]
                   ) -> tuple[Clause, str, list[str]]:
        """The clause deriving the clause's candidates (``r__all``: key and value) or
        contributions (``r__cj``: key, identity, value), its head's name and kinds."""
        relation = clause.head.relation
        dependent, func = self.columns[relation]
        value = clause.head.args[dependent]
        value = value.arg if isinstance(value, HeadAggregate) else value
        keys = [a for i, a in enumerate(clause.head.args) if i != dependent]
        key_kinds = [k for i, k in enumerate(self.decls[relation]) if i != dependent]
        kind = self.decls[relation][dependent]
        if func in ("min", "max"):
            return (Clause(Atom(f"{relation}__all", tuple(keys + [value])), clause.body),
                    f"{relation}__all", key_kinds + [kind])
        ids: dict[str, str] = {}
        body, fresh = [], itertools.count()
        for lit in clause.body:
            if func == "sum" and isinstance(lit, Atom):
                source = lit.relation.removesuffix("__prev")
                mutable = self.columns[source][0] if source in lattices else None
                args = []
                for i, (arg, k) in enumerate(zip(lit.args, self.decls[source])):
                    if i != mutable and isinstance(arg, Wildcard):  # a position of its own
                        arg = Var(f"w__{next(fresh)}")
                    if i != mutable and _vars(arg):
                        if not isinstance(arg, Var):
                            raise Unsupported("a contribution identified inside an expression")
                        ids.setdefault(arg.name, k)
                    args.append(arg)
                lit = replace(lit, args=tuple(args))
            body.append(lit)
        name = f"{relation}__c{j}"
        return (Clause(Atom(name, tuple(keys + [Var(v) for v in ids] + [value])), tuple(body)),
                name, key_kinds + list(ids.values()) + [kind])

    def _round(self, lattices: set[str], got: dict[str, set[tuple]]) -> bool:
        changed = False
        for r in sorted(lattices):
            dependent, func = self.columns[r]
            width = len(self.decls[r]) - 1
            if func in ("min", "max"):
                rows = got.get(f"{r}__all", set())
                changed |= self._join(r, {row[:dependent] + (row[-1],) + row[dependent:width]
                                          for row in rows})
                continue
            totals: dict[tuple, int] = {}
            for name, rows in got.items():
                if name.startswith(f"{r}__c"):
                    for row in rows:
                        weight = 1 if func == "count" else row[-1]
                        totals[row[:width]] = totals.get(row[:width], 0) + weight
            changed |= totals != self.solved[r]
            self.solved[r] = totals
        return changed

    def _join(self, relation: str, rows: set[tuple]) -> bool:
        """Join candidate rows (values in the dependent column) into the relation's values;
        whether any value changed."""
        dependent, func = self.columns[relation]
        unsigned = self.decls[relation][dependent] == "unsigned"
        values, changed = self.solved[relation], False
        for row in rows:
            key, value = row[:dependent] + row[dependent + 1:], row[dependent]
            if unsigned and value < 0:
                raise Unsupported("an unsigned lattice value at or above 2^63")
            old = values.get(key)
            if old is None or (value < old if func == "min" else value > old):
                values[key], changed = value, True
        return changed


def _py_term(value: object) -> str:
    return _string(value) if isinstance(value, str) else _int(value)  # type: ignore[arg-type]


def agree(program: Program, facts: dict[str, set[tuple]], reference: dict[str, set[tuple]]
          ) -> dict[str, tuple[set[tuple], set[tuple]]] | None:
    """None if the program is outside what this oracle translates (or a value of the
    reference's result is outside 32-bit integers, or a float of it not a multiple of
    1/SCALE), else the output relations on which clingo and ``reference`` differ:
    name -> (only clingo's, only the reference's)."""
    program = typed_literals(program)  # Soufflé's constants typed from their contexts
    outputs = {d.relation for d in program.directives if d.kind == "output"}
    types = {d.name: [a.type for a in d.attributes] for d in program.decls}
    for rows in reference.values():
        for v in (v for row in rows for v in row):
            if isinstance(v, float) and (v != v or abs(v) * SCALE >= INT32
                                         or v * SCALE != int(v * SCALE)):
                return None
            if isinstance(v, int) and not -INT32 <= v < INT32:
                return None
    wanted = {name: len(types[name]) for name in outputs} | {UNSIGNED_HIGH: 0}
    try:
        lattices = _Lattices(program, facts, reference) if _lattice_columns(program) else None
        got = solve(translate(program, facts, lattices), wanted, lattices)
    except Unsupported:
        if not _lattice_columns(program):
            return None
        try:  # rules that both improve and worsen values, a recursive $SUM
            got = _Iterated(program, facts).solve(wanted)
        except Unsupported:
            return None
    if got[UNSIGNED_HIGH]:
        return None  # a lattice's candidate outside what #min and #max order as Soufflé
    differ = {}
    for name in sorted(outputs):
        ours = {tuple(v / SCALE if kind == "float" else v for v, kind in zip(row, types[name]))
                for row in got[name]}
        theirs = {tuple(v if isinstance(v, float | str) else int(v) for v in row)
                  for row in reference.get(name, set())}
        if ours != theirs:
            differ[name] = (ours - theirs, theirs - ours)
    return differ
