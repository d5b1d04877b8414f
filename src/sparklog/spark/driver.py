"""The fixed-point driver: semi-naive evaluation of each stratum over stored versions.

Every stored relation is one DataFrame with columns ``c0..ck``, the sub-bucket ``_sb`` and
the iteration ``_it`` that derived the tuple, hash-partitioned by (bucket columns, _sb) and
sorted inside each partition. ``full`` is the whole DataFrame, ``delta`` the rows of the
last iteration and ``old`` the rows before it, so all three versions are filters of one
partitioned relation. One iteration of a stratum with one relation is one Spark job:

    derived  = union of the loop kernels          (partition-local joins with stored sides)
    new      = derived shuffled once to its home, deduplicated, anti-joined with full
    full'    = full ∪ new (tagged with the iteration), sorted, checkpointed

Delta sizes and derivation counts come from ``DataFrame.observe`` on that same job.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from sparklog.ir.nodes import Kernel, Layout, Plan, StratumPlan
from sparklog.spark.translate import IT, SB, kernel_sql, kernel_symbols, sub_bucket


@dataclass
class Options:
    """Knobs of the driver; every mechanism can be switched."""

    partitions: int = 2
    checkpoint: str = "local"  # "local" (localCheckpoint) or "reliable" (checkpoint dir)
    checkpoint_dir: str | None = None
    max_iterations: int | None = None


_RUNS = itertools.count()
COUNT = F.count(F.lit(1)).alias("rows")


@dataclass(frozen=True)
class _Columns:
    """Column expressions of a relation's layout, built once (each costs JVM round trips)."""

    tagged: tuple[Column, ...]
    sub_bucket: Column
    keys: tuple[Column, ...]
    order: tuple[str, ...]
    stored: tuple[Column, ...]  # the stored columns in order, then _it
    sort: tuple[Column, ...]

    @classmethod
    def of(cls, layout: Layout) -> _Columns:
        # Re-alias every column with metadata: otherwise the optimizer drops a same-name
        # alias (c1#3 AS c1#19), the plan partitions by the source attribute, and the
        # checkpointed relation reports a partitioning that names none of its columns.
        tagged = tuple(F.col(f"c{i}").alias(f"c{i}", metadata={"sparklog": layout.relation})
                       for i in range(layout.arity))
        keys = tuple(F.col(f"c{i}") for i in layout.key) + (F.col(SB),)
        order = tuple(f"c{i}" for i in layout.key) + (SB,) + tuple(f"c{i}" for i in layout.rest)
        tagged += (F.col(IT),)
        stored = tuple(F.col(c) for c in order) + (F.col(IT),)
        sort = tuple(F.col(c).asc() for c in order)
        return cls(tagged, sub_bucket(layout).alias(SB), keys, order, stored, sort)


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
    _columns: dict[str, _Columns] = field(default_factory=dict)
    partition_sizes: dict[str, list[int]] = field(default_factory=dict)
    _per_partition: list[Column] | None = None

    # -- translate.Store -------------------------------------------------------------
    def view(self, relation: str) -> str:
        """The temporary view of a relation's stored DataFrame (full; versions filter it)."""
        if relation not in self.stored:
            self.replace(relation, self._empty(relation))
        return f"`{self.prefix}_{relation}`"

    def symbols_view(self) -> str:
        """The symbol table as a view, for kernels that read a symbol's text."""
        self.symbols().createOrReplaceTempView(f"{self.prefix}__symbols")
        return f"`{self.prefix}__symbols`"

    def symbols(self) -> DataFrame:
        """The symbol table (id, symbol), materialized once per batch of new symbols."""
        if self._symbols is None:
            parts = self.symbol_parts or [self.spark.createDataFrame([], "id long, symbol string")]
            df = parts[0]
            for p in parts[1:]:
                df = df.unionByName(p)
            self._symbols = _checkpoint(df.distinct(), self.options)
            self.symbol_parts = [self._symbols]
        return self._symbols

    def _empty(self, relation: str) -> DataFrame:
        types = [_spark_type(k) for k in self.kinds(relation)]
        cols = [f"c{i} {t}" for i, t in enumerate(types)] + [f"{SB} int", f"{IT} int"]
        empty = self.spark.createDataFrame([], ", ".join(cols))
        return empty.repartition(self.options.partitions, *self.columns(relation).keys).select(
            *self.columns(relation).stored)

    def layout(self, relation: str) -> Layout:
        return self.plan.layouts[relation]

    def kinds(self, relation: str) -> tuple[str, ...]:
        return self.plan.kinds[relation]

    def drop_views(self) -> None:
        """Remove this run's temporary views from the caller's session catalog."""
        catalog = self.spark.catalog
        for relation in list(self.stored) + ["_symbols"]:
            catalog.dropTempView(f"{self.prefix}_{relation}")

    def add_symbols(self, df: DataFrame) -> None:
        self.symbol_parts.append(df)
        self._symbols = None

    # -- storage ---------------------------------------------------------------------
    def per_partition(self) -> list[Column]:
        """Row counts per partition as observed metrics: sizes without an extra job.

        The union of full and new keeps partition indexes (both are co-partitioned), so a
        relation's partition sizes are the running sums of these counts.
        """
        if self._per_partition is None:
            pid = F.spark_partition_id()
            self._per_partition = [F.sum(F.when(pid == p, 1).otherwise(0)).alias(f"p{p}")
                                   for p in range(self.options.partitions)]
        return self._per_partition

    def add_new(self, relation: str, metrics: dict[str, int]) -> int:
        """Fold one round's observed per-partition counts into the relation's sizes."""
        counts = [metrics.get(f"p{p}") or 0 for p in range(self.options.partitions)]
        sizes = self.partition_sizes.setdefault(relation, [0] * self.options.partitions)
        self.partition_sizes[relation] = [a + b for a, b in zip(sizes, counts)]
        self.sizes[relation] = sum(self.partition_sizes[relation])
        return sum(counts)

    def columns(self, relation: str) -> _Columns:
        if relation not in self._columns:
            self._columns[relation] = _Columns.of(self.layout(relation))
        return self._columns[relation]

    def home(self, relation: str, derived: DataFrame) -> DataFrame:
        """Tuples ``c0..ck`` sent to their (bucket, sub-bucket) partition: the all-to-all."""
        cols = self.columns(relation)
        return derived.select(*cols.tagged, cols.sub_bucket).repartition(
            self.options.partitions, *cols.keys)

    def insert(self, relation: str, derived: DataFrame, iteration: int
               ) -> tuple[DataFrame, Observation]:
        """full ∪ (derived − full), deduplicated partition-locally; not yet materialized."""
        cols = self.columns(relation)
        # (1) the all-to-all, then partition-local deduplication (_it is one value here)
        new = self.home(relation, derived).dropDuplicates()
        old = self.stored.get(relation)
        if old is not None:  # (2) partition-local anti-join against full
            new = new.join(old, on=list(cols.order), how="left_anti")
        obs = Observation(f"new_{relation}_{iteration}_{time.monotonic_ns()}")
        new = new.select(*cols.stored).observe(obs, *self.per_partition())
        full = new if old is None else old.union(new)  # (3) same columns, same order
        return full.sortWithinPartitions(*cols.sort), obs

    def replace(self, relation: str, df: DataFrame) -> DataFrame | None:
        """Make ``df`` the stored relation (and its view); return the previous version."""
        previous = self.stored.get(relation)
        self.stored[relation] = df
        df.createOrReplaceTempView(f"{self.prefix}_{relation}")
        return previous


