"""IR kernels -> Spark SQL text: one small function per step, dispatched on the step's type.

A kernel becomes one SQL query over the stored relations (registered as temporary views):
scans of stored versions, partition-local joins on the bucket columns, filters, bindings,
anti-joins, aggregates and the projection into the head's columns. The text is built in
Python and handed to Spark in one call, so planning an iteration costs one round trip to
the JVM instead of hundreds, and no tuple ever passes through Python.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Protocol

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparklog.ir.nodes import (DELTA, FULL, OLD, AggregateJoin, AntiJoin, Bind, Filter, Kernel,
                               Layout, Scan, Total)
from sparklog.options import Options
from sparklog.spark import expressions as X
from sparklog.spark.balance import Allocation, hash_input, home_sql
from sparklog.syntax import nodes as n

SB, IT = "_sb", "_it"
HOME = "_q"  # the home value(s) an outer row needs to meet a stored side (balance.py)
# the placement column a partition-local combine groups by (kernel_query; jvm.derivations
# finds the combine's aggregate by it)
COMBINE = "_lc"
# the head's home value, where it is the home of the stored scan whose placement the rows
# still have (kernel_query): the insert takes it as the new tuples' ``_sb``
KEPT = "_hm"
OLDER, NEWEST = 0, 1  # values of _it: derived before the last round, or in it
CROSS_ROWS = 10_000  # the largest side of a cross join gathered in one partition (_gathered)


class Store(Protocol):
    """What a kernel reads: stored versions as views, layouts, kinds, the symbol table."""

    spark: SparkSession
    iteration: int
    # the slice (i, of n) of the delta an inner iteration reads (iteration roll-over)
    delta_slice: tuple[int, int] | None
    # relations whose last round was skipped (rounds._prune): their delta is empty, and the
    # rows their newest run stamps NEWEST are old
    aged: set[str]

    def view(self, relation: str) -> str: ...
    def sealed_views(self, relation: str) -> list[str]: ...
    def symbols_view(self) -> str: ...
    def layout(self, relation: str) -> Layout: ...
    def kinds(self, relation: str) -> tuple[str, ...]: ...
    def allocation(self, relation: str) -> Allocation: ...
    def broadcast_delta(self, kernel: Kernel) -> bool: ...
    def size_or_expected(self, relation: str) -> int: ...
    def read_rows(self, step: Scan) -> int: ...
    def presum_marks(self, relation: str) -> dict[int, str]: ...
    def constant_rows(self, step: Scan, sql: str) -> list[tuple] | None: ...
    def copy_view(self, relation: str, homes: str) -> str | None: ...

    @property
    def options(self) -> Options: ...


@dataclass
class Query:
    """The SQL built so far and what its columns mean."""

    sql: str | None
    scope: X.Scope
    # the stored scan whose placement sql's rows still have, with its ``_sb`` column (the
    # first scan's, or a scan the rows joined partition-locally or moved to)
    partitioned_as: Scan | None = None
    text_columns: set[str] = field(default_factory=set)
    depth: int = 0
    # dynamic join planning (Store.broadcast_delta): the side holding the round's delta is
    # broadcast to the joins that are not partition-local, instead of shuffling both sides
    broadcast: bool = False
    moved: list[str] = field(default_factory=list)  # what each such join moved
    # the rows of the kernel's first scan (Store.read_rows): what moving the rows so far
    # would cost, against replicating a small stored side to them (_replicated)
    rows: int = 0
    kernel: Kernel | None = None  # the kernel whose steps these are (_replicated)

    def wrap(self, select: str, tail: str = "") -> str:
        """``SELECT <select> FROM (<sql>) q<depth> <tail>``."""
        self.depth += 1
        return f"SELECT {select} FROM ({self.sql}) q{self.depth} {tail}".rstrip()


def kernel_frame(kernel: Kernel, store: Store) -> DataFrame:
    """The head tuples a kernel derives (columns c0..ck, before deduplication)."""
    return store.spark.sql(kernel_sql(kernel, store))


def kernel_sql(kernel: Kernel, store: Store) -> str:
    return kernel_query(kernel, store, keep=False)[0]


@dataclass(frozen=True)
class Combine:
    """How a round's candidates of one relation are combined inside their partition before
    the one shuffle (Database.combine): ``distinct`` (a set relation), or the lattice's
    join ``min``/``max`` of the dependent column ``column`` per key."""

    how: str  # "distinct", "min" or "max"
    column: int | None = None


def kernel_query(kernel: Kernel, store: Store, combine: Combine | None = None,
                 keep: bool = True, symbols: int = 0) -> tuple[str, list[str], bool, bool]:
    """The kernel's SQL, what each of its joins that is not partition-local moves: "delta"
    (broadcast), "outer" (the outer side only), "inner" (the stored side only, to the outer
    rows' places) or "both" (shuffled); whether its candidates are combined; and whether
    it gives each its home (column ``KEPT``).

    Candidates still in the partition of a stored relation (the kernel's last join was
    partition-local, or it has none) may not need the round's shuffle at all: where the
    head relation computes its home from the same values as that relation does, the same
    way (:func:`_keeps_home`: a copy ``p(x, y) :- q(x, y)`` of a relation placed alike, a
    closure's lengths projected away), the stored ``_sb`` is their home, and with
    ``keep`` it goes on as ``KEPT``: Spark finds them placed and plans no home Exchange.
    Else, with ``combine``, they are combined in that partition first, as a combiner does
    before a shuffle: duplicates, or all but a key's best value, never cross it. Grouped
    by the placement column, the aggregate needs no Exchange of its own. The combine step
    after the shuffle is unchanged, so the result is too.

    ``symbols``: the rows also carry the strings the kernel makes (:func:`symbol_pairs`),
    in ``symbols`` pairs of columns ``_i<j>`` (id) and ``_s<j>`` (text), NULL where it
    makes fewer: so the round that makes them keeps their text, and the symbol table is
    built from its rows instead of evaluating the kernel again."""
    start = Query(None, X.Scope(), broadcast=kernel.delta is not None
                  and store.broadcast_delta(kernel), kernel=kernel)
    q = run_steps(kernel.steps, store, start, kernel.head)
    _ensure_text(q, _head_text_vars(kernel.head), store)
    # a presummed relation's identity columns hold its marker (ir/presum.py)
    marks = store.presum_marks(kernel.relation) if kernel.head else {}
    cols = [f"{marks[i] if i in marks else X.value(t, q.scope)} AS c{i}"
            for i, t in enumerate(kernel.head)]
    kept = keep and _keeps_home(kernel, q.partitioned_as, store)
    combined = (combine is not None and bool(kernel.head) and q.partitioned_as is not None
                and not kept)
    marker = [f"{SB} AS {COMBINE}"] if combined else [f"{SB} AS {KEPT}"] if kept else []
    if symbols:
        pairs = symbol_pairs(kernel, q)
        pairs += [("CAST(NULL AS BIGINT)", "CAST(NULL AS STRING)")] * (symbols - len(pairs))
        marker += [f"{i} AS _i{j}, {t} AS _s{j}" for j, (i, t) in enumerate(pairs)]
    inner = q.wrap(", ".join(cols + marker) or "1 AS _unit")
    if not kernel.head:
        return inner, q.moved, False, False
    sql = f"SELECT * FROM ({inner}) h WHERE " + " AND ".join(
        f"c{i} IS NOT NULL" for i in range(len(kernel.head)))
    if combined:
        sql = _combined(sql, len(kernel.head), combine)
    return sql, q.moved, combined, kept


def _keeps_home(kernel: Kernel, placed: Scan | None, store: Store) -> bool:
    """Whether the head relation's home of every derived tuple is the ``_sb`` of the row
    of ``placed`` (the stored scan whose placement the rows have) it was derived from:
    both homes are one SQL text once each column is named by the variable it holds. The
    same function of the same values, so the same value, row by row."""
    if placed is None or not kernel.head:
        return False
    heads = {i: t.name for i, t in enumerate(kernel.head) if isinstance(t, n.Var)}
    scanned = {i: a.name for i, a in enumerate(placed.args) if isinstance(a, n.Var)}
    try:
        mine = home_sql(store.layout(kernel.relation), store.kinds(kernel.relation),
                        store.allocation(kernel.relation), lambda i: f"`{heads[i]}`")
        theirs = home_sql(store.layout(placed.relation), store.kinds(placed.relation),
                          store.allocation(placed.relation), lambda i: f"`{scanned[i]}`")
    except KeyError:  # a home column that is not a variable
        return False
    return mine == theirs


def _combined(sql: str, width: int, combine: Combine) -> str:
    heads = [f"c{i}" for i in range(width)]
    if combine.how == "distinct":
        keys, select = heads, heads
    else:
        keys = [c for i, c in enumerate(heads) if i != combine.column]
        select = [f"{combine.how}({c}) AS {c}" if i == combine.column else c
                  for i, c in enumerate(heads)]
    return (f"SELECT {', '.join(select)} FROM ({sql}) k "
            f"GROUP BY {', '.join(keys + [COMBINE])}")


def creates_symbols(kernel: Kernel) -> bool:
    """True when the kernel makes symbols (e.g. with cat) that the symbol table lacks."""
    return symbol_count(kernel) > 0


def symbol_count(kernel: Kernel) -> int:
    """How many strings a row of the kernel can make (:func:`symbol_pairs`, at most)."""
    return (sum(len(X.produced_symbols(t)) for t in kernel.head)
            + sum(1 for s in kernel.steps if isinstance(s, Bind) and X.produced_symbols(s.expr)))


def symbol_pairs(kernel: Kernel, q: Query) -> list[tuple[str, str]]:
    """The (id, text) SQL of each string a row of the kernel makes that a stored tuple
    can hold: its head's (``cat``, ``substr`` ...; those made on the way to a number,
    ``strlen(cat(a, b))``, too), and the value of a bind made of strings that is still in
    scope (one no later step nor the head reads holds nothing stored)."""
    pairs = [(X.value(c, q.scope), X.text(c, q.scope))
             for t in kernel.head for c in X.produced_symbols(t)]
    for s in kernel.steps:
        if isinstance(s, Bind) and X.produced_symbols(s.expr):
            col = q.scope.columns.get(s.var)
            if col is not None and col in q.text_columns:
                pairs.append((col, f"{col}__s"))
    return pairs


def _head_text_vars(head: tuple[n.Term, ...]) -> set[str]:
    out: set[str] = set()
    for t in head:
        out |= X.string_vars(t)
    return out


def run_steps(steps, store: Store, start: Query | None = None,
              head: tuple[n.Term, ...] | None = None) -> Query:
    """The steps' SQL. Given the ``head`` (a kernel's, whose rows are a set), the rows
    going into each join drop the variables nothing after it reads, and their duplicates
    (:func:`_distinct_before`); an aggregate's body, whose rows it counts, keeps them."""
    q = start or Query(None, X.Scope())
    if q.sql is None and (not steps or not isinstance(steps[0], Scan) or steps[0].exists):
        q.sql = "SELECT 1 AS _unit"  # one empty row: a body without atoms
    for i, step in enumerate(steps):
        if head is not None and isinstance(step, Scan) and not step.exists and q.sql is not None \
                and store.options.join_dedup:
            _distinct_before(q, _mentions((steps[i:], head)))
        q = translate(step, q, store)
    return q


