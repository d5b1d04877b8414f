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

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from sparklog.ir.nodes import DELTA, FULL, OLD, Kernel, Layout, Plan, StratumPlan
from sparklog.spark.translate import IT, SB, kernel_frame, kernel_symbols, sub_bucket


import os
PROFILE = bool(os.environ.get('SPARKLOG_PROFILE'))


@dataclass
class Options:
    """Knobs of the driver; every mechanism can be switched."""

    partitions: int = 2
    checkpoint: str = "local"  # "local" (localCheckpoint) or "reliable" (checkpoint dir)
    checkpoint_dir: str | None = None
    partition_stats: bool = True  # one small extra job per iteration for partition sizes
    max_iterations: int | None = None


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
    _symbols: DataFrame | None = None

    # -- translate.Store -------------------------------------------------------------
    def version(self, relation: str, version: str) -> DataFrame:
        if relation not in self.stored:
            self.stored[relation] = self._empty(relation)
        df = self.stored[relation]
        if version == DELTA:
            return df.filter(F.col(IT) == self.iteration - 1)
        if version == OLD:
            return df.filter(F.col(IT) < self.iteration - 1)
        assert version == FULL, version
        return df

    def _empty(self, relation: str) -> DataFrame:
        types = [_spark_type(k) for k in self.kinds(relation)]
        cols = [f"c{i} {t}" for i, t in enumerate(types)] + [f"{SB} int", f"{IT} int"]
        empty = self.spark.createDataFrame([], ", ".join(cols))
        return empty.repartition(self.options.partitions, *[f"c{i}" for i in
                                                            self.layout(relation).key], SB)

    def layout(self, relation: str) -> Layout:
        return self.plan.layouts[relation]

    def kinds(self, relation: str) -> tuple[str, ...]:
        return self.plan.kinds[relation]

    def symbols(self) -> DataFrame:
        if self._symbols is None:
            parts = self.symbol_parts or [self.spark.createDataFrame([], "id long, symbol string")]
            df = parts[0]
            for p in parts[1:]:
                df = df.unionByName(p)
            self._symbols = _checkpoint(df.distinct(), self.options)
            self.symbol_parts = [self._symbols]
        return self._symbols

    def add_symbols(self, df: DataFrame) -> None:
        self.symbol_parts.append(df)
        self._symbols = None

    # -- storage ---------------------------------------------------------------------
    def home(self, relation: str, derived: DataFrame) -> DataFrame:
        """Tuples ``c0..ck`` sent to their (bucket, sub-bucket) partition: the all-to-all."""
        layout = self.layout(relation)
        # Re-alias every column with metadata: otherwise the optimizer drops a same-name
        # alias (c1#3 AS c1#19), the plan partitions by the source attribute, and the
        # checkpointed relation reports a partitioning that names none of its columns.
        tagged = derived.select(*[F.col(f"c{i}").alias(f"c{i}", metadata={"sparklog": relation})
                                  for i in range(layout.arity)])
        with_sb = tagged.withColumn(SB, sub_bucket(layout))
        keys = [F.col(f"c{i}") for i in layout.key] + [F.col(SB)]
        return with_sb.repartition(self.options.partitions, *keys)

    def insert(self, relation: str, derived: DataFrame, iteration: int
               ) -> tuple[DataFrame, Observation]:
        """full ∪ (derived − full), deduplicated partition-locally; not yet materialized."""
        layout = self.layout(relation)
        order = [f"c{i}" for i in layout.key] + [SB] + [f"c{i}" for i in layout.rest]
        new = self.home(relation, derived).dropDuplicates(order)
        old = self.stored.get(relation)
        if old is not None:
            new = new.join(old.select(*order), on=order, how="left_anti")
        obs = Observation(f"new_{relation}_{iteration}_{time.monotonic_ns()}")
        new = new.select(*order).withColumn(IT, F.lit(iteration).cast("int"))
        new = new.observe(obs, F.count(F.lit(1)).alias("rows"))
        full = new if old is None else old.select(*order, IT).unionByName(new)
        return full.sortWithinPartitions(*order), obs

    def replace(self, relation: str, df: DataFrame) -> DataFrame | None:
        previous = self.stored.get(relation)
        self.stored[relation] = df
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
    group = f"sparklog-s{sp.stratum.index}-i{iteration}"
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
        t1 = time.perf_counter()
        full = _checkpoint(full, db.options)
        t2 = time.perf_counter()
        new_rows = new_obs.get["rows"]
        derivations = deriv_obs.get["rows"] if deriv_obs else 0
        t3 = time.perf_counter()
        if PROFILE:
            print(f"build {t1-started:.3f} checkpoint {t2-t1:.3f} obs {t3-t2:.3f}")
        updates[relation] = full
        news[relation] = new_rows
        db.sizes[relation] = db.sizes.get(relation, 0) + new_rows
        record = dict(stratum=sp.stratum.index, iteration=iteration, inner_iteration=0,
                      relation=relation, delta=new_rows, derivations=derivations)
        record.update(_partition_stats(db, full, relation))
        jobs = sc.statusTracker().getJobIdsForGroup(f"{group}-{relation}")
        record.update(seconds=round(time.perf_counter() - started, 4), spark_jobs=len(jobs))
        stats.add(**record)
    for relation, full in updates.items():  # versions are swapped only after the round
        release(db.replace(relation, full))
    sc.setJobGroup("sparklog", "sparklog")
    return news


def _derive(db: Database, relation: str, kernels: list[Kernel]
            ) -> tuple[DataFrame, Observation | None]:
    arity = db.plan.layouts[relation].arity
    parts = [kernel_frame(k, db) for k in kernels]
    if not parts:
        schema = ", ".join(f"c{i} {_spark_type(k)}" for i, k in enumerate(db.kinds(relation)))
        return db.spark.createDataFrame([], schema or "c0 long").select(
            *[f"c{i}" for i in range(arity)]), None
    derived = parts[0]
    for p in parts[1:]:
        derived = derived.unionByName(p)
    obs = Observation(f"derived_{relation}_{db.iteration}_{time.monotonic_ns()}")
    return derived.observe(obs, F.count(F.lit(1)).alias("rows")), obs


def _collect_symbols(db: Database, kernels: list[Kernel]) -> None:
    for k in kernels:
        symbols = kernel_symbols(k, db)
        if symbols is not None:
            db.add_symbols(_checkpoint(symbols, db.options))


def _partition_stats(db: Database, full: DataFrame, relation: str) -> dict[str, Any]:
    record: dict[str, Any] = dict(full=db.sizes.get(relation, 0), partitions=db.options.partitions,
                                  sub_buckets=db.layout(relation).sub_buckets)
    if not db.options.partition_stats:
        return record
    sizes = [r["n"] for r in full.groupBy(F.spark_partition_id().alias("p"))
             .agg(F.count(F.lit(1)).alias("n")).collect()]  # <= partitions rows: metadata
    total = sum(sizes)
    mean = total / db.options.partitions
    record.update(full=total, max_partition=max(sizes, default=0),
                  mean_partition=round(mean, 2),
                  imbalance=round(max(sizes, default=0) / mean, 3) if mean else 1.0)
    return record


def _spark_type(kind: str) -> str:
    return {"number": "long", "unsigned": "long", "float": "double", "symbol": "long"}[kind]
