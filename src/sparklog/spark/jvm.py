"""Calls into Spark's JVM-side classes that PySpark does not wrap, in one place.

Everything here reaches past PySpark's API into Spark SQL's plans (LogicalRDD, a
plan's leaves, Dataset.ofRows, the executed plan's partitioning, metrics and observed
aggregates), an RDD's lineage, or the SparkContext's storage state; or into classes
PySpark does wrap, where its wrapper costs many calls (``functions``). Each function
says which Spark behaviour it relies on; tests/spark exercise every one of them, so an
upgrade of the pinned pyspark that changes one fails there, not in a user's run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession

from sparklog.spark.translate import COMBINE

_JCLASSES: dict[tuple[int, str], Any] = {}


def jclass(spark: SparkSession, name: str) -> Any:
    """A JVM class, looked up once (each lookup is a round trip)."""
    key = (id(spark.sparkContext._gateway), name)
    if key not in _JCLASSES:
        _JCLASSES[key] = getattr(spark.sparkContext._jvm, name)
    return _JCLASSES[key]


def functions(spark: SparkSession) -> Any:
    """Spark's ``org.apache.spark.sql.functions``: a column built from it directly is one
    call into the JVM, where PySpark's wrapper resolves the class anew for every call."""
    return jclass(spark, "org.apache.spark.sql.functions")


def metadata(spark: SparkSession, value: dict[str, Any]) -> Any:
    """A column Metadata holding ``value`` (what PySpark's ``alias(metadata=...)`` makes)."""
    return jclass(spark, "org.apache.spark.sql.types.Metadata").fromJson(json.dumps(value))


def _nothing(spark: SparkSession) -> Any:
    return jclass(spark, "scala.Option").empty()


def _of_rows(spark: SparkSession, plan: Any) -> DataFrame:
    """A DataFrame over a logical plan built in the JVM (analyzed on the way)."""
    rows = jclass(spark, "org.apache.spark.sql.classic.Dataset").ofRows(
        spark._jsparkSession, plan)
    return DataFrame(rows, spark)


def without_estimates(df: DataFrame) -> DataFrame:
    """A checkpointed DataFrame that forgets the size estimate and the constraints of
    the plan that computed it.

    Spark hands both on to the checkpoint (LogicalRDD's originStats and
    originConstraints). A join's estimate is the product of its sides', so a version of
    a relation joined with itself squares the estimate of the version before: its digits
    double every round. After a few dozen rounds the optimizer spends minutes multiplying
    numbers of millions of digits, and the heap they fill makes the round's aggregations
    fail (AGGREGATE_OUT_OF_MEMORY). Spark's plans here do not depend on the estimates (no
    broadcast joins, no adaptive execution), so every version starts from Spark's
    default estimate instead.
    """
    plan = df._jdf.queryExecution().analyzed()
    if plan.getClass().getSimpleName() != "LogicalRDD":
        return df
    spark = df.sparkSession
    nothing = _nothing(spark)
    args = plan.otherCopyArgs()  # (session, originStats, originConstraints, checkpointed)
    fresh = plan.copy(plan.output(), plan.rdd(), _named_by_output(spark, plan),
                      plan.outputOrdering(), plan.isStreaming(), plan.stream(),
                      args.apply(0), nothing, nothing, args.apply(3))
    return _of_rows(spark, fresh)


def _named_by_output(spark: SparkSession, plan: Any) -> Any:
    """A checkpoint's hash partitioning over its own output attributes.

    The checkpoint takes its output from the analyzed plan and its partitioning from the
    physical one, where the optimizer may have proved an attribute non-nullable (a
    sub-bucket computed from constants, say). The two then differ in nullability, and a
    second instance of the relation in one query (a self-join, a union of runs: Spark
    renames its attributes by exact equality) loses the partitioning, so Spark reshuffles
    a stored side it needs not touch."""
    return _named(spark, plan.output(), plan.outputPartitioning())


