"""This tree against an earlier revision, warm: linear TC of real graphs (or PageRank)
evaluated several times in one session per process, the processes of the two revisions
interleaved.

    python3 -m benchmarks.warm_revision --baseline REV [--graphs email-Eu-core,Lederberg]
                                        [--runs 4] [--processes 2] [--out DIR]
    python3 -m benchmarks.warm_revision --baseline REV --graphs pagerank:rmat14,pagerank:rmat16

Each process starts one session (``local[2]``) with one revision's code (the baseline
checked out into a temporary worktree, as ``benchmarks.settings --compare revision``
does), evaluates the left-linear closure of one graph of ../shared/data ``--runs`` times
and reports each run's seconds; the first run of a process pays for the JVM's warm-up, so
a process's warm time is the median of the others. Every size is checked against
../shared/data/README.md. ``pagerank:G`` runs programs/pagerank.dl (20 iterations, damping
0.85) instead, over R-MAT ``rmat14``/``rmat16`` (``sparklog gen rmat S 16 --seed 0``) or a
graph G of ../shared/data, its ranks checked against 20 of networkx's power iterations
(L1 under 1e-6). Writes warm-revision.{json,md}.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import networkx as nx

from benchmarks.real_graphs import EXPECTED
from benchmarks.settings import DATA, ROOT, _graph, _power, _revision, _rmat
ONE = """
import json, sys, time
import sparklog
path, runs = sys.argv[1], int(sys.argv[2])
program = ('.decl edge(x: number, y: number)\\n.input edge(filename="' + path + '")\\n'
           '.decl tc(x: number, y: number)\\ntc(x, y) :- edge(x, y).\\n'
           'tc(x, y) :- tc(x, z), edge(z, y).\\n')
engine = sparklog.Engine(master="local[2]")
seconds, sizes = [], []
for _ in range(runs):
    started = time.perf_counter()
    result = engine.run(program)
    sizes.append(result.size("tc"))
    seconds.append(round(time.perf_counter() - started, 2))
print(json.dumps({"seconds": seconds, "sizes": sizes}))
"""


ONE_PAGERANK = """
import json, sys, time
import sparklog
from sparklog import programs
facts, runs = sys.argv[1], int(sys.argv[2])
engine = sparklog.Engine(master="local[2]")
program = sparklog.Program.from_file(programs.path("pagerank"))
seconds = []
for _ in range(runs):
    started = time.perf_counter()
    result = engine.run(program, facts_dir=facts)
    result.size("pagerank")
    seconds.append(round(time.perf_counter() - started, 2))