def _distinct_before(q: Query, live: set[str]) -> None:
    """Drop the columns of the variables not in ``live`` and the duplicate rows that leaves,
    inside each partition, before the next join: ``vf(z, x), ma(z, w), vf(w, y)`` meets
    ``vf(w, y)`` once per distinct ``(x, w)``, not once per ``z`` that links them (a
    program analysis's alias rule, programs/cspa.dl).
    Only while the rows are still placed by a stored relation, whose ``_sb`` the GROUP BY
    keeps: the aggregate then needs no Exchange of its own, as the combine before the
    round's shuffle (kernel_query). A set's rows: a duplicate derives nothing new."""
    dead = [v for v in q.scope.columns if v not in live]
    if not dead or q.partitioned_as is None:
        return
    for v in dead:
        col = q.scope.drop(v)
        q.text_columns.discard(col)
    keep = _columns(q) + [f"{c}__s" for c in sorted(q.text_columns)]
    q.sql = q.wrap(", ".join(keep), f"GROUP BY {', '.join(keep)}")


def _mentions(node) -> set[str]:
    """Every variable name a step or term mentions (its n.Var names, and every string it
    holds: an AggregateJoin's group, a Bind's variable; more than it reads is safe)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.add(node)
        elif isinstance(node, tuple | list):
            stack.extend(node)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node)
                         if f.name != "span")
    return out


@singledispatch
def translate(step, q: Query, store: Store) -> Query:
    raise NotImplementedError(f"no Spark translation for IR step {type(step).__name__}")


def scan_sql(step: Scan, store: Store, names: dict[str, str], keep_sb: bool) -> str:
    """SELECT the scan's first-occurrence variables (named by ``names``) from a version."""
    kinds = store.kinds(step.relation)
    cols, conds = _picked(step, names)
    assert len(kinds) == len(step.args)
    if keep_sb:
        # Aliased to itself: a bare ``_sb`` from a view carries the view's name as its
        # qualifier, which the stored placement's ``_sb`` lacks, and Spark's UnionExec
        # compares its children's placements with that qualifier (Scala ``==``, not
        # semanticEquals): the UNION ALL of a relation's runs would then claim no placement
        # and every join reading them would shuffle all its stored rows. Aliased, each run's
        # ``_sb`` is a fresh attribute with no qualifier, so the union keeps the placement.
        cols.append(f"{SB} AS {SB}")
    select = f"SELECT {', '.join(cols) or '1 AS _unit'} FROM "
    # Stamps are relative (see storage.Database.insert), so this text, and the code Spark
    # generates for it, is the same in every iteration: compiled once, then cached. Only
    # the newest run's stamps count: every row of a sealed run is old.
    stamp = {DELTA: [f"{IT} = {NEWEST}"], OLD: [f"{IT} = {OLDER}"], FULL: []}[step.version]
    if step.relation in store.aged:  # no delta: every row is old (rounds._prune)
        stamp = {DELTA: ["false"], OLD: [], FULL: []}[step.version]
    if step.version == DELTA and store.delta_slice is not None:  # an inner iteration's
        number, slices = store.delta_slice  # slice: by a hash of the whole delta tuple
        tuple_ = ", ".join(f"c{i}" for i in range(len(kinds))) or "0"
        stamp.append(f"pmod(xxhash64({tuple_}), {slices}) = {number}")
    if step.summed is not None:
        return _summed_sql(step, store, conds, cols)
    newest = select + store.view(step.relation) + _where(conds + stamp)
    if step.version == DELTA:
        return newest
    sealed = [select + view + _where(conds) for view in store.sealed_views(step.relation)]
    return " UNION ALL ".join([newest, *sealed])