def _named(spark: SparkSession, output: Any, partitioning: Any, source: Any = None) -> Any:
    """``partitioning`` over the attributes of ``output`` it names (by expression id, or
    as the attribute at the same place of ``source``, the output of the physical plan it
    comes from: see :func:`_ordered`)."""
    if partitioning.getClass().getSimpleName() != "HashPartitioning":
        return partitioning
    by_id = _by_id(output, source)
    expressions = partitioning.expressions()
    named = []
    for i in range(expressions.size()):
        e = expressions.apply(i)
        if e.getClass().getSimpleName() != "AttributeReference" or e.exprId().id() not in by_id:
            return partitioning
        named.append(by_id[e.exprId().id()])
    if all(a.exprId().id() == expressions.apply(i).exprId().id()
           and a.nullable() == expressions.apply(i).nullable() for i, a in enumerate(named)):
        return partitioning
    hashing = spark._jvm.org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
    return hashing(seq(spark, named), partitioning.numPartitions())


def _by_id(output: Any, source: Any = None) -> dict[int, Any]:
    """The attributes of ``output`` by expression id, and by the id of the attribute at
    the same place of ``source`` (a physical plan's output, in ``output``'s order)."""
    by_id = {}
    for i in range(output.size()):
        attribute = output.apply(i)
        by_id[attribute.exprId().id()] = attribute
        if source is not None and source.size() == output.size():
            by_id.setdefault(source.apply(i).exprId().id(), attribute)
    return by_id


def _ordered(spark: SparkSession, output: Any, ordering: Any, source: Any) -> Any:
    """A physical plan's ``ordering`` over the attributes of ``output``, the analyzed
    plan's, at the same places as those of ``source``, the physical plan's output.

    The optimizer may drop an alias that only renames (``_sb AS _sb``, the placement of a
    relation derived from another placed alike): the physical plan then outputs the
    source's attribute where the analyzed plan outputs the alias. A stored version takes
    its output from the analyzed plan, so its placement and order must be renamed, by
    place, as Spark's own checkpoints do (LogicalRDD.fromDataset), or a join that reads
    it finds it placed by an attribute it does not output and shuffles it every round
    (PageRank's ``dangling``, derived from ``node``)."""
    by_id = _by_id(output, source)
    orders = []
    for i in range(ordering.size()):
        order = ordering.apply(i)
        children = order.children()
        renamed = []
        for j in range(children.size()):
            child = children.apply(j)
            if child.getClass().getSimpleName() == "AttributeReference":
                child = by_id.get(child.exprId().id(), child)
            renamed.append(child)
        orders.append(order.withNewChildren(seq(spark, renamed)))
    return seq(spark, orders)


def stored_rdd(df: DataFrame) -> Any:
    """The JVM RDD whose blocks hold a checkpointed DataFrame's rows, or None: the one
    that is persisted, checkpointed, computed and unpersisted. The RDD a scan of the
    version reads (:func:`scan_rdd`) itself, unless the version is stored columnar: then
    its cached batches, which the scan decodes.

    Found once per version and kept on it: a round asks for it when it computes, settles
    and releases the version, and the walk down the plan costs several JVM round trips.
    """
    if "_sparklog_rdd" not in df.__dict__:
        rdd = scan_rdd(df)
        if rdd is not None and rdd.name() == _COLUMNAR_SCAN:
            rdd = _batches(rdd)
        df.__dict__["_sparklog_rdd"] = rdd
    return df.__dict__["_sparklog_rdd"]


def scan_rdd(df: DataFrame) -> Any:
    """The JVM RDD a plan's leaf reads for a checkpointed DataFrame (its LogicalRDD's),
    or None; kept on the DataFrame like :func:`stored_rdd`."""
    if "_sparklog_scan" not in df.__dict__:
        plan = df._jdf.queryExecution().analyzed()
        while plan.getClass().getSimpleName() != "LogicalRDD" and plan.children().size() == 1:
            plan = plan.children().head()
        df.__dict__["_sparklog_scan"] = (
            plan.rdd() if plan.getClass().getSimpleName() == "LogicalRDD" else None)
    return df.__dict__["_sparklog_scan"]


# Versions stored columnar (Options.stored): Spark's column batches, plain or compressed,
# what its in-memory table cache keeps, written and read by the cache's own serializer
# (the CachedBatchSerializer developer API: DefaultCachedBatchSerializer). A stored tuple
# then takes a quarter of a row object's bytes of block storage, or a few bytes
# compressed, and storing takes no per-row size estimate (block storage samples the size
# of row objects as it fills; README, "Storage that follows the delta", has the
# measurements). The scan that reads a version decodes its batches back into rows: an
# RDD named _COLUMNAR_SCAN, a narrow map over the batch RDD. Nothing here keeps a
# reference to either, so Spark's cleaner frees the blocks of a version nobody holds, as
# it does a local checkpoint's.
_COLUMNAR_SCAN = "sparklog columnar scan"


