"""The driver JVM's just-in-time compilers in local mode: the JVM's tiered C1+C2 (sparklog's
default) against C1 alone (``-XX:TieredStopAtLevel=1``), one ``sparklog run`` per run.

    python3 -m benchmarks.jit [--workloads chain-smart,cc,pagerank,email,tree17,chain-left]
        [--repeat 3]

In local mode the driver's JVM runs every task. A fresh JVM compiles Spark's hot code while
the run goes on, and C2, the optimizing compiler, spends seconds of CPU on it: on a machine
of few cores that time is taken from the tasks. C1 alone starts short runs sooner; a run of
many rounds (chain-left: 1,000 rounds, most of each round's time in the driver's planning)
is slower without C2's code. Each run is the CLI as a user runs it (class archive on,
``--master local[2]``), timed from process start to exit, with ``--conf
spark.driver.extraJavaOptions=...`` naming the compilers. The two settings run
interleaved, their order alternating, so the machine's noise falls on both. Every run's
output is checked: the TC sizes and the CC label sum against ../shared/data/README.md and
the closure's formula; PageRank against 20 power iterations within 1e-6.

Workloads: ``chain-smart`` (TC of chain(1000), Smart), ``cc`` and ``pagerank`` (20
iterations) on p2p-Gnutella08, ``email`` (left-linear TC of email-Eu-core), ``tree17``
(left-linear TC of a complete binary tree of 17 levels, edges down), ``chain-left``
(left-linear TC of chain(1000)). Writes results/jit.json (every run, the machine) and jit.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DATA = ROOT.parent / "shared" / "data"
PROGRAMS = ROOT / "src" / "sparklog" / "programs"
TC_LEFT = (".decl edge(x:number, y:number)\n.input edge\n.decl tc(x:number, y:number)\n"
           ".output tc\ntc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n")
TC_NONLINEAR = TC_LEFT.replace("tc(x, z), edge(z, y)", "tc(x, z), tc(z, y)")
SETTINGS = {"C1 only": "-XX:TieredStopAtLevel=1", "tiered C1+C2 (default)": None}


def _graph(name: str) -> list[tuple[int, int]]:
    rows = []
    for line in (DATA / name).read_text().splitlines():
        if line and not line.startswith("#"):
            a, b = line.split()[:2]
            rows.append((int(a), int(b)))
    return rows


def _workloads(folder: Path) -> dict[str, dict[str, Any]]:
    """name: the program, its facts folder, extra CLI arguments, and the check."""
    from sparklog import gen

    def facts(name: str, edges, **extra: str) -> Path:
        d = folder / name
        d.mkdir()
        (d / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
        for relation, text in extra.items():
            (d / f"{relation}.facts").write_text(text + "\n")
        return d

    p2p = _graph("p2p-Gnutella08.tsv")
    tc_left, tc_nonlinear = folder / "tc_left.dl", folder / "tc_nonlinear.dl"
    tc_left.write_text(TC_LEFT)
    tc_nonlinear.write_text(TC_NONLINEAR)
    return {
        "chain-smart": dict(program=tc_nonlinear, facts=facts("chain", gen.chain(1000)),
                            args=["--strategy", "smart"], check=("tc", 1000 * 1001 // 2)),
        "cc": dict(program=PROGRAMS / "cc.dl", facts=facts("p2p_cc", p2p),
                   args=[], check=("cc", None)),
        "pagerank": dict(program=PROGRAMS / "pagerank.dl",
                         facts=facts("p2p_pr", p2p, iterations="20", damping="0.85"),
                         args=[], check=("pagerank", p2p)),
        "email": dict(program=tc_left, facts=facts("email", _graph("email-Eu-core.tsv")),
                      args=["--strategy", "left"], check=("tc", 793_283)),
        "tree17": dict(program=tc_left, facts=facts("tree17", gen.tree(17, "down")),
                       args=["--strategy", "left"], check=("tc", _tree_pairs(17))),
        "chain-left": dict(program=tc_left, facts=folder / "chain", args=["--strategy", "left"],
                           check=("tc", 1000 * 1001 // 2)),
    }


def _tree_pairs(levels: int) -> int:
    """Pairs (ancestor, descendant) of a complete binary tree: each node at depth d has d
    ancestors."""
    return sum(d * (1 << d) for d in range(levels))


def _check(out: Path, check: tuple[str, Any]) -> str | None:
    """None if the output is right, else what is wrong."""
    what, want = check
    if what == "tc":
        got = sum(1 for _ in (out / "tc.csv").open())
        return None if got == want else f"tc has {got} rows, not {want}"
    if what == "cc":  # the minimum-label sum of ../shared/data/README.md for p2p-Gnutella08
        import networkx as nx
        g = nx.Graph(_graph("p2p-Gnutella08.tsv"))
        want = sum(min(c) * len(c) for c in nx.connected_components(g))
        rows = [line.split() for line in (out / "cc.csv").open()]
        got = sum(int(r[1]) for r in rows)
        return None if got == want else f"label sum {got}, not {want}"
    import networkx as nx
    g = nx.DiGraph(want)
    got = {}
    for line in (out / "pagerank.csv").open():
        node, rank = line.split()
        got[int(node)] = float(rank)
    expected = _power(g, 20)
    l1 = sum(abs(got.get(v, 0.0) - r) for v, r in expected.items())
    return None if l1 < 1e-6 else f"L1 {l1:.3g} from 20 power iterations"


def _power(g, iterations: int) -> dict[int, float]:
    """networkx's power iteration, stopped after ``iterations`` steps (its pagerank runs
    to a tolerance; programs/pagerank.dl runs a fixed number)."""
    n = g.number_of_nodes()
    rank = {v: 1.0 / n for v in g}
    for _ in range(iterations):
        lost = sum(rank[v] for v in g if g.out_degree(v) == 0)
        new = {v: (1 - 0.85) / n + 0.85 * lost / n for v in g}
        for v in g:
            d = g.out_degree(v)
            for w in g.successors(v):
                new[w] += 0.85 * rank[v] / d
        rank = new
    return rank


def one(workload: dict[str, Any], jit: str | None, out: Path, archive: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "sparklog", "run", str(workload["program"]),
           "-F", str(workload["facts"]), "-D", str(out), "--master", "local[2]",
           *workload["args"]]
    if jit is not None:
        cmd += ["--conf", f"spark.driver.extraJavaOptions={jit}"]
    env = {**os.environ, "SPARKLOG_CACHE_DIR": str(archive),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = round(time.perf_counter() - started, 2)
    problem = done.stderr.strip().splitlines()[-1] if done.returncode else \
        _check(out, workload["check"])
    return dict(seconds=seconds, ok=problem is None, problem=problem)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default="chain-smart,cc,pagerank,email,tree17,chain-left")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args()
    from benchmarks.runner import machine_facts_static

    runs: list[dict[str, Any]] = []
    report = dict(date=_dt.datetime.now().isoformat(timespec="seconds"),
                  machine=machine_facts_static(), load_before=os.getloadavg(), runs=runs)
    with tempfile.TemporaryDirectory(prefix="sparklog-jit-") as tmp:
        folder = Path(tmp)
        archive = folder / "cache"
        workloads = _workloads(folder)
        chosen = args.workloads.split(",")
        # the first run writes the class archive: run it apart, unmeasured
        one(workloads[chosen[0]], None, folder / "out", archive)
        for rep in range(args.repeat):
            for name in chosen:
                order = list(SETTINGS.items())
                if rep % 2:
                    order.reverse()
                for setting, jit in order:
                    r = one(workloads[name], jit, folder / "out", archive)
                    runs.append(dict(workload=name, setting=setting, rep=rep, **r))
                    print(f"{name:12} {setting:20} {r['seconds']:8.2f} s "
                          f"{'ok' if r['ok'] else r['problem']}", flush=True)
                    _write(args.out, report)
    report["load_after"] = os.getloadavg()
    _write(args.out, report)
    return 0 if all(r["ok"] for r in runs) else 1


def _write(out: Path, report: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "jit.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = ["# JIT compilers of the local driver JVM (cold `sparklog run`, wall seconds)", "",
             f"{report['date']}, {report['machine'].get('cpu_model', '')}, "
             f"{report['machine'].get('nproc', '')} cores; load before "
             f"{report['load_before'][0]:.1f}. Medians of each setting's runs, interleaved; "
             "ratio = C1 only over tiered (below 1: C1 only is faster).", "",
             *[f"{note}\n" for note in report.get("notes", [])],
             "| workload | C1 only s | tiered C1+C2 (default) s | ratio | runs | all right |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    names = list(dict.fromkeys(r["workload"] for r in report["runs"]))
    for name in names:
        mine = [r for r in report["runs"] if r["workload"] == name]
        med = {s: statistics.median([r["seconds"] for r in mine if r["setting"] == s] or [0])
               for s in SETTINGS}
        c1, tiered = med["C1 only"], med["tiered C1+C2 (default)"]
        lines.append(f"| {name} | {c1:.2f} | {tiered:.2f} | "
                     f"{c1 / tiered if tiered else float('nan'):.2f} | {len(mine)} | "
                     f"{'yes' if all(r['ok'] for r in mine) else 'NO'} |")
    (out / "jit.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