def _picked(step: Scan, names: dict[str, str]) -> tuple[list[str], list[str]]:
    """The columns a scan selects (its first-occurrence variables, named by ``names``) and
    the conditions its repeated variables and constants put on a stored row."""
    conds, cols, seen = [], [], {}
    for i, arg in enumerate(step.args):
        match arg:
            case n.Var(name=name) if name in seen:
                conds.append(f"c{i} = c{seen[name]}")
            case n.Var(name=name):
                seen[name] = i
                cols.append(f"c{i} AS {names[name]}")
            case n.Wildcard():
                pass
            case _:
                conds.append(f"c{i} = {X.value(arg, X.Scope())}")
    return cols, conds


def _copies_sql(step: Scan, names: dict[str, str], view: str) -> str:
    """A scan of a stored copy of ``step``'s relation sent to every home value
    (Store.copy_view), with each copy's home value in ``_q``."""
    cols, conds = _picked(step, names)
    return f"SELECT {', '.join(cols + [f'{HOME} AS {HOME}'])} FROM {view}{_where(conds)}"


def _summed_sql(step: Scan, store: Store, conds: list[str], cols: list[str]) -> str:
    """A contributions relation read as its totals (Scan.summed): every run's contributions
    of the keys the scan's constants select, summed per key inside each partition (a key's
    contributions share its bucket and sub-bucket, Layout.detail), then the scan's
    columns. ``old``: only the keys without a contribution stamped newest."""
    layout = store.layout(step.relation)
    keys = [f"c{i}" for i in range(len(step.args)) if i != step.summed and i not in layout.detail]
    value = f"c{step.summed}"
    newest = "0" if step.relation in store.aged else f"CASE WHEN {IT} = {NEWEST} THEN 1 ELSE 0 END"
    inner = ", ".join(keys + [f"{value} AS _v", f"{SB} AS {SB}"])
    runs = [f"SELECT {inner}, {newest} AS _n FROM {store.view(step.relation)}{_where(conds)}"]
    runs += [f"SELECT {inner}, 0 AS _n FROM {view}{_where(conds)}"
             for view in store.sealed_views(step.relation)]
    having = " HAVING max(_n) = 0" if step.version == OLD else ""
    grouped = (f"SELECT {', '.join(keys + [SB])}, sum(_v) AS {value} FROM "
               f"({' UNION ALL '.join(runs)}) t GROUP BY {', '.join(keys + [SB])}{having}")
    return f"SELECT {', '.join(cols) or '1 AS _unit'} FROM ({grouped}) u"


