"""A small, obviously-correct evaluator of sparklog ASTs: the oracle of the tests.

Soufflé semantics, evaluated as simply as possible: stratify by the precedence graph,
then iterate every stratum naively to a fixed point. Values are Python ``int`` (number,
unsigned; 64-bit two's-complement wraparound), ``float`` and ``str`` (symbol).
"""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from collections.abc import Iterator

import networkx as nx

from sparklog.semantics.checks import typed_literals
from sparklog.syntax import subsumption
from sparklog.syntax.nodes import (
    Aggregate, Atom, BinOp, BoolLit, Call, Clause, Comparison, Constraint, Float, HeadAggregate,
    Literal, Negation, Number, Program, String, Term, UnaryOp, Var, Wildcard,
)
from sparklog.syntax.walk import subterms

Binding = dict[str, object]
MASK = (1 << 64) - 1


class Fail(Exception):
    """The body cannot be satisfied with this binding (division by zero, bad to_number...)."""


# ---------------------------------------------------------------------------------------
# Integer arithmetic


class Unsigned(int):
    """An ``unsigned`` value: an int in [0, 2^64), so that Python's comparisons are
    Soufflé's unsigned comparisons; arithmetic on it wraps modulo 2^64."""

    def __new__(cls, value: int) -> Unsigned:
        return super().__new__(cls, int(value) & MASK)


def wrap(value: int) -> int:
    """``value`` as a signed 64-bit integer."""
    value &= MASK
    return value - (1 << 64) if value >> 63 else value


def _div(a: int, b: int) -> int:
    """C division: truncate toward zero; fails on zero."""
    if b == 0:
        raise Fail
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q)


def _mod(a: int, b: int) -> int:
    """C remainder: the sign of the dividend; fails on zero."""
    if b == 0:
        raise Fail
    r = abs(a) % abs(b)
    return wrap(-r if a < 0 else r)


def _c_pow(a: float, b: float) -> float:
    """C's ``pow`` on doubles (inf where Python raises)."""
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf if a > 0 or b % 2 == 0 else -math.inf
    except ValueError:  # 0 to a negative power
        return math.inf


def double_to_signed(x: float) -> int:
    """x86-64 ``static_cast<int64_t>(double)``: -2^63 when out of range or NaN."""
    if math.isnan(x) or not -2.0**63 <= x < 2.0**63:
        return -(1 << 63)
    return int(x)


def double_to_unsigned(x: float) -> Unsigned:
    """gcc's x86-64 ``static_cast<uint64_t>(double)`` (2^64 and beyond give 0)."""
    if math.isnan(x):
        return Unsigned(1 << 63)
    if x >= 2.0**63:
        return Unsigned(int(x - 2.0**63) | (1 << 63)) if x - 2.0**63 < 2.0**63 else Unsigned(0)
    return Unsigned(double_to_signed(x))


def _pow(a: int, b: int) -> int:
    """Soufflé's integer ``^``: ``static_cast<RamSigned>(std::pow(double(a), double(b)))``."""
    return double_to_signed(_c_pow(float(a), float(b)))


INT_OPS = {
    "+": lambda a, b: wrap(a + b),
    "-": lambda a, b: wrap(a - b),
    "*": lambda a, b: wrap(a * b),
    "/": _div,
    "%": _mod,
    "^": _pow,
    "band": lambda a, b: wrap(a & b),
    "bor": lambda a, b: wrap(a | b),
    "bxor": lambda a, b: wrap(a ^ b),
    "bshl": lambda a, b: wrap(a << (b % 64)),
    "bshr": lambda a, b: wrap(a >> (b % 64)),
    "bshru": lambda a, b: wrap((a & MASK) >> (b % 64)),
    "land": lambda a, b: int(bool(a) and bool(b)),
    "lor": lambda a, b: int(bool(a) or bool(b)),
    "lxor": lambda a, b: int(bool(a) != bool(b)),
}


def _udiv(a: int, b: int) -> int:
    if b == 0:
        raise Fail
    return a // b


def _umod(a: int, b: int) -> int:
    if b == 0:
        raise Fail
    return a % b


# on Unsigned operands (values in [0, 2^64)); results are wrapped into an Unsigned
UINT_OPS = {**INT_OPS, "/": _udiv, "%": _umod, "bshr": lambda a, b: a >> (b % 64),
            "^": lambda a, b: double_to_unsigned(_c_pow(float(a), float(b)))}


def _fdiv(a: float, b: float) -> float:
    """IEEE division as in C++: x / 0.0 is +-inf, 0 / 0.0 and nan / 0.0 are nan."""
    if b != 0:
        return a / b
    if math.isnan(a) or a == 0:
        return math.nan
    return math.inf if (a > 0) != (math.copysign(1.0, b) < 0) else -math.inf


FLOAT_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": _fdiv,
             "^": lambda a, b: _c_pow(float(a), float(b))}
COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}


