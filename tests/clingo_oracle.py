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

Only what translates faithfully is translated; anything else raises :class:`Unsupported`
and the program is skipped, never approximated: lattices, user types, ``ord``, three
aggregates deep, a float that is not a multiple of 1/SCALE (0.1), and a value clingo
cannot hold (a negative number's ``bshru``, ``to_float`` of an unsigned value above 2^63).
An operation clingo leaves undefined (arithmetic on the ``#sup`` an empty min binds
before its guard drops it) makes its literal false, as it should.
"""

from __future__ import annotations

import itertools
import re

from sparklog.syntax.nodes import (
    Aggregate, Atom, BinOp, BoolLit, Call, Clause, Comparison, Constraint, Float, HeadAggregate,
    Negation, Number, Program, String, Term, UnaryOp, Var, Wildcard,
)

INT32 = 2**31
SCALE = 1024  # a float f is the integer f * SCALE


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
                return _int(value)
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


def _clause(clause: Clause, decls: dict[str, list[str]], counter: itertools.count) -> str:
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
    return _int(int(value))  # type: ignore[call-overload]


def translate(program: Program, facts: dict[str, set[tuple]]) -> str:
    """The answer-set program of ``program`` and its input ``facts``."""
    if program.lattices or program.types:
        raise Unsupported("lattice or type declarations")
    decls = {d.name: [a.type for a in d.attributes] for d in program.decls}
    if any(k not in ("number", "unsigned", "symbol", "float") for ks in decls.values() for k in ks):
        raise Unsupported("a column of a user type")
    counter = itertools.count()
    lines = [_clause(c, decls, counter) for c in program.clauses]
    for name, rows in sorted(facts.items()):
        for row in sorted(rows, key=repr):
            values = ", ".join(_value(v, k) for v, k in zip(row, decls[name]))
            lines.append(f"{name}({values})." if row else f"{name}.")
    return "\n".join(lines) + "\n"


class _Functors:
    """The functors clingo calls while grounding (``@substr(S, I, N)``): the reference's."""

    def __init__(self) -> None:
        from tests import reference
        self.ref = reference
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

    def range_float(self, *args):
        import clingo
        values = self.ref._range(*(self._py(a) / SCALE for a in args))
        if any(v * SCALE != int(v * SCALE) for v in values):
            raise Unsupported("a float range off the scale")
        return [clingo.Number(int(v * SCALE)) for v in values]


def solve(text: str, relations: dict[str, int]) -> dict[str, set[tuple]]:
    """The answer set's tuples of ``relations`` (name -> arity); raises Unsupported if
    clingo finds no unique answer set."""
    import clingo

    # An undefined operation only makes its literal false, as it should: arithmetic on
    # the #sup an empty min binds before its guard drops it, for instance. Its messages
    # (and those about relations no rule derives) are not errors.
    ctl = clingo.Control(["--warn=none"], logger=lambda code, message: None)
    ctl.add("base", [], text)
    functors = _Functors()
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


def agree(program: Program, facts: dict[str, set[tuple]], reference: dict[str, set[tuple]]
          ) -> dict[str, tuple[set[tuple], set[tuple]]] | None:
    """None if the program is outside what this oracle translates (or a value of the
    reference's result is outside 32-bit integers, or a float of it not a multiple of
    1/SCALE), else the output relations on which clingo and ``reference`` differ:
    name -> (only clingo's, only the reference's)."""
    outputs = {d.relation for d in program.directives if d.kind == "output"}
    types = {d.name: [a.type for a in d.attributes] for d in program.decls}
    for rows in reference.values():
        for v in (v for row in rows for v in row):
            if isinstance(v, float) and (v != v or abs(v) * SCALE >= INT32
                                         or v * SCALE != int(v * SCALE)):
                return None
            if isinstance(v, int) and not -INT32 <= v < INT32:
                return None
    try:
        got = solve(translate(program, facts), {name: len(types[name]) for name in outputs})
    except Unsupported:
        return None
    differ = {}
    for name in sorted(outputs):
        ours = {tuple(v / SCALE if kind == "float" else v for v, kind in zip(row, types[name]))
                for row in got[name]}
        theirs = {tuple(v if isinstance(v, float | str) else int(v) for v in row)
                  for row in reference.get(name, set())}
        if ours != theirs:
            differ[name] = (ours - theirs, theirs - ours)
    return differ
