"""The relational-algebra plan the Spark executor runs.

A :class:`Plan` is a list of :class:`StratumPlan` values. Each stratum has a preamble of
:class:`Kernel` values (non-recursive clauses, run once) and, when recursive, a loop body of
semi-naive kernels (one per recursive body atom that reads a delta), run until no delta is
left. A kernel is the papers' fused operator: join its scans, select, bind, anti-join,
project and reorder into the head's columns, all in one Spark plan.

Stored relations live in a :class:`Layout`: hash-partitioned by their bucket columns and a
sub-bucket column, so joins on the bucket columns and deduplication against ``full`` need
no shuffle of the stored side.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sparklog.semantics.strata import Stratum
from sparklog.syntax import nodes as n

FULL, DELTA, OLD = "full", "delta", "old"  # old = full without the last delta


@dataclass(frozen=True)
class Layout:
    """Where a relation's tuples live: bucket columns, then the sub-bucket column.

    A tuple's bucket is a hash of its ``key`` columns, its sub-bucket within the bucket a
    hash of the ``hashed`` ones; how many sub-buckets each bucket has, and where they live,
    changes as the relation grows (spark/balance.py). Stored rows are sorted by (bucket
    columns, sub-bucket, other columns) inside each partition so sort-merge joins skip the
    sort.

    A lattice relation's ``dependent`` column (its $MIN or $MAX value) is neither a bucket
    column nor hashed into the sub-bucket (PARALAGG §IV-A, §IV-C): an improved value then
    lands on the partition that holds the value it improves. Nor are the ``detail`` columns
    of a $SUM/$COUNT relation's contributions (what identifies a contribution beside its key):
    every contribution of a key then lives on one partition, where the key's total is summed.
    """

    relation: str
    arity: int
    key: tuple[int, ...]
    dependent: int | None = None
    # the lattice's join with ``dependent``: "min", "max", "user:T" (the Lub of .lattice T);
    # "sum" and "count" (a total of contributions) and "contribution" keep the value
    # derived last
    lattice: str | None = None
    detail: tuple[int, ...] = ()
    # a secondary index (rewrite/indexes.py): a copy of ``index_for``'s tuples placed by
    # other bucket columns; ``lagging``: maintained from that relation's delta, one round
    # behind it (its ``old`` version), else built once from a lower stratum's relation
    index_of: str | None = None
    lagging: bool = False
    # relations of lower strata that the loop rounds of this one's stratum send, a copy to
    # each of its sub-buckets, to the delta rows they join (rewrite/replicate.py)
    replicated: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        assert all(0 <= k < self.arity for k in self.key), self
        assert len(set(self.key)) == len(self.key), self
        assert self.dependent not in self.key, self
        assert (self.dependent is None) == (self.lattice is None), self
        assert not set(self.detail) & (set(self.key) | {self.dependent}), self

    @property
    def rest(self) -> tuple[int, ...]:
        """The columns after the bucket columns, the dependent one last."""
        rest = tuple(i for i in range(self.arity) if i not in self.key and i != self.dependent)
        return rest + ((self.dependent,) if self.dependent is not None else ())

    @property
    def independent(self) -> tuple[int, ...]:
        """The columns that identify a tuple: all of them, but a lattice's dependent one."""
        return tuple(i for i in range(self.arity) if i != self.dependent)

    @property
    def hashed(self) -> tuple[int, ...]:
        """The columns the sub-bucket hashes: the independent ones outside the bucket."""
        return tuple(i for i in self.rest if i != self.dependent and i not in self.detail)

    @property
    def sort_order(self) -> tuple[int, ...]:
        return self.key + self.rest


