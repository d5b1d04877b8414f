"""Peers for graph analytics: GraphX through the JVM gateway, and expert DataFrame loops.

Four algorithms over an edge DataFrame ``edges(src long, dst long[, w long])`` already in Spark:

* ``cc``: connected components of the undirected graph (edges taken both ways); the label of a
  node is the smallest node id in its component.
* ``sssp``: weighted single-source shortest paths from ``source`` (minimum over parallel arcs;
  ``w`` missing or null counts as 1).
* ``bfs``: unweighted hop distances from ``source``.
* ``pagerank``: damping 0.85, exactly :data:`PAGERANK_ITERATIONS` iterations, on the distinct
  ``(src, dst)`` pairs.

Each algorithm has two peers, ``graphx`` and ``dataframe`` (see :data:`PEERS`). A peer is a
function ``(spark, edges_df, *, source=None) -> PeerResult``: a small summary that an oracle
check can compare (see :func:`summarize`), the compute seconds, the rounds and the number of
Spark jobs it started. The clock covers everything after the edge DataFrame exists (preparing
the edges, the algorithm, and the one final aggregate that makes the summary), not the session
start and not the one-off compilation of the GraphX helper. No peer collects the relation: the
only rows that reach Python are the summary's.

Nodes are the ids occurring in either column, for both peers (GraphX builds its vertices from
the edges; the DataFrame loops take the distinct ids of both columns).

GraphX peers
------------
GraphX wants Scala functions (``Row => Edge`` to build the graph, ``vprog``/``sendMsg``/
``mergeMsg`` for Pregel), which Python can't pass through Py4J, and mapping rows in Python
would start Python workers and time those instead of GraphX. So the functions are small Java
classes in ``benchmarks/java/GraphxPeers.java``: :func:`graphx_helper` compiles that file with
``javac`` against pyspark's own jars into a cache directory (once per source/pyspark/Java
version), jars it, and adds the jar to the running session with ``ADD JAR`` (or finds it
already there when the session was started with it in ``spark.jars``, as :func:`start_spark`
does). Without ``javac`` every GraphX peer is skipped with the reason in its result.

* cc: ``lib.ConnectedComponents.run(graph, Int.MaxValue)`` (messages go both ways).
* sssp: ``Pregel`` with vprog = min (source pinned to 0), sendMsg = ``dist(src) + w`` when
  smaller than ``dist(dst)``, mergeMsg = min, activeDirection = Out (only vertices whose
  distance dropped send: semi-naive). ``lib.ShortestPaths`` only counts hops.
* bfs: ``lib.ShortestPaths.run(graph.reverse, Seq(source))``. ShortestPaths sends messages
  from an edge's dst to its src, i.e. it computes distances TO the landmarks; on the reversed
  graph those are the distances FROM the source.
* pagerank: ``lib.PageRank.run(graph, 20, 0.15)``: the un-normalized variant (ranks start at
  1, ``rank = 0.15 + 0.85 * sum(in-rank / outdeg)``) in which the mass of dangling nodes is
  DROPPED every iteration rather than spread, then rescaled at the end to sum to the number of
  nodes (SPARK-18847). The summary divides by the sum, so it sums to 1 like networkx's, but on
  a graph with dangling nodes the values (and possibly the ranking) differ from networkx's,
  which spreads dangling mass uniformly. On a graph without dangling nodes (rome99) the two
  agree exactly after the same number of iterations.

DataFrame peers
---------------
The best hand-written loop, in the style of :func:`benchmarks.peers.expert_loop`: adaptive
execution and broadcast joins off (:data:`benchmarks.peers.EXPERT_CONF`), the edges hash-
partitioned on ``src`` and the per-node state on ``id`` with the same ``P`` partitions, both
sorted and localCheckpointed, so a round has exactly one Exchange (the candidates, grouped by
their target node) and is exactly one Spark job (the localCheckpoint of the new state; the
number of changed nodes comes from an :class:`~pyspark.sql.Observation` on that job).

* cc / sssp / bfs share :func:`_min_propagation`: the state keeps, per node, its value and the
  round in which it last dropped; only nodes that dropped in the previous round send
  candidates (semi-naive), the candidates are reduced with min per target node, and a left
  join keeps the smaller value. It stops after the first round in which nothing dropped.
* pagerank is :func:`pagerank_dataframe`: networkx's iteration (dangling mass spread uniformly
  over all nodes, sums to 1) for exactly 20 rounds; the dangling mass for the next round is
  the Observation of the current round's job, so each round stays one job.

Command line::

    python3 -m benchmarks.graph_peers --graph PATH --algo cc|sssp|bfs|pagerank
        [--peers graphx,dataframe] [--source S] [--repeat N] [--check]

``PATH`` is a TSV of ``src dst [w]`` (e.g. ``../shared/data/rome99.tsv``), a ``.facts`` file,
or a directory holding ``edge.facts`` (what ``python3 -m sparklog gen`` writes). It prints one
JSON line per peer run; ``--check`` also computes the answer with networkx in the driver (after
the clock) and adds ``"ok"`` to each line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from sparklog.defaults import CODEGEN_CACHE_ENTRIES

from .peers import EXPERT_CONF, _expert_partitions, session_conf

ALGOS = ("cc", "sssp", "bfs", "pagerank")
DAMPING = 0.85
PAGERANK_ITERATIONS = 20
INT_MAX = 2**31 - 1  # GraphX's maxIterations: run to the fixpoint

JAVA_SOURCE = Path(__file__).resolve().parent / "java" / "GraphxPeers.java"
JAVA_CLASS = "sparklog_bench.GraphxPeers"
CACHE_DIR = Path(os.environ.get("SPARKLOG_BENCH_CACHE", Path.home() / ".cache" / "sparklog-benchmarks"))


@dataclass
class PeerResult:
    """What one peer run returns; ``skipped`` (a reason) means it did not run."""

    summary: dict[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    rounds: int | None = None
    spark_jobs: int | None = None
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seconds": None if self.seconds is None else round(self.seconds, 4),
                               "rounds": self.rounds, "spark_jobs": self.spark_jobs,
                               "summary": self.summary}
        if self.skipped:
            out["skipped"] = self.skipped
        return out


# --------------------------------------------------------------------------------------
# summaries (the oracle-checkable result of every peer)
# --------------------------------------------------------------------------------------


def summarize(algo: str, result: DataFrame) -> dict[str, Any]:
    """The summary of a per-node result ``(id long, value)``, from one aggregate job.

    * cc: ``nodes``, ``components`` (nodes labelled with their own id: each component's
      smallest id is its label) and ``label_sum`` (sum over nodes of the label).
    * sssp / bfs: ``reachable`` (non-null distances, the source included), ``dist_sum``,
      ``dist_max``.
    * pagerank: ``nodes``, ``rank_sum`` (of the peer's own values: 1 for the DataFrame loop,
      the node count for GraphX) and ``top5`` as ``[id, rank / rank_sum]`` (a second, tiny job:
      a take-ordered of 5 rows).
    """
    if algo == "cc":
        r = result.agg(F.count(F.lit(1)).alias("n"),
                       F.count(F.when(F.col("value") == F.col("id"), 1)).alias("c"),
                       F.sum("value").alias("s")).collect()[0]
        return {"nodes": r["n"], "components": r["c"], "label_sum": r["s"]}
    if algo in ("sssp", "bfs"):
        r = result.agg(F.count("value").alias("n"), F.sum("value").alias("s"),
                       F.max("value").alias("m")).collect()[0]
        return {"reachable": r["n"], "dist_sum": r["s"] or 0, "dist_max": r["m"]}
    if algo == "pagerank":
        r = result.agg(F.count(F.lit(1)).alias("n"), F.sum("value").alias("s")).collect()[0]
        total = r["s"] or 1.0
        top = result.orderBy(F.col("value").desc(), F.col("id")).limit(5).collect()
        return {"nodes": r["n"], "rank_sum": round(r["s"], 9),
                "top5": [[t["id"], round(t["value"] / total, 9)] for t in top]}
    raise ValueError(f"unknown algorithm {algo!r}; expected one of {', '.join(ALGOS)}")


def _next_job_id(spark: SparkSession) -> int | None:
    try:
        value = spark.sparkContext._jsc.sc().dagScheduler().nextJobId()
        return int(value.get()) if hasattr(value, "get") else int(value)
    except Exception:
        return None


def _timed(spark: SparkSession, algo: str, compute: Callable[[], tuple[DataFrame, int | None]]) -> PeerResult:
    """Run ``compute`` (-> per-node result, rounds) and its summary under one clock."""
    first = _next_job_id(spark)
    t0 = time.perf_counter()
    result, rounds = compute()
    summary = summarize(algo, result)
    seconds = time.perf_counter() - t0
    last = _next_job_id(spark)
    jobs = last - first if first is not None and last is not None else None
    return PeerResult(summary=summary, seconds=seconds, rounds=rounds, spark_jobs=jobs)


def _weights(edges_df: DataFrame) -> Column:
    """``w`` as a long, 1 where the edge DataFrame has no ``w`` column or a null weight."""
    if "w" in edges_df.columns:
        return F.coalesce(F.col("w").cast("long"), F.lit(1).cast("long"))
    return F.lit(1).cast("long")


def _require_source(source: int | None) -> int:
    if source is None:
        raise ValueError("sssp/bfs need a source node (source=...)")
    return int(source)


# --------------------------------------------------------------------------------------
# GraphX helper: compile the Java class once, add its jar to the session
# --------------------------------------------------------------------------------------


class GraphxUnavailable(RuntimeError):
    """The GraphX helper can't be built or loaded; the message says why."""


