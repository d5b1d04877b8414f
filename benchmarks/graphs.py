"""Graph algorithms side by side: sparklog, GraphX and hand-written DataFrame loops.

    python3 -m benchmarks.graphs                      # the README's table (all graphs, all algorithms)
    python3 -m benchmarks.graphs --graphs rmat:10 --repeat 1 --out /tmp/g   # a quick check
    python3 -m benchmarks.graphs --cold-repeat 3      # also sparklog's CLI, one process per run

For every graph and algorithm (cc, sssp, bfs, pagerank) it times the peers of
:mod:`benchmarks.graph_peers`: ``sparklog`` (the ``.dl`` programs of ``sparklog.programs``
through ``sparklog.Engine`` on the benchmark's session),
``graphx`` (GraphX's library / Pregel through the compiled Java helper) and ``dataframe``
(the best hand-written PySpark loop). What a peer's clock covers is described in
graph_peers.py: everything after the edge DataFrame exists, up to and including the one
aggregate that makes its summary.

Graphs: ``rmat:S`` is ``python3 -m sparklog gen rmat S 16 --weighted --seed 0`` (2^S nodes,
edge factor 16, weights 1..100), generated once into a cache folder; any other name is
``NAME.tsv`` of the shared data folder (``$SPARKLOG_SHARED/data``, else the nearest
``shared/data`` above the repository, as tests/conftest.py finds it), or a path. The source of
sssp and bfs is the smallest id with an out-edge (the data README's convention).

Warm mode (``--repeat N``, default 3): one local[2] session with the GraphX helper jar in
``spark.jars``. Per graph the edges are read and localCheckpointed once; per algorithm every
peer has one unmeasured warm-up run, then ``N`` measured runs, interleaved (run 1 of every
peer, then run 2, ...) with the order rotated each pass (runner.rotated), so that every peer
meets the same machine load and every position equally often. Every run's summary, the warm-up
runs' included, is compared after the clock with networkx's answer (graph_peers.
reference_summary), computed once per graph and algorithm; a mismatch or an error is marked in
the table, in the JSON and in the exit status.

Cold mode (``--cold-repeat N``, default 0: off): sparklog only, each run a fresh process
``python3 -m sparklog run PROGRAM.dl -F FACTS -D OUT --master local[2]``, timed by this process
from start to exit, the output files checked against the same oracle. The first cold run of an
invocation writes the class archive (src/sparklog/spark/archive.py) into a folder of the
benchmark's own; it is measured apart, as benchmarks/programs.py does. Cold runs start after
the warm session has stopped.

Spark SQL's ``WITH RECURSIVE`` is not a peer: its recursive term may not aggregate (so no
min-label cc, no min-distance sssp) and it only has UNION ALL, which does not terminate on a
cycle. Neither is run for real; three tiny probe queries on the session record Spark's own
error for each claim in the JSON.

Results: ``results/graphs.json`` (the machine, every run, the summaries, the oracle) and
``results/graphs.md``; ``results/graphs.log`` has the progress lines.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparklog.defaults import CODEGEN_CACHE_ENTRIES

from . import runner

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "results"
DEFAULT_GRAPHS = "rmat:14,rmat:16,rome99,p2p-Gnutella08"
ALGOS = ("cc", "sssp", "bfs", "pagerank")
PEER_ORDER = ("sparklog", "graphx", "dataframe", "sparklog-all-stages", "sparklog-stored-totals",
              "sparklog-every-contribution")
EDGE_FACTOR = 16
SEED = 0
OUTPUT_RELATION = {"cc": "cc", "sssp": "dist", "bfs": "hops",  # what each .dl program outputs
                   "pagerank": "pagerank"}
WITH_RECURSIVE_NOTE = ("Spark SQL WITH RECURSIVE rejects aggregates in the recursive term and "
                       "does not terminate on cycles")


def _loadavg() -> list[str]:
    try:
        return Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        return []


def _load1() -> float | None:
    la = _loadavg()
    return float(la[0]) if la else None


# --------------------------------------------------------------------------------------
# graphs
# --------------------------------------------------------------------------------------


def shared_dir() -> Path:
    """$SPARKLOG_SHARED, else the nearest ``shared/`` (with ``data/``) above the repository."""
    if os.environ.get("SPARKLOG_SHARED"):
        return Path(os.environ["SPARKLOG_SHARED"])
    for parent in ROOT.parents:
        if (parent / "shared" / "data").is_dir():
            return parent / "shared"
    return ROOT.parent / "shared"


@dataclass
class Graph:
    name: str  # as given: rmat:14, rome99, ...
    path: Path  # the edge file (TSV or edge.facts): src dst [w]
    origin: str  # how it was made / where it comes from


def _gen_key() -> str:
    """A digest of sparklog's generator, so that a changed generator regenerates the graph."""
    import sparklog

    gen = Path(sparklog.__file__).resolve().parent / "gen.py"
    return hashlib.sha256(gen.read_bytes()).hexdigest()[:12]