def binop(op: str, a: object, b: object) -> object:
    """Apply a binary operator: float semantics if either side is a float, unsigned ones if
    either side is an Unsigned; ``+`` of two symbols is their concatenation."""
    if isinstance(a, str) and isinstance(b, str) and op == "+":
        return a + b
    if isinstance(a, float) or isinstance(b, float):
        if op not in FLOAT_OPS:
            raise ValueError(f"{op} is not defined on floats")
        return FLOAT_OPS[op](a, b)
    if isinstance(a, Unsigned) or isinstance(b, Unsigned):
        return Unsigned(UINT_OPS[op](int(a) & MASK, int(b) & MASK))
    return INT_OPS[op](a, b)


def unop(op: str, a: object) -> object:
    """Apply ``neg``, ``bnot`` or ``lnot``."""
    if isinstance(a, Unsigned):
        return Unsigned({"neg": -a, "bnot": ~a, "lnot": int(a == 0)}[op])
    if op == "neg":
        return -a if isinstance(a, float) else wrap(-a)
    if op == "bnot":
        return wrap(~a)
    return int(a == 0)


# ---------------------------------------------------------------------------------------
# Functors (Soufflé works on the UTF-8 bytes of a symbol)


def _substr(s: str, i: int, n: int) -> str:
    """Soufflé's substr (C++ std::string::substr on the bytes): "" when i is out of range,
    a negative length takes the rest."""
    data = s.encode()
    if i < 0 or i > len(data):
        return ""
    return (data[i:] if n < 0 else data[i:i + n]).decode(errors="replace")


def _strlen(s: str) -> int:
    """The number of bytes of the UTF-8 text."""
    return len(s.encode())


def _to_number(s: object) -> int:
    """Soufflé's to_number. Of a number: ``static_cast<int64_t>``, truncation for a float.
    Of a symbol (``RamSignedFromString(s, nullptr, 0)``): ``0x``/``-0x`` and
    ``0b``/``-0b`` prefixes pick the base, else base 10 after white space; the longest valid
    prefix counts (like ``std::stoll``). No digits or overflow fails the body (Soufflé aborts)."""
    if isinstance(s, float):
        return double_to_signed(s)
    if isinstance(s, int):
        return wrap(s)
    if m := re.match(r"(-?)0x([0-9a-fA-F]*)", s):
        value = int(m[1] + m[2], 16) if m[2] else 0
    elif m := re.match(r"(-?)0b([01]*)", s):
        if not m[2]:
            raise Fail
        value = int(m[1] + m[2], 2)
    elif m := re.match(r"[ \t\n\v\f\r]*([+-]?[0-9]+)", s):
        value = int(m[1])
    else:
        raise Fail
    if not -(1 << 63) <= value < 1 << 63:
        raise Fail
    return value


def _to_string(v: object) -> str:
    """C++ ``std::to_string``: decimal integers, ``%f`` for floats."""
    if isinstance(v, float):
        return "%f" % v
    return str(int(v))


def _to_float(v: object) -> float:
    return float(v)


def _to_unsigned(v: object) -> Unsigned:
    """``static_cast<RamUnsigned>``: the same bits for an integer, truncation for a float."""
    return double_to_unsigned(v) if isinstance(v, float) else Unsigned(v)


# std::regex's POSIX classes inside brackets, as ASCII ranges for Python's re
_POSIX = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z",
          "lower": "a-z", "space": r" \t\n\r\f\v", "blank": r" \t", "xdigit": "0-9A-Fa-f",
          "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "cntrl": r"\x00-\x1f\x7f",
          "graph": r"\x21-\x7e", "print": r"\x20-\x7e", "w": r"\w", "d": "0-9",
          "s": r" \t\n\r\f\v"}


def _regex_match(pattern: str, s: str) -> bool:
    """Full match of a regex (C++'s std::regex_match, ECMAScript) over the UTF-8 bytes, as
    std::regex reads a std::string (``.`` is one byte); an invalid regex matches nothing."""
    for name, chars in _POSIX.items():
        pattern = pattern.replace(f"[:{name}:]", chars)
    try:
        return re.fullmatch(pattern.encode(), s.encode()) is not None
    except re.error:
        return False


def _minmax(pick):
    def apply(*args):
        value = pick(args)
        return Unsigned(value) if any(isinstance(a, Unsigned) for a in args) else value
    return apply


FUNCTIONS = {
    "cat": lambda *args: "".join(args),
    "strlen": _strlen,
    "substr": _substr,
    "to_number": _to_number,
    "to_string": _to_string,
    "to_float": _to_float,
    "to_unsigned": _to_unsigned,
    "min": _minmax(min),
    "max": _minmax(max),
}
CONSTRAINTS = {"contains": lambda sub, s: sub in s, "match": _regex_match}


# ---------------------------------------------------------------------------------------
# Variables and readiness