def _batches(scan: Any) -> Any:
    """The batch RDD a columnar version's scan decodes (its one parent)."""
    return scan.dependencies().head().rdd()


def _batch_serializer(spark: SparkSession, compressed: bool | None = None
                      ) -> tuple[Any, Any]:
    """Spark's default CachedBatchSerializer and the session's SQLConf; with ``compressed``
    True or False, a copy of it (taken once per session) that says whether the batches it
    builds are compressed (``spark.sql.inMemoryColumnarStorage.compressed``), whatever the
    session's own setting, which is left alone."""
    key = (id(spark), "batches", compressed)
    if key not in _JCLASSES:
        serializer = jclass(spark, "org.apache.spark.sql.execution.columnar."
                                   "DefaultCachedBatchSerializer")()
        conf = spark._jsparkSession.sessionState().conf()
        if compressed is not None:
            conf = conf.clone()
            conf.setConfString(_COMPRESSED, "true" if compressed else "false")
        _JCLASSES[key] = (serializer, conf)
    return _JCLASSES[key]


_COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"


def columnar_of(df: DataFrame, eager: bool, compressed: bool) -> DataFrame:
    """``df`` stored columnar by a local checkpoint of its batches: its executed plan's
    rows encoded into column batches (lazily: the first job that computes them stores
    them; ``eager`` runs that job now), read back through a LogicalRDD with the output
    of ``df``'s plan and its physical partitioning and ordering, as Dataset.localCheckpoint
    makes one, and no size estimate (see :func:`without_estimates`). Unlike
    localCheckpoint no SQL action is run to build it: ``df``'s own executed plan, planned
    once (its placement check plans it), computes the rows, and its observed metrics are
    read off that plan. ``compressed``: the batches encoded by Spark's compression schemes
    (a few bytes a tuple, about three times the seconds to build), else plain."""
    spark = df.sparkSession
    execution = df._jdf.queryExecution()
    plan = execution.executedPlan()
    output = execution.analyzed().output()
    source = plan.output()
    if source.equals(output):
        partitioning = _named(spark, output, plan.outputPartitioning())
        ordering = plan.outputOrdering()
    else:
        partitioning = _named(spark, output, plan.outputPartitioning(), source)
        ordering = _ordered(spark, output, plan.outputOrdering(), source)
    return _stored_columnar(spark, plan, output, partitioning, ordering, eager, compressed)


def columnar(spark: SparkSession, kept: Executed, plan: Any, eager: bool, compressed: bool
             ) -> DataFrame:
    """A swapped plan's rows (see :func:`swapped`) stored columnar, with the kept plan's
    output, partitioning and ordering: no SQL at all, as :func:`stored` (the batches copy
    every value, so the row objects the plan reuses are no concern)."""
    output, partitioning, ordering = kept.top
    return _stored_columnar(spark, plan, output, partitioning, ordering, eager, compressed)


def _stored_columnar(spark: SparkSession, plan: Any, output: Any, partitioning: Any,
                     ordering: Any, eager: bool, compressed: bool) -> DataFrame:
    serializer, conf = _batch_serializer(spark, compressed)
    level = jclass(spark, "org.apache.spark.storage.StorageLevel").MEMORY_AND_DISK()
    batches = serializer.convertInternalRowToCachedBatch(plan.execute(), output, level, conf)
    batches.localCheckpoint()  # persisted at MEMORY_AND_DISK: block storage, then disk
    if eager:
        batches.doCheckpoint()  # the job that stores them, now
    rows = _decoded(spark, batches, output)
    nothing = _nothing(spark)
    scan = jclass(spark, "org.apache.spark.sql.execution.LogicalRDD")(
        output, rows, partitioning, ordering, False, nothing, spark._jsparkSession,
        nothing, nothing, False)
    df = _of_rows(spark, scan)
    df.__dict__["_sparklog_rdd"], df.__dict__["_sparklog_scan"] = batches, rows
    return df


def _decoded(spark: SparkSession, batches: Any, output: Any, version: bool = True) -> Any:
    """The rows of a batch RDD with ``output``'s columns (a narrow map: its partitions, in
    their order); a stored ``version``'s scan is named (a rerun's scan of blocks is not)."""
    serializer, conf = _batch_serializer(spark)
    rows = serializer.convertCachedBatchToInternalRow(batches, output, output, conf)
    if version:
        rows.setName(_COLUMNAR_SCAN)
    return rows


