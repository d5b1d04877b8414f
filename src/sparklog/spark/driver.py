"""The fixed-point driver: semi-naive evaluation of each stratum over stored versions.

Every stored relation is one DataFrame with columns ``c0..ck``, the sub-bucket ``_sb`` and
a stamp ``_it``, hash-partitioned by (bucket columns, _sb) and sorted inside each partition.
``full`` is the whole DataFrame, ``delta`` the rows stamped NEWEST (derived in the last
round) and ``old`` the rows stamped OLDER, so all three versions are filters of one
partitioned relation. Stamps are relative rather than iteration numbers so that the plan of
every iteration is the same text: Spark inlines literals into the Java it generates, and an
absolute iteration number would make it compile fresh code for every stage every round.
One iteration of a stratum with one relation is one Spark job:

    derived  = union of the loop kernels          (partition-local joins with stored sides)
    new      = derived shuffled once to its home, deduplicated, anti-joined with full
    full'    = full (restamped OLDER) ∪ new (stamped NEWEST), sorted, checkpointed

Delta sizes and partition sizes come from ``DataFrame.observe`` on that same job, and
derivation counts from the rows the one Exchange wrote (every derived tuple crosses it).
Inputs, a recursive stratum's first version and a non-recursive stratum's version are
deferred: checkpointed lazily, they are computed and stored by the first job that reads
them, and their bookkeeping runs after it (:meth:`Database.defer`). Rounds are pipelined: while round k's job runs on a worker
thread, the driver plans round k+1 over round k's (lazily checkpointed) versions
(:func:`_loop`).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparklog.defaults import BROADCAST_ROWS, CODEGEN_ROWS
from sparklog.ir.nodes import Kernel, Layout, Plan, StratumPlan
from sparklog.spark import jvm
from sparklog.spark.combine import combine_for
from sparklog.spark.jvm import cached_rdds as _cached_rdds
from sparklog.spark.jvm import stored_rdd as _stored_rdd
from sparklog.spark.jvm import without_estimates as _without_estimates
from sparklog.spark.session import FACTORY_MODE, WHOLE_STAGE
from sparklog.spark.translate import (IT, NEWEST, OLDER, SB, creates_symbols, kernel_query,
                                      kernel_symbols, sub_bucket)


@dataclass
class Options:
    """Knobs of the driver; every mechanism can be switched."""

    partitions: int = 2
    checkpoint: str = "local"  # "local" (localCheckpoint) or "reliable" (checkpoint dir)
    checkpoint_dir: str | None = None
    max_iterations: int | None = None
    # Inputs, the first version of a recursive stratum and the versions of non-recursive
    # strata are stored by the job that first reads them, not by jobs of their own: see
    # Database.defer.
    deferred: bool = True
    # Round k+1 is planned while round k's job runs (local checkpoints only).
    pipelined: bool = True
    # Rounds reading at least this many stored rows use whole-stage code generation, the
    # others run without it (see Database.use_codegen). None: no round uses it; 0: every round
    # does, as the session would by default.
    codegen_rows: int | None = CODEGEN_ROWS
    # A round whose job runs no task for this long has stalled (see _Job); None: wait on.
    stall_seconds: float | None = 300.0
    # Record lineage() of every loop round's job in Database.lineage (for tests, benchmarks).
    trace_lineage: bool = False
    # How a loop round after the first is planned (see _plan): "executed" runs the executed
    # plan of the round before over the new stored versions; "optimized" plans it from
    # the optimized plan of the round before; "off" from the kernels' SQL.
    reuse_plans: str = "executed"
    # Rounds reading fewer stored rows are tiny: their tasks make projections without
    # generating code, and a rerun stores its versions serialized (see Database.use_codegen).
    tiny_rows: int = 10_000
    # Which side of a join that is not partition-local moves (PARALAGG's dynamic join
    # planning, see Database.broadcast_delta): "dynamic" broadcasts a delta of at most
    # ``broadcast_rows`` rows, "off" lets Spark shuffle both sides. Off by default: on two
    # local cores shuffling the stored side costs less than broadcasting the delta and
    # re-planning the round (a broadcast plan is not rerun); README, "Benchmarks".
    join_planning: str = "off"
    broadcast_rows: int = BROADCAST_ROWS

    @property
    def defers(self) -> bool:
        # A reliable checkpoint is written only by its own job (a later job stops at the
        # checkpointed RDD it finishes with), so only local checkpoints are deferred.
        return self.deferred and self.checkpoint == "local"


_RUNS = itertools.count()


@dataclass(frozen=True)
class _Columns:
    """A relation's layout as the Java sequences the Dataset methods take, built once.

    The insert of every round calls Dataset methods with these directly. Through PySpark's
    wrappers each call would convert its column list anew, one JVM round trip per element,
    which made the driver's share of a round larger than the work Spark does in it.
    """

    home: Any  # Seq[Column]: c0..ck tagged, then the sub-bucket
    keys: Any  # Seq[Column]: the bucket columns, then _sb
    order: Any  # Seq[String]: bucket columns, _sb, other columns (the anti-join keys)
    stored: Any  # Seq[Column]: the stored columns in order, then _it
    fresh: Any  # the same, with the stamp NEWEST
    aged: Any  # the same, with the stamp OLDER
    sort: Any  # Seq[Column]: ascending on ``order``

    @classmethod
    def of(cls, spark: SparkSession, layout: Layout) -> _Columns:
        # Re-alias every column with metadata: otherwise the optimizer drops a same-name
        # alias (c1#3 AS c1#19), the plan partitions by the source attribute, and the
        # checkpointed relation reports a partitioning that names none of its columns.
        tagged = [F.col(f"c{i}").alias(f"c{i}", metadata={"sparklog": layout.relation})
                  for i in range(layout.arity)]
        home = tagged + [sub_bucket(layout).alias(SB)]
        keys = [F.col(f"c{i}") for i in layout.key] + [F.col(SB)]
        order = tuple(f"c{i}" for i in layout.key) + (SB,) + tuple(f"c{i}" for i in layout.rest)
        stored = [F.col(c) for c in order] + [F.col(IT)]
        fresh = stored[:-1] + [F.lit(NEWEST).alias(IT)]
        aged = stored[:-1] + [F.lit(OLDER).alias(IT)]
        sort = [F.col(c).asc() for c in order]
        seq = lambda items: jvm.seq(spark, items)
        return cls(seq(home), seq(keys), seq(list(order)), seq(stored), seq(fresh), seq(aged),
                   seq(sort))


_COLUMNS: dict[tuple[int, Layout], _Columns] = {}  # per JVM gateway, shared by runs


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
    _per_partition: tuple[Column, Any] | None = None
    _lattice_counts: tuple[Column, Any] | None = None  # see combine.lattice_counts
    functors: dict[str, Callable[[Column, Column], Column]] = field(default_factory=dict)
    # rows expected of versions whose size is not booked yet: deferred inputs (their
    # files' size, see load) and the deferred versions computed from them (_round)
    expected: dict[str, int] = field(default_factory=dict)
    last_delta: dict[str, int] = field(default_factory=dict)  # see broadcast_delta
    pending: list[tuple[DataFrame, Callable[[], list[Any]]]] = field(default_factory=list)
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

    def __post_init__(self) -> None:
        if self.options.trace_lineage:
            self.lineage = []

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
            self.replace(relation, self._empty(relation))
        df = self.stored[relation]
        if self._viewed.get(relation) is not df:
            df.createOrReplaceTempView(f"`{self.prefix}_{relation}`")  # quoted: r@c
            self._viewed[relation] = df
        return f"`{self.prefix}_{relation}`"

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
        return DataFrame(jdf, self.spark)

    def layout(self, relation: str) -> Layout:
        return self.plan.layouts[relation]

    def kinds(self, relation: str) -> tuple[str, ...]:
        return self.plan.kinds[relation]

    def discard(self) -> None:
        """Free the block storage of a run that failed: no Result will read it."""
        self.pending = []
        for df in [*self.stored.values(), *self.symbol_parts]:
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
        self._viewed = {}

    def add_symbols(self, df: DataFrame) -> None:
        self.symbol_parts.append(df)
        self._symbols = None

    # -- storage ---------------------------------------------------------------------
    def per_partition(self) -> tuple[Column, Any]:
        """The row count ``n`` and the counts per partition ``p0..``, as observed metrics:
        sizes without an extra job. Returned as the first expression and a Seq of the rest,
        the shape Dataset.observe takes.

        The union of full and new keeps partition indexes (both are co-partitioned), so a
        relation's partition sizes are the running sums of the new rows' counts. The delta
        is ``n``, never the sum of the ``p``: if a partition index fell outside ``p0..``, a
        sum would silently miss rows and end a recursion early.
        """
        if self._per_partition is None:
            self._per_partition = (F.count(F.lit(1)).alias("n"),
                                   jvm.seq(self.spark, self.partition_counts()))
        return self._per_partition

    def partition_counts(self) -> list[Column]:
        """``p0..``: the rows each partition's task computes, as aggregate expressions."""
        pid = F.spark_partition_id()
        return [F.sum(F.when(pid == p, 1).otherwise(0)).alias(f"p{p}")
                for p in range(self.options.partitions)]

    def add_new(self, relation: str, metrics: Metrics, version: DataFrame) -> int:
        """Fold one round's observed counts into the relation's sizes; the new rows.

        ``spark_partition_id()`` is the partition of the task that computes a row. A
        deferred version is computed inside the tasks of the job that first reads it, and
        when that job reads it through a cartesian product, say, those tasks are not the
        version's partitions: then its sizes are counted again from the stored
        ``version`` (one small job, only then).
        """
        parts = range(self.options.partitions)
        new = metrics.get
        if metrics.placed is not None:  # placement restored: counts of the whole version
            placed = metrics.placed.get
            sizes = [placed.get(f"p{p}") or 0 for p in parts]
        elif "rows" in new:  # a lattice relation: counts of the whole version, too
            sizes = [new.get(f"p{p}") or 0 for p in parts]
            if sum(sizes) != new["rows"]:
                sizes = _partition_sizes(version, len(parts))
        else:
            counts = [new.get(f"p{p}") or 0 for p in parts]
            before = self.partition_sizes.get(relation, [0] * len(parts))
            sizes = [a + b for a, b in zip(before, counts)]
            if sum(counts) != new["n"]:
                sizes = _partition_sizes(version, len(parts))
        self.partition_sizes[relation] = sizes
        self.sizes[relation] = sum(sizes)
        return int(new["n"] or 0)

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

    def size_or_expected(self, relation: str) -> int:
        if relation in self.sizes:
            return self.sizes[relation]
        return self.expected.get(relation, 0)

    def columns(self, relation: str) -> _Columns:
        key = (id(self.spark.sparkContext._gateway), self.layout(relation))
        if key not in _COLUMNS:
            _COLUMNS[key] = _Columns.of(self.spark, self.layout(relation))
        return _COLUMNS[key]

    def insert(self, relation: str, derived: DataFrame, iteration: int
               ) -> tuple[DataFrame, Metrics]:
        """full' from full and the derived candidates, combined partition-locally; not yet
        materialized.

        ``derived`` has columns c0..ck. The combine step (spark/combine.py) depends on the
        relation: set semantics deduplicate and anti-join against full, a lattice relation
        joins values per key. In a loop round (``iteration`` ≥ 1) the stored rows are
        restamped OLDER; the preamble (0) keeps their stamps.
        """
        cols = self.columns(relation)
        # (1) the all-to-all to (bucket, sub-bucket), the one shuffle of the round
        new = derived._jdf.select(cols.home).repartition(self.options.partitions, cols.keys)
        old = self.stored.get(relation)
        metrics = Metrics(self.spark, f"new_{relation}_{iteration}")
        # (2, 3) the combine step, partition-local: dedup and anti-join, or lattice join
        full = combine_for(self.layout(relation)).merge(
            self, relation, new, None if old is None else old._jdf, iteration, metrics)
        # (4) sorted first: the sort keeps the partitioning, and the placement check plans
        # the Dataset that is checkpointed (planning another one would cost a second pass)
        full = full.sortWithinPartitions(cols.sort)
        if not self.placed(relation, full):  # only if Spark lost the placement
            full = self._restore_placement(relation, full, metrics).sortWithinPartitions(
                cols.sort)
        metrics.source = full
        if metrics.placed is not None:
            metrics.placed.source = full
        return DataFrame(full, self.spark), metrics

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
        return names == [f"c{k}" for k in layout.key] + [SB]

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

    def replace(self, relation: str, df: DataFrame) -> DataFrame | None:
        """Make ``df`` the stored relation (its view follows, see view()); return the
        previous version."""
        previous = self.stored.get(relation)
        self.stored[relation] = df
        return previous

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
        if problems:
            from sparklog.errors import DataError, Reporter

            Reporter(problems).raise_if_any(DataError, self.sources)

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