def _where(conds: list[str]) -> str:
    return " WHERE " + " AND ".join(conds) if conds else ""


@translate.register
def _scan(step: Scan, q: Query, store: Store) -> Query:
    if step.exists:
        return _exists(step, q, store)
    kinds = store.kinds(step.relation)
    scope = q.scope
    new_vars = {}
    for i, arg in enumerate(step.args):
        if isinstance(arg, n.Var) and arg.name not in new_vars:
            new_vars[arg.name] = kinds[i]
    shared = [v for v in new_vars if v in scope.columns]
    if q.sql is None:  # the first scan: its partitioning is the stored layout
        names = {v: scope.bind(v, k) for v, k in new_vars.items()}
        return Query(scan_sql(step, store, names, keep_sb=True), scope, step, q.text_columns,
                     broadcast=q.broadcast, moved=q.moved, rows=store.read_rows(step),
                     kernel=q.kernel)
    carried = list(scope.columns.values()) + [f"{c}__s" for c in q.text_columns]
    names = {v: scope.bind(v, k) for v, k in new_vars.items()}
    if not shared:  # a cross join: with a parameter, its values as literals
        rows = store.constant_rows(step, scan_sql(step, store, names, keep_sb=False))
        if rows is not None:
            return _literals(q, {names[v]: k for v, k in new_vars.items()}, rows)
    co = _co_partitioned(q.partitioned_as, step, store, shared)
    planned = not co and not q.broadcast  # which side moves is for the planner to choose
    replicated = planned and _replicated(step, q, store, bool(shared))
    homes = _homes(step, store, scope, shared, single=False) \
        if planned and not replicated else None
    if homes is None and planned and not replicated and _spread(step, q, store):
        homes = store.allocation(step.relation).every_home_sql()  # the rows go to all of it
    # the outer rows are still where their stored relation placed them (the kernel's first
    # scan, bucketed by join variables) and this side is not: it goes to their sub-buckets
    # (each outer row lives in one of them, so it meets each row of this side once); a
    # small side goes to every sub-bucket of theirs
    inward = None if co or q.broadcast or homes is not None or q.partitioned_as is None \
        else store.allocation(q.partitioned_as.relation).every_home_sql() if replicated \
        else _homes(q.partitioned_as, store, scope, shared, single=False)
    # sent to every sub-bucket, a relation that cannot change while the stratum runs is
    # read from a copy placed there once (Store.copy_view), not shuffled there every round
    copies = store.copy_view(step.relation, inward) \
        if replicated and inward is not None and step.summed is None else None
    right = _copies_sql(step, names, copies) if copies is not None \
        else scan_sql(step, store, names, keep_sb=co or homes is not None)
    if inward is not None and copies is None:
        q.depth += 1
        right = f"SELECT r{q.depth}.*, {inward} AS {HOME} FROM ({right}) r{q.depth}"
    fresh = [names[v] for v in new_vars if v not in shared]
    on = [f"l.{names[v]} = r.{names[v]}" for v in shared]
    left = q.sql
    if co:  # both placed alike, bucket for bucket: the join is partition-local
        on.append(f"l.{SB} = r.{SB}")
    elif homes is not None:  # the stored side stays; the outer rows go to its sub-buckets
        q.depth += 1
        left = f"SELECT l{q.depth}.*, {homes} AS {HOME} FROM ({q.sql}) l{q.depth}"
        on.append(f"l.{HOME} = r.{SB}")
    elif inward is not None:
        on.append(f"l.{SB} = r.{HOME}")
    # where the joined rows are: with the outer rows (partition-local, or the other side
    # came to them), or with the stored side they went to; else where Spark put them
    placed = (("l", q.partitioned_as) if co or inward is not None
              else ("r", step) if homes is not None else None)
    if placed is None:
        select = ", ".join(["l.*"] + [f"r.{c}" for c in fresh])
    else:  # the placement column goes on, so a later join on the same bucket stays local
        select = ", ".join([f"l.{c}" for c in carried] + [f"r.{c}" for c in fresh]
                           + [f"{placed[0]}.{SB}"])
    join = f"JOIN ({right}) r ON {' AND '.join(on)}" if on \
        else f"CROSS JOIN ({_gathered(right, step, store)}) r"
    hint = ""
    if on and not co:  # not partition-local: one side or both must move (PARALAGG §IV-D)
        hint = "/*+ BROADCAST(l) */ " if q.broadcast else ""
        if replicated and _sent(step, q, store):
            # a hash table of the copies, met by the delta rows in their stored order: a
            # derived tuple's duplicates then come close together (rewrite/replicate.py)
            hint = "/*+ SHUFFLE_HASH(r) */ "
        q.moved.append("delta" if q.broadcast else "outer" if homes is not None
                       else "inner" if inward is not None else "both")
    q.depth += 1
    sql = f"SELECT {hint}{select} FROM ({left}) l {join}"
    if placed is not None:
        return Query(sql, scope, placed[1], q.text_columns, q.depth, q.broadcast, q.moved,
                     q.rows, q.kernel)
    # the placement columns have done their work: later joins are not co-partitioned
    return Query(_drop_sb(sql, q), scope, None, q.text_columns, q.depth, q.broadcast, q.moved,
                 q.rows, q.kernel)