def resolve_graph(spec: str, cache: Path, log: Any) -> Graph:
    """The edge file of ``rmat:S`` (generated once into ``cache``) or of a shared graph."""
    if spec.startswith("rmat:"):
        scale = spec.split(":", 1)[1]
        if not scale.isdigit():
            raise SystemExit(f"bad graph {spec!r}: rmat:SCALE with an integer scale")
        argv = [sys.executable, "-m", "sparklog", "gen", "rmat", scale, str(EDGE_FACTOR),
                "--weighted", "--seed", str(SEED)]
        folder = cache / f"rmat-{scale}-ef{EDGE_FACTOR}-seed{SEED}-{_gen_key()}"
        edge = folder / "edge.facts"
        origin = " ".join(["python3", *argv[1:], "-o", "DIR"])
        if not edge.is_file():
            folder.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
                log(f"generating {spec}: {origin}")
                proc = subprocess.run([*argv, "-o", tmp], cwd=ROOT, capture_output=True, text=True)
                if proc.returncode != 0 or not (Path(tmp) / "edge.facts").is_file():
                    raise SystemExit(f"generating {spec} failed:\n{proc.stderr[-2000:]}")
                try:
                    os.replace(tmp, folder)  # atomic; a concurrent run may have won the race
                except OSError:
                    if not edge.is_file():
                        raise
                Path(tmp).mkdir(exist_ok=True)  # TemporaryDirectory wants to remove it
        return Graph(spec, edge, origin)
    candidate = Path(spec)
    if candidate.exists():
        from .graph_peers import edge_file

        return Graph(candidate.stem if candidate.is_file() else candidate.name,
                     edge_file(candidate), str(candidate))
    data = shared_dir() / "data"
    path = data / (spec if spec.endswith(".tsv") else f"{spec}.tsv")
    if not path.is_file():
        raise SystemExit(f"no graph {spec!r}: {path} does not exist (set SPARKLOG_SHARED?)")
    return Graph(spec.removesuffix(".tsv"), path, f"shared data {path.name}")


class Oracle:
    """networkx's summaries (graph_peers.reference_summary), computed once per graph and algo."""

    def __init__(self, graph: Graph, log: Any) -> None:
        from .graph_peers import read_edges

        self.graph, self.log = graph, log
        self.rows = read_edges(graph.path)
        self.source = min(u for u, _, _ in self.rows)  # graph_peers.default_source, in Python
        self.weighted = any(w is not None for _, _, w in self.rows[:1000])
        self.nodes = len({u for u, _, _ in self.rows} | {v for _, v, _ in self.rows})
        self._cache: dict[tuple[str, str], dict[str, Any]] = {}

    def source_for(self, algo: str) -> int | None:
        return self.source if algo in ("sssp", "bfs") else None

    def want(self, algo: str, peer: str) -> dict[str, Any]:
        """The summary ``peer`` must produce: GraphX's PageRank drops dangling mass."""
        from .graph_peers import reference_summary

        dangling = "drop" if algo == "pagerank" and peer == "graphx" else "spread"
        key = (algo, dangling)
        if key not in self._cache:
            t0 = time.perf_counter()
            self._cache[key] = reference_summary(algo, self.rows, self.source_for(algo),
                                                 dangling=dangling)
            self.log(f"oracle {self.graph.name} {algo}{'' if dangling == 'spread' else ' (' + dangling + ')'}: "
                     f"{json.dumps(self._cache[key])} ({time.perf_counter() - t0:.1f}s, networkx)")
        return self._cache[key]

    def all(self) -> dict[str, Any]:
        return {f"{a}{'' if d == 'spread' else ' (graphx: dangling ' + d + ')'}": s
                for (a, d), s in self._cache.items()}


# --------------------------------------------------------------------------------------
# Spark SQL WITH RECURSIVE: tiny probes, never the real workload
# --------------------------------------------------------------------------------------

_PROBES = {
    "aggregate in the recursive term (min-label cc / min-distance sssp)": """
        WITH RECURSIVE lab(n, l) AS (
          SELECT 1L, 1L
          UNION ALL
          SELECT e.dst, min(lab.l) FROM lab JOIN VALUES (1L, 2L) AS e(src, dst)
            ON lab.n = e.src GROUP BY e.dst)
        SELECT * FROM lab""",
    "UNION (with duplicate elimination) instead of UNION ALL": """
        WITH RECURSIVE r(n) AS (
          SELECT 1L
          UNION
          SELECT e.dst FROM r JOIN VALUES (1L, 2L), (2L, 1L) AS e(src, dst) ON r.n = e.src)
        SELECT * FROM r""",
    "UNION ALL over a 2-cycle (reachability), recursion capped at 8 levels": """
        WITH RECURSIVE r(n) MAX RECURSION LEVEL 8 AS (
          SELECT 1L
          UNION ALL
          SELECT e.dst FROM r JOIN VALUES (1L, 2L), (2L, 1L) AS e(src, dst) ON r.n = e.src)
        SELECT count(*) FROM r""",
}


def _error_class(exc: BaseException) -> str | None:
    for obj in (exc, getattr(exc, "java_exception", None)):
        for method in ("getCondition", "getErrorClass"):
            try:
                value = getattr(obj, method)()
                if value:
                    return str(value)
            except Exception:
                pass
    m = re.search(r"\[([A-Z][A-Z0-9_]+(?:\.[A-Z0-9_]+)*)\]", str(exc))
    return m.group(1) if m else None