def compute_together(spark: SparkSession, rdds: list[Any]) -> None:
    """Compute RDDs marked for a local checkpoint, each of the same number of partitions,
    in one Spark job, and checkpoint them.

    The job counts the rows of their partition-wise union (Spark's
    SQLPartitioningAwareUnionRDD, what a UNION ALL of co-partitioned children runs):
    task i computes partition i of every RDD, so each sees the partition index it would
    see alone (the per-partition counts a version observes use SPARK_PARTITION_ID()).
    Each partition computed is stored, as a checkpoint-marked RDD stores every partition
    computed (localCheckpoint persists it), and at the job's end RDD.doCheckpoint recurses
    from the union into its parents, whose LocalRDDCheckpointData then finds no partition
    missing and runs no job of its own. One job in place of one per RDD.
    """
    union = jclass(spark, "org.apache.spark.rdd.SQLPartitioningAwareUnionRDD")(
        spark.sparkContext._jsc.sc(), seq(spark, rdds), rdds[0].getNumPartitions(),
        rdds[0].elementClassTag())
    union.count()


def cached_rdds(spark: SparkSession) -> dict[int, int]:
    """RDD id -> number of partitions in block storage, for every persisted RDD."""
    infos = spark.sparkContext._jsc.sc().getRDDStorageInfo()
    return {info.id(): info.numCachedPartitions() for info in infos}


@dataclass
class Template:
    """The optimized plan of one loop round's version of a relation, kept to plan the
    next rounds by swapping the stored versions it reads (see :func:`replan`)."""

    plan: Any  # the optimized LogicalPlan
    # (leaf, relation, the leaf's copy arguments): every leaf that reads a version of a
    # relation that the rounds replace
    leaves: list[tuple[Any, str, tuple[Any, ...]]]
    nothing: Any  # scala.None


def template(spark: SparkSession, df: DataFrame, versions: dict[str, Any]) -> Template:
    """``df``'s optimized plan, with the leaves that read ``versions`` (relation -> the
    RDD of its stored version, a LogicalRDD's) found once.

    Optimized, not just analyzed: analyzing and optimizing it again finds little to do,
    which is most of what planning a round from its SQL costs. Nothing the optimizer did
    depends on the versions' contents: they carry no size estimate and no constraints
    (without_estimates; constraint propagation is off), so to it every version of a
    relation looks the same. A relation read twice (a self-join) has two leaves: the
    analyzer gave the second one fresh attribute ids, and each keeps its own.
    """
    plan = df._jdf.queryExecution().optimizedPlan()
    leaves = []
    for leaf, relation in _reading(plan, "LogicalRDD", versions):
        args = leaf.otherCopyArgs()
        leaves.append((leaf, relation, (leaf.output(), leaf.outputPartitioning(),
                                        leaf.outputOrdering(), leaf.isStreaming(),
                                        leaf.stream(), args.apply(0), args.apply(3))))
    return Template(plan, leaves, _nothing(spark))


def _reading(plan: Any, kind: str, versions: dict[str, Any]) -> list[tuple[Any, str]]:
    """(leaf, relation) for every leaf of class ``kind`` that reads one of ``versions``
    (relation -> RDD); a version no round replaces (a lower stratum's, an input) is
    skipped."""
    relation_of = {rdd.id(): relation for relation, rdd in versions.items()}
    found, out = plan.collectLeaves(), []
    for i in range(found.size()):
        leaf = found.apply(i)
        if leaf.getClass().getSimpleName() == kind:
            relation = relation_of.get(leaf.rdd().id())
            if relation is not None:
                out.append((leaf, relation))
    return out


