"""Transitive-closure strategies (Afrati & Ullman §2) on one nonlinear TC program, with
the best hand-written PySpark loop and DuckDB's recursive CTE beside them.

    python3 -m benchmarks.closure [--workloads chain:200,chain:1000,tree-down:12,paired:8,email]
        [--strategies auto,asis,smart,balance,thirds,left] [--repeat 3] [--partitions 2]
        [--timeout 600] [--no-expert] [--no-duckdb] [--name closure] [--out benchmarks/results]

The program is ``PROGRAM`` below (``tc(x, y) :- tc(x, z), tc(z, y).``); every strategy
rewrites it (rewrite/closure.py): ``asis`` evaluates it as written (nonlinear semi-naive),
``left``/``right``/``linear`` as a linear closure, ``smart``/``balance``/``thirds`` keep each
path's shortest length in ``tc@len`` and join only the decompositions their length
partition allows, ``auto`` picks one of those (the table says which). ``smart-no-end`` is
Smart run until a round derives nothing (``smart_end=False``; the default stops after the
round that found no power-of-two length, ir/smart.py).

Workloads: ``chain:N`` (0 -> 1 -> ... -> N), ``tree-down:D`` and ``tree-up:D`` (complete
binary tree of D levels, parent -> child and child -> parent; ``sparklog.gen.tree``),
``paired:H`` (Fig. 2: two binary trees of height H sharing their leaves, arcs rightward;
``sparklog.gen.paired_trees``), ``ladder-smart:R:M`` and ``ladder-balance:N:M`` (Example
2.4's ladders, the worst for Smart and for Balance: 2^R - 1 rungs, those 2^R - 2^s of M
nodes, the others of one; N rungs, those 0, 3, 6, ... of M nodes; each node -> every node
of the next rung; ``sparklog.gen.ladder_smart`` / ``ladder_balance``), ``email`` and
``greengenes`` (the TSV files of ../shared/data, first two columns). Every result is
checked against the exact closure size: N(N+1)/2 for a chain, the sum over the nodes of
their descendants, plus the node itself when it is on a cycle (networkx), for the trees
and ladders, the sizes of ../shared/data/README.md for the real graphs.

Each run is a process of its own (a fresh JVM, as ``sparklog run`` has) that evaluates the
program twice over the same input: the first evaluation is the cold time, the second the
warm one (session start and building the input DataFrame excluded). A run reports, for the
recursive relation (``tc@len`` when the strategy keeps lengths, else ``tc``): rounds (its
largest iteration, the last, empty one included where it runs: Smart skips it unless the
longest path is a power of two, ir/smart.py), derivations (its rounds' derivations,
the base rule's excluded) and peak stored rows (the largest ``full`` of its records, plus
the projection ``tc`` when the recursive relation is ``tc@len``).

``expert`` (peers.expert_loop: the best hand-written PySpark DataFrame loop for the linear
closure, one shuffle and one Spark job per round) runs in a process of its own too, in a
local[2] session started as sparklog's (``sparklog.Engine(...).spark``, so the session
settings match) with ``--partitions`` partitions; the loop is run twice over the same edge
DataFrame (``src``, ``dst``), cold then warm, each timed up to its result's count (the
size checked). Its rounds are the loop's iterations (the last, empty one included); it
reports no derivations or peak.

DuckDB (when importable; ``pip install -e '.[bench]'``) runs in a process of its own too:
the left-linear closure as a ``WITH RECURSIVE`` CTE with ``UNION`` (set semantics), the
same query as real_graphs.py's, over a table loaded before the clock starts; cold is the
first query in a fresh connection, warm the second.

Runs are interleaved over the systems (each pass rotates their order, runner.rotated), so
the shared machine's noise lands on all. A run that takes longer than ``--timeout``
seconds is killed (its whole process group) and recorded as a timeout; the later
repetitions of that (workload, system) are skipped. Writes results/NAME.json (every run,
the machine) and NAME.md (a table per workload: medians, and each strategy's cold median
over the best strategy's) after every run, so a long run leaves partial results. Exits 1
if any run failed or was wrong.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
PROGRAM = (".decl edge(x:number, y:number)\n.decl tc(x:number, y:number)\n"
           "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), tc(z, y).\n")
REAL = {  # name: (file, TC size from ../shared/data/README.md)
    "email": ("email-Eu-core.tsv", 793_283),
    "greengenes": ("greengenes-13_5-taxonomy.tsv", 16_764),
}
DUCKDB = "duckdb"
EXPERT = "expert"  # peers.expert_loop, the hand-written PySpark loop
DUCKDB_TC = ("WITH RECURSIVE tc(x, y) AS (SELECT x, y FROM edge UNION "
             "SELECT tc.x, edge.y FROM tc JOIN edge ON tc.y = edge.x) SELECT count(*) FROM tc")
LENGTH = "tc@len"


# --------------------------------------------------------------------------------------
# workloads
# --------------------------------------------------------------------------------------


def edges(spec: str) -> list[tuple[int, int]]:
    """The workload's edges, as (x, y) pairs."""
    from sparklog import gen

    from benchmarks.workloads import make

    kind, _, size = spec.partition(":")
    if spec in REAL:
        rows = (line.split("\t") for line in (DATA / REAL[spec][0]).read_text().splitlines())
        return [(int(r[0]), int(r[1])) for r in rows]
    if kind in ("chain", "tree-down", "tree-up"):  # workloads.make: gen.chain / gen.tree's
        return make(spec).edges
    if kind == "paired" and size.isdigit() and int(size) >= 1:
        return list(gen.paired_trees(int(size)))
    first, _, second = size.partition(":")
    if (kind in ("ladder-smart", "ladder-balance") and first.isdigit() and second.isdigit()
            and int(first) >= 1 and int(second) >= 1):
        ladder = gen.ladder_smart if kind == "ladder-smart" else gen.ladder_balance
        return list(ladder(int(first), int(second)))
    raise SystemExit(f"workload {spec!r}: expected chain:N, tree-down:D, tree-up:D, paired:H, "
                     f"ladder-smart:R:M, ladder-balance:N:M, {', '.join(REAL)}")