@dataclass(frozen=True)
class Scan:
    """Read one version of a relation; ``args`` are variables, constants or wildcards.

    ``exists``: the atom only tests existence (lower._existence_tests): none of its
    variables is needed beyond it that another atom does not bind. It is then a semi-join
    on the variables it shares with the steps before it (an existence check when it shares
    none), so it never multiplies rows: ``q(x) :- i(x), c(_, _, _), f(x, _)``.
    """

    relation: str
    version: str
    args: tuple[n.Term, ...]
    exists: bool = False
    # a $SUM/$COUNT relation's contributions read as their totals (rewrite/totals.py): one
    # row per key (every column but ``detail`` and this one), this column summed; ``old``
    # is then the keys without a contribution in the last round
    summed: int | None = None

    def __post_init__(self) -> None:
        assert self.version in (FULL, DELTA, OLD), self.version
        assert self.summed is None or self.version != DELTA, self
        assert all(isinstance(a, n.Var | n.Wildcard | n.Number | n.Float | n.String)
                   for a in self.args), self.args


@dataclass(frozen=True)
class Bind:
    """``var = expr``: a new column computed from bound variables."""

    var: str
    expr: n.Term


@dataclass(frozen=True)
class Filter:
    """A comparison or constraint over bound variables."""

    literal: n.Comparison | n.Constraint | n.BoolLit


@dataclass(frozen=True)
class AntiJoin:
    """``!r(...)``: keep rows with no matching tuple in ``r``'s full version."""

    atom: n.Atom


@dataclass(frozen=True)
class AggregateJoin:
    """``var = agg : { body }``: aggregate a sub-kernel grouped by ``group`` and join it."""

    var: str
    aggregate: n.Aggregate
    group: tuple[str, ...]
    body: tuple[Step, ...]
    correlated: tuple[str, ...] = ()  # outer variables the body only filters on


@dataclass(frozen=True)
class Total:
    """The total of a $SUM/$COUNT relation's contributions, for each key the delta scan before
    it read: ``var`` = the sum of column ``value`` of ``relation``'s full version over the rows
    whose ``group`` columns equal ``args``. The contributions are placed by those columns
    (Layout.detail), so the sum runs inside each partition."""

    relation: str
    args: tuple[n.Var, ...]
    group: tuple[int, ...]
    value: int
    var: str


Step = Scan | Bind | Filter | AntiJoin | AggregateJoin | Total


@dataclass(frozen=True)
class Kernel:
    """One clause (or one semi-naive variant of it) as a fused RA operator.

    ``steps`` start with a scan and are in execution order: every step's variables are
    bound by earlier steps. ``head`` gives the output columns in the head's order.
    """

    relation: str
    head: tuple[n.Term, ...]
    steps: tuple[Step, ...]
    clause: n.Clause
    delta: int | None = None  # index in ``steps`` of the scan reading a delta

    def scans(self) -> list[Scan]:
        return [s for s in self.steps if isinstance(s, Scan)]

    def reads(self) -> set[str]:
        """Every relation the kernel reads: scanned, negated or aggregated over."""
        def of(steps: tuple[Step, ...]) -> set[str]:
            out: set[str] = set()
            for s in steps:
                if isinstance(s, Scan):
                    out.add(s.relation)
                elif isinstance(s, AntiJoin):
                    out.add(s.atom.relation)
                elif isinstance(s, AggregateJoin):
                    out |= of(s.body)
            return out
        return of(self.steps)


@dataclass(frozen=True)
class StratumPlan:
    """A stratum's preamble kernels and, if recursive, its semi-naive loop body."""

    stratum: Stratum
    preamble: tuple[Kernel, ...]
    loop: tuple[Kernel, ...]
    indexes: tuple[str, ...] = ()  # the lagging indexes its rounds maintain (rewrite/)

    @property
    def relations(self) -> tuple[str, ...]:
        """What its rounds store: the stratum's relations, then its lagging indexes."""
        return self.stratum.relations + self.indexes


@dataclass(frozen=True)
class Plan:
    """The whole program: strata in order and the layout of every relation."""

    strata: tuple[StratumPlan, ...]
    layouts: dict[str, Layout]
    kinds: dict[str, tuple[str, ...]]
    user_lattices: dict[str, n.LatticeDecl] = field(default_factory=dict)  # .lattice T<>

    def lattice(self, relation: str) -> str | None:
        """How a lattice relation's dependent column combines (Layout.lattice); None for sets."""
        return self.layouts[relation].lattice