def _literals(q: Query, columns: dict[str, str], rows: list[tuple]) -> Query:
    """The rows so far, each with the one row of a parameter (Store.constant_rows) as
    literal ``columns`` (name: kind), in their order; none if it has no row. They stay
    where they are: nothing is joined."""
    values = rows[0] if rows else (None,) * len(columns)
    literals = [_literal(kind, value) + f" AS {name}"
                for (name, kind), value in zip(columns.items(), values)]
    q.depth += 1
    sql = f"SELECT {', '.join(['l.*'] + literals)} FROM ({q.sql}) l"
    return Query(sql if rows else f"{sql} WHERE false", q.scope, q.partitioned_as,
                 q.text_columns, q.depth, q.broadcast, q.moved, q.rows, q.kernel)


def _literal(kind: str, value) -> str:
    """A stored value as a Spark SQL literal of its column's type (storage._spark_type)."""
    if value is None:
        return "CAST(NULL AS DOUBLE)" if kind == "float" else "CAST(NULL AS BIGINT)"
    return X.sql_float(value) if kind == "float" else X.sql_number(int(value))


def _replicated(step: Scan, q: Query, store: Store, equi: bool) -> bool:
    """Whether a join that is not partition-local leaves the rows so far in place and
    sends ``step``'s side to each of their sub-buckets, a copy each (PARALAGG §IV-D's
    choice of which side moves, made from the sizes already known): when they are placed
    and that side's stored rows, times those sub-buckets, are fewer than the rows the
    kernel's first scan reads (a stand-in for the rows so far). Moving the rows so far
    instead sends them all to the sub-buckets of the small side's keys, which may be few
    (PageRank's ranks to the one bucket of an iteration's dangling mass), and loses their
    placement for the joins and the head after it. The copies cross a shuffle, not a
    broadcast: nothing is collected to the driver, and no job starts while planning.
    A cross join (not ``equi``) pairs a small side with the rows in place already
    (_gathered); its copies, a shuffle of their own, pay only where the head keeps the
    rows' placement (_keeps_home): then the head's tuples need not cross the round's;
    or where the head's presummed contributions (ir/presum.py) are summed before the
    round's shuffle, which needs the rows placed (kernel_query's combine), whether join
    planning is on or not (PageRank's shares cross ``iterations(k)``: a sum per node and
    sub-bucket crosses the shuffle instead of a row per edge). Whatever the sizes, when
    the plan asks for it (_sent)."""
    if equi and _sent(step, q, store):
        return True
    if q.partitioned_as is None:
        return False
    copies = store.read_rows(step) * store.allocation(q.partitioned_as.relation).sub_buckets
    if not equi and q.kernel is not None and store.presum_marks(q.kernel.relation):
        return copies < q.rows  # placed, the contributions are summed before the shuffle
    if store.options.join_planning == "off":
        return False
    if not equi and (q.kernel is None or not _keeps_home(q.kernel, q.partitioned_as, store)):
        return False
    return copies < q.rows