def probe_with_recursive(spark: Any) -> dict[str, Any]:
    """Run each probe (tiny, constant inputs); record whether Spark accepted it and its error."""
    import logging

    out: dict[str, Any] = {"note": WITH_RECURSIVE_NOTE, "probes": {}}
    # pyspark logs every analysis error with its query context (a stack trace on stderr)
    quiet = logging.getLogger("SQLQueryContextLogger")
    was, quiet.disabled = quiet.disabled, True
    try:
        for what, query in _PROBES.items():
            out["probes"][what] = _probe(spark, query)
    finally:
        quiet.disabled = was
    agg = out["probes"][next(iter(_PROBES))]
    out["aggregate_rejected"] = not agg["accepted"]
    out["aggregate_error_class"] = agg.get("error_class")
    return out


def _probe(spark: Any, query: str) -> dict[str, Any]:
    """One tiny query: its rows, or Spark's error class and message."""
    t0 = time.perf_counter()
    try:
        rows = [list(r) for r in spark.sql(query).collect()]
        result = {"accepted": True, "rows": rows[:10]}
    except Exception as exc:
        java = getattr(exc, "java_exception", None)
        message = str(java.toString()) if java is not None else str(exc)
        result = {"accepted": False, "error_class": _error_class(exc),
                  "exception": type(exc).__name__ if java is None else str(java.getClass().getName()),
                  "message": message.splitlines()[0][:400]}
    result["seconds"] = round(time.perf_counter() - t0, 3)
    return result | {"query": " ".join(query.split())}


# --------------------------------------------------------------------------------------
# warm mode: one session
# --------------------------------------------------------------------------------------


def warm_run(spark: Any, fn: Any, edges: Any, algo: str, source: int | None,
             want: dict[str, Any]) -> dict[str, Any]:
    """One peer run, its summary checked against ``want`` after the clock."""
    from .graph_peers import summaries_match

    gc.collect()
    load = _load1()
    try:
        result = fn(spark, edges, source=source)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}".splitlines()[0][:500],
                "traceback": traceback.format_exc()[-4000:], "ok": False, "load": load}
    if result.skipped:
        return {"skipped": result.skipped, "ok": None, "load": load}
    run = {**result.as_dict(), "ok": summaries_match(algo, result.summary, want), "load": load}
    if not run["ok"]:
        run["expected"] = want
    return run


def run_warm(args: argparse.Namespace, graphs: list[Graph], algos: list[str], peers: list[str],
             oracles: dict[str, Oracle], report: dict[str, Any], out_dir: Path, log: Any) -> None:
    from . import graph_peers as gp
    from .peers import _expert_partitions

    jars: list[str] = []
    if "graphx" in peers:
        try:
            jars.append(str(gp.helper_jar()))  # compiled before the session, never timed
        except gp.GraphxUnavailable as exc:
            report["skipped"]["graphx"] = f"GraphX peer skipped: {exc}"
            log(f"!! SKIPPING graphx: {exc}")
    spark = gp.start_spark(args.shuffle_partitions, jars, args.code_cache)
    try:
        report["machine"] = runner.machine_facts(spark) | {"note": report["machine"]["note"]}
        report["machine"]["driver_memory"] = spark.sparkContext.getConf().get("spark.driver.memory", "1g")
        log(f"machine: {json.dumps(report['machine'])}")
        report["with_recursive"] = probe_with_recursive(spark)
        for what, r in report["with_recursive"]["probes"].items():
            log(f"WITH RECURSIVE probe, {what}: "
                f"{'accepted' if r['accepted'] else 'rejected, ' + str(r['error_class'])}")
        P = _expert_partitions(spark)
        for graph in graphs:
            oracle = oracles.setdefault(graph.name, Oracle(graph, log))
            edges = gp.load_edges(spark, graph.path, P)
            source = gp.default_source(edges)
            if source != oracle.source:
                raise SystemExit(f"{graph.name}: Spark's source {source} != Python's {oracle.source}")
            report["graphs"][graph.name] = graph_facts(graph, oracle)
            log(f"graph {graph.name}: {report['graphs'][graph.name]}")
            for algo in algos:
                mine = []
                for peer in peers:
                    if peer not in gp.PEERS[algo]:
                        report["skipped"][f"{peer} {algo}"] = (
                            f"graph_peers has no {peer} peer for {algo}")
                    elif peer == "graphx" and "graphx" in report["skipped"]:
                        continue
                    else:
                        mine.append(peer)
                wants = {p: oracle.want(algo, p) for p in mine}
                src = oracle.source_for(algo)
                for rep in range(-1, args.repeat):  # -1: the unmeasured warm-up pass
                    for peer in mine if rep < 0 else runner.rotated(mine, rep):
                        r = warm_run(spark, gp.PEERS[algo][peer], edges, algo, src, wants[peer])
                        r = {"graph": graph.name, "algo": algo, "peer": peer, "run": rep + 1,
                             "warmup": rep < 0, "source": src, **r}
                        report["runs"].append(r)
                        log(_run_line(r, args.repeat))
                report["summary"]["warm"].setdefault(graph.name, {})[algo] = {
                    p: summarize_runs([r for r in report["runs"] if r["graph"] == graph.name
                                       and r["algo"] == algo and r["peer"] == p])
                    for p in mine}
                report["oracle"][graph.name] = oracle.all()
                _write(out_dir, report)  # partial results survive an interrupted run
            edges.unpersist()
    finally:
        report["machine"]["loadavg_end"] = _loadavg()
        spark.stop()