def _checkpoint(df: DataFrame, options: Options) -> DataFrame:
    """Materialize and cut the lineage; keeps the hash partitioning."""
    if options.checkpoint == "reliable":
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def release(df: DataFrame | None) -> None:
    """Free the blocks of a checkpointed version that no plan will read again."""
    if df is None:
        return
    try:
        plan = df._jdf.queryExecution().analyzed()
        while plan.getClass().getSimpleName() != "LogicalRDD" and plan.children().size() == 1:
            plan = plan.children().head()
        if plan.getClass().getSimpleName() == "LogicalRDD":
            plan.rdd().unpersist(False)
    except Exception:  # noqa: BLE001 - freeing memory early is an optimization only
        pass


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
    for sp in db.plan.strata:
        if sp.preamble or sp.loop:
            _evaluate_stratum(db, sp, stats)
    db.spark.sparkContext.setJobGroup("sparklog", "sparklog: results")


def _evaluate_stratum(db: Database, sp: StratumPlan, stats: Stats) -> None:
    db.iteration = 0
    _iterate(db, sp, sp.preamble, 0, stats)
    if not sp.stratum.recursive:
        return
    while True:
        db.iteration += 1
        if db.options.max_iterations and db.iteration > db.options.max_iterations:
            break
        news = _iterate(db, sp, sp.loop, db.iteration, stats)
        if not any(news.values()):
            break


def _iterate(db: Database, sp: StratumPlan, kernels: tuple[Kernel, ...], iteration: int,
             stats: Stats) -> dict[str, int]:
    """One round: every relation of the stratum gets its new tuples in one job."""
    sc = db.spark.sparkContext
    group = f"{db.prefix}-s{sp.stratum.index}-i{iteration}"
    updates, news = {}, {}
    for relation in sp.relations:
        mine = [k for k in kernels if k.relation == relation]
        if not mine and relation in db.stored:
            news[relation] = 0
            continue
        started = time.perf_counter()
        sc.setJobGroup(f"{group}-{relation}", f"sparklog stratum {sp.stratum.index} "
                       f"iteration {iteration}: {relation}")
        derived, deriv_obs = _derive(db, relation, mine)
        full, new_obs = db.insert(relation, derived, iteration)
        _collect_symbols(db, mine)
        full = _checkpoint(full, db.options)
        new_rows = db.add_new(relation, new_obs.get)
        updates[relation] = full
        news[relation] = new_rows
        jobs = sc.statusTracker().getJobIdsForGroup(f"{group}-{relation}")
        stats.add(**_record(db, sp, relation, iteration, new_rows,
                            deriv_obs.get["rows"] if deriv_obs else 0),
                  seconds=round(time.perf_counter() - started, 4), spark_jobs=len(jobs))
    for relation, full in updates.items():  # versions are swapped only after the round
        release(db.replace(relation, full))
    return news


def _derive(db: Database, relation: str, kernels: list[Kernel]
            ) -> tuple[DataFrame, Observation | None]:
    """The union of a relation's kernels, planned from one SQL text, with a derivation count."""
    arity = db.plan.layouts[relation].arity
    if not kernels:
        schema = ", ".join(f"c{i} {_spark_type(k)}" for i, k in enumerate(db.kinds(relation)))
        return db.spark.createDataFrame([], schema or "c0 long").select(
            *[f"c{i}" for i in range(arity)], F.lit(db.iteration).alias(IT)), None
    union = " UNION ALL ".join(f"({kernel_sql(k, db)})" for k in kernels)
    sql = f"SELECT *, {db.iteration} AS {IT} FROM ({union}) k"
    obs = Observation(f"derived_{relation}_{db.iteration}_{time.monotonic_ns()}")
    return db.spark.sql(sql).observe(obs, COUNT), obs


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
                sub_buckets=db.layout(relation).sub_buckets)


def _spark_type(kind: str) -> str:
    return {"number": "long", "unsigned": "long", "float": "double", "symbol": "long"}[kind]