def _checkpoint(df: DataFrame, options: Options, eager: bool = True, estimated: bool = True
                ) -> DataFrame:
    """Cut the lineage; keeps the hash partitioning. Lazy (``eager=False``, local
    checkpoints only) leaves the computing to the first job that reads the result.
    ``estimated=False``: ``df`` carries no estimate of its plan to hand on (a rerun)."""
    forget = _without_estimates if estimated else (lambda checkpointed: checkpointed)
    if options.checkpoint == "reliable":
        return forget(df.checkpoint(eager=True))
    return forget(df.localCheckpoint(eager=eager))


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


@dataclass
class Stats:
    """One record per iteration per relation (the vocabulary of the design notes)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    on_record: Callable[[dict[str, Any]], None] | None = None

    def add(self, **record: Any) -> None:
        self.records.append(record)
        if self.on_record:
            self.on_record(record)


def evaluate(db: Database, stats: Stats) -> None:
    """Evaluate every stratum in order."""
    try:
        for sp in db.plan.strata:
            if sp.preamble or sp.loop:
                _evaluate_stratum(db, sp, stats)
    finally:
        db.close()
    db.spark.sparkContext.setJobGroup("sparklog", "sparklog: unread inputs")
    db.settle(force=True)
    db.spark.sparkContext.setJobGroup("sparklog", "sparklog: results")


def _evaluate_stratum(db: Database, sp: StratumPlan, stats: Stats) -> None:
    db.iteration = 0
    db.templates.clear()  # another stratum's plans
    _round(db, sp, sp.preamble, stats)
    if not sp.stratum.recursive:
        return
    if db.options.checkpoint == "local":
        _loop(db, sp, stats)
        return
    while True:  # a reliable checkpoint is written by a job of its own: one at a time
        db.iteration += 1
        news = _round(db, sp, sp.loop, stats)
        if not any(news.values()):
            break
        if db.options.max_iterations and db.iteration >= db.options.max_iterations:
            _stopped(db, sp, news)
            break


def _loop(db: Database, sp: StratumPlan, stats: Stats) -> None:
    """The semi-naive rounds of a recursive stratum, pipelined when they can be.

    Each round is planned to its physical plan, then checkpointed lazily (which builds its
    RDDs) only once the previous round's job has ended; its job then computes and stores
    the new versions. Pipelined, that job runs on a worker thread while this thread swaps
    the versions in and plans the next round over them (SQL analysis, optimization,
    physical planning: about a third of a small round). When the job ends, the round is
    booked as a sequential one is; if it derived nothing, the plan made meanwhile is
    dropped unrun. Rounds, jobs, versions and stats are the same either way; only the
    driver's seconds overlap the job's. Only the new-row counts stand between one job and
    the next: the next round's job starts before this round's stats records are written.

    Building a round's RDDs before the previous version's checkpoint has finished would
    let them keep that version's uncut partitions, and through them every earlier
    round's: a chain that grows by one link a round until serializing a task overflows
    the stack of Spark's scheduler thread. Hence the RDDs of round k+1 are built only
    after round k's job (:func:`_mark`); tests/spark/test_lineage.py measures it. A
    rerun of a kept plan over local checkpoints is the exception: it scans the blocks
    the versions' checkpoints store, not their RDDs, so _plan builds its RDDs at once and
    only the new-row counts stand between its job and the one before.

    A plan that starts jobs while it is prepared (a broadcast, a kernel making symbols)
    is not planned ahead: the jobs of a round that may never run would start early.
    """
    limit = db.options.max_iterations
    within = lambda iteration: not limit or iteration <= limit
    if not within(1):
        return
    db.iteration = 1
    finished = time.perf_counter()  # a round's seconds run from the previous one's end
    ahead: list[_Step] | None = _plan(db, sp, sp.loop)
    overlap = (db.options.pipelined and not any(creates_symbols(k) for k in sp.loop)
               and not _starts_jobs(ahead))
    job: _Job | None = None  # the running job of ``current``, when already started
    while ahead is not None:
        current, iteration, ahead = ahead, db.iteration, None
        if job is None:
            _mark(db, current)
            job = _Job(db, _compute, current)
        if overlap:
            previous = _swap(db, current)
            if within(iteration + 1):
                db.iteration = iteration + 1
                ahead = _plan(db, sp, sp.loop)
            job.wait()
        else:
            job.wait()
            previous = _swap(db, current)
        now = time.perf_counter()
        # round 1's job computed every deferred version the loop reads: the rounds after
        # it read the same relations, so they have none to settle (two calls per RDD)
        news, job = _count_round(db, sp, current, settle=iteration == 1), None
        if overlap and ahead is not None and any(news.values()):
            # the next round's job starts before this round's records are written
            _mark(db, ahead)
            job = _Job(db, _compute, ahead)
        _record_round(db, sp, current, stats, iteration, round(now - finished, 4), news)
        finished = now
        for version in previous:
            db.release(version)
        if not any(news.values()):
            break
        if not within(iteration + 1):
            _stopped(db, sp, news)
        if not overlap and within(iteration + 1):
            db.iteration = iteration + 1
            ahead = _plan(db, sp, sp.loop)


def _stopped(db: Database, sp: StratumPlan, news: dict[str, int]) -> None:
    """The stratum reached --max-iterations with a delta left. A set relation then holds
    what the rounds derived, as asked; a lattice relation's values may not be final, which
    would be a wrong answer, so that is an error. Its rules are monotone as written (the
    checker proved what it could), so values that keep improving mean a cycle that keeps
    improving them: a negative cycle under $MIN, say."""
    from sparklog.errors import EngineError

    improving = [r for r in sp.relations if news.get(r) and db.plan.lattice(r)]
    if improving:
        relation = improving[0]
        raise EngineError(
            f"{relation} did not converge: {news[relation]} of its keys still improved in "
            f"iteration {db.iteration}, the last one --max-iterations allows "
            f"({db.options.max_iterations}); its values keep improving along a cycle "
            "(a negative cycle under $MIN, a positive one under $MAX), so there is no "
            "least fixed point to report")


def _starts_jobs(steps: list[_Step]) -> bool:
    """Whether preparing the round's physical plan started jobs (broadcasts, subqueries)."""
    for step in steps:
        text = step.new.executed().toString()
        if "BroadcastExchange" in text or "Subquery" in text:
            return True
    return False