def replan(spark: SparkSession, template: Template, versions: dict[str, Any]) -> DataFrame:
    """The template's plan over other versions of the same relations (relation -> RDD).

    Each leaf is replaced by a LogicalRDD over the new version's RDD with the leaf's own
    output attributes, partitioning and ordering, so every reference above it still
    resolves and the plan is the one the round's SQL would have optimized to. That holds
    because every version of a relation has the same columns and the same layout (the
    round's insert checks the partitioning of each). The new leaves carry no size
    estimate (see :func:`without_estimates`). One JVM call per leaf and three more,
    where parsing and analyzing the round's SQL and building its insert takes dozens.
    """
    nothing = template.nothing
    swap = jclass(spark, "java.util.HashMap")()
    for leaf, relation, (output, partitioning, ordering, streaming, stream, session,
                         checkpointed) in template.leaves:
        swap.put(leaf, leaf.copy(output, versions[relation], partitioning, ordering,
                                 streaming, stream, session, nothing, nothing, checkpointed))
    # a Scala Map is a PartialFunction: defined on the old leaves, which it maps to new ones
    rule = jclass(spark, "org.apache.spark.api.python.PythonUtils").toScalaMap(swap)
    return _of_rows(spark, template.plan.transformUp(rule))


# Operators a rerun plan must not hold: each refers to a plan or a result outside its
# children (a reused exchange points at another exchange; a subquery or a broadcast keeps
# the result of its first execution), which swapping leaves would not reach.
_NOT_RERUNNABLE = ("ReusedExchange", "ReusedSubquery", "Subquery", "BroadcastExchange",
                   "AdaptiveSparkPlan", "InMemoryTableScan")


@dataclass
class Executed:
    """The executed physical plan of one loop round's version of a relation, kept to run
    the next rounds over other versions without planning them (see :func:`swapped`)."""

    plan: Any  # the SparkPlan
    # (leaf, relation, the leaf's copy arguments but its RDD): every scan of a version of
    # a relation that the rounds replace
    leaves: list[tuple[Any, str, tuple[Any, ...]]]
    top: tuple[Any, Any, Any]  # the plan's output, partitioning and ordering
    whole_stage: str  # spark.sql.codegen.wholeStage when it was planned
    session: Any
    nothing: Any  # scala.None
    tag: Any  # the ClassTag of the rows a scan reads (for :func:`blocks`)


def executed(spark: SparkSession, jdf: Any, versions: dict[str, Any], whole_stage: str
             ) -> Executed | None:
    """The executed plan of ``jdf`` (a planned JVM Dataset) with its scans of ``versions``
    (relation -> RDD) found once; None when the plan holds an operator that a rerun would
    not renew (see _NOT_RERUNNABLE)."""
    plan = jdf.queryExecution().executedPlan()
    text = plan.treeString()
    if any(name in text for name in _NOT_RERUNNABLE):
        return None
    leaves = [(leaf, relation, (leaf.output(), leaf.name(), leaf.outputPartitioning(),
                                leaf.outputOrdering(), leaf.stream()))
              for leaf, relation in _reading(plan, "RDDScanExec", versions)]
    if not leaves:
        return None
    return Executed(plan, leaves, (plan.output(), plan.outputPartitioning(),
                                   plan.outputOrdering()),
                    whole_stage, spark._jsparkSession, _nothing(spark),
                    leaves[0][0].rdd().elementClassTag())


def swapped(spark: SparkSession, kept: Executed, versions: dict[str, Any]) -> Any:
    """The kept plan over other versions (relation -> RDD): a SparkPlan to run with
    :func:`frame` (its metrics are read off it).

    Each scan of a version is replaced by a scan of the new version's RDD with the old
    scan's attributes, partitioning and ordering. ``transformUp`` copies every operator
    above a replaced scan, so each of those starts without the state of its first
    execution (shuffle dependencies, metrics, observed aggregates); operators above no
    replaced scan are shared with the kept plan and read what they read before (a lower
    stratum's relation: its shuffle output is reused, not written again). No parsing,
    analysis, optimization or physical planning of the round's rules: a few JVM calls.
    """
    swap = jclass(spark, "java.util.HashMap")()
    for leaf, relation, (output, name, partitioning, ordering, stream) in kept.leaves:
        swap.put(leaf, leaf.copy(output, versions[relation], name, partitioning, ordering,
                                 stream))
    rule = jclass(spark, "org.apache.spark.api.python.PythonUtils").toScalaMap(swap)
    return kept.plan.transformUp(rule)


