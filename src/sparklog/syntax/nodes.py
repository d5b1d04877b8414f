"""The abstract syntax of sparklog's Soufflé-compatible Datalog.

Nodes are frozen dataclasses with tuple fields. The builder already desugars what has an
obvious core form: a rule with several heads or a disjunctive body becomes several
:class:`Clause` values with one head and one conjunctive body each, so later stages see
Horn clauses only. Every node carries the :class:`Span` it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from sparklog.errors import NOWHERE, Span

# ---------------------------------------------------------------------------------------
# Types

PRIMITIVE_TYPES = ("number", "unsigned", "float", "symbol")


@dataclass(frozen=True)
class TypeDecl:
    """``.type Name <: base`` (subtype), ``.type Name = base`` (alias) or ``.type Name =
    A | B`` (union: ``members``, each resolving to the same primitive type; ``base`` is
    the first)."""

    name: str
    base: str
    subtype: bool
    span: Span = field(default=NOWHERE, compare=False)
    members: tuple[str, ...] = ()
    fields: tuple[Attribute, ...] | None = None  # a record type ``.type P = [a: T, ...]``
    # an algebraic data type ``.type T = A {x: number} | B {}``: each branch's name and fields
    branches: tuple[tuple[str, tuple[Attribute, ...]], ...] | None = None


# ---------------------------------------------------------------------------------------
# Terms


@dataclass(frozen=True)
class Var:
    """A named variable."""

    name: str
    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Wildcard:
    """``_``: a fresh variable at each occurrence."""

    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Number:
    """An integer constant (type number, or unsigned when written ``12u``)."""

    value: int
    unsigned: bool = False
    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Float:
    """A floating-point constant."""

    value: float
    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class String:
    """A symbol constant, already unescaped."""

    value: str
    span: Span = field(default=NOWHERE, compare=False)


BINARY_OPS = ("+", "-", "*", "/", "%", "^", "band", "bor", "bxor", "bshl", "bshr", "bshru",
              "land", "lor", "lxor")
UNARY_OPS = ("neg", "bnot", "lnot")


@dataclass(frozen=True)
class BinOp:
    """An arithmetic, bitwise or logical operator on two terms."""

    op: str
    left: Term
    right: Term
    span: Span = field(default=NOWHERE, compare=False)

    def __post_init__(self) -> None:
        assert self.op in BINARY_OPS, self.op


@dataclass(frozen=True)
class UnaryOp:
    """``-x``, ``bnot x`` or ``lnot x``."""

    op: str
    arg: Term
    span: Span = field(default=NOWHERE, compare=False)

    def __post_init__(self) -> None:
        assert self.op in UNARY_OPS, self.op


# name -> (argument kinds, result kind); "num" is any numeric type, "any" any type,
# "same" the type of the arguments. Checked in semantics.types.
FUNCTORS: dict[str, tuple[tuple[str, ...], str]] = {
    "cat": (("symbol", "symbol"), "symbol"),  # cat is variadic (>= 2); checked specially
    "strlen": (("symbol",), "number"),
    "substr": (("symbol", "number", "number"), "symbol"),
    "to_number": (("any",), "number"),  # parses a symbol, truncates a float
    "to_string": (("num",), "symbol"),
    "to_float": (("num",), "float"),
    "to_unsigned": (("num",), "unsigned"),
    "ord": (("symbol",), "number"),
    "min": (("num", "num"), "same"),  # min and max are variadic (>= 2)
    "max": (("num", "num"), "same"),
    # range(from, to[, step]) generates values: only as ``x = range(..)`` in a body
    "range": (("num", "num", "num"), "same"),
}
# Functors that are constraints (true or false), written as body literals.
CONSTRAINT_FUNCTORS = {"contains": 2, "match": 2}


@dataclass(frozen=True)
class Call:
    """A functor application such as ``cat(a, b)`` or ``strlen(s)``."""

    name: str
    args: tuple[Term, ...]
    span: Span = field(default=NOWHERE, compare=False)


AGGREGATES = ("count", "sum", "min", "max", "mean")


@dataclass(frozen=True)
class Aggregate:
    """``count : { body }``, ``sum x : { body }``, ... used as a term.

    Variables of the body that also occur outside the aggregate group it; the others are
    local to it.
    """

    func: str
    target: Term | None
    body: tuple[Literal, ...]
    span: Span = field(default=NOWHERE, compare=False)

    def __post_init__(self) -> None:
        assert self.func in AGGREGATES, self.func
        assert (self.target is None) == (self.func == "count"), self.func


# Head aggregates over lattices (PARALAGG): ``$MIN(expr)`` in a head column keeps, for each
# value of the relation's other columns, the least value derived; ``$SUM`` and ``$COUNT``
# are monotone aggregates over distinct contributions (semantics/lattices.py).
HEAD_AGGREGATES = ("min", "max", "sum", "count")


@dataclass(frozen=True)
class HeadAggregate:
    """``$MIN(expr)``, ``$MAX``, ``$SUM`` or ``$COUNT`` as a head argument: the relation's
    dependent column.

    The relation then holds one tuple per value of its other (independent) columns, whose
    dependent value is the lattice join (least for $MIN, greatest for $MAX) of every value
    derived for it, or the sum (count) over its distinct contributions.
    """

    func: str
    arg: Term
    span: Span = field(default=NOWHERE, compare=False)

    def __post_init__(self) -> None:
        assert self.func in HEAD_AGGREGATES, self.func


@dataclass(frozen=True)
class Record:
    """``[t1, ..., tn]``: a value of a record type. Only the parser makes it:
    syntax/records.py replaces every record by its fields before any later stage runs."""

    args: tuple[Term, ...]
    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Branch:
    """``$A(t1, ...)``: a value of an algebraic data type's branch ``A``; replaced by
    syntax/records.py as records are."""

    name: str
    args: tuple[Term, ...]
    span: Span = field(default=NOWHERE, compare=False)


Term: TypeAlias = (Var | Wildcard | Number | Float | String | BinOp | UnaryOp | Call | Aggregate
                   | HeadAggregate | Record | Branch)
TERMS = (Var, Wildcard, Number, Float, String, BinOp, UnaryOp, Call, Aggregate, HeadAggregate,
         Record, Branch)
Constant: TypeAlias = Number | Float | String


# ---------------------------------------------------------------------------------------
# Literals


@dataclass(frozen=True)
class Atom:
    """``r(t1, ..., tn)``."""

    relation: str
    args: tuple[Term, ...]
    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Negation:
    """``!r(...)``."""

    atom: Atom
    span: Span = field(default=NOWHERE, compare=False)


COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class Comparison:
    """``t1 op t2``; ``x = t`` binds ``x`` when ``t`` is bound."""

    op: str
    left: Term
    right: Term
    span: Span = field(default=NOWHERE, compare=False)

    def __post_init__(self) -> None:
        assert self.op in COMPARISON_OPS, self.op


@dataclass(frozen=True)
class Constraint:
    """A constraint functor such as ``contains(sub, s)`` or ``match(regex, s)``."""

    name: str
    args: tuple[Term, ...]
    negated: bool = False
    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class BoolLit:
    """``true`` or ``false`` in a body."""

    value: bool
    span: Span = field(default=NOWHERE, compare=False)


Literal: TypeAlias = Atom | Negation | Comparison | Constraint | BoolLit

# ---------------------------------------------------------------------------------------
# Declarations, clauses, directives, program


@dataclass(frozen=True)
class Attribute:
    name: str
    type: str
    span: Span = field(default=NOWHERE, compare=False)
    lattice: bool = False  # ``v: T<>``: the column holds values of the user lattice T


@dataclass(frozen=True)
class LatticeOp:
    """``Lub(x, y) -> expr`` (``params`` name its two arguments) or ``Bottom -> expr``."""

    name: str
    params: tuple[str, ...]
    expr: Term
    span: Span = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class LatticeDecl:
    """Soufflé's ``.lattice T<> { Bottom -> .., Lub(x, y) -> .., Glb(x, y) -> .. }``."""

    name: str
    ops: tuple[LatticeOp, ...]
    span: Span = field(default=NOWHERE, compare=False)

    def op(self, name: str) -> LatticeOp | None:
        return next((o for o in self.ops if o.name == name), None)