def _mark(db: Database, steps: list[_Step]) -> None:
    """Checkpoint a planned round's versions lazily: builds their RDDs, runs no job. A
    step marked already (a rerun over the versions' blocks, by _plan) is left as it is."""
    sc = db.spark.sparkContext
    for step in steps:
        if step.marked:
            continue
        sc.setJobGroup(step.group, step.description)
        if step.rerun is not None and step.serialized:
            step.full = jvm.stored(db.spark, *step.rerun)
        else:
            step.full = _checkpoint(_frame(db, step), db.options, eager=False,
                                    estimated=step.rerun is None)
        step.marked = True


def _frame(db: Database, step: _Step) -> DataFrame:
    """The step's planned version; a rerun's RDDs are built now, when the versions it
    reads are stored or it reads their blocks (see _loop on building RDDs early)."""
    return step.full if step.rerun is None else jvm.frame(db.spark, *step.rerun)


def _compute(db: Database, steps: list[_Step]) -> None:
    """Run a marked round's jobs: compute and store its lazily checkpointed versions."""
    for step in steps:
        _for_job(db, step)
        rdd = _stored_rdd(step.full)
        if rdd is not None:
            if db.lineage is not None:
                db.lineage.append(jvm.lineage(db.spark, rdd))
            rdd.doCheckpoint()  # one job: what an eager local checkpoint runs


