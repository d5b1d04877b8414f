"""Secondary indexes on and off: nonlinear transitive closure, and reachability that
ignores the edges' direction.

    python3 -m benchmarks.indexes [--workloads tc:chain:300,tc:tree-down:12,reach:tree-down:17]
        [--repeat 3] [--partitions 2]

``tc(x, z) :- tc(x, y), tc(y, z)`` reads ``tc`` by both columns. With indexes on, the
scan of its old version reads a copy placed by the second column, one round behind
(rewrite/indexes.py); off, Spark reshuffles the stored relation for that join every round.
``reach`` (from the workload's first node, over edges taken both ways) reads the input
``edge`` by its first column in one rule and by its second in the other: with indexes on,
a copy of ``edge`` placed by the second column is made once; off, every round reshuffles
all of ``edge`` for one of the two joins.
Each run is a process of its own (a fresh JVM, as ``sparklog run`` has) that evaluates the
program twice over the same input: the first evaluation is the cold time, the second the
warm one (session start excluded from both). Runs are interleaved over the systems, so
the shared machine's noise lands on all. Every result is checked against the closure's
known size. Writes results/indexes.json and indexes.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
PROGRAMS = {
    "tc": (".decl edge(x:number, y:number)\n.decl tc(x:number, y:number)\n"
           "tc(x, y) :- edge(x, y).\ntc(x, z) :- tc(x, y), tc(y, z).\n"),
    "reach": (".decl edge(x:number, y:number)\n.decl start(x:number)\n"
              ".decl reach(x:number)\nreach(x) :- start(x).\n"
              "reach(y) :- reach(x), edge(x, y).\nreach(x) :- reach(y), edge(x, y).\n"),
}
SYSTEMS = {"indexes-on": True, "indexes-off": False}


def one(spec: str, partitions: int, system: str) -> dict:
    """One process: the program evaluated twice, cold then warm."""
    import networkx as nx

    import sparklog
    from benchmarks.workloads import make

    name, _, graph = spec.partition(":")
    workload = make(graph)
    engine = sparklog.Engine(master="local[2]", partitions=partitions, strategy="asis",
                             indexes=SYSTEMS[system])
    edges = engine.spark.createDataFrame(workload.edges, "x long, y long")
    inputs = {"edge": edges}
    expected = workload.expected_tc
    if name == "reach":
        first = workload.edges[0][0]
        inputs["start"] = engine.spark.createDataFrame([(first,)], "x long")
        expected = len(nx.node_connected_component(nx.Graph(workload.edges), first))
    program = sparklog.Program.from_text(PROGRAMS[name])
    times, rounds = [], []
    for _ in range(2):
        started = time.perf_counter()
        result = engine.run(program, inputs=inputs)
        size = result[name].count()
        times.append(round(time.perf_counter() - started, 3))
        assert size == expected, (size, expected)
        rounds = [r for r in result.stats if r["relation"] == name and r["iteration"] >= 1]
    return dict(workload=spec, partitions=partitions, system=system, cold_seconds=times[0],
                warm_seconds=times[1], rounds=len(rounds),
                spark_jobs=sum(r["spark_jobs"] for r in rounds),
                derivations=sum(r["derivations"] for r in rounds),
                outer=sorted({r["outer"] for r in rounds}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workloads", default="tc:chain:300,tc:tree-down:12,reach:tree-down:17")
    p.add_argument("--partitions", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--one", nargs=2, metavar=("WORKLOAD", "SYSTEM"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.partitions, args.one[1])))
        return
    from benchmarks.runner import machine_facts_static

    load = open("/proc/loadavg").read().split()[:3]
    runs = []
    for spec in args.workloads.split(","):
        for repeat in range(args.repeat):
            order = list(SYSTEMS) if repeat % 2 == 0 else list(reversed(SYSTEMS))
            for system in order:
                out = subprocess.run([sys.executable, "-m", "benchmarks.indexes", "--one", spec,
                                      system, "--partitions", str(args.partitions)],
                                     capture_output=True, text=True)
                if out.returncode:
                    runs.append(dict(workload=spec, system=system, error=(
                        out.stderr.strip().splitlines() or ["?"])[-1]))
                else:
                    runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(json.dumps(runs[-1]), flush=True)
    facts = dict(machine_facts_static(), loadavg_start=load,
                 loadavg_end=open("/proc/loadavg").read().split()[:3],
                 partitions=args.partitions, repeat=args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "indexes.json").write_text(json.dumps(dict(machine=facts, runs=runs), indent=1)
                                           + "\n")
    (args.out / "indexes.md").write_text(markdown(facts, runs))


def markdown(facts: dict, runs: list[dict]) -> str:
    lines = [f"Secondary indexes on and off (tc: nonlinear TC; reach: reachability over "
             f"edges taken both ways): {facts['partitions']} partitions, "
             f"medians of {facts['repeat']} processes (cold: first evaluation in a fresh JVM; "
             f"warm: the second), {facts.get('cpu_model', '?')}, {facts.get('nproc', '?')} "
             f"cores, load {' '.join(facts['loadavg_start'])} -> "
             f"{' '.join(facts['loadavg_end'])}.", "",
             "| workload | indexes | cold s | warm s | off/on cold | off/on warm | rounds "
             "| jobs | derivations | joins move |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    median = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    for spec in dict.fromkeys(r["workload"] for r in runs):
        got = {s: [r for r in runs if r["workload"] == spec and r["system"] == s
                   and "error" not in r] for s in SYSTEMS}
        cold = {s: median([r["cold_seconds"] for r in rs]) for s, rs in got.items()}
        warm = {s: median([r["warm_seconds"] for r in rs]) for s, rs in got.items()}
        for system, rs in got.items():
            if not rs:
                lines.append(f"| {spec} | {system} | failed | | | | | | | |")
                continue
            ratio = lambda d: (f"{d['indexes-off'] / d['indexes-on']:.2f}"  # noqa: E731
                               if system == "indexes-on" and d["indexes-off"] else "")
            last = rs[-1]
            lines.append(f"| {spec} | {system[8:]} | {cold[system]:.2f} | {warm[system]:.2f} "
                         f"| {ratio(cold)} | {ratio(warm)} | {last['rounds']} "
                         f"| {last['spark_jobs']} | {last['derivations']} "
                         f"| {', '.join(last['outer'])} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
