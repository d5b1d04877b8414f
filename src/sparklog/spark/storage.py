"""Storage: every relation's stored DataFrame, its schema and placement, and the insert.

Every stored relation is one or more runs: DataFrames with columns ``c0..ck``, the
sub-bucket ``_sb`` and a stamp ``_it``, each hash-partitioned as :func:`placement` says and
sorted inside each partition. The newest run (``stored``) takes a round's new tuples;
``delta`` is its rows stamped NEWEST (derived in the last round), ``old`` the rest of
``full``, which is every run. A set relation's newest run is sealed once it holds
``run_rows`` rows, and sealed runs of like size are merged (:meth:`Database.merges`), so a
round writes its new tuples and a bounded run, never all of ``full`` again: the
logarithmic method of Bentley and Saxe, the runs an LSM tree keeps. Stamps are relative
rather than iteration numbers so that the plan of every iteration is the same text: Spark inlines literals into the Java it generates, and an
absolute iteration number would make it compile fresh code for every stage every round.
:meth:`Database.insert` is the round's one shuffle and its combine step (spark/combine.py:
set deduplication, a lattice's join). Inputs, a recursive stratum's first version and a
non-recursive stratum's version are deferred: checkpointed lazily, they are computed and
stored by the first job that reads them, and their bookkeeping runs after it
(:meth:`Database.defer`). The symbol table lives here too (:meth:`Database.symbols`).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparklog.defaults import COMBINE_RATIO
from sparklog.options import Options
from sparklog.ir.nodes import DELTA, FULL, Kernel, Layout, Plan, Scan
from sparklog.ir.presum import MARKER, PresumRefuted
from sparklog.spark import jvm
from sparklog.spark.combine import combine_for, stored_names
from sparklog.spark.jvm import cached_rdds as _cached_rdds
from sparklog.spark.jvm import stored_rdd as _stored_rdd
from sparklog.spark.jvm import without_estimates as _without_estimates
from sparklog.spark.session import FACTORY_MODE, WHOLE_STAGE
from sparklog.spark.jobs import _Worker
from sparklog.spark import balance
from sparklog.spark.balance import Allocation, home_sql
from sparklog.spark.translate import HOME, IT, KEPT, NEWEST, OLDER, SB, Combine

if TYPE_CHECKING:
    from sparklog.spark.rounds import _Kept


_RUNS = itertools.count()
_UNKNOWN = object()  # a run's stages before its round is counted (Database.book_stages)


@dataclass(frozen=True)
class _Columns:
    """A relation's layout as the Java sequences the Dataset methods take, built once.

    The insert of every round calls Dataset methods with these directly. Through PySpark's
    wrappers each call would convert its column list anew, one JVM round trip per element,
    which made the driver's share of a round larger than the work Spark does in it.
    """

    home: Any  # Seq[Column]: c0..ck tagged, then the sub-bucket
    kept: Any  # the same, the sub-bucket's home taken from column KEPT (kernel_query)
    keys: Any  # Seq[Column]: what the relation is hash-partitioned by (placement())
    order: Any  # Seq[String]: bucket columns, _sb, other columns (the anti-join keys)
    stored: Any  # Seq[Column]: the stored columns in order, then _it
    fresh: Any  # the same, with the stamp NEWEST
    aged: Any  # the same, with the stamp OLDER
    sort: Any  # Seq[Column]: ascending on ``order``

    @classmethod
    def of(cls, spark: SparkSession, layout: Layout, kinds: tuple[str, ...],
           allocation: Allocation) -> _Columns:
        # Built from Spark's functions in the JVM: through PySpark's wrappers each column
        # took a dozen calls into the JVM (about 280 for a relation of two columns).
        functions = jvm.functions(spark)
        col, lit = functions.col, functions.lit
        alias = lambda c, name: getattr(c, "as")(name)  # noqa: E731
        # Re-alias every column with metadata: otherwise the optimizer drops a same-name
        # alias (c1#3 AS c1#19), the plan partitions by the source attribute, and the
        # checkpointed relation reports a partitioning that names none of its columns.
        tag = jvm.metadata(spark, {"sparklog": layout.relation})
        tagged = [getattr(col(f"c{i}"), "as")(f"c{i}", tag) for i in range(layout.arity)]
        home = tagged + [alias(functions.expr(home_sql(layout, kinds, allocation)), SB)]
        kept = tagged + [alias(col(KEPT), SB)]
        keys = [col(c) for c in placement(layout)]
        order = tuple(f"c{i}" for i in layout.key) + (SB,) + tuple(f"c{i}" for i in layout.rest)
        ordered = [col(c) for c in order]
        stored = ordered + [col(IT)]
        fresh = ordered + [alias(lit(NEWEST), IT)]
        aged = ordered + [alias(lit(OLDER), IT)]
        sort = [c.asc() for c in ordered]
        seq = lambda items: jvm.seq(spark, items)  # noqa: E731
        return cls(seq(home), seq(kept), seq(keys), seq(list(order)), seq(stored), seq(fresh),
                   seq(aged), seq(sort))


# per JVM gateway, shared by runs; keyed by the column kinds too: two programs in one
# session may give a relation of the same name and layout other types, whose values hash
# differently (a float column's home is not a number column's)
_COLUMNS: dict[tuple[int, Layout, tuple[str, ...], Allocation], _Columns] = {}


def home_value(layout: Layout, kinds: tuple[str, ...], allocation: Allocation) -> Column:
    """A stored row's ``_sb``: the home value of its sub-bucket (balance.py), from its
    bucket columns and the columns its sub-bucket hashes (never a lattice's dependent
    column: an improved value must land where the old one is). A relation without bucket
    columns is bucketed by those instead. A computed column, never a literal: Spark folds
    a literal into the partitioning expression, and the stored relation would then no
    longer be co-partitioned by name."""
    return F.expr(home_sql(layout, kinds, allocation))


class Metrics:
    """Aggregates observed by name on a Dataset, read off the plan that computed them.

    The values are read from the executed plan of ``source``, the Dataset whose action (the
    round's checkpoint) ran the observed part: the accumulators of its CollectMetrics
    operators. Cheaper than pyspark's Observation, which registers a listener per object
    and converts its expressions one round trip at a time.
    """

    def __init__(self, spark: SparkSession, name: str) -> None:
        self._spark, self.name = spark, name
        self.source: Any = None  # the JVM Dataset whose action computes the metrics
        self.plan: Any = None  # or the executed SparkPlan that computes them (a rerun)
        # Per-partition counts of the whole stored version, when its placement had to be
        # restored after the union (Database.insert); then the sizes are not running sums.
        self.placed: Metrics | None = None
        # the derived tuples, counted here when no home Exchange counts them (insert)
        self.derived: Metrics | None = None
        # how many runs the version replaces, and their rows (Database.insert)
        self.merged: int | None = None
        self.rows = 0

    def on(self, jdf: Any, first: Column, rest: Any) -> Any:
        """``jdf`` observed; ``rest`` is a Seq of the expressions after ``first``."""
        return jdf.observe(self.name, first._jc, rest)

    def executed(self) -> Any:
        """The SparkPlan that computes the metrics."""
        return self.plan if self.plan is not None else jvm.executed_plan(self.source)

    @property
    def get(self) -> dict[str, Any]:
        """The metrics, once the action on ``source`` has run."""
        return jvm.observed_row(self._spark, self.plan, self.source, self.name)


@dataclass
class Database:
    """Stored relations and the symbol table; implements translate.Store."""

    spark: SparkSession
    plan: Plan
    options: Options
    stored: dict[str, DataFrame] = field(default_factory=dict)
    symbol_parts: list[DataFrame] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    iteration: int = 0
    prefix: str = field(default_factory=lambda: f"sparklog{next(_RUNS)}")
    _symbols: DataFrame | None = None
    partition_sizes: dict[str, list[int]] = field(default_factory=dict)
    # the observed metrics' expressions, built once per stage column (None: unstaged)
    _per_partition: dict[int | None, tuple[Column, Any]] = field(default_factory=dict)
    _lattice_counts: dict[tuple[int | None, int | None, bool], tuple[Column, Any]] = \
        field(default_factory=dict)
    functors: dict[str, Callable[[Column, Column], Column]] = field(default_factory=dict)
    # rows expected of versions whose size is not booked yet: deferred inputs (their
    # files' size, see load) and the deferred versions computed from them (_round)
    expected: dict[str, int] = field(default_factory=dict)
    last_delta: dict[str, int] = field(default_factory=dict)  # see broadcast_delta
    # the new rows of each relation's last counted round that had any (see read_rows)
    last_news: dict[str, int] = field(default_factory=dict)
    pending: list[tuple[DataFrame, Callable[[], list[Any]]]] = field(default_factory=list)
    # how deep the uncomputed versions a relation's deferred version reads go (bound_depth)
    depths: dict[str, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # program text, for diagnostics
    exchanges: dict[str, int] = field(default_factory=dict)  # see derivations()
    whole_stage: str = "true"  # the session's own spark.sql.codegen.wholeStage
    factory_mode: str = "FALLBACK"  # and its own spark.sql.codegen.factoryMode
    lineage: list[dict[str, int]] | None = None  # see Options.trace_lineage
    _whole_stage_set: str | None = None  # what this run last set it to
    _factory_set: str | None = None  # the same
    job_factory: str | None = None  # FACTORY_MODE as the worker thread's jobs see it
    _serialized: bool | None = None  # see serialized_reruns
    tiny: bool = False  # whether the round planned last is tiny (see use_codegen)
    _tracker: Any = None  # see tracker()
    _worker: _Worker | None = None  # see worker()
    _viewed: dict[str, DataFrame] = field(default_factory=dict)  # see view()
    templates: dict[str, _Kept] = field(default_factory=dict)  # see _plan
    # a set relation's sealed runs, oldest first; its newest run is ``stored`` (see runs())
    sealed: dict[str, list[DataFrame]] = field(default_factory=dict)
    allocations: dict[str, Allocation] = field(default_factory=dict)  # see allocation()
    # what the last balance check did to each relation: (buckets refined, consolidated)
    balanced: dict[str, tuple[int, int]] = field(default_factory=dict)
    # partition sizes a round left before the balance check after it moved rows (place())
    unbalanced: dict[str, list[int]] = field(default_factory=dict)
    # iteration roll-over (rounds._slices): the slice of the delta the kernel planned now
    # reads (translate.Store), each relation's delta before its last one, and its last
    # derivations
    delta_slice: tuple[int, int] | None = None
    delta_before: dict[str, int] = field(default_factory=dict)
    derived_last: dict[str, int] = field(default_factory=dict)
    # (derived, kept) by the relation's last counted loop round (Database.combine)
    loop_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    _key_counts: dict[str, str] = field(default_factory=dict)  # see key_counts()
    # lattice relations whose sealed runs hold stale rows since the last round (compact())
    stale: dict[str, int] = field(default_factory=dict)
    # relations whose last loop round was skipped, no kernel of theirs having a delta to
    # read (rounds._prune): their delta is empty and every stored row is old
    aged: set[str] = field(default_factory=set)
    compacted: dict[str, int] = field(default_factory=dict)  # for the round's stats record
    # a staged recursion (ir/stages.py): the running stratum's stage column per relation,
    # and the lowest stage of the deltas of its last counted round; a run wholly below it
    # is retired (retired()). Empty and None outside such a stratum.
    stages: dict[str, int] = field(default_factory=dict)
    # and per relation the least number of stages a loop kernel deriving it moves up
    # (ir/stages.advances): its new tuples are that far above the floor (beneath())
    advance: dict[str, int] = field(default_factory=dict)
    stage_floor: int | None = None
    # the floor the last counted round read (the floor before that round raised it): a
    # round's new tuples of a relation lie at least its advance above it (rounds._empty)
    read_floor: int | None = None
    delta_low: dict[str, Any] = field(default_factory=dict)  # see book_stages
    # a Smart closure (ir/smart.py): the running stratum's length column per relation, and
    # how many of its last counted round's new tuples have a power-of-two length
    smart: dict[str, int] = field(default_factory=dict)
    powers: dict[str, int] = field(default_factory=dict)
    # the running stratum's presummed $SUM contributions (ir/presum.py) and the lattice
    # relations guarded for them: a key of those that improves twice refutes the presum
    presums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    guarded: set[str] = field(default_factory=set)
    # the relations of the running recursive stratum (None in a non-recursive one), and
    # the rows of a scan of a lower stratum's relation found to hold at most one, by the
    # scan's SQL (constant_rows)
    running: frozenset[str] | None = None
    _constants: dict[tuple[Any, ...], list[tuple[Any, ...]] | None] = \
        field(default_factory=dict)
    # the running stratum's stored copies of lower relations sent to every sub-bucket, by
    # relation, home values and runs: (view, stored DataFrame) (copy_view)
    _copies: dict[tuple[Any, ...], tuple[str, DataFrame]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.options.trace_lineage:
            self.lineage = []

    @functools.cached_property
    def stage_columns(self) -> dict[str, int]:
        """The stage column of every relation of a staged recursion (ir/stages.py), any
        stratum's: a run's stages are observed from the relation's first version on, its
        input facts' included, so that the stratum's rounds know every run's (retired(),
        old_below()). ``stages`` is the running stratum's."""
        if not self.options.retire_stages:
            return {}
        from sparklog.ir.stages import stages

        # a relation is one stratum's, so no two strata give it a column
        return {r: c for sp in self.plan.strata for r, c in stages(sp, self.plan).items()}

    def tracker(self) -> Any:
        """Spark's status tracker, wrapped once (each wrapping costs JVM round trips)."""
        if self._tracker is None:
            self._tracker = self.spark.sparkContext.statusTracker()
        return self._tracker

    @property
    def serialized_reruns(self) -> bool:
        """Whether tiny reruns store their versions serialized (jvm.stored), which takes
        local checkpoints and a session serializer that writes every row whole. Only tiny
        ones: every round reads the versions back, and Java serialization reset after
        every row costs far more per row than deserialized storage (README, "Benchmarks")."""
        if self._serialized is None:
            self._serialized = (self.options.checkpoint == "local"
                                and not self.options.columnar
                                and jvm.stores_serialized(self.spark))
        return self._serialized

    def worker(self) -> _Worker:
        """The thread that runs this run's jobs (see _Job), started on first use."""
        if self._worker is None:
            self._worker = _Worker(self.spark)
        return self._worker

    def close(self) -> None:
        """End the run's worker thread once its queued jobs are done."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
            self.job_factory = None

    # -- translate.Store -------------------------------------------------------------
    def view(self, relation: str) -> str:
        """The temporary view of a relation's stored DataFrame (full; versions filter it).

        Registered when a kernel's SQL names it, not whenever a round stores a version:
        a round planned from a template (see _plan) reads no view, and registering one is
        a command Spark plans and executes, several milliseconds a round.
        """
        if relation not in self.stored:
            layout = self.layout(relation)
            built = layout.index_of is not None and not layout.lagging
            self.replace(relation, self._index(relation) if built else self._empty(relation))
        df = self.stored[relation]
        if self._viewed.get(relation) is not df:
            df.createOrReplaceTempView(f"`{self.prefix}_{relation}`")  # quoted: r@c
            self._viewed[relation] = df
        return f"`{self.prefix}_{relation}`"

    def sealed_views(self, relation: str) -> list[str]:
        """The views of a relation's sealed runs, oldest first (see runs())."""
        views = []
        for run in self.live_sealed(relation):
            name = run.__dict__.get("_sparklog_view")
            if name is None:
                name = f"`{self.prefix}_{relation}#{next(_RUNS)}`"
                run.createOrReplaceTempView(name)  # quoted: r#3, r@c#3
                run.__dict__["_sparklog_view"] = name
            views.append(name)
        return views

    def runs(self, relation: str) -> list[DataFrame]:
        """Every stored run of a relation, oldest first; the newest is ``stored``."""
        newest = self.stored.get(relation)
        return [*self.sealed.get(relation, []), *([newest] if newest is not None else [])]

    def retired(self, relation: str, run: DataFrame) -> bool:
        """Whether a run of a staged recursion's relation holds no row at or above the
        stage floor: no round of the stratum can join or derive one of its rows again
        (ir/stages.py), so none reads it. Later strata read every run."""
        if self.stage_floor is None or relation not in self.stages:
            return False
        stages = _stages_of(run)
        return stages is None or (stages is not _UNKNOWN and stages[1] < self.stage_floor)

    def beneath(self, relation: str, run: DataFrame) -> bool:
        """Whether a stored run of a staged recursion's relation lies wholly below the
        stages of the round's new tuples (the floor plus the relation's advance, when that
        is at least 1): none of them can equal one of its rows, whose stage is part of
        every key, so the round's combine step does not read it. PageRank's contributions
        of iteration i + 1 are derived from the ranks of iteration i while the run of
        iteration i's contributions is still live."""
        advance = self.advance.get(relation, 0)
        if self.stage_floor is None or advance < 1 or relation not in self.stages:
            return False
        stages = _stages_of(run)
        return stages is None or (stages is not _UNKNOWN
                                  and stages[1] < self.stage_floor + advance)

    def unread(self, relation: str, merges: int | None) -> list[bool]:
        """For each live run a round's combine step would read that the new run does not
        replace (the ``merges`` newest), whether it passes over it (beneath())."""
        runs = self.live_runs(relation)
        kept = runs[:len(runs) - len(self.newest_runs(relation, merges))]
        return [self.beneath(relation, run) for run in kept]

    def live_sealed(self, relation: str) -> list[DataFrame]:
        """The sealed runs a round of the running stratum reads: those not retired."""
        return [r for r in self.sealed.get(relation, []) if not self.retired(relation, r)]

    def live_runs(self, relation: str) -> list[DataFrame]:
        """The runs a round of the running stratum reads: the live sealed ones and the
        newest (which holds the delta, and is sealed once it holds retired stages)."""
        newest = self.stored.get(relation)
        return [*self.live_sealed(relation), *([newest] if newest is not None else [])]

    def newest_runs(self, relation: str, count: int | None = None) -> list[DataFrame]:
        """The relation's ``count`` newest runs (all by default), oldest first."""
        runs = self.runs(relation)
        return runs[len(runs) - (len(runs) if count is None else count):]

    def rows_of(self, relation: str, run: DataFrame) -> int:
        """A run's rows: counted when its round was (add_new), else the relation's rows
        beyond the other runs'."""
        rows = run.__dict__.get("_sparklog_rows")
        if rows is None:
            others = [r for r in self.runs(relation) if r is not run]
            rows = max(0, self.size_or_expected(relation)
                       - sum(r.__dict__.get("_sparklog_rows", 0) for r in others))
        return rows

    def merges(self, relation: str, iteration: int) -> int:
        """How many of the relation's newest runs its next version rewrites (with the new
        tuples); the runs before them stay as they are.

        All of them in a preamble and with ``run_rows`` 0. A lattice relation's runs are
        merged the same way (combine.LatticeCombine reads the sealed ones for the keys it
        combines). Otherwise the newest run takes the
        round's new tuples while it holds at most ``run_rows`` rows (rewritten, so a small
        relation stays one run). Once larger it is sealed, and the new tuples start a run
        of their own, unless the runs before it hold no more than twice the rows gathered
        so far: then they are merged with it (a binary counter's carry). Every tuple is
        then rewritten about log2(|full| / run_rows) times in all, and a relation has
        about that many runs. Decided from the sizes known when the round is planned (one
        round old when rounds are pipelined), which only moves where a run ends.
        """
        runs = self.runs(relation)
        limit = self.options.run_rows
        if iteration == 0 or not limit:
            return len(runs)
        if runs and (self._holds_retired(relation, runs[-1])
                     or self.beneath(relation, runs[-1])):
            # a staged relation's newest run is sealed once it holds old stages, or when
            # the round's new tuples are all above it: no row of it is copied again
            return 0
        if not runs or self.rows_of(relation, runs[-1]) <= limit:
            return len(runs[-1:])
        gathered, merged = self.rows_of(relation, runs[-1]), 1
        while merged < len(runs) and not self.retired(relation, runs[-1 - merged]) \
                and self.rows_of(relation, runs[-1 - merged]) <= 2 * gathered:
            gathered += self.rows_of(relation, runs[-1 - merged])
            merged += 1
        return 0 if merged == 1 else merged

    def _holds_retired(self, relation: str, run: DataFrame) -> bool:
        """Whether a run holds rows below the stage floor, as far as is known: the newest
        run's own stages are counted by its round, which is still running when the next
        one is planned, but the runs it merged were counted already (Database.replace)."""
        if self.retired(relation, run):
            return True
        if self.stage_floor is None or relation not in self.stages:
            return False
        stages = _stages_of(run)
        if stages is _UNKNOWN:
            stages = _merged_stages(run)
        return stages is not None and stages is not _UNKNOWN and stages[0] < self.stage_floor

    def old_below(self, relation: str, stage: int) -> bool:
        """Whether every row a round's OLD read of a staged relation can see lies below
        ``stage``, as far as is known: each live run's highest stage, the newest's as of
        the runs it merged while its own round is uncounted (its other rows are that
        round's new tuples, which an OLD read skips). False when a run's stages are not
        known (rounds._empty)."""
        runs = self.live_runs(relation)
        for i, run in enumerate(runs):
            stages = _stages_of(run)
            if stages is _UNKNOWN and i == len(runs) - 1:
                stages = _merged_stages(run)
            if stages is _UNKNOWN or (stages is not None and stages[1] >= stage):
                return False
        return True

    def book_stages(self, relation: str, run: DataFrame, observed: dict[str, Any]) -> Any:
        """Record a counted run's lowest and highest stage (None: it is empty); return
        the lowest stage of its delta (None: no delta). A lattice run is observed whole
        (lo, hi); a set run is its merged runs' stages and its new tuples' (dlo, dhi)."""
        delta = observed.get("dlo")
        if "lo" in observed:
            stages = None if observed["lo"] is None else (observed["lo"], observed["hi"])
        else:
            merged = _merged_stages(run)
            new = None if delta is None else (delta, observed["dhi"])
            stages = _UNKNOWN if merged is _UNKNOWN else _span(merged, new)
        # the runs it merged were counted before it (what is unknown now stays so): let
        # them go, or every run would hold on to every version before it
        run.__dict__.pop("_sparklog_merged_from", None)
        if stages is not _UNKNOWN:
            run.__dict__["_sparklog_stages"] = stages
        return delta

    def parts_of(self, run: DataFrame) -> list[int]:
        """A lattice relation's run's rows per partition: counted by the round that wrote
        it (add_new), else by a small job."""
        parts = run.__dict__.get("_sparklog_parts")
        if parts is None:
            parts = _partition_sizes(run, self.options.partitions)
            run.__dict__["_sparklog_parts"] = parts
        return parts

    def compact(self, relation: str) -> None:
        """Remove the stale rows a round left in a lattice relation's sealed runs: the old
        values of keys it improved (combine.LatticeCombine), whose new values are the
        newest run's NEWEST rows. Each sealed run is anti-joined with those keys inside
        each partition (both are placed and sorted by them) and stored again, a job per
        run; the newest run stays as it is."""
        layout = self.layout(relation)
        cols = self.columns(relation)
        value = f"c{layout.dependent}"
        keys = [c for c in stored_names(layout) if c != value]
        improved = self.stored[relation].where(F.col(IT) == NEWEST).select(*keys)
        old = self.sealed.get(relation, [])
        kept: list[DataFrame] = []
        for run in old:
            if self.retired(relation, run):  # no key of a retired run improves
                kept.append(run)
                continue
            metrics = Metrics(self.spark, f"compact_{relation}_{next(_RUNS)}")
            jdf = run.join(improved, keys, "left_anti")._jdf.select(cols.stored) \
                .sortWithinPartitions(cols.sort)
            if not self.placed(relation, jdf):
                jdf = self._restore_placement(relation, jdf, metrics).sortWithinPartitions(
                    cols.sort)
            jdf = metrics.on(jdf, *self.per_partition())
            metrics.source = jdf
            compacted = _checkpoint(DataFrame(jdf, self.spark), self.options, eager=False)
            kept.append(compacted)
            compacted.__dict__["_sparklog_metrics"] = metrics
            _copy_stages(run, compacted)
        fresh = [run for run in kept if "_sparklog_metrics" in run.__dict__]
        for run in fresh:
            rdd = _stored_rdd(run)
            if rdd is not None:
                rdd.doCheckpoint()
        parts = range(self.options.partitions)
        for run in fresh:
            counted = run.__dict__.pop("_sparklog_metrics").get
            run.__dict__["_sparklog_parts"] = [counted.get(f"p{p}") or 0 for p in parts]
            run.__dict__["_sparklog_rows"] = int(counted["n"] or 0)
        self.sealed[relation] = kept
        newest = self.stored[relation]
        self.partition_sizes[relation] = [sum(c) for c in zip(
            self.parts_of(newest), *(self.parts_of(r) for r in kept))]
        self.sizes[relation] = sum(self.partition_sizes[relation])
        self.compacted[relation] = self.stale.pop(relation, 0)
        for run in old:
            if not any(run is k for k in kept):
                self.release(run)

    def symbols_view(self) -> str:
        """The symbol table as a view, for kernels that read a symbol's text."""
        self.symbols().createOrReplaceTempView(f"{self.prefix}__symbols")
        return f"`{self.prefix}__symbols`"

    def symbols(self) -> DataFrame:
        """The symbol table (id, symbol), materialized once per batch of new symbols."""
        if self._symbols is None:
            parts = self.symbol_parts or [empty_frame(self.spark, [("id", "long"),
                                                                    ("symbol", "string")])]
            df = parts[0]
            for p in parts[1:]:
                df = df.unionByName(p)
            self._symbols = _checkpoint(df.distinct(), self.options)
            self.symbol_parts = [self._symbols]
        return self._symbols

    def _empty(self, relation: str) -> DataFrame:
        types = [_spark_type(k) for k in self.kinds(relation)]
        empty = empty_frame(self.spark, [(f"c{i}", t) for i, t in enumerate(types)]
                            + [(SB, "int"), (IT, "int")])
        cols = self.columns(relation)
        jdf = empty._jdf.repartition(self.options.partitions, cols.keys).select(cols.stored)
        # checkpointed (lazily: no job), so that a kernel reading it scans a stored RDD
        # placed as the layout says, and its plan holds one home Exchange, the round's
        # (jvm.derivations reads that Exchange's rows: it would find this one instead)
        empty = _checkpoint(DataFrame(jdf, self.spark), self.options, eager=False)
        empty.__dict__["_sparklog_stages"] = None  # no rows, no stages (old_below)
        return empty

    def _index(self, relation: str) -> DataFrame:
        """A static secondary index (rewrite/indexes.py): its relation's tuples, complete
        since their stratum ended, placed by the index's own bucket columns and sorted as a
        run is. Lazily checkpointed: the first job that reads it computes it, one shuffle."""
        base = self.layout(relation).index_of
        assert base is not None
        runs = [self.stored[base], *self.sealed.get(base, [])] if base in self.stored \
            else [self._empty(base)]
        rows = runs[0]
        for run in runs[1:]:
            rows = rows.unionByName(run)
        cols = self.columns(relation)
        jdf = rows._jdf.select(cols.home).repartition(self.options.partitions, cols.keys) \
            .select(cols.aged).sortWithinPartitions(cols.sort)
        index = _checkpoint(DataFrame(jdf, self.spark), self.options, eager=False)
        self.defer(index, lambda: [])  # cut its lineage once computed (settle)
        self.expected[relation] = self.size_or_expected(base)
        return index

    def drop_indexes(self) -> None:
        """Free the block storage of every secondary index once the rounds are over."""
        for relation in [r for r in self.stored if self.layout(r).index_of is not None]:
            for run in self.runs(relation):
                self.release(run)
            del self.stored[relation]
            self.sealed.pop(relation, None)

    def layout(self, relation: str) -> Layout:
        return self.plan.layouts[relation]

    def kinds(self, relation: str) -> tuple[str, ...]:
        return self.plan.kinds[relation]

    def discard(self) -> None:
        """Free the block storage of a run that failed: no Result will read it."""
        self.pending = []
        sealed = [run for runs in self.sealed.values() for run in runs]
        for df in [*self.stored.values(), *sealed, *self.symbol_parts]:
            try:
                rdd = _stored_rdd(df)
                if rdd is not None:
                    rdd.unpersist(False)
            except Exception:  # noqa: BLE001 - the run's own error is the one to report
                pass

    def drop_views(self) -> None:
        """Remove this run's temporary views from the caller's session catalog."""
        catalog = self.spark.catalog
        for relation in list(self._viewed) + ["_symbols"]:
            catalog.dropTempView(f"{self.prefix}_{relation}")
        for name in self._key_counts.values():
            catalog.dropTempView(name.strip("`"))
        self._viewed = {}

    def add_symbols(self, df: DataFrame) -> None:
        self.symbol_parts.append(df)
        self._symbols = None

    # -- storage ---------------------------------------------------------------------
    def per_partition(self, relation: str | None = None) -> tuple[Column, Any]:
        """The row count ``n`` and the counts per partition ``p0..``, as observed metrics:
        sizes without an extra job. Returned as the first expression and a Seq of the rest,
        the shape Dataset.observe takes. For the new tuples of a staged recursion's
        ``relation``, their lowest and highest stage too (``dlo``, ``dhi``: book_stages).

        The union of full and new keeps partition indexes (both are co-partitioned), so a
        relation's partition sizes are the running sums of the new rows' counts. The delta
        is ``n``, never the sum of the ``p``: if a partition index fell outside ``p0..``, a
        sum would silently miss rows and end a recursion early.
        """
        column = self.stage_columns.get(relation) if relation is not None else None
        if column not in self._per_partition:
            rest = self.partition_counts()
            if column is not None:
                stage = F.col(f"c{column}")
                rest += [F.min(stage).alias("dlo"), F.max(stage).alias("dhi")]
            self._per_partition[column] = (F.count(F.lit(1)).alias("n"),
                                           jvm.seq(self.spark, rest))
        return self._per_partition[column]

    def partition_counts(self) -> list[Column]:
        """``p0..``: the rows each partition's task computes, as aggregate expressions."""
        pid = F.spark_partition_id()
        return [F.sum(F.when(pid == p, 1).otherwise(0)).alias(f"p{p}")
                for p in range(self.options.partitions)]

    def add_new(self, relation: str, metrics: Metrics, version: DataFrame,
                loaded: bool = False) -> int:
        """Fold one round's observed counts into the relation's sizes; the new rows.

        ``spark_partition_id()`` is the partition of the task that computes a row. A
        deferred version is computed inside the tasks of the job that first reads it, and
        when that job reads it through a cartesian product, say, those tasks are not the
        version's partitions: then its sizes are counted again from the stored
        ``version`` (one small job, only then). ``loaded``: an input's version, whose
        stages are booked (book_stages) but which is no round's delta.
        """
        parts = range(self.options.partitions)
        new = metrics.get
        if metrics.placed is not None:  # placement restored: counts of the whole version
            placed = metrics.placed.get
            sizes = [placed.get(f"p{p}") or 0 for p in parts]
        elif "rows" in new:  # a lattice relation: counts of its whole new run
            run = [new.get(f"p{p}") or 0 for p in parts]
            if sum(run) != new["rows"]:
                run = _partition_sizes(version, len(parts))
            version.__dict__["_sparklog_parts"] = run
            # the sealed runs it did not replace (none before a preamble's swap: it
            # replaces every run)
            sealed = self.sealed.get(relation, []) if version is self.stored.get(relation) \
                else []
            sizes = [sum(c) for c in zip(run, *(self.parts_of(r) for r in sealed))]
            if new.get("stale"):
                self.stale[relation] = int(new["stale"])
        else:
            counts = [new.get(f"p{p}") or 0 for p in parts]
            before = self.partition_sizes.get(relation, [0] * len(parts))
            sizes = [a + b for a, b in zip(before, counts)]
            if sum(counts) != new["n"]:
                runs = [version, *(r for r in self.sealed.get(relation, []) if r is not version)]
                sizes = [sum(c) for c in zip(*(_partition_sizes(r, len(parts)) for r in runs))]
        self.partition_sizes[relation] = sizes
        self.sizes[relation] = sum(sizes)
        n = int(new["n"] or 0)
        if metrics.merged is not None:  # the run's own rows, for Database.merges: exact
            # while it is the newest run (the relation's rows beyond the sealed runs'),
            # else the rows it merged, as estimated when it was planned, and its new ones
            if version is self.stored.get(relation):
                rows = self.sizes[relation] - sum(self.rows_of(relation, r)
                                                  for r in self.sealed.get(relation, []))
            else:
                rows = new["rows"] if "rows" in new else metrics.rows + n
            version.__dict__["_sparklog_rows"] = max(0, int(rows or 0))
        if relation in self.stage_columns:
            delta = self.book_stages(relation, version, new)
            if relation in self.stages and not loaded:
                self.delta_low[relation] = delta
        if relation in self.smart:
            self.powers[relation] = int(new.get("powers") or 0)
        # a preamble's raised keys held input facts, which no presummed kernel has read
        if relation in self.guarded and self.iteration >= 1 and new.get("raised"):
            raise PresumRefuted(relation, int(new["raised"]), self.iteration)
        return n

    def presum_marks(self, relation: str) -> dict[int, str]:
        """A presummed relation's identity columns in a loop round, each with the marker
        its rows hold there (ir/presum.py): the clause column MARKER, the others 0; {}
        for any other relation or round (the preamble's contributions keep theirs)."""
        if relation not in self.presums or self.iteration < 1:
            return {}
        kinds = self.kinds(relation)
        clause = len(kinds) - len(self.layout(relation).detail) - 1
        return {c: f"CAST({MARKER if c == clause else 0} AS {_spark_type(kinds[c])})"
                for c in self.layout(relation).detail}

    def broadcast_delta(self, kernel: Kernel) -> bool:
        """Whether the kernel's delta side is broadcast to its joins that are not
        partition-local (translate.Query.broadcast), decided from sizes already known: the
        delta of the relation's last counted round (one round old when rounds are
        pipelined), or its expected size before that. The papers' MPI vote (Algorithm 1)
        becomes a driver decision: every partition sees the same sizes."""
        if self.options.join_planning != "dynamic" or kernel.delta is None:
            return False
        relation = kernel.steps[kernel.delta].relation
        rows = self.last_delta.get(relation, self.size_or_expected(relation))
        return rows <= self.options.broadcast_rows

    def combine(self, relation: str) -> Combine | None:
        """How the relation's candidates are combined inside their partition before the
        round's one shuffle (translate.kernel_query), or None. A set relation drops its
        duplicates there, a $MIN/$MAX relation of numbers or floats all but each key's best
        value (unsigned values are ordered by their flipped bits, which min() does not
        know; a $SUM's contributions and totals and user lattices are not combined, but for a
        presummed $SUM's, summed per key: ir/presum.py).
        ``auto`` combines while the relation's last counted loop round derived at least
        COMBINE_RATIO times the tuples it kept (new tuples, improved keys), decided, as
        broadcast_delta is, from sizes already known; before a loop round is counted, it
        combines (a stratum's first round, a copy of base facts such as ``tc(x, y) :-
        edge(x, y)``, says nothing of the rounds after it). Below that ratio there is little to drop (a tree's closure derives each
        pair once) and the aggregate costs more than the rows it saves the shuffle. A
        lagging index copies its relation's delta: nothing to combine."""
        layout = self.layout(relation)
        if self.options.combine == "off" or layout.index_of is not None:
            return None
        if self.presum_marks(relation):  # a round's contributions summed per key
            return Combine("sum", layout.dependent)
        seen = self.loop_counts.get(relation)
        if self.options.combine == "auto" and seen is not None \
                and seen[0] < COMBINE_RATIO * max(seen[1], 1):
            return None
        if layout.lattice is None:
            return Combine("distinct")
        if layout.lattice in ("min", "max") and \
                self.kinds(relation)[layout.dependent] in ("number", "float"):
            return Combine(layout.lattice, layout.dependent)
        return None

    def size_or_expected(self, relation: str) -> int:
        if relation in self.sizes:
            return self.sizes[relation]
        return self.expected.get(relation, 0)

    def constant_rows(self, step: Scan, sql: str) -> list[tuple[Any, ...]] | None:
        """The rows ``sql`` (a scan of ``step``'s relation) reads when they are at most one
        and cannot change while the running recursive stratum runs: the relation belongs to
        a stratum below it, holds at most CONSTANT_ROWS rows, and the scan finds at most one
        of them (``iterations(k)``; ``config("k", v)`` in a table of settings). None
        otherwise (the scan stays a join).

        A recursive rule that crosses such a parameter then reads its values as literals
        (translate._scan): the cross join, its scan and its code-generation stage leave
        the plan that every round runs again, and the literals fold into the expressions
        that use them. The rows are read once per stratum, as Spark reads a scalar
        subquery's one value before the query that uses it; a deferred version is
        computed (and booked) first."""
        relation = step.relation
        if self.running is None or relation in self.running or relation not in self.stored \
                or not self.options.inline_constants or step.version != FULL:
            return None
        if relation not in self.sizes and self.expected.get(relation, 0) > CONSTANT_ROWS:
            return None  # deferred and expected large: not computed ahead for this
        key = (sql, *(id(run) for run in self.runs(relation)))
        if key in self._constants:
            return self._constants[key]
        for run in self.runs(relation):
            if any(e[0] is run for e in self.pending):
                self.settle(force=True, only=run)
        rows = None
        if self.sizes.get(relation, CONSTANT_ROWS + 1) <= CONSTANT_ROWS:
            found = [tuple(r) for r in self.spark.sql(f"{sql} LIMIT 2").collect()]
            rows = found if len(found) <= 1 else None
        self._constants[key] = rows
        return rows

    def copy_view(self, relation: str, homes: str) -> str | None:
        """A view of a copy of ``relation`` with each row once for every home value
        ``homes`` yields (SQL: Allocation.every_home_sql of the rows a join sends it to),
        in column ``_q`` and placed by it, stored once per recursive stratum; None when
        the relation may change while the stratum runs (one of its own, or no stratum is
        running) or stored copies are off.

        A join that sends a small side to every sub-bucket of the rows so far
        (translate._replicated: a linear closure's edges, rewrite/replicate.py) would
        otherwise shuffle the same copies every round, an Exchange and a stage of each
        round's job. Read from storage, the copies come placed by ``_q`` already, which
        the join's placement on (..., ``_q``) is satisfied by: no Exchange. Stored by a
        job of their own when first asked for (a job group of their own, so no round's
        stats count it), which cuts their lineage: a lazy checkpoint, computed by a round's
        job, would keep it (a round checkpoints its own versions, not what they read).
        Freed when the stratum ends (drop_copies)."""
        if self.running is None or relation in self.running or relation not in self.stored \
                or not self.options.stored_copies:
            return None
        runs = self.runs(relation)
        key = (relation, homes, *(id(run) for run in runs))
        if key not in self._copies:
            cols = [f"c{i}" for i in range(len(self.kinds(relation)))] or ["1 AS _unit"]
            union = self._every_run(relation, cols)
            copies = self.spark.sql(f"SELECT r.*, {homes} AS {HOME} FROM ({union}) r")
            placed = copies.repartition(self.options.partitions, HOME)
            sc = self.spark.sparkContext
            saved = {k: sc.getLocalProperty(k) for k in _JOB_GROUP}
            sc.setJobGroup(f"{self.prefix}-copy-{relation}",
                           f"sparklog: {relation} copied to every sub-bucket")
            try:
                stored = _checkpoint(placed, self.options, eager=True)
            finally:
                for k, v in saved.items():
                    sc.setLocalProperty(k, v)
            name = f"`{self.prefix}_{relation}@copy{next(_RUNS)}`"
            stored.createOrReplaceTempView(name)
            self._copies[key] = (name, stored)
        return self._copies[key][0]

    def drop_copies(self) -> None:
        """Free the running stratum's stored copies (copy_view). Called as the stratum ends,
        also when it fails: freeing is best effort and never hides the failure."""
        copies, self._copies = list(self._copies.values()), {}
        for name, stored in copies:
            try:
                self.spark.catalog.dropTempView(name.strip("`"))
            except Exception:  # noqa: BLE001 - a stopped session has no views to drop
                pass
            self.release(stored)

    def read_rows(self, step: Scan) -> int:
        """The rows a kernel's scan reads, from sizes already known: a delta's, the new rows
        of the last counted round that had any (planned ahead, a round reads the delta of
        the round still running, and the relations of a staged recursion take turns:
        PageRank's contributions are new every other round); else the rows of the runs a
        round reads (a staged recursion's retired runs are not read)."""
        relation = step.relation
        if step.version == DELTA:
            return self.last_news.get(relation, self.size_or_expected(relation))
        if relation in self.stored:
            return sum(self.rows_of(relation, run) for run in self.live_runs(relation))
        return self.size_or_expected(relation)

    def columns(self, relation: str) -> _Columns:
        allocation = self.allocation(relation)
        kinds = tuple(self.kinds(relation))
        key = (id(self.spark.sparkContext._gateway), self.layout(relation), kinds, allocation)
        if key not in _COLUMNS:
            _COLUMNS[key] = _Columns.of(self.spark, self.layout(relation),
                                        self.kinds(relation), allocation)
        return _COLUMNS[key]

    def allocation(self, relation: str) -> Allocation:
        """The relation's sub-buckets and where they live (balance.py)."""
        if relation not in self.allocations:
            self.allocations[relation] = Allocation.initial(self.options.partitions)
        return self.allocations[relation]

    def insert(self, relation: str, derived: DataFrame, iteration: int,
               merges: int | None = None) -> tuple[DataFrame, Metrics]:
        """The relation's new newest run from the derived candidates and the stored runs,
        combined partition-locally; not yet materialized.

        ``derived`` has columns c0..ck. The combine step (spark/combine.py) depends on the
        relation: set semantics deduplicate and anti-join against every run, a lattice
        relation joins values per key. The new run holds the new tuples and the rows of
        the ``merges`` newest runs (all by default; see :meth:`merges`), which it replaces
        (:meth:`replace`). In a loop round (``iteration`` ≥ 1) those rows are restamped
        OLDER; the preamble (0) keeps their stamps.
        """
        runs, merged = self.live_runs(relation), self.newest_runs(relation, merges)
        kept = runs[:len(runs) - len(merged)]
        runs = [r for r, unread in zip(kept, self.unread(relation, merges)) if not unread] \
            + runs[len(kept):]
        metrics = Metrics(self.spark, f"new_{relation}_{iteration}")
        metrics.merged = len(merged)
        metrics.rows = sum(self.rows_of(relation, r) for r in merged)
        full = self._combined(relation, derived._jdf, runs, merged, iteration, metrics)
        if not jvm.has_home_exchange(full):
            # Spark found the derived tuples placed already and planned no home Exchange,
            # whose written rows are the round's derivations (jvm.derivations): count them
            # as they are derived instead (an observed count costs a little: only here)
            metrics.derived = Metrics(self.spark, f"derived_{metrics.name}")
            counted = metrics.derived.on(derived._jdf, F.count(F.lit(1)).alias("n"),
                                         jvm.seq(self.spark, []))
            metrics.placed = None
            full = self._combined(relation, counted, runs, merged, iteration, metrics)
        for observed in (metrics, metrics.placed, metrics.derived):
            if observed is not None:
                observed.source = full
        return DataFrame(full, self.spark), metrics

    def _every_run(self, relation: str, columns: list[str]) -> str:
        """SQL for ``columns`` of every stored run of a relation, newest first."""
        return " UNION ALL ".join(
            f"SELECT {', '.join(columns)} FROM {view}"
            for view in [self.view(relation), *self.sealed_views(relation)])

    def key_counts(self, relation: str) -> str:
        """A view of the relation's tuples per key (its bucket columns ``c..`` and ``n``),
        computed once, by the first job that reads it (iteration roll-over's estimate)."""
        name = f"`{self.prefix}_{relation}@keys`"
        if relation not in self._key_counts:
            keys = [f"c{i}" for i in self.layout(relation).key]
            runs = self._every_run(relation, keys)
            counts = self.spark.sql(f"SELECT {', '.join(keys)}, count(1) AS n FROM ({runs}) r "
                                    f"GROUP BY {', '.join(keys)}")
            _checkpoint(counts, self.options, eager=False).createOrReplaceTempView(name)
            self._key_counts[relation] = name
        return name

    def piece(self, relation: str, derived: DataFrame, pieces: list[DataFrame]) -> DataFrame:
        """One inner iteration of a rolled-over round (rounds._slices): its derived tuples
        shuffled home, deduplicated, anti-joined with every run and with the pieces before
        it, stamped NEWEST, sorted and lazily checkpointed. The round's job computes the
        pieces one after another (rounds._compute), each a job of its own."""
        cols = self.columns(relation)
        new = derived._jdf.select(cols.home).repartition(self.options.partitions,
                                                         cols.keys).dropDuplicates()
        for run in [*self.live_runs(relation), *pieces]:
            new = new.join(run._jdf, cols.order, "left_anti")
        new = new.select(cols.fresh).sortWithinPartitions(cols.sort)
        piece = _checkpoint(DataFrame(new, self.spark), self.options, eager=False)
        piece.__dict__["_sparklog_planned"] = new  # whose metrics its job computes
        return piece

    def insert_pieces(self, relation: str, pieces: list[DataFrame], iteration: int,
                      merges: int | None) -> tuple[DataFrame, Metrics]:
        """The relation's new newest run from a rolled-over round's pieces (new tuples
        already, placed and deduplicated) and the ``merges`` newest runs, as insert()."""
        cols = self.columns(relation)
        merged = self.newest_runs(relation, merges)
        metrics = Metrics(self.spark, f"new_{relation}_{iteration}")
        metrics.merged = len(merged)
        metrics.rows = sum(self.rows_of(relation, r) for r in merged)
        new = pieces[0]._jdf
        for piece in pieces[1:]:
            new = new.union(piece._jdf)
        new = metrics.on(new, *self.per_partition(relation))
        for run in reversed(merged):
            new = run._jdf.select(cols.aged).union(new)
        full = new.sortWithinPartitions(cols.sort)
        if not self.placed(relation, full):
            full = self._restore_placement(relation, full, metrics).sortWithinPartitions(
                cols.sort)
        for observed in (metrics, metrics.placed):
            if observed is not None:
                observed.source = full
        return DataFrame(full, self.spark), metrics

    def _combined(self, relation: str, derived: Any, runs: list[DataFrame],
                  merged: list[DataFrame], iteration: int, metrics: Metrics) -> Any:
        """Database.insert's planned version from the derived tuples (a JVM Dataset)."""
        cols = self.columns(relation)
        # (1) the all-to-all to the relation's placement, the one shuffle of the round:
        # none when the kernels kept their rows' homes and Spark finds them placed
        home = cols.kept if KEPT in derived.columns() else cols.home
        new = derived.select(home).repartition(self.options.partitions, cols.keys)
        # (2, 3) the combine step, partition-local: dedup and anti-join, or lattice join
        full = combine_for(self.layout(relation)).merge(
            self, relation, new, [r._jdf for r in runs], [r._jdf for r in merged], iteration,
            metrics)
        # (4) sorted first: the sort keeps the partitioning, and the placement check plans
        # the Dataset that is checkpointed (planning another one would cost a second pass)
        full = full.sortWithinPartitions(cols.sort)
        if not self.placed(relation, full):  # only if Spark lost the placement
            full = self._restore_placement(relation, full, metrics).sortWithinPartitions(
                cols.sort)
        return full

    def placed(self, relation: str, jdf: Any) -> bool:
        """Whether the planned ``jdf`` is hash-partitioned as the relation's layout says.

        Spark can lose the placement while planning: a head constant in a bucket column
        (``add(a, 0, a)``) is folded into the partitioning expression, which then names no
        column, and the union of old and new is no longer partitioner-aware (2P partitions).
        Every join and anti-join against the version would then reshuffle it, and rows in
        partitions past P escape the per-partition counts. One string from the JVM.
        """
        text = jvm.partitioning(jdf)
        if text == "SinglePartition":  # what Spark makes of a repartition into one
            return self.options.partitions == 1
        match = re.fullmatch(r"hashpartitioning\((.*), (\d+)\)", text)
        if match is None or int(match.group(2)) != self.options.partitions:
            return False
        layout = self.layout(relation)
        names = [e.split("#")[0] for e in match.group(1).split(", ")]
        return names == placement(layout)

    def _restore_placement(self, relation: str, full: Any, metrics: Metrics) -> Any:
        """``full`` shuffled to its home again, behind a projection Spark cannot fold.

        ``spark_partition_id() >= 0`` is always true, but not a constant to the optimizer,
        so no literal reaches the partitioning expression. This shuffles the whole version,
        once: the next round reads a correctly placed checkpoint.
        """
        cols = self.columns(relation)
        always = F.spark_partition_id() >= 0
        layout = self.layout(relation)
        names = [f"c{i}" for i in range(layout.arity)] + [SB]
        kept = [F.when(always, F.col(c)).alias(c)._jc for c in names] + [F.col(IT)._jc]
        full = full.select(jvm.seq(self.spark, kept)).repartition(self.options.partitions,
                                                               cols.keys).select(cols.stored)
        metrics.placed = Metrics(self.spark, f"placed_{metrics.name}")
        full = metrics.placed.on(full, *self.per_partition())
        assert self.placed(relation, full), (relation, jvm.executed_plan(full))
        return full

    def replace(self, relation: str, df: DataFrame, merged: int | None = None
                ) -> list[DataFrame]:
        """Make ``df`` the relation's newest run (its view follows, see view()) in place of
        its ``merged`` newest runs (all by default), which are returned; the runs before
        those stay, sealed."""
        runs, replaced = self.runs(relation), self.newest_runs(relation, merged)
        self.sealed[relation] = runs[:len(runs) - len(replaced)]
        self.stored[relation] = df
        if relation in self.stage_columns and _stages_of(df) is _UNKNOWN:
            # the runs it merged, whose stages book_stages reads (_merged_stages)
            df.__dict__["_sparklog_merged_from"] = list(replaced)
        return replaced

    # -- spatial balance -------------------------------------------------------------
    def rebalance(self, relation: str) -> bool:
        """Check the relation's balance and refine or consolidate its buckets (balance.py);
        whether its sub-buckets changed (its rows then moved: :meth:`place`)."""
        allocation = self.allocation(relation)
        sizes = self.sub_bucket_sizes(relation)
        decision = balance.rebalance(allocation, sizes, self.options.balance_ratio,
                                     self.options.balance_rows)
        self.balanced[relation] = (decision.refined, decision.consolidated)
        if decision.allocation == allocation:
            return False
        self.place(relation, decision.allocation)
        return True

    def sub_bucket_sizes(self, relation: str) -> dict[int, int]:
        """Rows per sub-bucket, by home value. While every partition hosts one sub-bucket
        they are the partition sizes the rounds observed (no job); else one small job
        over the stored runs counts them (a row per sub-bucket comes back)."""
        allocation = self.allocation(relation)
        sizes = self.partition_sizes.get(relation)
        if sizes is None:
            return {}
        if allocation.hosted() == [1] * allocation.partitions:
            return {h: sizes[balance.partition_of(h, allocation.partitions)]
                    for hs in allocation.homes for h in hs}
        total: dict[int, int] = {}
        for counts in _home_counts(self.runs(relation)):
            for home, rows in counts.items():
                total[home] = total.get(home, 0) + rows
        return total

    def place(self, relation: str, allocation: Allocation) -> None:
        """Give the relation its new sub-buckets: every stored run's rows whose home value
        changes move there (one shuffle of those rows only, the paper's point-to-point
        exchange); the others stay. Plans kept from earlier rounds are dropped."""
        layout, kinds = self.layout(relation), self.kinds(relation)
        self.allocations[relation] = allocation
        cols = self.columns(relation)
        home = home_value(layout, kinds, allocation)
        order = [f"c{i}" for i in layout.key] + [SB] + [f"c{i}" for i in layout.rest]
        moved = [home.alias(SB) if c == SB else F.col(c) for c in order] + [F.col(IT)]
        placed, old = [], self.runs(relation)
        # local checkpoints: every run stored by one job, not a job a run
        lazy = self.options.checkpoint == "local"
        for run in old:
            stays = run.where(F.col(SB) == home)
            moves = run.where(F.col(SB) != home).select(*moved).repartition(
                self.options.partitions, F.col(SB))
            jdf = stays.union(moves)._jdf.sortWithinPartitions(cols.sort)
            if not self.placed(relation, jdf):  # Spark lost the placement in the union
                jdf = run.select(*moved).repartition(self.options.partitions, F.col(SB)
                                                     )._jdf.sortWithinPartitions(cols.sort)
            new = _checkpoint(DataFrame(jdf, self.spark), self.options, eager=not lazy)
            if "_sparklog_rows" in run.__dict__:
                new.__dict__["_sparklog_rows"] = run.__dict__["_sparklog_rows"]
            _copy_stages(run, new)
            placed.append(new)
        if lazy:
            _store_together(self.spark, placed)
        self.sealed[relation], self.stored[relation] = placed[:-1], placed[-1]
        parts = self.options.partitions
        # the round's stats record reports the sizes the round left, before the move
        self.unbalanced.setdefault(relation, self.partition_sizes.get(relation, [0] * parts))
        for run, sizes in zip(placed, _placed_sizes(placed, parts)):
            run.__dict__["_sparklog_parts"] = sizes
        self.partition_sizes[relation] = [sum(c) for c in zip(
            *(run.__dict__["_sparklog_parts"] for run in placed))]
        self.templates.clear()
        for run in old:
            self.release(run)

    def use_codegen(self, rows: int) -> None:
        """Code generation for what is planned next only over many ``rows``.

        Over few rows, generating Java costs more than it saves: whole-stage code
        generation writes, looks up and ships a stage's code every round, and without it
        every task still generates the code of each projection and ordering it makes
        (compiled once, but written and looked up every time). So rounds under
        ``codegen_rows`` rows plan without whole-stage code generation, and tiny rounds
        (under ``tiny_rows``) also run with interpreted projections (FACTORY_MODE: the
        session's setting here, the jobs' local property in :func:`_compute`); a tiny
        rerun also stores its versions serialized (:attr:`serialized_reruns`). Larger
        rounds keep the session's settings; interpreted projections over many rows cost
        more than generating their code. benchmarks/results/programs.md measures both.
        The settings are restored after the run; a session that turned code generation
        off keeps it off.
        """
        threshold = self.options.codegen_rows
        large = threshold is not None and rows >= threshold
        self.tiny = not large and rows < self.options.tiny_rows
        whole_stage = self.whole_stage if large else "false"
        factory = "NO_CODEGEN" if self.tiny else self.factory_mode
        if whole_stage != self._whole_stage_set:
            self.spark.conf.set(WHOLE_STAGE, whole_stage)
            self._whole_stage_set = whole_stage
        if factory != self._factory_set:
            self.spark.conf.set(FACTORY_MODE, factory)
            self._factory_set = factory

    @property
    def whole_stage_now(self) -> str:
        """spark.sql.codegen.wholeStage as the next plan will see it."""
        return self._whole_stage_set or self.whole_stage

    @property
    def factory_now(self) -> str:
        """spark.sql.codegen.factoryMode as the next plan's tasks should see it."""
        return self._factory_set or self.factory_mode

    # -- deferred versions -----------------------------------------------------------
    def defer(self, df: DataFrame, settle: Callable[[], list[Any]]) -> None:
        """Register a lazily checkpointed version and the bookkeeping its metrics feed.

        Checkpointing an input, or the first version of a recursive stratum, in a job of
        its own costs a Spark job for tuples that the next round reads anyway. Marked
        lazily instead, the version is computed and kept by the first job that reads it.
        Its observed metrics fill in during that job; ``settle`` (which returns diagnostics,
        e.g. malformed input lines) runs once they have, from :meth:`settle`.
        """
        self.pending.append((df, settle))

    def bound_depth(self, relations: set[str], kernels: tuple[Kernel, ...]) -> int:
        """The depth a version derived from ``relations`` by ``kernels`` would have; past
        MAX_DEFERRED_DEPTH, every deferred version is computed first (one job: the newest
        computes those it reads), and the depth starts again.

        A version deferred over deferred versions is computed, stages and all, by the job
        that first reads it; over a long chain of strata that job's lineage grows until
        serializing it overflows the JVM's stack. Each stratum adds a stage and one per
        relation its widest kernel reads (an Exchange each at most)."""
        added = 1 + max((len(k.reads()) for k in kernels), default=0)
        depth = max((self.depths.get(r, 0) for r in relations), default=0) + added
        if depth > MAX_DEFERRED_DEPTH and self.pending:
            self.settle(force=True)
            depth = added
        return depth

    def settle(self, force: bool = False, only: DataFrame | None = None) -> None:
        """Run the bookkeeping of deferred versions a job has computed (all, if ``force``).

        A version counts as computed when all its partitions are in block storage; forcing
        computes the others with one job each (versions no rule read). Either way the
        version's lineage is then cut, as an eager checkpoint's is: the jobs that read it
        later would otherwise carry its lineage (more stages to skip, larger task binaries).
        Versions settle in the order they were deferred, so their stats records keep it.
        """
        todo = [e for e in self.pending if only is None or e[0] is only]
        if not todo:
            return
        if force:  # newest first: its job computes the older versions it reads as well
            for df, _ in reversed(todo):
                rdd = _stored_rdd(df)
                if rdd is not None:
                    rdd.doCheckpoint()  # no job for partitions already in block storage
        cached = _cached_rdds(self.spark)
        problems: list[Any] = []
        for entry in todo:
            if not any(e is entry for e in self.pending):
                continue  # settled meanwhile, by a later version's release of it
            df, settle = entry
            rdd = _stored_rdd(df)
            if force or (rdd is not None and cached.get(rdd.id()) == rdd.getNumPartitions()):
                if rdd is not None:
                    rdd.doCheckpoint()  # computes missing partitions, then cuts the lineage
                self.pending = [e for e in self.pending if e is not entry]
                problems += settle()
        if not self.pending:  # nothing deferred is left to read
            self.depths.clear()
        if problems:
            from sparklog.errors import DataError, Reporter

            Reporter(problems).raise_if_any(DataError, self.sources)

    def store_now(self, versions: list[DataFrame]) -> None:
        """Compute deferred versions now, in one job, and settle them (their sizes booked)."""
        _store_together(self.spark, versions)
        for df in versions:
            self.settle(only=df)

    def release(self, df: DataFrame | None) -> None:
        """Free the blocks of a version that no plan will read again (settled first)."""
        if df is None:
            return
        if any(e[0] is df for e in self.pending):
            self.settle(force=True, only=df)
        try:
            rdd = _stored_rdd(df)
            if rdd is not None:
                rdd.unpersist(False)
        except Exception:  # noqa: BLE001 - freeing memory early is an optimization only
            pass