def _store(db: Database, steps: list[_Step]) -> None:
    """Checkpoint a planned round's versions eagerly: its job runs now."""
    for step in steps:
        _for_job(db, step)
        step.full = _checkpoint(_frame(db, step), db.options, eager=True,
                                estimated=step.rerun is None)


def _for_job(db: Database, step: _Step) -> None:
    """The local properties of the step's job, set on the worker thread that runs it:
    its job group, and how its tasks make projections (Database.use_codegen)."""
    sc = db.spark.sparkContext
    sc.setJobGroup(step.group, step.description)
    if step.factory != db.job_factory:
        sc.setLocalProperty(FACTORY_MODE, step.factory)
        db.job_factory = step.factory


class _Worker:
    """The daemon thread that runs a run's jobs, one after another, with the local
    properties (job group, tags, scheduler pool) of the thread that started it.

    One thread for the whole run, not one per round: each new Python thread opens its
    own connection to the JVM (pinned threads) and copies the caller's properties, a
    dozen round trips that a round over a few hundred tuples would otherwise pay.
    """

    def __init__(self, spark: SparkSession) -> None:
        import queue
        import threading

        from pyspark.util import inheritable_thread_target

        self.tasks: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        serve = inheritable_thread_target(spark)(self._serve)  # the caller's properties
        threading.Thread(target=serve, name="sparklog-round", daemon=True).start()

    def _serve(self) -> None:
        while (task := self.tasks.get()) is not None:
            task()

    def stop(self) -> None:
        self.tasks.put(None)