def _pyspark_jars() -> Path:
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not jars.is_dir():
        raise GraphxUnavailable(f"no pyspark jars directory at {jars}")
    return jars


def helper_jar() -> Path:
    """The helper jar, compiled now unless an up-to-date copy is in the cache.

    The cache key covers the Java source, the pyspark version and the javac version, so a new
    pyspark or an edited source gets a fresh build. Raises :class:`GraphxUnavailable` when
    ``javac`` is missing or the compilation fails.
    """
    import pyspark

    javac = shutil.which("javac")
    if javac is None:
        raise GraphxUnavailable("javac not found on PATH: the GraphX peers need a JDK to compile "
                                f"{JAVA_SOURCE.name} (a JRE is not enough)")
    source = JAVA_SOURCE.read_bytes()
    version = subprocess.run([javac, "-version"], capture_output=True, text=True)
    key = hashlib.sha256(source + pyspark.__version__.encode()
                         + (version.stdout + version.stderr).encode()).hexdigest()[:16]
    jar = CACHE_DIR / "graphx" / key / "graphx-peers.jar"
    if jar.is_file():
        return jar
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
        classes = Path(tmp) / "classes"
        proc = subprocess.run(
            [javac, "-nowarn", "--release", "17", "-cp", str(_pyspark_jars() / "*"),
             "-d", str(classes), str(JAVA_SOURCE)],
            capture_output=True, text=True)
        if proc.returncode != 0:
            raise GraphxUnavailable(f"javac failed on {JAVA_SOURCE}:\n{proc.stderr[-2000:]}")
        staged = Path(tmp) / jar.name
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(classes.rglob("*.class")):
                zf.write(path, path.relative_to(classes).as_posix())
        os.replace(staged, jar)  # atomic: a concurrent run sees the whole jar or none
    return jar


