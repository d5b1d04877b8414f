"""In-process A/B/C of the combine before the shuffle (Options.combine, ``--combine``): each
workload runs with its candidates combined inside their partition before the round's one
shuffle ("on"), never ("off"), and as the default decides ("auto"), in one warm session,
the three in rotating order, so all share the JVM's state and the machine's load.

    python3 -m benchmarks.combine [--repeat 3] [--workloads cc,sssp,bfs,email,lederberg,tree17]
                                  [--partitions 4]

Workloads: connected components, weighted SSSP and BFS of R-MAT 14 (edge factor 16, seed 0,
`sparklog gen rmat`), the left-linear TC of email-Eu-core and Lederberg (../shared/data)
and of a complete binary tree of 17 levels, edges down. Every run is checked: the TC sizes
against ../shared/data/README.md and the tree's formula, the graph programs against
networkx. Writes results/combine.json and results/combine.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import runner
from .settings import DATA, PROGRAMS, _tree_pairs
from .settings import TC_LEFT as TC

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sparklog-benchmarks" / "combine"
MODES = ("off", "auto", "on")
TC_SIZES = {"email": ("email-Eu-core.tsv", 793_283), "lederberg": ("Lederberg.tsv", 3_359_842)}


def _gen(args: list[str], folder: Path) -> Path:
    if not (folder / "edge.facts").exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "sparklog", "gen", *args, "-o", str(folder)],
                       check=True, stdout=subprocess.DEVNULL)
    return folder


def _rmat() -> Path:
    folder = _gen(["rmat", "14", "16", "--weighted", "--seed", "0"], CACHE / "rmat14")
    (folder / "source.facts").write_text("0\n")
    return folder


def _real(name: str) -> Path:
    folder = CACHE / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "edge.facts").write_text((DATA / TC_SIZES[name][0]).read_text())
    return folder


def _networkx(folder: Path) -> dict[str, Any]:
    """What the graph programs must give on R-MAT 14: label sum, distance sums."""
    import networkx as nx

    weighted = nx.DiGraph()
    for line in (folder / "edge.facts").read_text().splitlines():
        a, b, w = (int(v) for v in line.split("\t"))
        if not weighted.has_edge(a, b) or weighted[a][b]["weight"] > w:
            weighted.add_edge(a, b, weight=w)
    labels = sum(min(c) * len(c) for c in nx.weakly_connected_components(weighted))
    return {"cc": labels,
            "sssp": sum(nx.single_source_dijkstra_path_length(weighted, 0).values()),
            "bfs": sum(nx.single_source_shortest_path_length(weighted, 0).values())}


def _workloads(names: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if {"cc", "sssp", "bfs"} & set(names):
        folder = _rmat()
        expected = _networkx(folder)
        for name in ("cc", "sssp", "bfs"):
            out[name] = {"program": (PROGRAMS / f"{name}.dl").read_text(), "facts": folder,
                         "output": {"cc": "cc", "sssp": "dist", "bfs": "hops"}[name],
                         "sum_column": 1, "expected": expected[name]}
    for name in ("email", "lederberg"):
        out[name] = {"program": TC, "facts": _real(name), "output": "tc",
                     "count": TC_SIZES[name][1]}
    tree = _gen(["tree", "17", "down"], CACHE / "tree17")
    out["tree17"] = {"program": TC, "facts": tree, "output": "tc",
                     "count": _tree_pairs(17)}
    return {name: out[name] for name in names}


def _check(result, workload: dict[str, Any]) -> bool:
    frame = result[workload["output"]]
    if "count" in workload:
        return frame.count() == workload["count"]
    column = frame.columns[workload["sum_column"]]
    return frame.agg({column: "sum"}).first()[0] == workload["expected"]


def main() -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.combine")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workloads", default="cc,sssp,bfs,email,lederberg,tree17")
    p.add_argument("--partitions", type=int, default=4)
    args = p.parse_args()
    names = args.workloads.split(",")
    workloads = _workloads(names)

    import sparklog
    from sparklog.spark import session

    spark = session.start("local[2]", partitions=args.partitions)
    engine = sparklog.Engine(spark=spark, partitions=args.partitions)
    runs = []
    for name, workload in workloads.items():
        program = sparklog.Program.from_text(workload["program"])
        engine.run(program, facts_dir=workload["facts"])  # warm-up
        for repeat in range(args.repeat):
            order = MODES[repeat % 3:] + MODES[:repeat % 3]
            for mode in order:
                engine.options = dataclasses.replace(engine.options, combine=mode)
                started = time.perf_counter()
                result = engine.run(program, facts_dir=workload["facts"])
                seconds = time.perf_counter() - started  # before the check's own jobs
                stats = result.stats
                runs.append({"workload": name, "mode": mode, "repeat": repeat,
                             "seconds": round(seconds, 3), "ok": _check(result, workload),
                             "rounds": max(r["iteration"] for r in stats),
                             "derivations": sum(r["derivations"] or 0 for r in stats),
                             "shuffled": sum(r["shuffled"] or 0 for r in stats),
                             "combined_rounds": sum(1 for r in stats if r["combined"]),
                             "load": round(os.getloadavg()[0], 2)})
                print(runs[-1], flush=True)
    report = {"machine": runner.machine_facts(spark), "partitions": args.partitions,
              "repeat": args.repeat, "runs": runs}
    out = runner.DEFAULT_OUT
    (out / "combine.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "combine.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    facts = report["machine"]
    lines = ["# The combine before the shuffle: in-process A/B/C (one warm session)", "",
             f"{facts['date']} · {facts['nproc']} cores ({facts['cpu_model']}) · "
             f"`{facts['spark_master']}`, {report['partitions']} partitions · load average at "
             f"start {' '.join(facts['loadavg_start'])} · one warm-up, then {report['repeat']} "
             "runs per mode in rotating order; medians.", "",
             "| workload | combine | median s | × off | rounds | derivations | shuffled | "
             "shuffled ÷ derivations | combined rounds | load | ok |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    names = list(dict.fromkeys(r["workload"] for r in report["runs"]))
    for name in names:
        median = {}
        for mode in MODES:
            mine = [r for r in report["runs"] if r["workload"] == name and r["mode"] == mode]
            median[mode] = statistics.median(r["seconds"] for r in mine)
        for mode in MODES:
            mine = [r for r in report["runs"] if r["workload"] == name and r["mode"] == mode]
            last = mine[-1]
            share = last["shuffled"] / last["derivations"] if last["derivations"] else 1.0
            lines.append(
                f"| {name} | {mode} | {median[mode]:.2f} | {median[mode] / median['off']:.2f}× | "
                f"{last['rounds']} | {last['derivations']:,} | {last['shuffled']:,} | "
                f"{share:.2f} | {last['combined_rounds']} | "
                f"{statistics.median(r['load'] for r in mine):.1f} | "
                f"{'yes' if all(r['ok'] for r in mine) else 'NO'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