def term_vars(term: Term, inside: bool = True) -> Iterator[str]:
    """Every variable occurrence in a term, aggregates' included if ``inside``."""
    match term:
        case Var(name):
            yield name
        case BinOp(_, left, right):
            yield from term_vars(left, inside)
            yield from term_vars(right, inside)
        case UnaryOp(_, arg):
            yield from term_vars(arg, inside)
        case Call(_, args):
            for arg in args:
                yield from term_vars(arg, inside)
        case Aggregate(_, target, body) if inside:
            if target is not None:
                yield from term_vars(target)
            for literal in body:
                yield from literal_vars(literal)
        case HeadAggregate(_, arg):  # $MIN(x): x is read in the head
            yield from term_vars(arg, inside)


def literal_vars(literal: Literal) -> Iterator[str]:
    """Every variable occurrence in a literal."""
    match literal:
        case Atom(_, args) | Constraint(_, args):
            for arg in args:
                yield from term_vars(arg)
        case Negation(atom):
            yield from literal_vars(atom)
        case Comparison(_, left, right):
            yield from term_vars(left)
            yield from term_vars(right)


def clause_vars(clause: Clause) -> Counter[str]:
    """Occurrence counts of the variables of a clause."""
    counts = Counter(term_vars_all(clause.head.args))
    for literal in clause.body:
        counts.update(literal_vars(literal))
    return counts


def term_vars_all(terms: tuple[Term, ...]) -> Iterator[str]:
    """Every variable occurrence in several terms."""
    for term in terms:
        yield from term_vars(term)


# ---------------------------------------------------------------------------------------
# The evaluator