def blocks(spark: SparkSession, kept: Executed, rdd: Any, partitions: int, version: str
           ) -> Any:
    """An RDD that reads the blocks a local checkpoint of ``rdd`` stores (one per
    partition, in partition order), whether or not its job has stored them yet.

    A scan of it keeps nothing of ``rdd``: its partitions name block ids, not ``rdd``'s
    partitions. So a rerun can build its RDDs while the job that stores the versions it
    reads still runs (see :func:`frame`). The blocks are those the checkpoint keeps
    (``rdd_<id>_<partition>``, what Spark's LocalCheckpointRDD reads too); a task that
    finds one missing fails, as a lost local checkpoint does. ``rdd`` is what the
    version's scan reads (``version`` in the kept plan's leaves): for a columnar version,
    the blocks are its batches', decoded with the columns of the kept scan of it.
    """
    columnar = rdd.name() == _COLUMNAR_SCAN
    if columnar:
        scans = [args[0] for _, name, args in kept.leaves if name == version]
        if not scans:
            return rdd  # the kept plan does not read this version: nothing scans it
        output, stored = scans[0], _batches(rdd)
    else:
        stored = rdd
    block_id = jclass(spark, "org.apache.spark.storage.BlockId")
    rdd_block = jclass(spark, "org.apache.spark.storage.RDDBlockId")
    ids, rdd_id = spark.sparkContext._gateway.new_array(block_id, partitions), stored.id()
    for i in range(partitions):
        ids[i] = rdd_block(rdd_id, i)
    read = jclass(spark, "org.apache.spark.rdd.BlockRDD")(
        spark.sparkContext._jsc.sc(), ids, stored.elementClassTag() if columnar else kept.tag)
    return _decoded(spark, read, output, version=False) if columnar else read


def stored(spark: SparkSession, kept: Executed, plan: Any) -> DataFrame:
    """A swapped plan's rows, to be stored serialized by a local checkpoint: its RDD
    marked (``persist`` serialized, ``localCheckpoint``), no job run; the first job that
    computes it stores it (rounds._compute). Only where :func:`stores_serialized` holds.

    What :func:`frame` and a Dataset checkpoint do, without their SQL: no analysis,
    optimization or planning of the checkpoint, no SQL execution, no closure to clean.
    The plan's operators reuse their row objects, which a deserialized store would keep
    one reference of for every row; serialized, each row is written out whole (with
    Java serialization reset after every object, which no back-reference survives).
    """
    rdd = plan.execute()
    rdd.persist(jclass(spark, "org.apache.spark.storage.StorageLevel").MEMORY_AND_DISK_SER())
    rdd.localCheckpoint()
    return _over(spark, kept, rdd)


def stores_serialized(spark: SparkSession) -> bool:
    """Whether the session's serializer writes a reused row object out whole each time:
    Java serialization (Spark's default) reset after every object."""
    conf = spark.sparkContext.getConf()
    return (conf.get("spark.serializer", "org.apache.spark.serializer.JavaSerializer")
            == "org.apache.spark.serializer.JavaSerializer"
            and conf.get("spark.serializer.objectStreamReset", "100") == "1")


def frame(spark: SparkSession, kept: Executed, plan: Any) -> DataFrame:
    """A DataFrame over the RDD of a swapped plan, with the plan's partitioning and no
    size estimate; to be checkpointed like any planned version (the checkpoint copies the
    rows, which the plan's operators reuse). Builds the plan's RDDs (``execute``), which
    keep the partitions of the versions it reads: call it only once those are stored, or
    over scans of their :func:`blocks`."""
    return _over(spark, kept, plan.execute())


def _over(spark: SparkSession, kept: Executed, rdd: Any) -> DataFrame:
    """A DataFrame over ``rdd`` (rows of the kept plan) with the plan's output,
    partitioning and ordering, and no size estimate."""
    output, partitioning, ordering = kept.top
    scan = jclass(spark, "org.apache.spark.sql.execution.LogicalRDD")(
        output, rdd, partitioning, ordering, False, kept.nothing, kept.session,
        kept.nothing, kept.nothing, False)
    return _of_rows(spark, scan)


def observed(spark: SparkSession, plan: Any) -> Any:
    """The observed metrics (name -> Row) of an executed SparkPlan's CollectMetrics."""
    return getattr(jclass(spark, "org.apache.spark.sql.execution.CollectMetricsExec$"),
                   "MODULE$").collect(plan)


