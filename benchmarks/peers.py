"""Hand-written PySpark peers for linear transitive closure.

    tc(x, y) :- edge(x, y).
    tc(x, y) :- tc(x, z), edge(z, y).

Each peer is a function ``(spark, edges_df) -> (result_df, iterations)``. ``edges_df`` has
long columns ``(src, dst)``; ``result_df`` has columns ``(x, y)`` and is already computed
(checkpointed) when the function returns, so the caller's timing covers the evaluation.
``iterations`` counts rounds of the recursive rule that were evaluated, including the last
round, which derives nothing new (semi-naive stops there). For ``chain(n)`` that is ``n``.

Every peer that changes a session setting saves it first and restores it in ``finally``, so
peers run one after another in one session without disturbing each other.

* :func:`typical_loop`: what a typical user writes.
* :func:`expert_loop`: the best DataFrame loop an expert writes (co-partitioned, one
  shuffle and one Spark job per iteration).
* :func:`sql_recursive`: Spark SQL ``WITH RECURSIVE`` (``UNION ALL`` only: it enumerates
  paths, not facts, so it only terminates on DAGs and counts paths).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

# Set when a peer is told to check its own plan (see expert_loop(check_plan=True)).
_UNSET = object()


@contextlib.contextmanager
def session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set session confs for the duration of the block, restoring earlier values after."""
    saved: dict[str, object] = {}
    for key in settings:
        try:
            saved[key] = spark.conf.get(key)
        except Exception:  # not set and no default: unset it afterwards
            saved[key] = _UNSET
    try:
        for key, value in settings.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in saved.items():
            if value is _UNSET or value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


# --------------------------------------------------------------------------------------
# 1. typical user loop
# --------------------------------------------------------------------------------------


def typical_loop(spark: SparkSession, edges_df: DataFrame) -> tuple[DataFrame, int]:
    """Semi-naive TC the way a typical user writes it, with default session settings.

    Each round: join delta with edge, select, distinct, left_anti against full,
    localCheckpoint + count the new rows, union them into full, localCheckpoint full.
    """
    edge = edges_df.select(F.col("src"), F.col("dst")).localCheckpoint()
    full = edge.select(F.col("src").alias("x"), F.col("dst").alias("y")).distinct().localCheckpoint()
    delta = full
    iterations = 0
    while True:
        iterations += 1
        derived = (
            delta.join(edge, delta["y"] == edge["src"])
            .select(delta["x"].alias("x"), edge["dst"].alias("y"))
            .distinct()
        )
        new = derived.join(full, ["x", "y"], "left_anti").localCheckpoint()
        if new.count() == 0:
            break
        full = full.unionByName(new).localCheckpoint()
        full.count()
        delta = new
    return full, iterations


# --------------------------------------------------------------------------------------
# 2. expert loop
# --------------------------------------------------------------------------------------

EXPERT_CONF = {
    # Whole-plan statistics-free planning: no adaptive re-planning (AQE would add its own
    # shuffle reads/stages and could coalesce partitions, breaking co-partitioning).
    "spark.sql.adaptive.enabled": "false",
    # A hash partitioning on a subset of the join keys (here: y) co-partitions both sides of
    # the anti-join on (y, x), so full is never reshuffled.
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    # union(full, new) of two hash(y)-partitioned children stays hash(y)-partitioned.
    "spark.sql.unionOutputPartitioning": "true",
    # Keep all joins sort-merge joins on the co-partitioned data: a broadcast of a small
    # delta/edge would add a BroadcastExchange (a second exchange per round).
    "spark.sql.autoBroadcastJoinThreshold": "-1",
}


def _expert_partitions(spark: SparkSession) -> int:
    # "Few shuffle partitions": one per core is enough for these sizes.
    return max(1, min(4, spark.sparkContext.defaultParallelism))