class _Job:
    """A round's jobs on the run's worker thread, watched from the calling thread.

    A job can stop making progress without failing: when Spark's own scheduler thread
    dies (a StackOverflowError while serializing a task, say), the job waits forever
    for tasks nobody launches. :meth:`wait` ends the run with an error instead, once no
    task has run or finished for ``Options.stall_seconds``. A daemon thread, so that
    a process whose job hangs can still exit.
    """

    def __init__(self, db: Database, fn: Callable[..., None], *args: Any) -> None:
        import threading

        self.db, self.error = db, None
        self.done = threading.Event()

        def body() -> None:
            try:
                fn(db, *args)
            except BaseException as exc:  # noqa: BLE001 - re-raised by wait()
                self.error = exc
            finally:
                self.done.set()
        db.worker().tasks.put(body)

    def wait(self) -> None:
        from sparklog.errors import EngineError
        from sparklog.spark.session import JVM_THREAD_FAILURES

        limit = self.db.options.stall_seconds
        last, since = None, time.monotonic()
        failures = len(JVM_THREAD_FAILURES)
        while not self.done.wait(1.0):
            if len(JVM_THREAD_FAILURES) > failures:  # a thread of Spark's JVM died
                self.db.spark.sparkContext.cancelAllJobs()
                raise EngineError(f"Spark failed: {JVM_THREAD_FAILURES[failures]}")
            progress = _progress(self.db.tracker())
            if progress != last or progress[0] > 0:
                last, since = progress, time.monotonic()
            elif limit and time.monotonic() - since > limit:
                self.db.spark.sparkContext.cancelAllJobs()
                raise EngineError(
                    f"Spark made no progress for {limit:g} s: no task ran or finished, "
                    "so its scheduler has probably failed (Spark's log on stderr says why)")
        if self.error is not None:
            raise self.error