def estimated_rows(df: DataFrame) -> int | None:
    """The rows of ``df`` as its optimized plan's statistics give them, without a job: the
    row count where the plan knows it, else its size in bytes over its rows' default size
    (Spark's own measure: a file source's bytes, a range's rows); None when the plan has no
    estimate (a LogicalRDD, e.g. a DataFrame made from Python rows, sizes as
    spark.sql.defaultSizeInBytes)."""
    plan = df._jdf.queryExecution().optimizedPlan()
    stats = plan.stats()
    count = stats.rowCount()
    if count.isDefined():
        return _big(count.get())
    size = _big(stats.sizeInBytes())
    unknown = df.sparkSession._jsparkSession.sessionState().conf().defaultSizeInBytes()
    if size >= unknown:
        return None
    width = sum(f.dataType().defaultSize() for f in plan.schema().fields()) or 1
    return size // width


def _big(value: Any) -> int:
    """A Scala BigInt as a Python int (Py4J converts some, not others)."""
    return value if isinstance(value, int) else int(value.toString())


def seq(spark: SparkSession, items: list[Any]) -> Any:
    """A Scala Seq of columns (or strings), for calling Dataset methods directly."""
    return jclass(spark, "org.apache.spark.api.python.PythonUtils").toSeq(
        [c._jc if isinstance(c, Column) else c for c in items])


def executed_plan(jdf: Any) -> Any:
    """The executed SparkPlan of a JVM Dataset (planned on first use)."""
    return jdf.queryExecution().executedPlan()


def has_home_exchange(jdf: Any) -> bool:
    """Whether a planned version's executed plan holds the home Exchange (the insert's
    repartition). Spark plans none when the derived tuples are already placed as the
    relation is (a repartition its child satisfies is optimized out)."""
    return "REPARTITION_BY_NUM" in executed_plan(jdf).toString()


def partitioning(jdf: Any) -> str:
    """The output partitioning of a JVM Dataset's executed plan, as Spark prints it."""
    return executed_plan(jdf).outputPartitioning().toString()


def observed_row(spark: SparkSession, plan: Any, source: Any, name: str) -> dict[str, Any]:
    """The metrics observed under ``name``: off an executed SparkPlan's CollectMetrics
    (``plan``, a rerun's) or the Dataset whose action computed them (``source``)."""
    from pyspark.serializers import CPickleSerializer

    metrics = observed(spark, plan) if plan is not None else \
        source.queryExecution().observedMetrics()
    utils = jclass(spark, "org.apache.spark.sql.api.python.PythonSQLUtils")
    return CPickleSerializer().loads(utils.toPyRow(metrics.apply(name))).asDict(recursive=False)


def lineage(spark: SparkSession, rdd: Any) -> dict[str, int]:
    """How much of the past a round's job carries: the RDDs it reaches before a
    checkpoint, the largest serialized partition among them (a task ships one), how
    many of them read stored blocks (jvm.blocks), and the shuffles among them (its
    Exchanges: which stored rows a round moves).

    The first two stay constant round after round when every version's lineage is cut; a
    partition that kept references to uncut partitions of earlier versions grows by
    one link per round.
    """
    serialize = jclass(spark, "org.apache.spark.util.Utils").serialize
    seen: set[int] = set()
    todo, largest, blocks, shuffles = [rdd], 0, 0, 0
    while todo:
        r = todo.pop()
        if r.id() in seen:
            continue
        seen.add(r.id())
        blocks += r.getClass().getSimpleName() == "BlockRDD"
        partitions = r.partitions()
        if len(partitions):
            largest = max(largest, len(serialize(partitions[0])))
        if r.isCheckpointed():
            continue
        deps = r.dependencies().iterator()
        while deps.hasNext():
            dep = deps.next()
            shuffles += dep.getClass().getSimpleName() == "ShuffleDependency"
            todo.append(dep.rdd())
    return {"rdds": len(seen), "partition_bytes": largest, "blocks": blocks,
            "shuffles": shuffles}


def derivations(plan: Any, hint: dict[str, int] | None = None, key: str = "",
                combined: bool = False) -> int:
    """Tuples the round derived before deduplication: the rows its home Exchange wrote, or,
    where candidates were ``combined`` before it (translate.kernel_query), the rows each
    kernel's part of the plan counts below its combine (:func:`derivations_by_kernel`).

    Read off the SQL metric of the one REPARTITION_BY_NUM Exchange in the plan that ran (a
    kernel's own shuffles, if any, are ENSURE_REQUIREMENTS). Spark drops that Exchange only
    when it proves the kernels' union empty, which derives nothing. An observed count before
    the shuffle would give the same number, but its operator splits the generated code of
    the join stage and costs 10-17% of a tree(12) run; this costs a few JVM round trips.
    Every loop round of a stratum has the same plan, so the Exchange's position found once
    is kept in ``hint[key]`` and checked, not searched for, in the rounds after.
    """
    node = _home_exchange(plan, hint, key)
    if node is None:
        return 0
    if combined:
        counts = _kernel_counts(node)
        if counts is not None:
            return sum(before for before, _ in counts)
    return int(node.metrics().apply("shuffleRecordsWritten").value())