ranks = {int(n): float(r) for n, r in result["pagerank"].collect()}
print(json.dumps({"seconds": seconds, "ranks": ranks}))
"""


def one(graph: str, runs: int, src: Path, folder: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    pagerank = graph.startswith("pagerank:")
    source, where = (ONE_PAGERANK, _pagerank_facts(graph, folder)) if pagerank \
        else (ONE, DATA / f"{graph}.tsv")
    done = subprocess.run([sys.executable, "-c", source, str(where), str(runs)],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        return dict(seconds=[], ok=False, problem=done.stderr.strip().splitlines()[-1:])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if pagerank:
        got = {int(n): r for n, r in out["ranks"].items()}
        ok = sum(abs(got.get(v, 0.0) - r) for v, r in _ranks(graph).items()) < 1e-6
    else:
        ok = all(size == EXPECTED[f"{graph}.tsv"] for size in out["sizes"])
    return dict(seconds=out["seconds"], ok=ok, warm=statistics.median(out["seconds"][1:]))


@functools.cache
def _ranks(graph: str) -> dict[int, float]:
    """networkx's 20 power iterations over ``pagerank:G``'s edges, once per invocation
    (minutes of Python on R-MAT 16, not one computation per process)."""
    return _power(nx.DiGraph(_edges(graph)), 20)


@functools.cache
def _edges(graph: str) -> list[tuple[int, int]]:
    name = graph.removeprefix("pagerank:")
    if name.startswith("rmat"):
        return _rmat(int(name.removeprefix("rmat")))
    return _graph(f"{name}.tsv")


def _pagerank_facts(graph: str, folder: Path) -> Path:
    """The facts folder of ``pagerank:G`` (written once per invocation)."""
    where = folder / graph.replace(":", "_")
    if not where.exists():
        where.mkdir(parents=True)
        (where / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in _edges(graph)))
        (where / "iterations.facts").write_text("20\n")
        (where / "damping.facts").write_text("0.85\n")
    return where


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", required=True, help="the git revision to compare")
    p.add_argument("--graphs", default="email-Eu-core,Lederberg")
    p.add_argument("--runs", type=int, default=4, help="evaluations per process (>= 2)")
    p.add_argument("--processes", type=int, default=2, help="processes per revision and graph")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = p.parse_args()
    if args.runs < 2:
        p.error("--runs must be at least 2: the first run of a process is not warm")
    from benchmarks.runner import machine_facts_static

    report: dict[str, Any] = dict(
        date=_dt.datetime.now().isoformat(timespec="seconds"), machine=machine_facts_static(),
        load_before=os.getloadavg(), runs=[])
    with tempfile.TemporaryDirectory(prefix="sparklog-warm-") as tmp:
        where = Path(tmp) / "baseline"
        revisions = {_revision(args.baseline, where, report): where / "src",
                     "this tree": ROOT / "src"}
        report["settings"] = list(revisions)
        try:
            for rep in range(args.processes):
                for graph in args.graphs.split(","):
                    order = list(revisions.items())
                    if rep % 2:
                        order.reverse()
                    for name, src in order:
                        r = one(graph, args.runs, src, Path(tmp) / "facts")
                        report["runs"].append(dict(graph=graph, setting=name, rep=rep, **r))
                        print(f"{graph:16} {name:14} {r['seconds']} "
                              f"{'ok' if r['ok'] else r.get('problem', 'WRONG SIZE')}",
                              flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(where)], check=False)
    report["load_after"] = os.getloadavg()
    _write(args.out, report)
    return 0 if all(r["ok"] for r in report["runs"]) else 1


def _write(out: Path, report: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "warm-revision.json").write_text(json.dumps(report, indent=1) + "\n")
    first, second = report["settings"]
    machine = report["machine"]
    lines = ["# Warm: this tree against an earlier revision", "",
             f"{report['date']}, {machine.get('cpu_model', '')}, {machine.get('nproc', '')} "
             f"cores; load before {report['load_before'][0]:.1f}, after "
             f"{report['load_after'][0]:.1f}. Each process: one session, the graph's closure "
             "(or PageRank x20) evaluated several times; warm = the median of a process's "
             f"runs after its first, then the median over processes. Ratio = {second} over "
             f"{first} (below "
             f"1: {second} is faster).", "",
             *[f"{note}\n" for note in report.get("notes", [])],
             f"| graph | {first} warm s | {second} warm s | ratio | {first} first s | "
             f"{second} first s | processes | all right |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for graph in dict.fromkeys(r["graph"] for r in report["runs"]):
        mine = [r for r in report["runs"] if r["graph"] == graph]
        def med(setting: str, key: str) -> float:
            values = [(r[key] if key == "warm" else r["seconds"][0])
                      for r in mine if r["setting"] == setting and r["seconds"]]
            return statistics.median(values) if values else float("nan")
        a, b = med(first, "warm"), med(second, "warm")
        lines.append(f"| {graph} | {a:.2f} | {b:.2f} | {b / a:.2f} | {med(first, 'first'):.2f}"
                     f" | {med(second, 'first'):.2f} | {len(mine) // 2} | "
                     f"{'yes' if all(r['ok'] for r in mine) else 'NO'} |")
    (out / "warm-revision.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