def _progress(tracker: Any) -> tuple[int, int]:
    """(tasks running, tasks finished) over Spark's active stages."""
    running = finished = 0
    for stage in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage)
        if info is not None:
            running += info.numActiveTasks
            finished += info.numCompletedTasks + info.numFailedTasks
    return running, finished


@dataclass
class _Step:
    """One relation's part of a round: its new version and the metrics observed on it."""

    relation: str
    full: DataFrame | None  # full ∪ new, planned (a rerun's: by _mark); checkpointed by _round
    derives: bool  # whether any kernel feeds this step (else there is nothing to count)
    new: Metrics
    group: str = ""
    description: str = ""
    # a rerun (jvm.swapped): the kept plan and the swapped one, made a DataFrame by _mark
    rerun: tuple[jvm.Executed, Any] | None = None
    marked: bool = False  # full is lazily checkpointed (_mark): its RDDs are built
    factory: str = "FALLBACK"  # FACTORY_MODE for its tasks (Database.use_codegen)
    serialized: bool = False  # a tiny rerun, stored serialized (Database.serialized_reruns)
    outer: str = "local"  # what its joins move (_derive): the stats' join-planning choice


@dataclass
class _Kept:
    """What a stratum keeps of a relation's first loop round to plan the rounds after it."""

    template: jvm.Template  # its optimized plan
    name: str  # the name of its new-rows metrics
    placed_name: str | None  # and of its restored placement's, if any
    outer: str  # what its joins move (_derive)
    executed: jvm.Executed | None = None  # its executed plan, once a rerun may use it


def _plan(db: Database, sp: StratumPlan, kernels: tuple[Kernel, ...]) -> list[_Step]:
    """Plan every relation's new version over the stored versions; run nothing.

    Every loop round of a stratum has the same plan over different stored versions. So
    the first loop round's plans are kept (_Kept), and the rounds after it are planned
    from them with the versions swapped: the kernels' SQL is parsed, analyzed and
    optimized, and the insert built, once per stratum instead of once per round.
    ``reuse_plans="executed"`` runs the second loop round's executed plan again with its
    scans swapped (jvm.swapped, jvm.frame): no planning at all, and the placement it was
    checked to have. ``"optimized"`` (and a plan that cannot be rerun: jvm.executed) re-plans the
    optimized plan with its leaves swapped (jvm.replan), which Spark still plans
    physically, with the placement checked every round; a template Spark would not take
    back is dropped. Not for kernels that make symbols (the symbol table changes between
    rounds), nor when a version the round reads is not a stored RDD.
    """
    _choose_codegen(db, sp, kernels)
    versions = _versions(db, sp) if (
        db.options.reuse_plans != "off" and kernels is sp.loop and db.iteration >= 1
        and not any(creates_symbols(k) for k in kernels)) else None
    steps = []
    scans: dict[str, Any] = {}  # the versions' blocks, made once for every rerun
    for relation in sp.relations:
        mine = [k for k in kernels if k.relation == relation]
        if not mine and relation in db.stored:
            continue
        # one kept plan per join-planning choice: a choice changes the plan
        choice = "".join("b" if db.broadcast_delta(k) else "-" for k in mine)
        key = f"{sp.stratum.index}/{relation}/{choice}"
        planned = _replan(db, key, relation, versions, scans) if versions else None
        if planned is not None:
            full, new, rerun = planned
            outer = db.templates[key].outer
        else:
            derived, outer = _derive(db, relation, mine)
            full, new = db.insert(relation, derived, db.iteration)
            _collect_symbols(db, mine)
            rerun = None
            if versions:
                db.templates[key] = _Kept(jvm.template(db.spark, full, versions), new.name,
                                          new.placed.name if new.placed is not None else None,
                                          outer)
        group = f"{db.prefix}-s{sp.stratum.index}-i{db.iteration}-{relation}"
        description = f"sparklog stratum {sp.stratum.index} iteration {db.iteration}: {relation}"
        step = _Step(relation, full, bool(mine), new, group, description, rerun,
                     factory=db.factory_now, serialized=db.tiny and db.serialized_reruns,
                     outer=outer)
        if rerun is not None and scans:
            _mark(db, [step])  # it reads blocks, not versions: no need to wait for them
        steps.append(step)
    return steps