def _sent(step: Scan, q: Query, store: Store) -> bool:
    """Whether the plan sends ``step``'s relation to every sub-bucket of the delta rows so
    far (rewrite/replicate.py: a linear recursion placed by the columns its head keeps)."""
    first = q.partitioned_as
    return first is not None and first.version == DELTA \
        and step.relation in store.layout(first.relation).replicated


def _spread(step: Scan, q: Query, store: Store) -> bool:
    """The other way round: whether the rows so far go to every sub-bucket of ``step``'s
    side, a copy each, and that side stays in place (its placement then theirs), when
    its bucket columns are not all bound by them (else they go to its matching
    sub-buckets only: _homes): when those copies are fewer than its stored rows.
    PageRank's dangling mass of an iteration, one row, meets the stored contributions
    where they are, and the ranks it makes are where their contributions were."""
    if store.options.join_planning == "off" or q.rows <= 0:
        return False
    return q.rows * store.allocation(step.relation).sub_buckets < store.read_rows(step)


def _gathered(right: str, step: Scan, store: Store) -> str:
    """The side a cross join pairs with every row so far, in one partition if it is small
    (a parameter: ``iterations(k)``, ``size(c)``). Spark's cartesian product runs a task per
    pair of partitions, P x P (P^3 for a kernel that crosses two parameters), each with
    its fixed cost and each reading its left partition again; against one partition it
    runs P tasks that read each side once. Not a large side: its rows would meet a small
    left side's few rows in one task instead of P."""
    if store.size_or_expected(step.relation) > CROSS_ROWS:
        return right
    return f"SELECT /*+ COALESCE(1) */ * FROM ({right}) g"


def _homes(step: Scan, store: Store, scope: X.Scope, shared: list[str], single: bool
           ) -> str | None:
    """SQL for the home values of the stored sub-buckets that rows so far meet in
    ``step``'s relation, when they are known: every bucket column of the atom is a shared
    variable or a constant. (Also where the other side's rows must go to meet the rows
    so far in place, ``step`` then being the kernel's first scan: the columns of shared
    variables have the same names on both sides.) One value while the relation has one sub-bucket per bucket;
    else every sub-bucket of the bucket, exploded (the outer row is replicated to each), or
    None if ``single`` (a semi- or anti-join, where copies would count twice)."""
    layout, kinds = store.layout(step.relation), store.kinds(step.relation)
    if not layout.key:
        return None
    keys = []
    for i in layout.key:
        arg = step.args[i]
        if isinstance(arg, n.Var) and arg.name in shared:
            keys.append(hash_input(scope.columns[arg.name], kinds[i]))
        elif isinstance(arg, (n.Var, n.Wildcard)):
            return None
        else:
            keys.append(hash_input(X.value(arg, X.Scope()), kinds[i]))
    allocation = store.allocation(step.relation)
    if allocation.refined and single:
        return None
    homes = allocation.homes_sql(keys)
    return f"explode({homes})" if allocation.refined else homes


def _exists(step: Scan, q: Query, store: Store) -> Query:
    """An atom that only tests existence (Scan.exists): a LEFT SEMI JOIN on the variables
    it shares with the rows so far, or, sharing none, a join with at most one of its
    tuples. The rows keep their columns and are never multiplied."""
    names: dict[str, str] = {}
    shared: list[str] = []
    for i, arg in enumerate(step.args):
        if isinstance(arg, n.Var) and arg.name not in names:
            if arg.name in q.scope.columns:
                shared.append(arg.name)
                names[arg.name] = q.scope.columns[arg.name]
            else:  # used nowhere else: named only to compare its repeats (c(y, y))
                names[arg.name] = f"x{i}"
    co = _co_partitioned(q.partitioned_as, step, store, shared)
    homes = None if co else _homes(step, store, q.scope, shared, single=True)
    right = scan_sql(step, store, names, keep_sb=co or homes is not None)
    on = [f"l.{names[v]} = r.{names[v]}" for v in shared]
    if not on:
        right += " LIMIT 1"
    elif not co:
        q.moved.append("outer" if homes is not None else "both")
    return _semi(q, "LEFT SEMI", right, on, co, homes)