def expected_size(spec: str, pairs: list[tuple[int, int]]) -> int:
    """The exact size of the closure."""
    import networkx as nx

    from benchmarks.workloads import chain_tc_size, tree_tc_size

    kind, _, size = spec.partition(":")
    if spec in REAL:
        return REAL[spec][1]
    if kind == "chain":
        return chain_tc_size(int(size))
    graph = nx.DiGraph(pairs)
    cyclic = {v for c in nx.strongly_connected_components(graph) if len(c) > 1 for v in c}
    cyclic |= set(nx.nodes_with_selfloops(graph))  # (x, x) is in the closure for these
    count = sum(len(nx.descendants(graph, v)) for v in graph) + len(cyclic)
    if kind in ("tree-down", "tree-up"):
        assert count == tree_tc_size(int(size)), (count, tree_tc_size(int(size)))
    return count


# --------------------------------------------------------------------------------------
# one run: a process of its own
# --------------------------------------------------------------------------------------


# systems that are a strategy with a mechanism off, compared with the strategy itself
VARIANTS = {"smart-no-end": dict(strategy="smart", smart_end=False)}  # ir/smart.py


def one_sparklog(spec: str, partitions: int, strategy: str) -> dict[str, Any]:
    """The program evaluated twice with ``strategy``, cold then warm."""
    import sparklog

    pairs = edges(spec)
    options = VARIANTS.get(strategy, dict(strategy=strategy))
    engine = sparklog.Engine(master="local[2]", partitions=partitions, **options)
    inputs = {"edge": engine.spark.createDataFrame(pairs, "x long, y long")}
    program = sparklog.Program.from_text(PROGRAM)
    times, sizes = [], []
    for _ in range(2):
        started = time.perf_counter()
        result = engine.run(program, inputs=inputs)
        sizes.append(result.size("tc"))
        times.append(round(time.perf_counter() - started, 3))
    stats = result.stats
    relation = LENGTH if any(r["relation"] == LENGTH for r in stats) else "tc"
    mine = [r for r in stats if r["relation"] == relation]
    peak = max((r["full"] for r in mine), default=0)
    if relation == LENGTH:  # tc, its projection, is stored beside it
        peak += result.size("tc")
    chosen = [dict(strategy=c.strategy, why=c.why)
              for c in getattr(result, "strategies", None) or []]
    try:
        java = engine.spark.sparkContext._jvm.System.getProperty("java.version")
    except Exception:
        java = None
    return dict(cold_seconds=times[0], warm_seconds=times[1], sizes=sizes,
                relation=relation, rounds=max((r["iteration"] for r in mine), default=0),
                derivations=sum(r["derivations"] for r in mine if r["iteration"] > 0),
                peak_rows=peak,
                loop_seconds=round(sum(r["seconds"] for r in mine if r["iteration"] > 0), 3),
                spark_jobs=sum(r.get("spark_jobs") or 0 for r in stats),
                chosen=chosen, java=java)