def _versions(db: Database, sp: StratumPlan) -> dict[str, Any] | None:
    """The RDD of each stratum relation's stored version; None if one is not stored in
    an RDD (an empty version never written, say), which no template could swap."""
    versions = {}
    for relation in sp.relations:
        rdd = _stored_rdd(db.stored[relation]) if relation in db.stored else None
        if rdd is None:
            return None
        versions[relation] = rdd
    return versions


def _replan(db: Database, key: str, relation: str, versions: dict[str, Any],
            scans: dict[str, Any]) -> tuple[DataFrame | None, Metrics,
                                             tuple[jvm.Executed, Any] | None] | None:
    """The relation's new version planned from what was kept of the stratum's first loop
    round (for a rerun: None, and the plans _mark makes it from); None if nothing was
    kept.

    With local checkpoints a rerun scans the blocks each version's checkpoint stores
    (jvm.blocks; made into ``scans`` once per round), not the versions' RDDs: its RDDs can
    then be built while the job that stores those blocks still runs (see _loop).
    """
    kept = db.templates.get(key)
    if kept is None:
        return None
    if kept.executed is not None and kept.executed.whole_stage == db.whole_stage_now:
        try:
            if not scans and db.options.checkpoint == "local":
                scans.update({r: jvm.blocks(db.spark, kept.executed, rdd, db.options.partitions)
                              for r, rdd in versions.items()})
            plan = jvm.swapped(db.spark, kept.executed, scans or versions)
        except Exception:  # noqa: BLE001 - Spark would not take it: re-plan it
            kept.executed = None
        else:
            return None, _metrics(db, kept, plan=plan), (kept.executed, plan)
    try:
        full = jvm.replan(db.spark, kept.template, versions)._jdf
        placed = db.placed(relation, full)  # as the template's own round was
    except Exception:  # noqa: BLE001 - Spark would not take the plan back: plan from SQL
        placed = False
    if not placed:
        del db.templates[key]
        return None
    if db.options.reuse_plans == "executed":  # planned and placed: rerun it from now on
        kept.executed = jvm.executed(db.spark, full, versions, db.whole_stage_now)
    return DataFrame(full, db.spark), _metrics(db, kept, source=full), None


def _metrics(db: Database, kept: _Kept, source: Any = None, plan: Any = None) -> Metrics:
    """The metrics of a version planned from ``kept``, read off ``source`` or ``plan``."""
    new = Metrics(db.spark, kept.name)
    new.source, new.plan = source, plan
    if kept.placed_name is not None:
        new.placed = Metrics(db.spark, kept.placed_name)
        new.placed.source, new.placed.plan = source, plan
    return new


def _choose_codegen(db: Database, sp: StratumPlan, kernels: tuple[Kernel, ...]) -> None:
    """Plan a round with or without whole-stage code generation (Database.use_codegen),
    by the sizes of the relations it reads and writes: booked ones, else the expected
    size of a deferred version not yet computed (Database.expected)."""
    relations = set(sp.relations).union(*(k.reads() for k in kernels))
    db.use_codegen(sum(db.size_or_expected(r) for r in relations))


def _round(db: Database, sp: StratumPlan, kernels: tuple[Kernel, ...], stats: Stats
           ) -> dict[str, int]:
    """One round: every relation of the stratum gets its new tuples in one job."""
    started = time.perf_counter()
    steps = _plan(db, sp, kernels)
    # The first version of a recursive stratum, and the version of a non-recursive one,
    # is stored by the first job that reads it (Database.defer): a stratum over a few
    # hundred tuples would otherwise cost a job and its bookkeeping of its own.
    eager = not (db.options.defers and db.iteration == 0)
    if eager:
        _Job(db, _store, steps).wait()
    else:
        _mark(db, steps)
    seconds = round(time.perf_counter() - started, 4)
    if not eager:  # its rows, metrics and time belong to the job that reads it, and it
        # reads the previous version: that is released once this one is computed
        iteration = db.iteration
        for step in steps:  # until then, as many rows as it reads, at most
            reads = set().union(*(k.reads() for k in kernels if k.relation == step.relation))
            db.expected[step.relation] = sum(db.size_or_expected(r) for r in reads)
        for step, previous in zip(steps, _swap(db, steps)):
            def settle(step: _Step = step, previous: DataFrame | None = previous) -> list[Any]:
                _book(db, sp, step, stats, iteration, 0.0, jobs=0)
                db.release(previous)
                return []
            db.defer(step.full, settle)
        return {relation: 0 for relation in sp.relations}
    news = _book_round(db, sp, steps, stats, db.iteration, seconds)
    for previous in _swap(db, steps):  # versions are swapped only after the round
        db.release(previous)
    return news