def _semi(q: Query, how: str, right: str, on: list[str], co: bool, homes: str | None
          ) -> Query:
    """``q`` filtered by a semi- or anti-join with ``right``; with ``co`` on the
    sub-bucket column too, with ``homes`` on the home value of the one stored sub-bucket
    each row can meet (then dropped again)."""
    left, keep = q.sql, "l.*"
    if co:
        on = on + [f"l.{SB} = r.{SB}"]
    elif homes is not None:
        q.depth += 1
        left = f"SELECT l{q.depth}.*, {homes} AS {HOME} FROM ({q.sql}) l{q.depth}"
        on = on + [f"l.{HOME} = r.{SB}"]
        keep = ", ".join(f"l.{c}" for c in _columns(q) + [f"{c}__s" for c in q.text_columns])
    q.depth += 1
    q.sql = f"SELECT {keep or '1 AS _unit'} FROM ({left}) l {how} JOIN ({right}) r " \
            f"ON {' AND '.join(on) or 'TRUE'}"
    return q


def _columns(q: Query) -> list[str]:
    cols = list(q.scope.columns.values())
    return cols + ([SB] if q.partitioned_as is not None else [])


def _drop_sb(sql: str, q: Query) -> str:
    cols = ", ".join(list(q.scope.columns.values()) + [f"{c}__s" for c in q.text_columns])
    return f"SELECT {cols or '1 AS _unit'} FROM ({sql}) d"  # atoms without variables


def _co_partitioned(left: Scan | None, right: Scan, store: Store, shared: list[str]) -> bool:
    """True when both scans are bucketed on exactly the join variables, in the same order."""
    if left is None or not shared:
        return False
    lk, rk = store.layout(left.relation), store.layout(right.relation)
    la, ra = store.allocation(left.relation), store.allocation(right.relation)
    if la.refined or la.homes != ra.homes:
        return False  # refined buckets need the outer side replicated over sub-buckets
    names = lambda scan, key: [scan.args[k].name if isinstance(scan.args[k], n.Var) else None
                               for k in key]
    return names(left, lk.key) == names(right, rk.key) and set(names(left, lk.key)) == set(shared)


@translate.register
def _bind(step: Bind, q: Query, store: Store) -> Query:
    _ensure_text(q, X.string_vars(step.expr), store)
    kind = X.kind_of(step.expr, q.scope)
    expr = X.value(step.expr, q.scope)
    if X.is_range(step.expr):  # one row for each value it generates
        expr = f"explode({expr})"
    col = q.scope.bind(step.var, kind)
    extra = ""
    if kind == "symbol" and (X.produced_symbols(step.expr) or isinstance(step.expr, n.String)):
        # a symbol made here is not in the symbol table yet: keep its text beside it
        extra = f", {X.text(step.expr, q.scope)} AS {col}__s"
        q.text_columns.add(col)
    q.sql = f"SELECT * FROM ({q.wrap(f'*, {expr} AS {col}{extra}')}) b WHERE {col} IS NOT NULL"
    return q


@translate.register
def _filter(step: Filter, q: Query, store: Store) -> Query:
    _ensure_text(q, X.string_vars(step.literal), store)
    q.sql = q.wrap("*", f"WHERE {X.condition(step.literal, q.scope)}")
    return q


@translate.register
def _anti_join(step: AntiJoin, q: Query, store: Store) -> Query:
    scan = Scan(step.atom.relation, FULL, step.atom.args)
    keys = list(dict.fromkeys(a.name for a in step.atom.args if isinstance(a, n.Var)))
    homes = _homes(scan, store, q.scope, keys, single=True) if keys else None
    right = scan_sql(scan, store, {v: q.scope.columns[v] for v in keys},
                     keep_sb=homes is not None)
    if not keys:
        return _semi(q, "LEFT ANTI", right + " LIMIT 1", [], False, None)
    on = [f"l.{q.scope.columns[v]} = r.{q.scope.columns[v]}" for v in keys]
    return _semi(q, "LEFT ANTI", right, on, False, homes)


_AGG_SQL = {"sum": "sum", "min": "min", "max": "max", "mean": "avg"}