def expert_loop(
    spark: SparkSession,
    edges_df: DataFrame,
    *,
    partitions: int | None = None,
    explain: bool = False,
    check_plan: bool = False,
    skew_join: bool = False,
) -> tuple[DataFrame, int]:
    """Semi-naive TC the way an expert writes it: one shuffle and one job per round.

    ``skew_join``: with Spark's adaptive execution and its skew-join handling on (AQE
    splits a skewed partition of a sort-merge join whose sides are both shuffled).

    * ``edge(src, dst)`` is hash-partitioned on ``src`` and ``full(x, y, it)`` on ``y`` (the
      join key of the recursive rule), both with the same ``P`` partitions, sorted within
      partitions by (join key, other columns) and localCheckpointed, which keeps both the
      partitioning and the ordering. So ``delta = full.filter(it == i)`` joins ``edge``
      without a shuffle and without sorting either side.
    * The derived tuples ``(x, y)`` are repartitioned by ``y``: the only Exchange of a round.
      ``distinct`` and the anti-join against ``full`` (on ``y, x``) then run inside those
      partitions, because ``requireAllClusterKeysForCoPartition=false`` lets hash(y) stand
      for a clustering on (y, x).
    * ``union`` keeps hash(y) (``unionOutputPartitioning``), and the count of new rows comes
      from an :class:`~pyspark.sql.Observation` on the round's one action (localCheckpoint).
    * The iteration number is a real column stored in ``full`` (not partitioned on): a
      literal partition column is constant-folded into the partitioning expression and
      breaks co-partitioning.
    """
    P = partitions or _expert_partitions(spark)
    conf = {**EXPERT_CONF, "spark.sql.shuffle.partitions": str(P)}
    if skew_join:
        conf.update({"spark.sql.adaptive.enabled": "true",
                     "spark.sql.adaptive.skewJoin.enabled": "true",
                     "spark.sql.adaptive.coalescePartitions.enabled": "false"})
    with session_conf(spark, conf):
        edge = (
            edges_df.select(F.col("src"), F.col("dst"))
            .repartition(P, "src")
            .sortWithinPartitions("src", "dst")
            .localCheckpoint()
        )
        full = (
            edge.select(F.col("src").alias("x"), F.col("dst").alias("y"))
            .repartition(P, "y")
            .distinct()
            .withColumn("it", F.lit(0))
            .sortWithinPartitions("y", "x")
            .localCheckpoint()
        )
        iterations = 0
        while True:
            i = iterations
            iterations += 1
            delta = full.filter(F.col("it") == F.lit(i))
            derived = (
                delta.join(edge, delta["y"] == edge["src"])
                .select(delta["x"].alias("x"), edge["dst"].alias("y"))
                .repartition(P, "y")  # the one Exchange of the round
                .distinct()
            )
            new = derived.join(full.select("x", "y"), ["y", "x"], "left_anti")
            obs = Observation(f"tc_new_{i + 1}")
            new = new.observe(obs, F.count(F.lit(1)).alias("n"))
            step = (
                full.unionByName(new.select("x", "y", F.lit(i + 1).alias("it")))
                .sortWithinPartitions("y", "x")
            )
            if explain or (check_plan and i == 0):
                plan = _physical_plan(step)
                if explain:
                    print(plan)
                if check_plan:
                    n_exchanges = plan.count("Exchange ")
                    if n_exchanges != 1:
                        raise AssertionError(
                            f"expert_loop: expected 1 Exchange per round, plan has {n_exchanges}:\n{plan}"
                        )
            full = step.localCheckpoint()  # the round's one Spark job
            n_new = obs.get["n"]
            if n_new == 0:
                break
    return full.select("x", "y"), iterations


def _physical_plan(df: DataFrame) -> str:
    """The physical plan text that ``df.explain()`` prints."""
    return df._jdf.queryExecution().executedPlan().toString()


# --------------------------------------------------------------------------------------
# 3. SQL WITH RECURSIVE
# --------------------------------------------------------------------------------------

SQL_TC = """
WITH RECURSIVE tc(x, y, lvl) MAX RECURSION LEVEL {limit} AS (
  SELECT src, dst, 1 FROM {edge}
  UNION ALL
  SELECT tc.x, e.dst, tc.lvl + 1 FROM tc JOIN {edge} e ON tc.y = e.src
)
SELECT x, y, lvl FROM tc
"""


def sql_recursive(
    spark: SparkSession, edges_df: DataFrame, *, level_limit: int | None = None
) -> tuple[DataFrame, int]:
    """TC with Spark SQL ``WITH RECURSIVE ... UNION ALL``.

    ``UNION ALL`` (the only form Spark accepts in a recursive CTE) enumerates *paths*: it
    terminates only on DAGs and returns one row per path, so the result has more rows than
    distinct pairs on DAGs with several paths between two nodes (none here: chains and trees
    have one path per pair). Only run it on DAG workloads. ``level_limit`` must exceed the
    depth (the longest path); by default it is the number of edges + 1, always enough on a DAG.
    ``iterations`` is the number of levels produced (max ``lvl``), about the DAG's depth.
    """
    view = f"sparklog_bench_edge_{id(edges_df):x}"
    edges_df.select("src", "dst").createOrReplaceTempView(view)
    try:
        if level_limit is None:
            level_limit = edges_df.count() + 1
        paths = spark.sql(SQL_TC.format(limit=int(level_limit), edge=view)).localCheckpoint()
        levels = paths.agg(F.max("lvl").alias("m")).collect()[0]["m"] or 0
    finally:
        spark.catalog.dropTempView(view)
    return paths.select("x", "y"), int(levels)


PEERS = {
    "typical": typical_loop,
    "expert": expert_loop,
    "sql": sql_recursive,
}