def _swap(db: Database, steps: list[_Step]) -> list[DataFrame | None]:
    """Make the round's versions the stored ones; return the versions they replace."""
    return [db.replace(step.relation, step.full) for step in steps]


def _book_round(db: Database, sp: StratumPlan, steps: list[_Step], stats: Stats,
                iteration: int, seconds: float) -> dict[str, int]:
    """Settle what the round's jobs computed and add its stats records; new rows by relation."""
    news = _count_round(db, sp, steps)
    _record_round(db, sp, steps, stats, iteration, seconds, news)
    return news


def _count_round(db: Database, sp: StratumPlan, steps: list[_Step], settle: bool = True
                 ) -> dict[str, int]:
    """Settle what the round's jobs computed and fold in its sizes; new rows by relation.

    All the next round needs to start. Its records (:func:`_record_round`) ask the JVM for
    more (the derivations, the round's jobs) and can be written while the next job runs.
    """
    if settle:
        db.settle()  # deferred versions this round's jobs computed
    news = {relation: 0 for relation in sp.relations}
    for step in steps:
        news[step.relation] = db.add_new(step.relation, step.new, step.full)
    db.last_delta.update(news)
    return news


def _record_round(db: Database, sp: StratumPlan, steps: list[_Step], stats: Stats,
                  iteration: int, seconds: float, news: dict[str, int]) -> None:
    for step in steps:
        _record_step(db, sp, step, stats, iteration, seconds, news[step.relation])


def _book(db: Database, sp: StratumPlan, step: _Step, stats: Stats, iteration: int,
          seconds: float, jobs: int | None = None) -> int:
    """Fold a computed step's metrics into the sizes and add its stats record."""
    new_rows = db.add_new(step.relation, step.new, step.full)
    _record_step(db, sp, step, stats, iteration, seconds, new_rows, jobs)
    return new_rows


def _record_step(db: Database, sp: StratumPlan, step: _Step, stats: Stats, iteration: int,
                 seconds: float, new_rows: int, jobs: int | None = None) -> None:
    """Add a computed step's stats record (its sizes already folded in)."""
    key = f"{sp.stratum.index}/{step.relation}/{min(iteration, 1)}"
    if jobs is None:
        jobs = len(db.tracker().getJobIdsForGroup(step.group))
    # a round whose placement was restored has a second home Exchange above the first
    hint = db.exchanges if step.new.placed is None else None
    stats.add(**_record(db, sp, step.relation, iteration, new_rows,
                        jvm.derivations(step.new.executed(), hint, key) if step.derives else 0),
              outer=step.outer, seconds=seconds, spark_jobs=jobs)


def _derive(db: Database, relation: str, kernels: list[Kernel]) -> tuple[DataFrame, str]:
    """The union of a relation's kernels, planned from one SQL text, and what their joins
    that are not partition-local move: "local" (no such join: only the new tuples cross
    the round's one shuffle), "delta" (the delta side is broadcast, the stored side stays),
    "both" (Spark shuffles both sides)."""
    if not kernels:
        return empty_frame(db.spark, [(f"c{i}", _spark_type(k))
                                      for i, k in enumerate(db.kinds(relation))]), "local"
    queries = [kernel_query(k, db) for k in kernels]
    sql = " UNION ALL ".join(f"({text})" for text, _ in queries)
    moved = {m for _, ms in queries for m in ms}
    outer = "both" if "both" in moved else "delta" if "delta" in moved else "local"
    return DataFrame(db.spark._jsparkSession.sql(sql), db.spark), outer


def _collect_symbols(db: Database, kernels: list[Kernel]) -> None:
    for k in kernels:
        symbols = kernel_symbols(k, db)
        if symbols is not None:
            db.add_symbols(_checkpoint(symbols, db.options))


def _record(db: Database, sp: StratumPlan, relation: str, iteration: int, delta: int,
            derivations: int) -> dict[str, Any]:
    sizes = db.partition_sizes.get(relation, [0])
    mean = sum(sizes) / len(sizes)
    return dict(stratum=sp.stratum.index, iteration=iteration, inner_iteration=0,
                relation=relation, delta=delta, full=db.sizes.get(relation, 0),
                derivations=derivations, partitions=len(sizes), max_partition=max(sizes),
                mean_partition=round(mean, 2),
                imbalance=round(max(sizes) / mean, 3) if mean else 1.0,
                sub_buckets=db.layout(relation).sub_buckets,
                # a lattice relation's delta is its improved keys (new ones included);
                # None for a set relation, whose delta only ever adds tuples
                improved=delta if db.plan.lattice(relation) else None)


def _spark_type(kind: str) -> str:
    return {"number": "long", "unsigned": "long", "float": "double", "symbol": "long"}[kind]