@translate.register
def _aggregate(step: AggregateJoin, q: Query, store: Store) -> Query:
    start = None
    if step.correlated:  # the body filters on outer variables: start from their values
        scope = X.Scope()
        cols = []
        for j, v in enumerate(step.correlated):
            scope.columns[v], scope.kinds[v] = f"k{j}", q.scope.kinds[v]
            cols.append(f"{q.scope.columns[v]} AS k{j}")
        start = Query(f"SELECT DISTINCT {', '.join(cols)} FROM ({q.sql}) c", scope)
    inner = run_steps(step.body, store, start)
    agg = step.aggregate
    if agg.func == "count":
        result, kind = "count(1)", "number"
    else:
        _ensure_text(inner, X.string_vars(agg.target), store)
        kind = "float" if agg.func == "mean" else X.kind_of(agg.target, inner.scope)
        value = X.value(agg.target, inner.scope)
        if kind == "unsigned" and agg.func in ("min", "max"):  # unsigned order on the bits
            result = f"({_AGG_SQL[agg.func]}({value} ^ {X.SIGN_BIT}) ^ {X.SIGN_BIT})"
        else:
            result = f"{_AGG_SQL[agg.func]}({value})"
    col = q.scope.bind(step.var, kind)
    group = [(inner.scope.columns[g], q.scope.columns[g]) for g in step.group]
    select = ", ".join([f"{i} AS {o}" for i, o in group] + [f"{result} AS {col}"])
    by = f"GROUP BY {', '.join(i for i, _ in group)}" if group else ""
    aggregated = inner.wrap(select, by)
    zero = agg.func in ("count", "sum")
    value = f"coalesce(a.{col}, {'0D' if kind == 'float' else '0L'})" if zero else f"a.{col}"
    on = " AND ".join(f"l.{o} = a.{o}" for _, o in group) or "TRUE"
    how = "LEFT JOIN" if zero and group else ("CROSS JOIN" if not group else "JOIN")
    cond = f" ON {on}" if group else ""
    q.depth += 1
    q.sql = (f"SELECT * FROM (SELECT l.*, {value} AS {col} FROM ({q.sql}) l {how} "
             f"({aggregated}) a{cond}) g WHERE {col} IS NOT NULL")
    return q


@translate.register
def _total(step: Total, q: Query, store: Store) -> Query:
    """Sum the full contributions of the keys the delta scan read, inside each partition:
    both sides are the stored contributions, placed by (bucket columns, ``_sb``) with the
    bucket columns among the key (Layout.detail), so the semi-join and the GROUP BY on
    (key, ``_sb``) need no Exchange."""
    assert q.partitioned_as is not None and q.partitioned_as.relation == step.relation, q
    kinds = store.kinds(step.relation)
    names = {v.name: q.scope.columns[v.name] for v in step.args}
    value = "_v"
    args: list[n.Term] = [n.Wildcard()] * len(kinds)
    for v, i in zip(step.args, step.group):
        args[i] = v
    args[step.value] = n.Var(step.var)
    full = scan_sql(Scan(step.relation, FULL, tuple(args)), store, {**names, step.var: value},
                    keep_sb=True)
    # in the order the runs are sorted in (bucket columns, _sb, the rest: Database.insert),
    # so the semi-join and the GROUP BY read each side as it is stored, with no sort
    layout = store.layout(step.relation)
    stored = [f"c{i}" for i in layout.key] + [SB] + [f"c{i}" for i in layout.rest]
    by_column = {f"c{i}": names[v.name] for v, i in zip(step.args, step.group)}
    keys = list(dict.fromkeys(by_column.get(c, c) for c in stored
                              if c in by_column or c == SB))
    assert set(keys) == {*names.values(), SB}, (keys, names)
    on = " AND ".join(f"f.{c} = d.{c}" for c in keys)
    col = q.scope.bind(step.var, kinds[step.value])
    select = ", ".join([f"f.{c}" for c in names.values()]
                       + [f"sum(f.{value}) AS {col}", f"f.{SB} AS {SB}"])
    q.depth += 1
    q.sql = (f"SELECT {select} FROM ({full}) f LEFT SEMI JOIN ({q.sql}) d ON {on} "
             f"GROUP BY {', '.join(f'f.{c}' for c in keys)}")
    # grouped by the placement column too: the totals stay where the contributions are
    q.partitioned_as = Scan(step.relation, FULL, tuple(args))
    return q


def _ensure_text(q: Query, variables: set[str], store: Store) -> None:
    """Join the symbol table for each symbol variable whose string a step needs.

    Only symbol-kinded variables: a numeric one (the index of ``substr``, a side of a
    numeric comparison) has no entry there, and joining it would drop the tuple.
    """
    for v in sorted(variables):
        col = q.scope.columns[v]
        if col in q.text_columns or q.scope.kinds.get(v) != "symbol":
            continue
        q.depth += 1
        q.sql = (f"SELECT /*+ BROADCAST(s) */ l.*, s.symbol AS {col}__s FROM ({q.sql}) l "
                 f"JOIN {store.symbols_view()} s ON l.{col} = s.id")
        q.text_columns.add(col)