def shuffled(plan: Any, hint: dict[str, int] | None = None, key: str = "") -> int:
    """The rows the round's home Exchange wrote: its derivations, less what a combine
    before it dropped."""
    node = _home_exchange(plan, hint, key)
    return 0 if node is None else int(node.metrics().apply("shuffleRecordsWritten").value())


def derivations_by_kernel(plan: Any, kernels: int, hint: dict[str, int] | None = None,
                          key: str = "") -> list[int] | None:
    """The rows each of a round's ``kernels`` derived, in the order of their union (see
    :func:`_kernel_counts`); None when the plan has not that shape (Spark pruned a kernel
    it proved empty, say)."""
    exchange = _home_exchange(plan, hint, key)
    if exchange is None:
        return None
    counts = _kernel_counts(exchange)
    if counts is None or len(counts) != kernels:
        return None
    return [before for before, _ in counts]


def _kernel_counts(exchange: Any) -> list[tuple[int, int]] | None:
    """Below the home Exchange, per child of the kernels' Union: the rows it derived and
    the rows it handed on. Both are the row count of the topmost operator that counts its
    output rows (the operators above it, a projection or code-generation wrappers, keep
    the count), except in a kernel combined before the shuffle, whose derived rows are
    counted below the combine's aggregates (those grouping by translate.COMBINE). None
    when the plan has not that shape, or what the children hand on does not add up to
    the rows the Exchange wrote."""
    combine = f"{COMBINE}#"  # an attribute's printed name: the column and its id
    node = _unwrapped(exchange.child())
    children = node.children()
    kids = [children.apply(i) for i in range(children.size())] \
        if node.nodeName() == "Union" else [node]
    counts = []
    for kid in kids:
        kid = _counting(kid)
        if kid is None:
            return None
        after = before = int(kid.metrics().apply("numOutputRows").value())
        while kid.nodeName().endswith("Aggregate") and combine in kid.toString():
            kid = _counting(kid.children().head()) if kid.children().size() == 1 else None
            if kid is None:
                return None
            before = int(kid.metrics().apply("numOutputRows").value())
        counts.append((before, after))
    written = int(exchange.metrics().apply("shuffleRecordsWritten").value())
    return counts if sum(after for _, after in counts) == written else None


def _counting(node: Any) -> Any:
    """The topmost operator at or below ``node``, along single children, that counts its
    output rows; None if a fork comes first."""
    while not node.metrics().contains("numOutputRows"):
        if node.children().size() != 1:
            return None
        node = node.children().head()
    return node


def _unwrapped(node: Any) -> Any:
    while node.nodeName() in ("WholeStageCodegen", "InputAdapter") \
            and node.children().size() == 1:
        node = node.children().head()
    return node


def _home_exchange(plan: Any, hint: dict[str, int] | None, key: str) -> Any:
    """The plan's home Exchange (see :func:`derivations`), or None if Spark removed it."""
    if hint is not None and key in hint:
        node = plan.p(hint[key])
        if node is not None and _is_home_exchange(node):
            return node
    lines = plan.numberedTreeString().splitlines()
    for line in reversed(lines):  # the deepest: the one a restored placement adds is above
        number, _, text = line.partition(" ")
        home = re.search(r"Exchange .*REPARTITION_BY_NUM, \[plan_id=(\d+)\]", text)
        if home is None:
            continue
        # The line number counts the printed operators; TreeNode.p also counts the
        # code-generation wrappers, which come before, so the node is at or after it.
        for index in range(int(number), 2 * len(lines) + 2):
            node = plan.p(index)
            if node is None:
                break
            if node.nodeName() == "Exchange" and node.id() == int(home.group(1)):
                if hint is not None:
                    hint[key] = index
                return node
    return None  # no home Exchange: the optimizer proved the derivation empty and removed it


def _is_home_exchange(node: Any) -> bool:
    return (node.nodeName() == "Exchange"
            and node.shuffleOrigin().toString() == "REPARTITION_BY_NUM")