class Evaluator:
    """Evaluates the rules of one program over a database of sets of tuples."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.lattices = lattices(program)
        # whether a lattice's dependent column is unsigned: its values are kept as signed
        # 64-bit patterns (see Unsigned), so the join must order them as unsigned
        self.unsigned = {r: _column_type(program, r, c) == "unsigned"
                         for r, (c, _) in self.lattices.items()}
        self.db: dict[str, set[tuple]] = {}
        self.indexes: dict[tuple[str, tuple[int, ...]], dict[tuple, list[tuple]]] = {}
        self.symbols: dict[str, int] = {}
        self.outer: dict[int, frozenset[str]] = {}
        self.clause_outer = {id(c): self._outer_vars(c) for c in program.clauses}
        # min/max aggregates whose witnesses the rule reads: id -> the witness variables
        self.witnesses = {k: v for c in program.clauses for k, v in _witnesses(c).items()}
        self.functors: dict[str, object] = {}  # user functors of .lattice Lubs

    # -- aggregates ---------------------------------------------------------------------

    @staticmethod
    def _outer_vars(clause: Clause) -> dict[int, frozenset[str]]:
        """For each aggregate of the clause, the variables it shares with the rest of it
        that the rest also grounds, but not those of its target (Soufflé: in ``Y = min Z
        + Y : { a(A, Z), a(B, Y) }`` the inner ``Y`` is the aggregate's own, as only its
        value binds the outer one; ``s = sum x : { r(x) }`` sums every ``x``)."""
        total, outer = clause_vars(clause), {}
        for agg in _aggregates(clause):
            inside = Counter(term_vars(agg))
            shared = {v for v in inside if total[v] > inside[v]}
            own = set(term_vars(agg.target)) if agg.target is not None else set()
            outer[id(agg)] = frozenset((shared & _grounded_around(clause.body, agg)) - own)
        return outer

    def needed(self, term: Term) -> set[str]:
        """Variables that must be bound before ``term`` can be evaluated."""
        match term:
            case Var(name):
                return {name}
            case BinOp(_, left, right):
                return self.needed(left) | self.needed(right)
            case UnaryOp(_, arg):
                return self.needed(arg)
            case Call(_, args):
                return set().union(*(self.needed(a) for a in args))
            case Aggregate():
                return set(self.outer[id(term)])
        return set()

    def witnessed(self, agg: Aggregate, binding: Binding) -> Iterator[tuple[object, Binding]]:
        """A min or max aggregate's value with the witnesses of each body solution that
        reaches it (Soufflé: a variable only its body grounds, read by the rule)."""
        value = self.aggregate(agg, binding)
        outer = self.outer[id(agg)]
        for solution in self.solve(agg.body, {k: v for k, v in binding.items() if k in outer}):
            if self.term(agg.target, solution) == value:
                yield value, {w: solution[w] for w in self.witnesses[id(agg)]}

    def aggregate(self, agg: Aggregate, binding: Binding) -> object:
        """The value of an aggregate for the grouping variables bound in ``binding``; the
        rule's other variables, bound or not, are not the aggregate's (its own may share
        their names)."""
        outer = self.outer[id(agg)]
        values = [1 if agg.target is None else self.term(agg.target, b)
                  for b in self.solve(agg.body, {k: v for k, v in binding.items() if k in outer})]
        if agg.func == "count":
            return len(values)
        if agg.func == "sum":
            if not values and self._float_target(agg):
                return 0.0  # a float, as the sum of none of a float column's values is
            total = sum(values)
            if values and all(isinstance(v, Unsigned) for v in values):
                return Unsigned(total)
            return total if isinstance(total, float) else wrap(total)
        if not values:
            raise Fail
        if agg.func == "mean":
            return sum(values) / len(values)
        return min(values) if agg.func == "min" else max(values)

    def _float_target(self, agg: Aggregate) -> bool:
        """Whether an aggregate's target is a float: a float constant in it, or a variable
        of it in a float column of the body's atoms."""
        names = set(term_vars(agg.target))
        if any(isinstance(t, Float) for t in subterms(agg.target)):
            return True
        return any(isinstance(arg, Var) and arg.name in names
                   and _column_type(self.program, lit.relation, i) == "float"
                   for lit in agg.body if isinstance(lit, Atom) for i, arg in enumerate(lit.args))

    # -- terms --------------------------------------------------------------------------

    def term(self, term: Term, binding: Binding) -> object:
        """The value of a term whose needed variables are bound; raises Fail."""
        match term:
            case Var(name):
                return binding[name]
            case Number(value, True):  # ``3u``: unsigned arithmetic and order from here
                return Unsigned(value)
            case Number(value) | Float(value) | String(value):
                return value
            case BinOp(op, left, right):
                return binop(op, self.term(left, binding), self.term(right, binding))
            case UnaryOp(op, arg):
                return unop(op, self.term(arg, binding))
            case Call("ord", (arg,)):
                return self.ord(self.term(arg, binding))
            case Call(name, args):
                return FUNCTIONS[name](*(self.term(a, binding) for a in args))
            case Aggregate():
                return self.aggregate(term, binding)
            case HeadAggregate(_, arg):
                return self.term(arg, binding)
        raise ValueError(f"cannot evaluate {term!r}")

    def ord(self, symbol: str) -> int:
        """A stable number for a symbol: the order of first appearance."""
        return self.symbols.setdefault(symbol, len(self.symbols))

    def ready(self, term: Term, binding: Binding) -> bool:
        """Whether ``term`` can be evaluated under ``binding``."""
        return self.needed(term) <= binding.keys()

    # -- atoms --------------------------------------------------------------------------

    def lookup(self, relation: str, positions: tuple[int, ...], key: tuple) -> list[tuple]:
        """Tuples of ``relation`` with ``key`` at ``positions`` (a cached hash index)."""
        index = self.indexes.get((relation, positions))
        if index is None:
            index = {}
            for row in self.db.get(relation, ()):
                index.setdefault(tuple(row[p] for p in positions), []).append(row)
            self.indexes[(relation, positions)] = index
        return index.get(key, [])

    def match(self, atom: Atom, binding: Binding) -> Iterator[Binding]:
        """Every extension of ``binding`` that makes ``atom`` a tuple of the database."""
        positions, key = [], []
        for i, arg in enumerate(atom.args):
            if isinstance(arg, Wildcard) or (isinstance(arg, Var) and arg.name not in binding):
                continue
            positions.append(i)
            key.append(self.term(arg, binding))
        for row in self.lookup(atom.relation, tuple(positions), tuple(key)):
            extended = _unify(atom.args, row, binding)
            if extended is not None:
                yield extended

    def atom_ready(self, atom: Atom, binding: Binding) -> bool:
        """Whether every non-variable argument of ``atom`` can be evaluated."""
        return all(isinstance(a, (Var, Wildcard)) or self.ready(a, binding) for a in atom.args)

    # -- literals -----------------------------------------------------------------------

    def filter_ready(self, literal: Literal, binding: Binding) -> bool:
        """Whether a non-atom literal can be evaluated (tested or used to bind) now."""
        match literal:
            case Negation(atom):
                return all(isinstance(a, Wildcard) or self.ready(a, binding) for a in atom.args)
            case Comparison(op, left, right):
                if self.ready(left, binding) and self.ready(right, binding):
                    return True
                return op == "=" and (_binds(left, right, binding, self)
                                      or _binds(right, left, binding, self))
            case Constraint(_, args):
                return all(self.ready(a, binding) for a in args)
            case BoolLit():
                return True
        return False

    def apply(self, literal: Literal, binding: Binding) -> Iterator[Binding]:
        """The bindings that satisfy a literal, given that it is ready."""
        try:
            yield from self._apply(literal, binding)
        except Fail:
            return

    def _apply(self, literal: Literal, binding: Binding) -> Iterator[Binding]:
        """``apply`` without the Fail handling."""
        match literal:
            case Atom():
                yield from self.match(literal, binding)
            case Negation(atom):
                if next(self.match(atom, binding), None) is None:
                    yield binding
            case Comparison("=", Var(name), Call("range", args)) \
                    | Comparison("=", Call("range", args), Var(name)):
                values = _range(*(self.term(a, binding) for a in args))
                if name not in binding:
                    yield from ({**binding, name: v} for v in values)
                elif binding[name] in values:
                    yield binding
            case Comparison("=", Var() | Wildcard() as left, Aggregate() as agg) \
                    if id(agg) in self.witnesses:
                for value, found in self.witnessed(agg, binding):
                    if isinstance(left, Wildcard):
                        yield {**binding, **found}
                    elif left.name not in binding:
                        yield {**binding, **found, left.name: value}
                    elif binding[left.name] == value:
                        yield {**binding, **found}
            case Comparison("=", Var(name), right) if name not in binding:
                yield {**binding, name: self.term(right, binding)}
            case Comparison("=", left, Var(name)) if name not in binding:
                yield {**binding, name: self.term(left, binding)}
            case Comparison(op, left, right):
                if COMPARE[op](self.term(left, binding), self.term(right, binding)):
                    yield binding
            case Constraint(name, args, negated):
                if CONSTRAINTS[name](*(self.term(a, binding) for a in args)) != negated:
                    yield binding
            case BoolLit(value):
                if value:
                    yield binding

    def pick(self, body: list[Literal], binding: Binding) -> int:
        """The next literal to evaluate: a ready filter, else the first ready atom."""
        for i, literal in enumerate(body):
            if not isinstance(literal, Atom) and self.filter_ready(literal, binding):
                return i
        for i, literal in enumerate(body):
            if isinstance(literal, Atom) and self.atom_ready(literal, binding):
                return i
        raise ValueError(f"unsafe body: cannot evaluate {body!r} with {sorted(binding)} bound")

    def solve(self, body: tuple[Literal, ...] | list[Literal],
              binding: Binding) -> Iterator[Binding]:
        """Every binding that satisfies all literals of ``body``, in any order."""
        if not body:
            yield binding
            return
        i = self.pick(list(body), binding)
        rest = list(body[:i]) + list(body[i + 1:])
        for extended in self.apply(body[i], binding):
            yield from self.solve(rest, extended)

    # -- clauses and strata -------------------------------------------------------------

    def fire(self, clause: Clause) -> set[tuple]:
        """The head tuples that ``clause`` derives from the current database."""
        out, self.outer = set(), self.clause_outer[id(clause)]
        for binding in self.solve(_flatten(clause.body), {}):
            try:
                out.add(tuple(self.term(a, binding) for a in clause.head.args))
            except Fail:
                continue
            except KeyError as exc:
                raise ValueError(f"unsafe head variable {exc} in {clause!r}") from None
        return out

    def lub(self, name: str, a: object, b: object) -> object:
        """The Lub of ``.lattice name``; ``a`` None: Bottom's Lub with ``b``. A user functor
        ``@f`` is looked up in ``self.functors`` (Python functions of two values)."""
        decl = next(lat for lat in self.program.lattices if lat.name == name)
        if a is None:
            a = self.term(next(o for o in decl.ops if o.name == "Bottom").expr, {})
        op = next(o for o in decl.ops if o.name == "Lub")
        if op.params:
            return self.term(op.expr, {op.params[0]: a, op.params[1]: b})
        return self.functors[op.expr.name[1:]](a, b)

    def contributions(self, clause: Clause, j: int, members: set[str]) -> dict[tuple, object]:
        """A $SUM/$COUNT clause's contributions: (head key, j, identity) -> value.

        The identity of a $SUM contribution is its body tuples: every column of the clause's
        atoms, ``_`` included, but a dependent column of a lattice relation of the stratum
        (its value may still change); a $COUNT contribution is identified by its value."""
        column, func = self.lattices[clause.head.relation]
        body, mutable, fresh = [], set(), 0
        for lit in clause.body:
            if isinstance(lit, Atom):
                args = list(lit.args)
                lattice = self.lattices.get(lit.relation) if lit.relation in members else None
                for i, arg in enumerate(args):
                    if lattice is not None and i == lattice[0]:
                        mutable |= set(term_vars(arg))
                    elif isinstance(arg, Wildcard):
                        args[i] = Var(f"_w{fresh}")
                        fresh += 1
                lit = Atom(lit.relation, tuple(args))
            body.append(lit)
        rewritten = Clause(clause.head, tuple(body))
        self.clause_outer[id(rewritten)] = self._outer_vars(rewritten)
        self.witnesses.update(_witnesses(rewritten))
        self.outer = self.clause_outer[id(rewritten)]
        arg = clause.head.args[column]
        arg = arg.arg if isinstance(arg, HeadAggregate) else arg
        ids = [v for lit in body if isinstance(lit, Atom) for a in lit.args
               for v in term_vars(a) if v not in mutable]
        ids = list(dict.fromkeys(ids))
        out: dict[tuple, object] = {}
        for binding in self.solve(_flatten(rewritten.body), {}):
            try:
                key = tuple(self.term(a, binding) for i, a in enumerate(clause.head.args)
                            if i != column)
                value = self.term(arg, binding)
            except Fail:
                continue
            identity = (value,) if func == "count" else tuple(binding[v] for v in ids)
            out[(key, j, identity)] = 1 if func == "count" else value
        return out

    def totals(self, relation: str, clauses: list[Clause], members: set[str]) -> set[tuple]:
        column, func = self.lattices[relation]
        sums: dict[tuple, object] = {}
        for j, clause in enumerate(c for c in clauses if c.head.relation == relation):
            for (key, _, _), value in self.contributions(clause, j, members).items():
                sums[key] = sums.get(key, 0) + value
        out = set()
        for key, total in sums.items():
            if not isinstance(total, float):
                total = Unsigned(wrap(total)) if self.unsigned[relation] else wrap(total)
            out.add(key[:column] + (total,) + key[column:])
        return out

    def run_stratum(self, clauses: list[Clause]) -> None:
        """Naive iteration of some clauses until nothing new is derived."""
        members = {c.head.relation for c in clauses}
        totals = [r for r in members if self.lattices.get(r, (0, ""))[1] in ("sum", "count")]
        while True:
            self.indexes.clear()
            derived = [(c.head.relation, self.fire(c)) for c in clauses
                       if c.head.relation not in totals]
            derived += [(r, self.totals(r, clauses, members)) for r in totals]
            changed = False
            for relation, rows in derived:
                table = self.db.setdefault(relation, set())
                if relation in totals:
                    changed |= rows != table
                    self.db[relation] = rows
                elif relation in self.lattices:
                    joined = lattice_join(table | rows, *self.lattices[relation],
                                          unsigned=self.unsigned[relation], lub=self.lub)
                    changed |= joined != table
                    self.db[relation] = joined
                elif not rows <= table:
                    table |= rows
                    changed = True
            if not changed:
                return