def _run_line(r: dict[str, Any], repeat: int) -> str:
    which = "warm-up" if r["warmup"] else f"run {r['run']}/{repeat}"
    head = f"{r['graph']:14} {r['algo']:8} {r['peer']:9} {which}:"
    if "error" in r:
        return f"{head} !!! ERROR {r['error']}"
    if "skipped" in r:
        return f"{head} skipped: {r['skipped']}"
    flag = "ok" if r["ok"] else f"!!! MISMATCH: got {r['summary']}, expected {r['expected']} !!!"
    return (f"{head} {r['seconds']:8.2f}s rounds={r['rounds']} jobs={r['spark_jobs']} "
            f"load={r['load']} {flag}")


def graph_facts(graph: Graph, oracle: Oracle) -> dict[str, Any]:
    return {"path": str(graph.path), "origin": graph.origin, "nodes": oracle.nodes,
            "edges": len(oracle.rows), "weighted": oracle.weighted, "source": oracle.source}


# --------------------------------------------------------------------------------------
# cold mode: sparklog's CLI, one process per run
# --------------------------------------------------------------------------------------


def _program_path(algo: str) -> Path:
    out = subprocess.run([sys.executable, "-m", "sparklog.programs", algo], cwd=ROOT,
                         capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        raise SystemExit(f"python3 -m sparklog.programs {algo} failed: {out.stderr[-500:]}")
    return Path(out.stdout.strip())


def _facts_dir(graph: Graph, oracle: Oracle, tmp: Path) -> Path:
    """``edge.facts`` with three columns (weight 1 where the graph has none; cc and bfs read
    only the first two: columns past a relation's arity are ignored), ``source.facts``, and
    pagerank's ``iterations.facts`` and ``damping.facts``."""
    folder = tmp / f"facts-{re.sub(r'[^A-Za-z0-9_.-]', '_', graph.name)}"
    folder.mkdir()
    edge = folder / "edge.facts"
    if oracle.weighted and all(w is not None for _, _, w in oracle.rows):
        edge.symlink_to(graph.path.resolve())
    else:
        with open(edge, "w", encoding="utf-8") as f:
            f.writelines(f"{u}\t{v}\t{1 if w is None else w}\n" for u, v, w in oracle.rows)
    (folder / "source.facts").write_text(f"{oracle.source}\n")
    from .graph_peers import DAMPING, PAGERANK_ITERATIONS

    (folder / "iterations.facts").write_text(f"{PAGERANK_ITERATIONS}\n")  # pagerank.dl's
    (folder / "damping.facts").write_text(f"{DAMPING}\n")
    return folder


def output_summary(algo: str, path: Path) -> dict[str, Any] | None:
    """graph_peers.summarize's summary, from the ``(node, value)`` lines a CLI run wrote."""
    if not path.is_file():
        return None
    if algo == "pagerank":
        ranks = [(int(a), float(b)) for a, b in (line.split("\t")[:2]
                                                 for line in path.read_text().splitlines() if line)]
        total = sum(r for _, r in ranks) or 1.0
        top = sorted(ranks, key=lambda p: (-p[1], p[0]))[:5]
        return {"nodes": len(ranks), "rank_sum": round(total, 9),
                "top5": [[i, round(r / total, 9)] for i, r in top]}
    pairs = [tuple(int(x) for x in line.split("\t")[:2])
             for line in path.read_text().splitlines() if line]
    if algo == "cc":
        return {"nodes": len(pairs), "components": sum(1 for n, l in pairs if n == l),
                "label_sum": sum(l for _, l in pairs)}
    return {"reachable": len(pairs), "dist_sum": sum(d for _, d in pairs),
            "dist_max": max((d for _, d in pairs), default=None)}


def run_cold(args: argparse.Namespace, graphs: list[Graph], algos: list[str],
             oracles: dict[str, Oracle], report: dict[str, Any], out_dir: Path, log: Any) -> None:
    from .graph_peers import summaries_match

    algos = [a for a in algos if a in OUTPUT_RELATION]
    if not algos:
        return
    programs = {a: _program_path(a) for a in algos}
    report["config"]["cold_programs"] = {a: str(p) for a, p in programs.items()}
    with tempfile.TemporaryDirectory(prefix="sparklog-graphs-cold-") as tmp_name:
        tmp = Path(tmp_name)
        env = dict(os.environ, SPARKLOG_CACHE_DIR=str(tmp / "cache"))
        first = True
        for graph in graphs:
            oracle = oracles.get(graph.name) or oracles.setdefault(graph.name, Oracle(graph, log))
            report["graphs"].setdefault(graph.name, graph_facts(graph, oracle))
            facts = _facts_dir(graph, oracle, tmp)
            for algo in algos:
                want = oracle.want(algo, "sparklog")
                runs = []
                for rep in range(-1 if first else 0, args.cold_repeat):
                    out = Path(tempfile.mkdtemp(dir=tmp))
                    argv = [sys.executable, "-m", "sparklog", "run", str(programs[algo]), "-F",
                            str(facts), "-D", str(out), "--master", "local[2]", "--quiet",
                            "--conf", f"spark.driver.memory={args.driver_memory}",
                            "--conf", f"spark.sql.codegen.cache.maxEntries={args.code_cache}"]
                    load = _load1()
                    t0 = time.perf_counter()
                    try:
                        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True,
                                              text=True, timeout=args.cold_timeout)
                        code, err = proc.returncode, proc.stderr
                    except subprocess.TimeoutExpired as exc:
                        code, err = None, f"timed out after {args.cold_timeout}s: {exc.stderr}"
                    wall = time.perf_counter() - t0
                    got = output_summary(algo, out / f"{OUTPUT_RELATION[algo]}.csv") if code == 0 else None
                    ok = got is not None and summaries_match(algo, got, want)
                    r = {"graph": graph.name, "algo": algo, "peer": "sparklog-cli",
                         "run": rep + 1, "first_run": rep < 0, "seconds": round(wall, 3),
                         "exit": code, "summary": got, "ok": ok, "load": load}
                    if not ok:
                        r |= {"expected": want, "stderr": (err or "")[-2000:]}
                    report["cold_runs"].append(r)
                    runs.append(r)
                    first = False
                    log(f"cold {graph.name:14} {algo:8} "
                        f"{'first run (writes the class archive)' if rep < 0 else f'run {rep + 1}/{args.cold_repeat}'}: "
                        f"{wall:8.2f}s load={load} "
                        f"{'ok' if ok else f'!!! FAILED/WRONG: exit {code}, got {got}, expected {want} !!!'}")
                report["summary"]["cold"].setdefault(graph.name, {})[algo] = {
                    "sparklog-cli": summarize_runs([r for r in runs if not r["first_run"]]),
                    **({"sparklog-cli, first run (writes the class archive)":
                        summarize_runs([r for r in runs if r["first_run"]])}
                       if any(r["first_run"] for r in runs) else {})}
                _write(out_dir, report)


