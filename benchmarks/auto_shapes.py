"""What ``--strategy auto``'s measurement costs (spark/load.shapes: arcs, nodes, tails and
heads of a closure's edges, by HyperLogLog++) at two precisions, and how far its estimates
are from the exact counts.

    python3 -m benchmarks.auto_shapes [--graphs paired:8,chain:1000,rmat:14,rmat:16]
        [--arms rsd-0.01-interpreted,rsd-0.05] [--repeat 3] [--name auto-shapes]

Arms: ``rsd-0.01-interpreted``, the measurement before 2026-12-03 (1% relative standard
deviation, 16,384 registers an estimate, with whole-stage code generation off and
interpreted projections, as it ran then); ``rsd-0.05``, today's (``load.SHAPE_RSD``: 512
registers, the session's settings). Each run is a fresh process, as ``sparklog run`` is:
the session starts, then the measurement runs twice over the graph's facts file (cold: the
JVM's first job, which reads the file; warm: the second). The exact counts come from one
exact aggregation after the timed ones. Arms alternate, so the shared machine's noise
lands on both. Writes results/NAME.json and NAME.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import runner

ARMS = {"rsd-0.01-interpreted": (0.01, True), "rsd-0.05": (0.05, False)}

CHILD = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
import sparklog
from pyspark.sql import functions as F
from sparklog.spark import load, session
from sparklog.spark.session import FACTORY_MODE, WHOLE_STAGE
load.SHAPE_RSD = {rsd!r}
spark = session.start("local[2]", partitions=2)
if {interpreted!r}:
    spark.conf.set(WHOLE_STAGE, "false")
    spark.conf.set(FACTORY_MODE, "NO_CODEGEN")
text = ".decl edge(x: number, y: number)\n.input edge\n.decl tc(x: number, y: number)\n" \
       "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), tc(z, y).\n"
program = sparklog.Program.from_text(text)
times = []
for _ in range(2):
    t = time.perf_counter()
    shape = load.shapes(spark, program, {{"edge"}}, {{}}, Path({facts!r}))["edge"]
    times.append(time.perf_counter() - t)
spark.conf.unset(WHOLE_STAGE)
spark.conf.unset(FACTORY_MODE)
df = spark.read.csv(str(Path({facts!r}) / "edge.facts"), sep="\t", inferSchema=True)
a, b = df.columns[:2]
arcs, tails, heads = df.select(F.count_distinct(a, b), F.count_distinct(a),
                               F.count_distinct(b)).first()
nodes = df.select(F.explode(F.array(a, b)).alias("n")).distinct().count()
print(json.dumps({{"cold": times[0], "warm": times[1], "shape": list(shape),
                  "exact": [arcs, nodes, tails, heads]}}))
"""


def _facts(graph: str, folder: Path) -> Path:
    kind, _, size = graph.partition(":")
    out = folder / graph.replace(":", "-")
    if not out.exists():
        args = {"paired": ["paired_trees", size], "chain": ["chain", size],
                "rmat": ["rmat", size, "16"]}[kind]
        subprocess.run([sys.executable, "-m", "sparklog", "gen", *args, "-o", str(out)],
                       check=True, stdout=subprocess.DEVNULL)
    return out


def run_one(arm: str, facts: Path) -> dict:
    rsd, interpreted = ARMS[arm]
    root = str(Path(__file__).resolve().parent.parent)
    code = CHILD.format(root=root, rsd=rsd, interpreted=interpreted, facts=str(facts))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"arm": arm, "ok": False, "error": proc.stderr[-2000:]}
    got = json.loads(lines[-1])
    errors = [round(s / e - 1, 4) if e else None for s, e in zip(got["shape"], got["exact"])]
    return {"arm": arm, "ok": True, "cold": round(got["cold"], 3), "warm": round(got["warm"], 3),
            "shape": got["shape"], "exact": got["exact"], "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="paired:8,chain:1000,rmat:14,rmat:16")
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--name", default="auto-shapes")
    args = ap.parse_args()
    arms = args.arms.split(",")
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for graph in args.graphs.split(","):
            facts = _facts(graph, Path(tmp))
            for rep in range(args.repeat):
                for arm in runner.rotated(arms, rep):
                    run = {"graph": graph, "rep": rep, **run_one(arm, facts)}
                    runs.append(run)
                    print(json.dumps(run), flush=True)
    header = ["graph", "arm", "cold s", "warm s", "warm ÷ first arm",
              "largest estimate error", "runs ok"]
    rows = []
    for graph in args.graphs.split(","):
        base = None
        for arm in arms:
            mine = [r for r in runs if r["graph"] == graph and r["arm"] == arm and r["ok"]]
            if not mine:
                rows.append([graph, arm, "failed", "", "", "", "0"])
                continue
            cold = statistics.median(r["cold"] for r in mine)
            warm = statistics.median(r["warm"] for r in mine)
            base = warm if base is None else base
            worst = max(abs(e) for r in mine for e in r["errors"] if e is not None)
            rows.append([graph, arm, f"{cold:.2f}", f"{warm:.2f}", f"{warm / base:.2f}",
                         f"{worst:.1%}", f"{len(mine)} of {args.repeat}"])
    table = "\n".join(["| " + " | ".join(header) + " |",
                       "| " + " | ".join("---" for _ in header) + " |",
                       *("| " + " | ".join(r) + " |" for r in rows)])
    results = Path(__file__).resolve().parent / "results"
    meta = {"machine": runner.machine_facts_static(), "load_end": os.getloadavg(),
            "date": time.strftime("%Y-%m-%d %H:%M")}
    (results / f"{args.name}.json").write_text(json.dumps({"meta": meta, "runs": runs},
                                                          indent=1) + "\n")
    (results / f"{args.name}.md").write_text(
        f"# {args.name}\n\n`python3 -m benchmarks.auto_shapes` ({meta['date']}, "
        f"{meta['machine']['cpu_model']}, {meta['machine']['nproc']} cores, load at the end "
        f"{meta['load_end'][0]:.1f}): the seconds of auto's measurement of a graph's facts "
        "file, cold (the JVM's first job) and warm (the second), medians over fresh "
        "processes, arms alternating; the error is an estimate's (arcs, nodes, tails, "
        "heads) against the exact count.\n\n" + table + "\n")
    print(table)


if __name__ == "__main__":
    main()
