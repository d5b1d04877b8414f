"""Cold A/B of how stored versions sit in block storage (``--stored``): whole `sparklog
run` processes, one per run (a fresh JVM, what a user meets), the forms alternating so
that noise lands on each; every run's output files are compared with the first run's of
its workload, byte for byte after sorting.

    python3 -m benchmarks.stored_ab [--pairs 2] [--forms columnar,deserialized]
        [--workloads chain-smart:1000,chain-left:400,tree-down:17,pagerank:14,cc:14]
        [--name stored_ab]

Workloads: ``chain-smart:N``, TC of a chain of N edges as the nonlinear rule (the
closure strategy ``auto`` picks Smart); ``chain-left:N``, the left-linear rule evaluated
as written (``--strategy left``: N rounds); ``tree-down:D``, the same on the complete
binary tree of D levels, edges down;
``pagerank:S`` (20 iterations, damping 0.85) and ``cc:S`` (the programs in
sparklog.programs) on R-MAT scale S, edge factor 16, seed 0. Reports per run the wall
time of the process and the sum of its rounds' seconds (--stats); the table gives medians
and the ratio of each form's wall median to the last form's. Writes results/NAME.json
and NAME.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import runner

NONLINEAR = """.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
.output tc
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), tc(z, y).
"""
LEFT = NONLINEAR.replace("tc(x, y) :- tc(x, z), tc(z, y).", "tc(x, y) :- tc(x, z), edge(z, y).")


def _sparklog(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "sparklog", *args], check=True,
                   capture_output=True, text=True)


def prepare(spec: str, root: Path) -> tuple[list[str], Path]:
    """The `sparklog run` arguments (program, facts) of a workload, its files made once."""
    kind, _, size = spec.partition(":")
    home = root / spec.replace(":", "-")
    facts = home / "facts"
    if not facts.exists():
        facts.mkdir(parents=True)
        if kind.startswith("chain"):
            _sparklog("gen", "chain", size, "-o", str(facts))
        elif kind == "tree-down":
            _sparklog("gen", "tree", size, "down", "-o", str(facts))
        else:
            _sparklog("gen", "rmat", size, "16", "--seed", "0", "-o", str(facts))
        if kind == "pagerank":
            (facts / "iterations.facts").write_text("20\n")
            (facts / "damping.facts").write_text("0.85\n")
    if kind in ("pagerank", "cc"):
        program = subprocess.run([sys.executable, "-m", "sparklog.programs", kind],
                                 check=True, capture_output=True, text=True).stdout.strip()
    else:
        program = str(home / f"{kind}.dl")
        Path(program).write_text(NONLINEAR if kind == "chain-smart" else LEFT)
    strategy = ["--strategy", "left"] if kind in ("chain-left", "tree-down") else []
    return [program, "-F", str(facts), *strategy], home


def digest(out: Path) -> str:
    """A digest of every output file, its lines sorted."""
    h = hashlib.sha256()
    for f in sorted(out.iterdir()):
        h.update(f.name.encode())
        h.update("".join(sorted(f.read_text().splitlines(keepends=True))).encode())
    return h.hexdigest()[:16]


def one(args: list[str], home: Path, form: str) -> dict:
    out, stats = home / f"out-{form}", home / f"stats-{form}.json"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sparklog", "run", *args, "-D", str(out),
                    "--stats", str(stats), "--stored", form, "-q"], check=True)
    wall = time.perf_counter() - started
    records = json.loads(stats.read_text())
    rounds: dict[tuple[int, int], float] = {}  # a round's record per relation: once each
    for r in records:
        key = (r["stratum"], r["iteration"])
        rounds[key] = max(rounds.get(key, 0.0), r["seconds"])
    return dict(wall_s=round(wall, 2), rounds_s=round(sum(rounds.values()), 2),
                rounds=sum(1 for _, i in rounds if i >= 1), output=digest(out),
                load=os.getloadavg()[0])


def main() -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.stored_ab")
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--forms", default="columnar,deserialized")
    p.add_argument("--workloads",
                   default="chain-smart:1000,chain-left:400,tree-down:17,pagerank:14,cc:14")
    p.add_argument("--name", default="stored_ab")
    args = p.parse_args()
    forms = args.forms.split(",")
    facts = runner.machine_facts_static()
    load_start = open("/proc/loadavg").read().split()[:3]
    rows = []
    with tempfile.TemporaryDirectory(prefix="sparklog-stored-") as tmp:
        for spec in args.workloads.split(","):
            run_args, home = prepare(spec, Path(tmp))
            first = None
            for pair in range(args.pairs):
                for form in (forms if pair % 2 == 0 else forms[::-1]):
                    row = dict(workload=spec, pair=pair, form=form, **one(run_args, home, form))
                    first = first or row["output"]
                    row["same_output"] = row["output"] == first
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    facts.update(loadavg_start=load_start, loadavg_end=open("/proc/loadavg").read().split()[:3])
    out = runner.DEFAULT_OUT
    (out / f"{args.name}.json").write_text(json.dumps({"machine": facts, "runs": rows},
                                                      indent=1) + "\n")
    lines = [f"# Stored forms, cold: {' against '.join(forms)}", "",
             f"{facts['cpu_model']}, {facts['nproc']} cores, {facts['memory_gib']} GiB, "
             f"PySpark {facts['pyspark']}; load average {' '.join(load_start)} at start, "
             f"{' '.join(facts['loadavg_end'])} at end. One `sparklog run` process per run "
             f"(`local[*]`, default settings but `--stored`), {args.pairs} per form, forms "
             "alternating; medians. wall: the whole process; rounds: the sum of its rounds' "
             "seconds (--stats).", "",
             "| workload | stored | wall s | rounds s | rounds | wall ÷ "
             f"{forms[-1]} | load | output equal |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for spec in args.workloads.split(","):
        med = {}
        for form in forms:
            mine = [r for r in rows if r["workload"] == spec and r["form"] == form]
            med[form] = {k: statistics.median(r[k] for r in mine)
                         for k in ("wall_s", "rounds_s", "rounds", "load")}
            med[form]["same"] = all(r["same_output"] for r in mine)
        for form in forms:
            m = med[form]
            lines.append(f"| {spec} | {form} | {m['wall_s']:.2f} | {m['rounds_s']:.2f} | "
                         f"{m['rounds']:.0f} | {m['wall_s'] / med[forms[-1]]['wall_s']:.2f} | "
                         f"{m['load']:.1f} | {'yes' if m['same'] else 'NO'} |")
    (out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