# the local properties a job group sets (SparkContext.setJobGroup)
_JOB_GROUP = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
# the most rows a lower stratum's relation holds for a scan of it to be read for a
# recursive rule's literals (Database.constant_rows): reading a larger one is not worth a job
CONSTANT_ROWS = 1_000
MAX_DEFERRED_DEPTH = 40  # stages, about, of uncomputed versions under a new one


def placement(layout: Layout) -> list[str]:
    """The columns a stored relation is hash-partitioned by: the home value of each row's
    sub-bucket, which puts it on the partition its sub-bucket was given (balance.py)."""
    return [SB]


def _checkpoint(df: DataFrame, options: Options, eager: bool = True, estimated: bool = True
                ) -> DataFrame:
    """Cut the lineage; keeps the hash partitioning. Lazy (``eager=False``, local
    checkpoints only) leaves the computing to the first job that reads the result.
    ``estimated=False``: ``df`` carries no estimate of its plan to hand on (a rerun)."""
    forget = _without_estimates if estimated else (lambda checkpointed: checkpointed)
    if options.checkpoint == "reliable":
        return forget(df.checkpoint(eager=True))
    if options.columnar:  # compact: column batches in block storage (Options.stored)
        return jvm.columnar_of(df, eager, options.compressed)  # no estimate to forget
    if options.serialized:  # compact: rows serialized in block storage (Options.stored)
        return forget(df.localCheckpoint(eager=eager, storageLevel=StorageLevel.MEMORY_AND_DISK))
    return forget(df.localCheckpoint(eager=eager))