def lattices(program: Program) -> dict[str, tuple[int, str]]:
    """Relation -> (dependent column, "min", "max", "sum", "count" or "user:T") for every
    head aggregate and every column typed T<>."""
    out: dict[str, tuple[int, str]] = {}
    for decl in program.decls:
        for i, a in enumerate(decl.attributes):
            if a.lattice:
                out[decl.name] = (i, f"user:{a.type}")
    for clause in program.clauses:
        for i, arg in enumerate(clause.head.args):
            if isinstance(arg, HeadAggregate):
                out.setdefault(clause.head.relation, (i, arg.func))
    return out


def lattice_join(rows: set[tuple], column: int, func: str, unsigned: bool = False,
                 lub=None) -> set[tuple]:
    """One tuple per key (the other columns): the least (min) or greatest (max) value.
    NaN counts as greater than every float, as Spark orders it. ``unsigned``: the values
    are compared as unsigned 64-bit integers and kept as ``Unsigned`` (a literal or plain
    arithmetic may leave a signed pattern: 2^63 + 1 as -2^63 + 1, which must still beat
    2^63 under $MAX, and be halved as 2^62 by ``/ 2``)."""
    if func.startswith("user:"):  # a .lattice T<>: its Lub folded over the key's values
        joined: dict[tuple, object] = {}
        for row in rows:
            key = row[:column] + row[column + 1:]
            joined[key] = lub(func[5:], joined[key], row[column]) if key in joined else \
                lub(func[5:], None, row[column])
        return {key[:column] + (value,) + key[column:] for key, value in joined.items()}
    order = lambda v: (isinstance(v, float) and math.isnan(v), v if v == v else 0)  # noqa: E731
    best: dict[tuple, object] = {}
    for row in rows:
        key, value = row[:column] + row[column + 1:], row[column]
        if unsigned:
            value = Unsigned(value)
        if key not in best or (order(value) < order(best[key]) if func == "min"
                               else order(value) > order(best[key])):
            best[key] = value
    return {key[:column] + (value,) + key[column:] for key, value in best.items()}