def graphx_helper(spark: SparkSession) -> Any:
    """The ``GraphxPeers`` Java class (a Py4J JavaClass) in ``spark``'s JVM.

    Found directly when the jar was in ``spark.jars`` at session start; otherwise the jar is
    added with ``ADD JAR``, which puts it on the session's class loader (the one the calling
    thread's Py4J JVM thread uses from then on) and ships it to the executors.
    """
    from py4j.java_gateway import JavaClass

    def lookup() -> Any:
        obj = spark._jvm
        for part in JAVA_CLASS.split("."):
            obj = getattr(obj, part)
        return obj

    cls = lookup()
    if isinstance(cls, JavaClass):
        return cls
    jar = helper_jar()
    spark.sql(f"ADD JAR '{jar}'").collect()
    cls = lookup()
    if not isinstance(cls, JavaClass):
        raise GraphxUnavailable(f"{JAVA_CLASS} not loadable after ADD JAR {jar}")
    return cls


def _graphx_run(spark: SparkSession, algo: str, edges: DataFrame,
                call: Callable[[Any, Any], Any], rounds: int | None = None) -> PeerResult:
    try:
        helper = graphx_helper(spark)  # outside the clock: a one-off per session
    except GraphxUnavailable as exc:
        return PeerResult(skipped=f"GraphX peer skipped: {exc}")

    def compute() -> tuple[DataFrame, int | None]:
        return DataFrame(call(helper, edges._jdf), spark), rounds

    return _timed(spark, algo, compute)