def _stages_of(run: DataFrame) -> Any:
    """A run's lowest and highest stage (None: it holds no rows), _UNKNOWN until its round
    is counted (Database.book_stages), or for good when they were not observed."""
    return run.__dict__.get("_sparklog_stages", _UNKNOWN)


def _merged_stages(run: DataFrame) -> Any:
    """The stages of the runs a run replaced (Database.replace), _UNKNOWN while one of
    theirs is. Read when asked, not when the run was made: a pipelined round merges the
    version of the round before, which is counted after the merge was planned."""
    d = run.__dict__
    if "_sparklog_merged_stages" in d:
        return d["_sparklog_merged_stages"]
    replaced = d.get("_sparklog_merged_from")
    if replaced is None:
        return _UNKNOWN
    merged: Any = None
    for r in replaced:
        stages = _stages_of(r)
        if stages is _UNKNOWN:
            return _UNKNOWN
        merged = _span(merged, stages)
    d["_sparklog_merged_stages"] = merged
    del d["_sparklog_merged_from"]  # the replaced runs can go
    return merged


def _span(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    """The stages two runs hold together (None: no rows)."""
    if a is None or b is None:
        return a if b is None else b
    return (min(a[0], b[0]), max(a[1], b[1]))


def _copy_stages(run: DataFrame, copy: DataFrame) -> None:
    """A run's stages for a copy that holds some or all of its rows (place, compact)."""
    for key in ("_sparklog_stages", "_sparklog_merged_stages", "_sparklog_merged_from"):
        if key in run.__dict__:
            copy.__dict__[key] = run.__dict__[key]


def _store_together(spark: SparkSession, runs: list[DataFrame]) -> None:
    """Compute and store lazily checkpointed versions in one job a partition count
    (jvm.compute_together), not a job a version."""
    rdds = [rdd for rdd in map(_stored_rdd, runs) if rdd is not None]
    alike: dict[int, list[Any]] = {}
    for rdd in rdds:
        alike.setdefault(rdd.getNumPartitions(), []).append(rdd)
    for group in alike.values():
        if len(group) > 1:
            jvm.compute_together(spark, group)
    for rdd in rdds:
        rdd.doCheckpoint()  # a no-op once the joint job has stored it


def _home_counts(runs: list[DataFrame]) -> list[dict[int, int]]:
    """Rows per home value (sub-bucket) of each of a relation's runs, counted by one job
    (a row per run and sub-bucket comes back)."""
    tagged = [run.select(F.lit(i).alias("run"), F.col(SB)) for i, run in enumerate(runs)]
    rows = tagged[0]
    for more in tagged[1:]:
        rows = rows.unionAll(more)
    counts: list[dict[int, int]] = [{} for _ in runs]
    for r in rows.groupBy("run", SB).count().collect():
        counts[r[0]][r[1]] = r[2]
    return counts


def _placed_sizes(runs: list[DataFrame], partitions: int) -> list[list[int]]:
    """Rows per partition of each of a relation's runs, counted by one job: a row's
    partition is its home value's (balance.partition_of)."""
    sizes = [[0] * partitions for _ in runs]
    for run, counts in zip(sizes, _home_counts(runs)):
        for home, rows in counts.items():
            run[balance.partition_of(home, partitions)] += rows
    return sizes


def _partition_sizes(version: DataFrame, partitions: int) -> list[int]:
    """Rows per partition of a stored version, counted by a job (P rows come back)."""
    counts = {r["p"]: r["n"] for r in version.groupBy(F.spark_partition_id().alias("p"))
              .agg(F.count(F.lit(1)).alias("n")).collect()}
    assert set(counts) <= set(range(partitions)), counts  # insert checked the placement
    return [counts.get(p, 0) for p in range(partitions)]


def empty_frame(spark: SparkSession, columns: list[tuple[str, str]]) -> DataFrame:
    """An empty DataFrame with these (name, Spark SQL type) columns, made in the JVM.

    Not createDataFrame: from Python data it builds an RDD that Python worker processes
    decode, so every executor would need a matching Python.
    """
    return spark.range(0).select(*[F.lit(None).cast(t).alias(c) for c, t in columns])



def _spark_type(kind: str) -> str:
    return {"number": "long", "unsigned": "long", "float": "double", "symbol": "long"}[kind]