def _aggregates(clause: Clause) -> Iterator[Aggregate]:
    """Every aggregate of a clause, nested ones included."""
    stack: list = [*clause.head.args, *clause.body]
    while stack:
        node = stack.pop()
        match node:
            case Aggregate(_, target, body):
                yield node
                stack += [t for t in (target,) if t is not None] + list(body)
            case BinOp(_, left, right) | Comparison(_, left, right):
                stack += [left, right]
            case UnaryOp(_, arg):
                stack.append(arg)
            case Call(_, args) | Atom(_, args) | Constraint(_, args):
                stack += list(args)
            case Negation(atom):
                stack.append(atom)


def _witnesses(clause: Clause) -> dict[int, frozenset[str]]:
    """The witnesses of the clause's min and max aggregates outside other aggregates:
    variables of their bodies' atoms that the rule reads outside every aggregate (head
    included) and nothing around the aggregate grounds."""
    every = list(_aggregates(clause))
    outside = set(term_vars_all(clause.head.args))
    for literal in clause.body:
        match literal:
            case Atom(_, args) | Constraint(_, args) | Negation(Atom(_, args)):
                outside |= {v for a in args for v in term_vars(a, inside=False)}
            case Comparison(_, left, right):
                outside |= set(term_vars(left, inside=False)) | set(term_vars(right, inside=False))
    found = {}
    for agg in every:
        if agg.func not in ("min", "max") or agg.target is None or \
                any(other is not agg and any(_holds(lit, agg) for lit in other.body)
                    for other in every):
            continue
        atoms = {a.name for lit in agg.body if isinstance(lit, Atom)
                 for a in lit.args if isinstance(a, Var)}
        witnesses = (atoms & outside) - _grounded_around(clause.body, agg)
        if witnesses:
            found[id(agg)] = frozenset(witnesses)
    return found