def one_expert(spec: str, partitions: int) -> dict[str, Any]:
    """peers.expert_loop twice over the same edges, cold then warm."""
    import sparklog

    from benchmarks.peers import expert_loop

    pairs = edges(spec)
    # the session sparklog's runs start (same master, partitions and settings)
    spark = sparklog.Engine(master="local[2]", partitions=partitions).spark
    edges_df = spark.createDataFrame(pairs, "src long, dst long")
    times, sizes, iterations = [], [], []
    for _ in range(2):
        started = time.perf_counter()
        result_df, rounds = expert_loop(spark, edges_df, partitions=partitions)
        sizes.append(result_df.count())  # already checkpointed: counts the stored rows
        times.append(round(time.perf_counter() - started, 3))
        iterations.append(int(rounds))
    try:
        java = spark.sparkContext._jvm.System.getProperty("java.version")
    except Exception:
        java = None
    return dict(cold_seconds=times[0], warm_seconds=times[1], sizes=sizes,
                rounds=iterations[-1], iterations=iterations, java=java)


def one_duckdb(spec: str) -> dict[str, Any]:
    """DuckDB's recursive CTE, twice in one fresh connection: cold then warm."""
    import duckdb

    con = duckdb.connect()
    with tempfile.TemporaryDirectory() as tmp:
        if spec in REAL:
            path = DATA / REAL[spec][0]
        else:
            path = Path(tmp) / "edge.tsv"
            path.write_text("".join(f"{x}\t{y}\n" for x, y in edges(spec)))
        width = len(path.read_text().splitlines()[0].split("\t"))
        columns = ", ".join(f"'c{i}': 'BIGINT'" for i in range(width))
        con.execute(f"CREATE TABLE edge AS SELECT c0 AS x, c1 AS y FROM read_csv('{path}', "
                    f"delim='\t', header=false, columns={{{columns}}})")
    times, sizes = [], []
    for _ in range(2):
        started = time.perf_counter()
        sizes.append(con.execute(DUCKDB_TC).fetchone()[0])
        times.append(round(time.perf_counter() - started, 3))
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    con.close()
    return dict(cold_seconds=times[0], warm_seconds=times[1], sizes=sizes,
                duckdb_version=duckdb.__version__, duckdb_threads=threads)


def launch(spec: str, system: str, partitions: int, timeout: float) -> dict[str, Any]:
    """One run in a child process (its own session, so a timeout kills its JVM too)."""
    run: dict[str, Any] = dict(workload=spec, system=system, partitions=partitions)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.closure", "--one", spec, system,
                             "--partitions", str(partitions)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1], start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return dict(run, timeout=timeout)
    except BaseException:  # ^C: do not leave the child's JVM behind
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    run["process_seconds"] = round(time.perf_counter() - started, 2)
    if proc.returncode:
        return dict(run, error=(err.strip().splitlines() or [f"exit {proc.returncode}"])[-1])
    try:
        return dict(run, **json.loads(out.strip().splitlines()[-1]))
    except (IndexError, json.JSONDecodeError):
        return dict(run, error=f"no result on stdout: {out[-200:]!r}")