# --------------------------------------------------------------------------------------
# summaries
# --------------------------------------------------------------------------------------


def _median(values: list[float | None], digits: int = 3) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), digits) if values else None


def summarize_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the measured runs that finished; ``ok`` over every run, warm-up included."""
    measured = [r for r in runs if not r.get("warmup") and "skipped" not in r]
    timed = [r for r in measured if r.get("seconds") is not None]
    checked = [r for r in runs if "skipped" not in r]
    seconds = [r["seconds"] for r in timed]
    return {
        "median_seconds": _median(seconds),
        "min_seconds": min(seconds) if seconds else None,
        "max_seconds": max(seconds) if seconds else None,
        "runs": len(measured),
        "median_rounds": _median([r.get("rounds") for r in timed], 1),
        "median_spark_jobs": _median([r.get("spark_jobs") for r in timed], 1),
        "median_load": _median([r.get("load") for r in measured], 2),
        "wrong_runs": sum(1 for r in checked if "error" not in r and not r["ok"]),
        "error_runs": sum(1 for r in checked if "error" in r),
        "checked_runs": len(checked),
        "ok": bool(checked) and all(r["ok"] for r in checked),
    }


def paired_ratios(report: dict[str, Any]) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """Per graph and algorithm: sparklog's seconds over a peer's, run by run.

    The i-th measured runs of all peers ran in the same pass, so they met about the same load;
    the spread of these ratios is the honest error bar of the ratio of medians.
    """
    out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    measured = [r for r in report["runs"] if not r["warmup"] and r.get("seconds")]
    for graph, by_algo in report["summary"]["warm"].items():
        for algo, by_peer in by_algo.items():
            if "sparklog" not in by_peer:
                continue
            mine = {r["run"]: r["seconds"] for r in measured
                    if (r["graph"], r["algo"], r["peer"]) == (graph, algo, "sparklog")}
            for other in ("graphx", "dataframe"):
                if other not in by_peer:
                    continue
                theirs = {r["run"]: r["seconds"] for r in measured
                          if (r["graph"], r["algo"], r["peer"]) == (graph, algo, other)}
                ratios = [mine[i] / theirs[i] for i in sorted(mine) if i in theirs]
                a, b = by_peer["sparklog"]["median_seconds"], by_peer[other]["median_seconds"]
                out.setdefault(graph, {}).setdefault(algo, {})[other] = {
                    "ratio_of_medians": round(a / b, 3) if a and b else None,
                    "run_by_run": [round(x, 3) for x in ratios],
                    "median": round(statistics.median(ratios), 3) if ratios else None,
                    "min": round(min(ratios), 3) if ratios else None,
                    "max": round(max(ratios), 3) if ratios else None,
                    "sparklog_faster": sum(x < 1 for x in ratios),
                }
    return out


def mismatches(report: dict[str, Any]) -> list[str]:
    bad = []
    for mode in ("warm", "cold"):
        for graph, by_algo in report["summary"][mode].items():
            for algo, by_peer in by_algo.items():
                for peer, s in by_peer.items():
                    if not s["ok"]:
                        bad.append(f"{peer} {algo} on {graph} ({mode}: {s['wrong_runs']} wrong, "
                                   f"{s['error_runs']} failed of {s['checked_runs']} runs)")
    return bad


# --------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------


def _f(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _x(a: float | None, b: float | None) -> str:
    return "—" if a is None or not b else f"{a / b:.2f}×"


def _ok(s: dict[str, Any]) -> str:
    if s["ok"]:
        return "yes"
    if not s["checked_runs"]:
        return "**NO: no run**"
    parts = [f"{n} {what}" for n, what in ((s["wrong_runs"], "wrong"), (s["error_runs"], "failed")) if n]
    return f"**NO: {', '.join(parts)} of {s['checked_runs']} runs**"


def _peer_key(peer: str) -> int:
    return PEER_ORDER.index(peer) if peer in PEER_ORDER else len(PEER_ORDER)


def markdown(report: dict[str, Any]) -> str:
    m, cfg = report["machine"], report["config"]
    lines = [
        "# sparklog benchmarks: graph algorithms, side by side with GraphX and DataFrame loops", "",
        f"{m.get('date', '?')} · {m.get('nproc', '?')} cores ({m.get('cpu_model', '?')}) · "
        f"{m.get('memory_gib', '?')} GiB · Python {m.get('python', '?')} · PySpark "
        f"{m.get('pyspark', '?')} · Java {m.get('java', '?')} · {m.get('spark_master', 'local[2]')}, "
        f"{m.get('shuffle_partitions', '?')} shuffle partitions, driver memory "
        f"{m.get('driver_memory', cfg.get('driver_memory'))}, "
        f"{cfg.get('code_cache', 100):,} compiled classes kept · load average (1/5/15 min) at start "
        f"{' '.join(m.get('loadavg_start') or ['?'])}, at end {' '.join(m.get('loadavg_end') or ['?'])}.",
        "",
        "**A shared, noisy 2-core machine** (other work runs on it at the same time; the load "
        "column is the median 1-minute load average when the runs started): compare medians and "
        "ratios within one table, never single runs or absolute seconds across days.", "",
        "Peers (benchmarks/graph_peers.py): **sparklog** = the `.dl` programs of "
        "`sparklog.programs` run by `sparklog.Engine` on the benchmark's session; **graphx** = "
        "GraphX's `ConnectedComponents`, a Pregel SSSP, `ShortestPaths` on the reversed graph and "
        "`PageRank.run` through a compiled Java helper; **dataframe** = hand-written semi-naive "
        "PySpark loops (one Exchange and one job per round). A run's clock starts once the edge "
        "DataFrame is in Spark (read and localCheckpointed once per graph) and ends with the one "
        "aggregate that makes the run's summary. sssp/bfs start at the smallest id with an "
        "out-edge; pagerank is 20 iterations, damping 0.85.", "",
    ]
    if report["graphs"]:
        lines += ["| graph | nodes | edges | weighted | source | origin |",
                  "| --- | ---: | ---: | --- | ---: | --- |"]
        for name, g in report["graphs"].items():
            lines.append(f"| {name} | {g['nodes']:,} | {g['edges']:,} | "
                         f"{'yes' if g['weighted'] else 'no (w = 1)'} | {g['source']} | "
                         f"{g['origin']} |")
        lines.append("")
    warm = report["summary"]["warm"]
    if warm:
        lines += [
            "## Warm: one local[2] session", "",
            f"Per graph and algorithm: one unmeasured warm-up run of every peer, then "
            f"{cfg['repeat']} measured runs each, interleaved and rotated (each pass starts with "
            "the next peer). ok = every run's summary (warm-up included) equals networkx's. "
            "× graphx (× dataframe) = the row's median seconds over graphx's (dataframe's) "
            "median on the same graph and algorithm; above 1× is slower.", "",
            "| graph | algorithm | peer | median s | min–max s | runs | rounds | jobs/run | load "
            "| × graphx | × dataframe | ok |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for graph, by_algo in warm.items():
            for algo, by_peer in by_algo.items():
                gx = (by_peer.get("graphx") or {}).get("median_seconds")
                df = (by_peer.get("dataframe") or {}).get("median_seconds")
                for peer in sorted(by_peer, key=_peer_key):
                    s = by_peer[peer]
                    lines.append(
                        f"| {graph} | {algo} | {peer} | {_f(s['median_seconds'])} | "
                        f"{_f(s['min_seconds'])}–{_f(s['max_seconds'])} | {s['runs']} | "
                        f"{_f(s['median_rounds'], 0)} | {_f(s['median_spark_jobs'], 0)} | "
                        f"{_f(s['median_load'], 1)} | {_x(s['median_seconds'], gx)} | "
                        f"{_x(s['median_seconds'], df)} | {_ok(s)} |")
        paired = report.get("paired") or {}
        if paired:
            lines += [
                "", "### sparklog ÷ peer", "",
                "Medians = sparklog's median seconds over the peer's; run by run = sparklog's "
                "i-th measured run over the peer's i-th (same pass, about the same load): their "
                "median, range, and in how many passes sparklog was faster.", "",
                "| graph | algorithm | ÷ graphx (medians) | ÷ graphx, run by run | "
                "÷ dataframe (medians) | ÷ dataframe, run by run |",
                "| --- | --- | ---: | --- | ---: | --- |",
            ]

            def cells(p: dict[str, Any] | None) -> str:
                if not p or p["median"] is None:
                    return "— | —"
                return (f"{_f(p['ratio_of_medians'])}× | {p['median']:.2f}× "
                        f"({p['min']:.2f}–{p['max']:.2f}×, faster in {p['sparklog_faster']} of "
                        f"{len(p['run_by_run'])})")

            for graph, by_algo in paired.items():
                for algo, by_peer in by_algo.items():
                    lines.append(f"| {graph} | {algo} | {cells(by_peer.get('graphx'))} | "
                                 f"{cells(by_peer.get('dataframe'))} |")
    cold = report["summary"]["cold"]
    if cold:
        lines += [
            "", "## Cold: sparklog's command line, one process per run", "",
            "`python3 -m sparklog run $(python3 -m sparklog.programs ALGO) -F FACTS -D OUT "
            "--master local[2]`, timed by the parent from start to exit (JVM start, reading the "
            "facts, evaluation, writing the output); the output files are checked against "
            "networkx. The invocation's first run writes the class archive that later runs map "
            "and is shown apart. × warm = the cold median over the warm sparklog median.", "",
            "| graph | algorithm | system | median s | min–max s | runs | load | × warm | ok |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for graph, by_algo in cold.items():
            for algo, by_peer in by_algo.items():
                w = ((warm.get(graph) or {}).get(algo) or {}).get("sparklog") or {}
                for peer, s in by_peer.items():
                    lines.append(
                        f"| {graph} | {algo} | {peer} | {_f(s['median_seconds'])} | "
                        f"{_f(s['min_seconds'])}–{_f(s['max_seconds'])} | {s['runs'] or 1} | "
                        f"{_f(s['median_load'], 1)} | "
                        f"{_x(s['median_seconds'], w.get('median_seconds'))} | {_ok(s)} |")
    wr = report.get("with_recursive")
    lines += ["", "## Spark SQL `WITH RECURSIVE`", "",
              f"Not measured: {WITH_RECURSIVE_NOTE}. Its recursive term cannot take the minimum "
              "label or distance (cc, sssp, bfs as min-propagation), and with UNION ALL only "
              "(no duplicate elimination) it revisits a cycle until its recursion limit."]
    if wr:
        lines += ["", "Tiny probe queries on the benchmark's session (constant inputs, "
                  "in the JSON with their text):", "",
                  "| probe | Spark's answer |", "| --- | --- |"]
        for what, r in wr["probes"].items():
            answer = (f"accepted ({r['rows']})" if r["accepted"]
                      else f"`{r['error_class']}`: {r['message'][:160].replace('|', '/')}")
            lines.append(f"| {what} | {answer} |")
    if report["oracle"]:
        lines += ["", "## The oracle", "",
                  "networkx's summary per graph and algorithm (graph_peers.reference_summary), "
                  "which every run's must equal (pagerank: the same top-5 ids, ranks within 1e-7).",
                  "", "| graph | algorithm | summary |", "| --- | --- | --- |"]
        for graph, by_algo in report["oracle"].items():
            for algo, s in by_algo.items():
                lines.append(f"| {graph} | {algo} | `{json.dumps(s)}` |")
    if report["skipped"]:
        lines += ["", "Skipped: " + "; ".join(f"{k}: {v}" for k, v in report["skipped"].items()) + "."]
    for note in report.get("notes", []):
        lines += ["", f"Note: {note}"]
    if report.get("mismatches"):
        lines += ["", "**WRONG OR FAILED RESULTS: " + "; ".join(report["mismatches"]) + "**"]
    lines.append("")
    return "\n".join(lines)


def _write(out_dir: Path, report: dict[str, Any]) -> None:
    report["paired"] = paired_ratios(report)
    report["mismatches"] = mismatches(report)
    (out_dir / "graphs.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (out_dir / "graphs.md").write_text(markdown(report), encoding="utf-8")


# --------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------


def _list(text: str, allowed: tuple[str, ...] | None, what: str) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    if allowed is not None:
        bad = [s for s in items if s not in allowed]
        if bad:
            raise SystemExit(f"unknown {what} {bad}; expected some of {', '.join(allowed)}")
    return items


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.graphs", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", default=DEFAULT_GRAPHS,
                   help=f"comma-separated rmat:SCALE, shared graph names or paths (default {DEFAULT_GRAPHS})")
    p.add_argument("--algos", default=",".join(ALGOS), help="comma-separated subset of cc,sssp,bfs,pagerank")
    p.add_argument("--peers", default=",".join(PEER_ORDER[:3]),
                   help="comma-separated subset of sparklog,graphx,dataframe (the default) and "
                   "sparklog-all-stages (PageRank with --no-retire-stages), "
                   "sparklog-stored-totals (--no-inline-totals), sparklog-every-contribution "
                   "(--no-presum)")
    p.add_argument("--repeat", type=int, default=3,
                   help="measured warm runs per peer after one warm-up (default 3; 0: no warm mode)")
    p.add_argument("--cold-repeat", type=int, default=0,
                   help="cold runs of sparklog's CLI per graph and algorithm (default 0: off)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="output folder (default benchmarks/results)")
    p.add_argument("--shuffle-partitions", type=int, default=4,
                   help="the session's spark.sql.shuffle.partitions (default 4, as benchmarks/runner.py)")
    p.add_argument("--driver-memory", default="2g",
                   help="spark.driver.memory of the warm session and of every cold run (default 2g)")
    p.add_argument("--code-cache", type=int, default=CODEGEN_CACHE_ENTRIES,
                   help="spark.sql.codegen.cache.maxEntries of the warm session and of every "
                   f"cold run (default {CODEGEN_CACHE_ENTRIES}, as sparklog's own sessions; "
                   "Spark's is 100)")
    p.add_argument("--cold-timeout", type=float, default=3600, help="seconds before a cold run is killed")
    p.add_argument("--cache", type=Path, default=None,
                   help="where generated rmat graphs are kept (default ~/.cache/sparklog-benchmarks/graphs)")
    p.add_argument("--render", metavar="JSON", help="only rewrite graphs.md beside JSON from it; run nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.render:
        src = Path(args.render)
        report = json.loads(src.read_text(encoding="utf-8"))
        (src.parent / "graphs.md").write_text(markdown(report), encoding="utf-8")
        print(markdown(report))
        return 0
    if args.repeat < 0 or args.cold_repeat < 0:
        raise SystemExit("--repeat and --cold-repeat must be >= 0")
    if args.repeat == 0 and args.cold_repeat == 0:
        raise SystemExit("nothing to run: --repeat 0 and --cold-repeat 0")
    algos = _list(args.algos, ALGOS, "algorithm(s)")
    peers = _list(args.peers, PEER_ORDER, "peer(s)")
    specs = _list(args.graphs, None, "graph(s)")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    log_file = open(out_dir / "graphs.log", "w", encoding="utf-8")

    def log(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    # the warm session's JVM is launched by pyspark with these spark-submit arguments
    # (graph_peers.start_spark takes no other settings); an explicit caller's setting wins
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", f"--driver-memory {args.driver_memory} pyspark-shell")
    from .graph_peers import CACHE_DIR

    cache = args.cache or CACHE_DIR / "graphs"
    graphs = [resolve_graph(s, cache, log) for s in specs]
    static = runner.machine_facts_static()
    report: dict[str, Any] = {
        "machine": static | {
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "loadavg_start": _loadavg(), "driver_memory": args.driver_memory,
            "note": "shared, noisy 2-core machine: compare medians and ratios only"},
        "config": {"graphs": specs, "algos": algos, "peers": peers, "repeat": args.repeat,
                   "warmup_runs": 1 if args.repeat else 0, "cold_repeat": args.cold_repeat,
                   "shuffle_partitions": args.shuffle_partitions,
                   "driver_memory": args.driver_memory, "code_cache": args.code_cache,
                   "rmat": {"edge_factor": EDGE_FACTOR, "seed": SEED, "weighted": True},
                   "timing": "warm: the peer's whole run after the edge DataFrame exists, up to "
                             "and including its summary aggregate (graph_peers); cold: the CLI "
                             "process from start to exit; the networkx check after the clock",
                   "argv": sys.argv[1:] if argv is None else argv},
        "graphs": {}, "with_recursive": None, "skipped": {}, "oracle": {},
        "runs": [], "cold_runs": [], "summary": {"warm": {}, "cold": {}}, "notes": [],
    }
    log(f"graphs: {', '.join(f'{g.name} ({g.path})' for g in graphs)}; algorithms: "
        f"{', '.join(algos)}; peers: {', '.join(peers)}; repeat {args.repeat}, cold repeat "
        f"{args.cold_repeat}")
    oracles: dict[str, Oracle] = {}
    if args.repeat:
        run_warm(args, graphs, algos, peers, oracles, report, out_dir, log)
    if args.cold_repeat:
        if "sparklog" not in peers:
            report["notes"].append("cold mode measures sparklog only, which --peers left out")
        else:
            run_cold(args, graphs, algos, oracles, report, out_dir, log)
            for g in graphs:
                report["oracle"][g.name] = oracles[g.name].all()
    report["machine"]["loadavg_end"] = _loadavg()
    _write(out_dir, report)
    log(f"wrote {out_dir / 'graphs.json'} and {out_dir / 'graphs.md'}")
    print()
    print(markdown(report))
    if report["mismatches"]:
        log("!!! WRONG OR FAILED RESULTS: " + "; ".join(report["mismatches"]) + " !!!")
    log_file.close()
    return 1 if report["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