def _grounded_around(body: tuple[Literal, ...], agg: Aggregate) -> set[str]:
    """The variables that the literals around ``agg`` ground: positive atoms' variables,
    then ``x = t`` for a ``t`` whose variables are (an aggregate's value counts as
    ground)."""
    literals = _around(body, agg)
    ground = {arg.name for lit in literals if isinstance(lit, Atom)
              for arg in lit.args if isinstance(arg, Var)}
    changed = True
    while changed:
        changed = False
        for lit in literals:
            if not (isinstance(lit, Comparison) and lit.op == "="):
                continue
            for var, other in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(var, Var) and var.name not in ground and \
                        set(term_vars(other, inside=False)) <= ground:
                    ground.add(var.name)
                    changed = True
    return ground


def _around(body: tuple[Literal, ...], agg: Aggregate) -> list[Literal]:
    """The literals around ``agg``: of the body and of each aggregate body that encloses
    it, every one but the literal that holds it."""
    holder = next((lit for lit in body if _holds(lit, agg)), None)
    rest = [lit for lit in body if lit is not holder]
    if isinstance(holder, Atom):  # b(x, max s : {...}) grounds x
        rest.append(Atom(holder.relation, tuple(a if isinstance(a, Var) else Wildcard()
                                                for a in holder.args)))
    # of the aggregates whose bodies hold agg, the outermost: its body is the next scope
    outermost = [a for a in _aggregates(Clause(Atom("_", ()), (holder,)))
                 if a is not agg and any(_holds(lit, agg) for lit in a.body)] \
        if holder is not None else []
    outermost = [a for a in outermost if not any(b is not a and _holds(b, a) for b in outermost)]
    return rest + (_around(outermost[0].body, agg) if outermost else [])


def _holds(node: object, agg: Aggregate) -> bool:
    """Whether ``agg`` is ``node`` or inside it."""
    if node is agg:
        return True
    match node:
        case Aggregate(_, target, body):
            return (target is not None and _holds(target, agg)) or \
                any(_holds(lit, agg) for lit in body)
        case BinOp(_, left, right) | Comparison(_, left, right):
            return _holds(left, agg) or _holds(right, agg)
        case UnaryOp(_, arg) | Negation(arg):
            return _holds(arg, agg)
        case Call(_, args) | Atom(_, args) | Constraint(_, args):
            return any(_holds(a, agg) for a in args)
    return False


def _flatten(body: tuple[Literal, ...]) -> list[Literal]:
    """The body with each computed argument of a positive atom replaced by a fresh variable
    and an equality: ``r(x + 1, y)`` -> ``r(#0, y), #0 = x + 1``. Soufflé binds only the
    plain variables of an atom and checks its expressions once their variables are bound,
    wherever they come from (``a(x, y + 1), b(y, x - 1)`` is grounded)."""
    out: list[Literal] = []
    extra: list[Literal] = []
    for literal in body:
        if isinstance(literal, Atom):
            args = []
            for arg in literal.args:
                if isinstance(arg, (Var, Wildcard, Number, Float, String)):
                    args.append(arg)
                else:
                    fresh = Var(f"#{len(extra)}")
                    extra.append(Comparison("=", fresh, arg))
                    args.append(fresh)
            literal = Atom(literal.relation, tuple(args))
        out.append(literal)
    return out + extra


MAX_RANGE = 10**6  # values one range may generate here


class RangeTooLong(ValueError):
    """A range of more than MAX_RANGE values: one over a wrapped 64-bit bound spans about
    2^64, which Soufflé could not finish either."""


def _range(start, end, step=None) -> list:
    """What Soufflé's range(start, end[, step]) generates: from start towards end, end
    excluded, by step (1 upwards, -1 downwards by default); a step of 0 gives start alone
    unless start = end. Floats as Soufflé's loop makes them, each the one before plus
    step (``for (x = from; x < to; x += step)``); unsigned values are non-negative ints."""
    if step is None:
        step = (1 if start <= end else -1) * (1.0 if isinstance(start, float) else 1)
    if step == 0:
        return [start] if start != end else []
    if (end - start) / step > MAX_RANGE:  # a wrapped unsigned bound: 2^64 values
        raise RangeTooLong(f"range({start}, {end}, {step}) generates more than {MAX_RANGE} "
                           "values (Soufflé would not finish either)")
    if isinstance(start, Unsigned):
        return [Unsigned(v) for v in range(start, end, step)]
    if not isinstance(start, float):
        return list(range(start, end, step))
    out, x = [], start
    while (x < end) if step > 0 else (end < x):
        out.append(x)
        x += step
    return out


def _binds(var: Term, expr: Term, binding: Binding, ev: Evaluator) -> bool:
    """Whether ``var = expr`` can bind an unbound variable to a ground expression."""
    return isinstance(var, Var) and var.name not in binding and ev.ready(expr, binding)