# --------------------------------------------------------------------------------------
# the benchmark
# --------------------------------------------------------------------------------------


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default="chain:200,chain:1000,tree-down:12,paired:8,email")
    p.add_argument("--strategies", default="auto,asis,smart,balance,thirds,left")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--partitions", type=int, default=2)
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds one run (a process: JVM start and two evaluations) may take")
    p.add_argument("--expert", action=argparse.BooleanOptionalAction, default=True,
                   help="also run peers.expert_loop, the hand-written PySpark loop")
    p.add_argument("--duckdb", action=argparse.BooleanOptionalAction, default=True,
                   help="also run DuckDB's recursive CTE (when it is importable)")
    p.add_argument("--name", default="closure")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--one", nargs=2, metavar=("WORKLOAD", "SYSTEM"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        spec, system = args.one
        if system == DUCKDB:
            run = one_duckdb(spec)
        elif system == EXPERT:
            run = one_expert(spec, args.partitions)
        else:
            run = one_sparklog(spec, args.partitions, system)
        print(json.dumps(run), flush=True)
        return 0

    import importlib.util

    from sparklog.options import STRATEGIES

    from benchmarks.runner import machine_facts_static, rotated

    strategies = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in strategies if s not in STRATEGIES and s not in VARIANTS]
    if unknown or not strategies:
        raise SystemExit(f"--strategies: {', '.join(unknown) or 'none given'}; expected some "
                         f"of {', '.join([*STRATEGIES, *VARIANTS])}")
    systems = list(dict.fromkeys(strategies))
    if args.expert:
        systems.append(EXPERT)
    notes = []
    if args.duckdb:
        if importlib.util.find_spec("duckdb"):
            systems.append(DUCKDB)
        else:
            notes.append("DuckDB is not installed here (pip install -e '.[bench]'), so it is "
                         "not measured.")
    workloads = {}
    for spec in dict.fromkeys(s for s in args.workloads.split(",") if s):
        pairs = edges(spec)
        workloads[spec] = dict(edges=len(pairs), nodes=len({v for e in pairs for v in e}),
                               expected=expected_size(spec, pairs))
        print(f"{spec}: {workloads[spec]}", flush=True)

    facts = dict(machine_facts_static(),
                 date=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                 loadavg_start=open("/proc/loadavg").read().split()[:3],
                 spark_master="local[2]", partitions=args.partitions, repeat=args.repeat,
                 timeout=args.timeout, strategies=strategies, systems=systems,
                 note="shared, noisy 2-core machine: compare medians and ratios only")
    runs: list[dict[str, Any]] = []
    args.out.mkdir(parents=True, exist_ok=True)

    def write() -> None:
        facts["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        for key in ("java", "duckdb_version", "duckdb_threads"):
            facts[key] = next((r[key] for r in runs if r.get(key)), facts.get(key))
        report = dict(machine=facts, program=PROGRAM, workloads=workloads, notes=notes,
                      runs=runs)
        (args.out / f"{args.name}.json").write_text(json.dumps(report, indent=1) + "\n")
        (args.out / f"{args.name}.md").write_text(markdown(report))

    for spec, workload in workloads.items():
        timed_out: set[str] = set()
        for repeat in range(args.repeat):
            for system in rotated(systems, repeat):
                if system in timed_out:
                    run = dict(workload=spec, system=system, partitions=args.partitions,
                               skipped="an earlier run timed out")
                else:
                    run = launch(spec, system, args.partitions, args.timeout)
                    if "timeout" in run:
                        timed_out.add(system)
                if "sizes" in run:
                    run["expected"] = workload["expected"]
                    run["ok"] = all(size == workload["expected"] for size in run["sizes"])
                runs.append(run)
                print(json.dumps({k: v for k, v in run.items() if k != "chosen"}), flush=True)
                write()
    bad = [f"{r['workload']} {r['system']}" for r in runs
           if "error" in r or r.get("ok") is False]
    if bad:
        print(f"!!! WRONG OR FAILED RUNS: {', '.join(bad)} !!!", flush=True)
    print(f"wrote {args.out / args.name}.json and .md", flush=True)
    return 1 if bad else 0


# --------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _s(value: float) -> str:
    """Two decimals, or three significant digits below 0.1 (DuckDB's seconds)."""
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3g}"


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over a system's good runs, and what went wrong in the others."""
    good = [r for r in runs if r.get("ok")]
    problems = []
    for r in runs:
        if "timeout" in r:
            problems.append(f"timeout (> {r['timeout']:g} s)")
        elif "skipped" in r:
            problems.append("skipped")
        elif "error" in r:
            problems.append(f"failed: {r['error']}")
        elif not r.get("ok"):
            problems.append(f"WRONG size {r['sizes']} (expected {r['expected']})")
    return dict(good=good, problems=problems,
                cold=_median([r["cold_seconds"] for r in good]),
                warm=_median([r["warm_seconds"] for r in good]),
                last=good[-1] if good else None)