def cc_graphx(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
    """``lib.ConnectedComponents.run(graph, Int.MaxValue)``: min-label, both edge directions."""
    edges = edges_df.select("src", "dst", F.lit(0).cast("long").alias("w"))
    return _graphx_run(spark, "cc", edges, lambda h, e: h.connectedComponents(e, INT_MAX))


def sssp_graphx(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
    """Pregel weighted SSSP (see the module docstring): min over parallel arcs by construction."""
    s = _require_source(source)
    edges = edges_df.select("src", "dst", _weights(edges_df).alias("w"))
    return _graphx_run(spark, "sssp", edges, lambda h, e: h.ssspPregel(e, s, INT_MAX))


def bfs_graphx(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
    """``lib.ShortestPaths.run(graph.reverse, Seq(source))``: hop distances from the source."""
    s = _require_source(source)
    edges = edges_df.select("src", "dst", F.lit(1).cast("long").alias("w"))
    return _graphx_run(spark, "bfs", edges, lambda h, e: h.bfsShortestPaths(e, s))


def pagerank_graphx(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
    """``lib.PageRank.run(graph, 20, 0.15)`` on the distinct pairs (dangling mass dropped)."""
    edges = edges_df.select("src", "dst").distinct().select("src", "dst", F.lit(0).cast("long").alias("w"))
    return _graphx_run(spark, "pagerank", edges,
                       lambda h, e: h.pageRank(e, PAGERANK_ITERATIONS, 1.0 - DAMPING),
                       rounds=PAGERANK_ITERATIONS)


# --------------------------------------------------------------------------------------
# DataFrame loops
# --------------------------------------------------------------------------------------


def _partitioned_edges(edges: DataFrame, P: int) -> DataFrame:
    """``(src, dst, w)`` hash-partitioned on src and sorted: the join side of every round."""
    return edges.repartition(P, "src").sortWithinPartitions("src", "dst").localCheckpoint()


def _nodes(edges: DataFrame, P: int) -> DataFrame:
    """Distinct ids of either column, hash-partitioned on ``id`` (P partitions)."""
    ids = edges.select(F.col("src").alias("id")).unionByName(edges.select(F.col("dst").alias("id")))
    return ids.repartition(P, "id").distinct()


def _min_propagation(spark: SparkSession, edges: DataFrame, init: Callable[[Column], Column],
                     step: Callable[[Column, Column], Column], name: str) -> tuple[DataFrame, int]:
    """Semi-naive min-propagation to a fixpoint; returns ``(id, value)`` and the rounds.

    ``edges`` is ``(src, dst, w)``; ``init(id)`` is a node's first value (null = none yet) and
    ``step(value, w)`` the candidate it sends along an edge. The state ``(id, value, it)`` keeps
    the round ``it`` in which ``value`` last dropped (-1: never had one); round ``i`` takes the
    delta ``it == i`` (a filter over the co-partitioned state, no shuffle), joins it with the
    edges on ``id = src`` (co-partitioned, sorted: no shuffle, no sort), reduces the candidates
    with min per target (THE Exchange of the round), and left-joins them into the state, which
    stays hash(id)-partitioned and sorted. The round's one job is the state's localCheckpoint;
    an Observation on it counts the nodes that dropped. The last round drops nothing.
    """
    P = _expert_partitions(spark)
    with session_conf(spark, {**EXPERT_CONF, "spark.sql.shuffle.partitions": str(P)}):
        edge = _partitioned_edges(edges, P)
        value0 = init(F.col("id"))
        state = (
            _nodes(edges, P)
            .select("id", value0.alias("value"),
                    F.when(value0.isNull(), F.lit(-1)).otherwise(F.lit(0)).alias("it"))
            .sortWithinPartitions("id")
            .localCheckpoint()
        )
        rounds = 0
        while True:
            i = rounds
            rounds += 1
            delta = state.filter(F.col("it") == F.lit(i)).select("id", "value")
            cand = (
                delta.join(edge, delta["id"] == edge["src"])
                .select(edge["dst"].alias("id"), step(delta["value"], edge["w"]).alias("c"))
                .groupBy("id")
                .agg(F.min("c").alias("c"))
            )
            joined = state.join(cand, "id", "left")
            dropped = F.col("c").isNotNull() & (F.col("value").isNull() | (F.col("c") < F.col("value")))
            obs = Observation(f"{name}_{i + 1}_{id(state):x}")
            state = (
                joined.select(
                    "id",
                    F.when(dropped, F.col("c")).otherwise(F.col("value")).alias("value"),
                    F.when(dropped, F.lit(i + 1)).otherwise(F.col("it")).alias("it"),
                )
                .observe(obs, F.count(F.when(F.col("it") == F.lit(i + 1), 1)).alias("n"))
                .sortWithinPartitions("id")
                .localCheckpoint()  # the round's one Spark job
            )
            if obs.get["n"] == 0:
                break
    return state.select("id", "value"), rounds


def cc_dataframe(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
    """Min-label propagation over the edges taken both ways (deduplicated).

    Self-loops stay: one can never lower a label, and dropping them would drop every node
    whose only edge is a self-loop (its own component) from the nodes, which
    :func:`_min_propagation` takes from the edges (19 of email-Eu-core's 20 components).
    """
    def compute() -> tuple[DataFrame, int]:
        pairs = edges_df.select("src", "dst")
        both = (pairs.unionByName(pairs.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
                .distinct()
                .select("src", "dst", F.lit(0).cast("long").alias("w")))
        return _min_propagation(spark, both, lambda node: node, lambda value, w: value, "cc")

    return _timed(spark, "cc", compute)


def sssp_dataframe(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
    """Bellman-Ford frontier relaxation: only nodes whose distance dropped relax their arcs."""
    s = _require_source(source)

    def compute() -> tuple[DataFrame, int]:
        edges = edges_df.select("src", "dst", _weights(edges_df).alias("w"))
        return _min_propagation(
            spark, edges,
            lambda node: F.when(node == F.lit(s), F.lit(0).cast("long")).otherwise(F.lit(None).cast("long")),
            lambda value, w: value + w, "sssp")

    return _timed(spark, "sssp", compute)


def bfs_dataframe(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
    """Level-synchronous BFS: the same loop with every edge 1, so each node drops at most once."""
    s = _require_source(source)

    def compute() -> tuple[DataFrame, int]:
        edges = edges_df.select("src", "dst", F.lit(1).cast("long").alias("w"))
        return _min_propagation(
            spark, edges,
            lambda node: F.when(node == F.lit(s), F.lit(0).cast("long")).otherwise(F.lit(None).cast("long")),
            lambda value, w: value + w, "bfs")

    return _timed(spark, "bfs", compute)


def pagerank_dataframe(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None,
                       iterations: int = PAGERANK_ITERATIONS, damping: float = DAMPING) -> PeerResult:
    """networkx's PageRank iteration for exactly ``iterations`` rounds, on the distinct pairs.

    ``x'(v) = d * sum(x(u) / outdeg(u) for u -> v) + (d * dangling + 1 - d) / n`` with
    ``dangling`` the rank held by nodes without out-edges, starting from ``1/n``: ranks sum to
    1 throughout. The edges carry ``1/outdeg(src)`` and are co-partitioned with the ranks on
    ``src = id``; the contributions are summed per target (the round's one Exchange) and
    left-joined into the ranks. The next round's dangling mass is an Observation on this
    round's localCheckpoint, so a round is one job.
    """
    def compute() -> tuple[DataFrame, int]:
        P = _expert_partitions(spark)
        with session_conf(spark, {**EXPERT_CONF, "spark.sql.shuffle.partitions": str(P)}):
            pairs = edges_df.select("src", "dst").repartition(P, "src").distinct()
            outdeg = pairs.groupBy("src").agg(F.count(F.lit(1)).alias("deg"))
            edge = _partitioned_edges(
                pairs.join(outdeg, "src").select("src", "dst", (F.lit(1.0) / F.col("deg")).alias("w")), P)
            nodes = (
                _nodes(pairs, P)
                .join(outdeg.withColumnRenamed("src", "id"), "id", "left")
                .select("id", F.col("deg").isNull().alias("dangling"))
                .sortWithinPartitions("id")
                .localCheckpoint()
            )
            counts = nodes.agg(F.count(F.lit(1)).alias("n"),
                               F.count(F.when(F.col("dangling"), 1)).alias("d")).collect()[0]
            n = counts["n"]
            ranks = nodes.select("id", F.lit(1.0 / n).alias("value"), "dangling").localCheckpoint()
            dangling_mass = counts["d"] / n
            for i in range(iterations):
                contrib = (
                    ranks.join(edge, ranks["id"] == edge["src"])
                    .select(edge["dst"].alias("id"), (ranks["value"] * edge["w"]).alias("c"))
                    .groupBy("id")
                    .agg(F.sum("c").alias("c"))
                )
                base = (damping * dangling_mass + 1.0 - damping) / n
                obs = Observation(f"pagerank_{i + 1}_{id(ranks):x}")
                ranks = (
                    ranks.join(contrib, "id", "left")
                    .select("id",
                            (F.lit(damping) * F.coalesce(F.col("c"), F.lit(0.0)) + F.lit(base)).alias("value"),
                            "dangling")
                    .observe(obs, F.coalesce(F.sum(F.when(F.col("dangling"), F.col("value"))),
                                             F.lit(0.0)).alias("m"))
                    .sortWithinPartitions("id")
                    .localCheckpoint()  # the round's one Spark job
                )
                dangling_mass = obs.get["m"]
        return ranks.select("id", "value"), iterations

    return _timed(spark, "pagerank", compute)


PeerFn = Callable[..., PeerResult]

# --------------------------------------------------------------------------------------
# sparklog: the programs of sparklog.programs, on the same edge DataFrame
# --------------------------------------------------------------------------------------

_ENGINES: dict[tuple, Any] = {}


def _engine(spark: SparkSession, **options: Any) -> Any:
    """One Engine per session and options (it only holds options), as a Spark application
    would."""
    import sparklog

    key = (id(spark), tuple(sorted(options.items())))
    if key not in _ENGINES:
        _ENGINES[key] = sparklog.Engine(spark, partitions=_expert_partitions(spark), **options)
    return _ENGINES[key]


def _sparklog(algo: str, run: Callable[[Any, DataFrame], DataFrame], **options: Any) -> PeerFn:
    """A peer that runs a sparklog program (with engine ``options``); its result's columns
    become ``(id, value)``."""
    def peer(spark: SparkSession, edges_df: DataFrame, *, source: int | None = None) -> PeerResult:
        def compute() -> tuple[DataFrame, int | None]:
            engine = _engine(spark, **options)
            edges = edges_df.select("src", "dst", _weights(edges_df).alias("w"))
            sourced = algo in ("sssp", "bfs")  # cc takes no source, even if one is given
            result = run(engine, edges, source) if sourced else run(engine, edges)
            return result.toDF("id", "value"), None
        return _timed(spark, algo, compute)
    return peer


def _programs() -> Any:
    from sparklog import programs
    return programs


cc_sparklog = _sparklog("cc", lambda engine, edges: _programs().connected_components(
    edges, engine))
sssp_sparklog = _sparklog("sssp", lambda engine, edges, s: _programs().sssp(edges, s, engine))
bfs_sparklog = _sparklog("bfs", lambda engine, edges, s: _programs().bfs(edges, s, engine))
pagerank_sparklog = _sparklog("pagerank", lambda engine, edges: _programs().pagerank(
    edges, PAGERANK_ITERATIONS, DAMPING, engine))
# the same with staged recursion's retirement off (Options.retire_stages): every round reads
# every stored iteration
pagerank_all_stages = _sparklog("pagerank", lambda engine, edges: _programs().pagerank(
    edges, PAGERANK_ITERATIONS, DAMPING, engine), retire_stages=False)
# the same with its totals stored by a round of their own and read the round after
# (Options.inline_totals): three rounds an iteration instead of two
pagerank_stored_totals = _sparklog("pagerank", lambda engine, edges: _programs().pagerank(
    edges, PAGERANK_ITERATIONS, DAMPING, engine), inline_totals=False)
# the same with every contribution to a share stored, not each round's sum per node
# (Options.presum, ir/presum.py)
pagerank_every_contribution = _sparklog("pagerank", lambda engine, edges: _programs().pagerank(
    edges, PAGERANK_ITERATIONS, DAMPING, engine), presum=False)


PEERS: dict[str, dict[str, PeerFn]] = {
    "cc": {"graphx": cc_graphx, "dataframe": cc_dataframe, "sparklog": cc_sparklog},
    "sssp": {"graphx": sssp_graphx, "dataframe": sssp_dataframe, "sparklog": sssp_sparklog},
    "bfs": {"graphx": bfs_graphx, "dataframe": bfs_dataframe, "sparklog": bfs_sparklog},
    "pagerank": {"graphx": pagerank_graphx, "dataframe": pagerank_dataframe,
                 "sparklog": pagerank_sparklog, "sparklog-all-stages": pagerank_all_stages,
                 "sparklog-stored-totals": pagerank_stored_totals,
                 "sparklog-every-contribution": pagerank_every_contribution},
}


# --------------------------------------------------------------------------------------
# networkx oracle (driver side, small graphs only; used by --check)
# --------------------------------------------------------------------------------------


def read_edges(path: Path) -> list[tuple[int, int, int | None]]:
    """The edge list of a TSV / .facts file in Python (for the oracle, not the peers)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                rows.append((int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) > 2 else None))
    return rows


def reference_summary(algo: str, rows: list[tuple[int, int, int | None]], source: int | None,
                      *, dangling: str = "spread") -> dict[str, Any]:
    """The summary :func:`summarize` should give, computed with networkx / plain Python.

    PageRank runs the same 20 iterations (not to convergence): ``dangling="spread"`` is
    networkx's formula (what the DataFrame peer computes), ``"drop"`` GraphX's (dangling mass
    lost each iteration, rescaled at the end).
    """
    import networkx as nx

    if algo == "cc":
        g = nx.Graph()
        g.add_edges_from((u, v) for u, v, _ in rows)
        comps = list(nx.connected_components(g))
        return {"nodes": g.number_of_nodes(), "components": len(comps),
                "label_sum": sum(min(c) * len(c) for c in comps)}
    if algo in ("sssp", "bfs"):
        g = nx.DiGraph()
        for u, v, w in rows:
            w = 1 if algo == "bfs" or w is None else w
            if not g.has_edge(u, v) or g[u][v]["weight"] > w:
                g.add_edge(u, v, weight=w)
        dist = (nx.single_source_dijkstra_path_length(g, source) if algo == "sssp"
                else nx.single_source_shortest_path_length(g, source))
        return {"reachable": len(dist), "dist_sum": sum(dist.values()), "dist_max": max(dist.values())}
    if algo == "pagerank":
        g = nx.DiGraph()
        g.add_edges_from((u, v) for u, v, _ in rows)
        nodes = list(g.nodes())
        n = len(nodes)
        out = {u: g.out_degree(u) for u in nodes}
        x = {u: (1.0 / n if dangling == "spread" else 1.0) for u in nodes}
        for _ in range(PAGERANK_ITERATIONS):
            nxt = dict.fromkeys(nodes, 0.0)
            for u, v in g.edges():
                nxt[v] += x[u] / out[u]
            if dangling == "spread":
                base = (DAMPING * sum(x[u] for u in nodes if out[u] == 0) + 1.0 - DAMPING) / n
            else:
                base = 1.0 - DAMPING
            x = {u: DAMPING * nxt[u] + base for u in nodes}
        total = sum(x.values())
        top = sorted(nodes, key=lambda u: (-x[u], u))[:5]
        return {"nodes": n, "rank_sum": round(total, 9) if dangling == "spread" else None,
                "top5": [[u, round(x[u] / total, 9)] for u in top]}
    raise ValueError(f"unknown algorithm {algo!r}")


def summaries_match(algo: str, got: dict[str, Any], want: dict[str, Any]) -> bool:
    """Exact for integers; PageRank: same top-5 ids, values within 1e-7, sums within 1e-6."""
    if algo != "pagerank":
        return got == want
    if [t[0] for t in got["top5"]] != [t[0] for t in want["top5"]] or got["nodes"] != want["nodes"]:
        return False
    if want["rank_sum"] is not None and abs(got["rank_sum"] - want["rank_sum"]) > 1e-6:
        return False
    return all(abs(a[1] - b[1]) <= 1e-7 for a, b in zip(got["top5"], want["top5"]))


# --------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------


def start_spark(shuffle_partitions: int = 4, jars: list[str] | None = None,
                code_cache: int = CODEGEN_CACHE_ENTRIES) -> SparkSession:
    """One local[2] session as benchmarks/runner.py starts it, plus ``spark.jars``."""
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("sparklog-graph-peers")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        # as sparklog starts its own sessions; every peer shares it (session.default_conf)
        .config("spark.sql.codegen.cache.maxEntries", str(code_cache))
    )
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def edge_file(path: Path) -> Path:
    """PATH itself, or PATH/edge.facts when PATH is a directory written by ``sparklog gen``."""
    if path.is_dir():
        candidate = path / "edge.facts"
        if not candidate.is_file():
            raise SystemExit(f"{path} is a directory without edge.facts")
        return candidate
    return path


def load_edges(spark: SparkSession, path: Path, partitions: int) -> DataFrame:
    """The edge file as ``(src, dst, w)`` in ``partitions`` partitions, materialized once.

    ``w`` is null on unweighted files (every peer then counts an edge as 1). Read and
    localCheckpointed before any clock starts, like runner.edges_dataframe.
    """
    df = spark.read.csv(str(path), sep="\t", schema="src long, dst long, w long")
    return df.repartition(partitions).localCheckpoint()


def default_source(edges: DataFrame) -> int:
    """The smallest id with an out-edge (the convention of ../shared/data/README.md)."""
    return int(edges.agg(F.min("src")).collect()[0][0])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.graph_peers",
                                description="Run the GraphX and DataFrame peers of one graph algorithm.")
    p.add_argument("--graph", required=True, type=Path,
                   help="TSV/.facts edge file (src dst [w]) or a directory with edge.facts")
    p.add_argument("--algo", required=True, choices=ALGOS)
    p.add_argument("--peers", default="sparklog,graphx,dataframe",
                   help="comma-separated subset of sparklog,graphx,dataframe")
    p.add_argument("--source", type=int, default=None,
                   help="sssp/bfs source (default: the smallest id with an out-edge)")
    p.add_argument("--repeat", type=int, default=1, help="runs per peer, interleaved (default 1)")
    p.add_argument("--shuffle-partitions", type=int, default=4,
                   help="session's spark.sql.shuffle.partitions (default 4, as benchmarks/runner.py)")
    p.add_argument("--check", action="store_true",
                   help="compare every summary with networkx computed in the driver (after the clock)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    names = [s.strip() for s in args.peers.split(",") if s.strip()]
    unknown = [s for s in names if s not in PEERS[args.algo]]
    if unknown:
        raise SystemExit(f"unknown peer(s) {unknown}; expected sparklog, graphx or dataframe")
    path = edge_file(args.graph)

    jars: list[str] = []
    why_no_graphx = None
    if "graphx" in names:
        try:
            jars.append(str(helper_jar()))  # compile before the session: not timed
        except GraphxUnavailable as exc:
            why_no_graphx = str(exc)
    spark = start_spark(args.shuffle_partitions, jars)
    try:
        edges = load_edges(spark, path, _expert_partitions(spark))
        source = args.source
        if args.algo in ("sssp", "bfs") and source is None:
            source = default_source(edges)
        want: dict[str, dict[str, Any]] = {}
        if args.check:
            rows = read_edges(path)
            want["dataframe"] = want["sparklog"] = reference_summary(args.algo, rows, source)
            want["graphx"] = (reference_summary(args.algo, rows, source, dangling="drop")
                              if args.algo == "pagerank" else want["dataframe"])
        status = 0
        for rep in range(args.repeat):
            order = names[rep % len(names):] + names[:rep % len(names)]  # as runner.rotated
            for peer in order:
                if peer == "graphx" and why_no_graphx:
                    result = PeerResult(skipped=f"GraphX peer skipped: {why_no_graphx}")
                else:
                    result = PEERS[args.algo][peer](spark, edges, source=source)
                line: dict[str, Any] = {"graph": str(args.graph), "algo": args.algo, "peer": peer,
                                        "run": rep + 1, "source": source, **result.as_dict()}
                if args.check and not result.skipped:
                    line["ok"] = summaries_match(args.algo, result.summary, want[peer])
                    if not line["ok"]:
                        line["expected"] = want[peer]
                        status = 1
                print(json.dumps(line), flush=True)
        return status
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