def _unify(args: tuple[Term, ...], row: tuple, binding: Binding) -> Binding | None:
    """``binding`` extended so that the variables of ``args`` equal ``row``, or None."""
    extended = binding
    for arg, value in zip(args, row, strict=True):
        if isinstance(arg, Var):
            if arg.name in extended:
                if extended[arg.name] != value:
                    return None
            else:
                extended = {**extended, arg.name: value}
    return extended


# ---------------------------------------------------------------------------------------
# Stratification


def _dependencies(clause: Clause) -> Iterator[tuple[str, bool]]:
    """(body relation, negative?) for every atom the clause's head depends on."""
    def walk(node, negative: bool):
        match node:
            case Atom(relation, args):
                yield relation, negative
                for arg in args:
                    yield from walk(arg, negative)
            case Negation(atom):
                yield from walk(atom, True)
            case Aggregate(_, target, body):
                for literal in body:
                    yield from walk(literal, True)
                if target is not None:
                    yield from walk(target, True)
            case BinOp(_, left, right) | Comparison(_, left, right):
                yield from walk(left, negative)
                yield from walk(right, negative)
            case UnaryOp(_, arg):
                yield from walk(arg, negative)
            case Call(_, args) | Constraint(_, args):
                for arg in args:
                    yield from walk(arg, negative)
    for node in [*clause.head.args, *clause.body]:
        yield from walk(node, False)


def strata(program: Program, relations: set[str]) -> list[list[str]]:
    """Relations grouped into SCCs of the precedence graph, in evaluation order."""
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(relations))
    negative = set()
    for clause in program.clauses:
        for body, neg in _dependencies(clause):
            graph.add_edge(body, clause.head.relation)
            if neg:
                negative.add((body, clause.head.relation))
    dag = nx.condensation(graph)
    for body, head in negative:
        if dag.graph["mapping"][body] == dag.graph["mapping"][head]:
            raise ValueError(f"not stratifiable: {head} depends negatively on {body} in a cycle")
    order = nx.lexicographical_topological_sort(dag, key=lambda n: min(dag.nodes[n]["members"]))
    return [sorted(dag.nodes[n]["members"]) for n in order]


# ---------------------------------------------------------------------------------------
# Entry point


def _column_type(program: Program, relation: str, column: int) -> str | None:
    """The primitive type of a declared relation's column (None if undeclared)."""
    decl = program.decl(relation)
    if decl is None or column >= len(decl.attributes):
        return None
    return _primitive(program, decl.attributes[column].type)


def _primitive(program: Program, type_name: str) -> str:
    """The primitive type a (possibly user-defined) type name resolves to."""
    bases = {t.name: t.base for t in program.types}
    seen = set()
    while type_name in bases and type_name not in seen:
        seen.add(type_name)
        type_name = bases[type_name]
    return type_name


def _coerce(program: Program, relation: str, row: tuple) -> tuple:
    """An input tuple with each value converted to its column's Python type."""
    decl = program.decl(relation)
    if decl is None:
        return tuple(row)
    convert = {"number": int, "unsigned": Unsigned, "float": float, "symbol": str}
    return tuple(convert.get(_primitive(program, a.type), lambda v: v)(v)
                 for a, v in zip(decl.attributes, row, strict=True))


def _seed_symbols(ev: Evaluator, program: Program, inputs: dict[str, set[tuple]]) -> None:
    """Number the program's string constants, then the input symbols, for ``ord``."""
    stack: list = list(program.clauses)
    found: list[str] = []
    while stack:
        node = stack.pop(0)
        if isinstance(node, String):
            found.append(node.value)
        elif isinstance(node, (tuple, list)):
            stack[:0] = list(node)
        elif hasattr(node, "__dataclass_fields__"):
            stack[:0] = [getattr(node, f) for f in node.__dataclass_fields__ if f != "span"]
    for name in sorted(inputs):
        for row in sorted(inputs[name], key=repr):
            found += [v for v in row if isinstance(v, str)]
    for symbol in found:
        ev.ord(symbol)


def evaluate(program: Program, inputs: dict[str, set[tuple]] | None = None,
             functors: dict[str, object] | None = None) -> dict[str, set[tuple]]:
    """Every declared (and every derived) relation's tuples after evaluating ``program``."""
    program = typed_literals(program)  # Soufflé's constants typed from their contexts
    inputs = subsumption.inputs_of(program, inputs or {})  # r's rows fill r@all
    ev = Evaluator(program)
    ev.functors = dict(functors or {})
    _seed_symbols(ev, program, inputs)
    relations = {d.name for d in program.decls} | set(inputs)
    relations |= {c.head.relation for c in program.clauses}
    relations |= {r for c in program.clauses for r, _ in _dependencies(c)}
    for name in relations:
        ev.db[name] = {_coerce(program, name, row) for row in inputs.get(name, ())}
        if name in ev.lattices:
            ev.db[name] = lattice_join(ev.db[name], *ev.lattices[name],
                                       unsigned=ev.unsigned[name], lub=ev.lub)
    for stratum in strata(program, relations):
        members = set(stratum)
        ev.run_stratum([c for c in program.clauses if c.head.relation in members])
    return {name: set(ev.db[name]) for name in sorted(relations)}