# A declared column: its name and, for a record, the shapes of its fields (None: a column
# of a primitive type, one attribute of the flattened relation); for an algebraic data
# type, its branches: ``(name, ("$", ((branch, (field shapes...)), ...)))``, whose columns
# are the branch's number and then every branch's fields in turn
Shape: TypeAlias = "tuple[str, tuple | None]"


@dataclass(frozen=True)
class Decl:
    """``.decl r(a: number, b: symbol)``."""

    name: str
    attributes: tuple[Attribute, ...]
    span: Span = field(default=NOWHERE, compare=False)
    # the declared columns when some hold records (syntax/records.py), whose fields are
    # then ``attributes``: how outputs put the fields back together
    records: tuple[Shape, ...] = ()

    @property
    def arity(self) -> int:
        return len(self.attributes)


@dataclass(frozen=True)
class Clause:
    """One Horn clause ``head :- body.``; a fact has an empty body."""

    head: Atom
    body: tuple[Literal, ...]
    span: Span = field(default=NOWHERE, compare=False)

    @property
    def is_fact(self) -> bool:
        return not self.body


@dataclass(frozen=True)
class Directive:
    """``.input r(key=value, ...)``, ``.output r``, ``.printsize r``, and sparklog's
    ``.pragma r(strategy=smart)``: how to evaluate r (rewrite/closure.py)."""

    kind: str
    relation: str
    params: tuple[tuple[str, str], ...] = ()
    span: Span = field(default=NOWHERE, compare=False)

    def __post_init__(self) -> None:
        assert self.kind in ("input", "output", "printsize", "pragma"), self.kind

    def param(self, key: str, default: str | None = None) -> str | None:
        return dict(self.params).get(key, default)


@dataclass(frozen=True)
class Program:
    """A parsed program: its declarations, clauses and directives, in source order."""

    types: tuple[TypeDecl, ...] = ()
    decls: tuple[Decl, ...] = ()
    clauses: tuple[Clause, ...] = ()
    directives: tuple[Directive, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()  # (file name, text), for diagnostics
    lattices: tuple[LatticeDecl, ...] = ()

    def decl(self, name: str) -> Decl | None:
        return next((d for d in self.decls if d.name == name), None)

    def source_map(self) -> dict[str, str]:
        return dict(self.sources)