def auto_choice(runs: list[dict[str, Any]]) -> str | None:
    """What ``auto`` chose on a workload: a length strategy when its runs stored tc@len."""
    done = [r for r in runs if r["system"] == "auto" and "relation" in r]
    if not done:
        return None
    kinds = {"length" if r["relation"] == LENGTH else "as written/linear" for r in done}
    text = " and ".join(sorted(kinds))
    named = {c["strategy"]: c["why"] for r in done for c in r.get("chosen", [])}
    if named:
        text += " (" + "; ".join(f"{s}: {why}" for s, why in named.items()) + ")"
    return text


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    has_duckdb = DUCKDB in m["systems"]
    lines = [
        "# Transitive-closure strategies (Afrati & Ullman §2)",
        "",
        f"{m['date']} · {m.get('cpu_model', '?')}, {m.get('nproc', '?')} cores, "
        f"{m.get('memory_gib', '?')} GiB · Python {m.get('python')}, PySpark "
        f"{m.get('pyspark')}, Java {m.get('java') or '?'}"
        + (f", DuckDB {m['duckdb_version']} ({m['duckdb_threads']} threads)"
           if m.get("duckdb_version") else "")
        + f" · `{m['spark_master']}`, {m['partitions']} partitions · load average "
        f"{' '.join(m['loadavg_start'])} at start, {' '.join(m.get('loadavg_end', []))} "
        "at end.",
        "",
        "Program: `tc(x, y) :- edge(x, y).  tc(x, y) :- tc(x, z), tc(z, y).`, rewritten by "
        f"each strategy. Medians of {m['repeat']} process{'es' * (m['repeat'] != 1)} per "
        "system, interleaved "
        "(cold: the first evaluation in a fresh JVM; warm: the second in the same process; "
        "session start excluded). Rounds, derivations and peak stored rows are those of "
        "the recursive relation (`tc@len` for the strategies that keep lengths, else `tc`; "
        "the peak adds `tc` itself when it is `tc@len`); rounds include the last, empty "
        "one where it runs (Smart skips it unless the longest path is a power of two). "
        "÷ best: cold median over the best strategy's cold median. expert: "
        "`benchmarks/peers.expert_loop`, the hand-written PySpark DataFrame loop for the "
        "left-linear closure (one shuffle and one Spark job per round) in the same "
        "session settings, timed up to its result's count; rounds are its iterations. "
        "DuckDB: left-linear `WITH RECURSIVE ... UNION` (set semantics), query time only."
        f" A run is killed after {m['timeout']:g} s.",
    ]
    for note in report.get("notes", []):
        lines += ["", note]
    for spec, w in report["workloads"].items():
        runs = [r for r in report["runs"] if r["workload"] == spec]
        if not runs:
            continue
        lines += ["", f"## {spec}", "",
                  f"{w['edges']:,} edges, {w['nodes']:,} nodes, closure {w['expected']:,} "
                  "pairs.", "",
                  "| system | cold s | warm s | rounds | derivations | peak stored rows "
                  "| ÷ best (cold) | runs |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        got = {s: summarize([r for r in runs if r["system"] == s]) for s in m["systems"]}
        best = min((g["cold"] for s, g in got.items()
                    if s not in (DUCKDB, EXPERT) and g["cold"]), default=None)
        for system, g in got.items():
            if system == DUCKDB and not has_duckdb:
                continue
            total = len([r for r in runs if r["system"] == system])
            if not total:
                continue
            status = (f"{len(g['good'])} of {total} ok" if not g["problems"]
                      else f"{len(g['good'])} of {total} ok; "
                      + "; ".join(dict.fromkeys(g["problems"])))
            name = "DuckDB" if system == DUCKDB else system
            if g["last"] is None:
                lines.append(f"| {name} | — | — | | | | | {status} |")
                continue
            last = g["last"]
            ratio = _s(g["cold"] / best) if best else ""
            if system == DUCKDB:
                lines.append(f"| {name} | {_s(g['cold'])} | {_s(g['warm'])} | | | "
                             f"| {ratio} | {status} |")
                continue
            if system == EXPERT:
                lines.append(f"| {name} | {_s(g['cold'])} | {_s(g['warm'])} "
                             f"| {last['rounds']} | | | {ratio} | {status} |")
                continue
            lines.append(f"| {name} | {_s(g['cold'])} | {_s(g['warm'])} | {last['rounds']} "
                         f"| {last['derivations']:,} | {last['peak_rows']:,} | {ratio} "
                         f"| {status} |")
        choice = auto_choice(runs)
        if choice:
            lines += ["", f"`auto` chose: {choice}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
