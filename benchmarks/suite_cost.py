"""What the test suite's time goes to: one batch of the random programs the agreement
tests draw (tests/spark/test_reference_agreement.py, seeds 0-24, renamed apart and run as
one program), in a fresh process per run, under a few session settings, the settings
alternating so that noise lands on each.

    python3 -m benchmarks.suite_cost [--pairs 2] [--settings tiered,c1,no-codegen]
        [--checkout NAME=PATH ...] [--name suite_cost]

Each process starts the session the tests start (``local[2]``, 2 partitions, 2g), runs
the batch twice (cold: the JVM's first evaluation; warm: the second) and checks every
program against the reference evaluator. Settings: ``tiered``, the JVM as session.start
makes it (the suite's: C2 late since 2026-12-03); ``c1``, ``-XX:TieredStopAtLevel=1`` (C1
alone); ``no-codegen``, the session built with whole-stage code generation off and
interpreted projections. ``--checkout NAME=PATH`` adds a setting NAME: ``tiered``
with the code of another checkout of the repository (``git worktree add PATH REV``), to
measure a change against the revision before it in one run. Besides the wall
time it reports the JVM's CPU seconds (from /proc) over the process's life, which says
whether a second worker could overlap with the first. Writes results/NAME.json and
NAME.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from . import runner

SETTINGS = {
    "tiered": {},
    "c1": {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1"},
    "no-codegen": {"spark.sql.codegen.wholeStage": "false",
                   "spark.sql.codegen.factoryMode": "NO_CODEGEN"},
}

# One process: the session the tests start, the batch twice, JSON on its last line.
CHILD = r"""
import json, os, sys, time
sys.path[:0] = [{root!r}, os.path.join({root!r}, "src")]
os.environ["SPARKLOG_CACHE_DIR"] = "off"  # as tests/conftest.py
from sparklog.spark import session
from tests.campaign import make_case, run_cases
import sparklog
conf = {{"spark.driver.memory": "2g", **{conf!r}}}
spark = session.start("local[2]", partitions=2, conf=conf)
engine = sparklog.Engine(spark=spark, partitions=2)
cases = [make_case(s, f"p{{s}}_", max_inputs=3, max_groups=3) for s in range(25)]
times, bad = [], 0
for _ in range(2):
    t = time.perf_counter()
    bad += sum(o.status != "ok" for o in run_cases(engine, spark, cases))
    times.append(time.perf_counter() - t)
print(json.dumps({{"cold": times[0], "warm": times[1], "bad": bad}}))
"""


def _jvm_cpu_seconds(parent: int) -> float:
    """CPU seconds (user + system) of the java children of ``parent``, from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, _, rest = text.partition("(")[2].rpartition(")")
        fields = rest.split()
        if int(fields[1]) == parent and name == "java":
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def run_one(setting: str, checkouts: dict[str, str]) -> dict:
    root = checkouts.get(setting, str(Path(__file__).resolve().parent.parent))
    code = CHILD.format(root=root, conf=SETTINGS.get(setting, SETTINGS["tiered"]))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    cpu = 0.0
    while proc.poll() is None:  # the JVM's CPU just before it exits
        cpu = max(cpu, _jvm_cpu_seconds(proc.pid))
        time.sleep(1.0)
    wall = time.perf_counter() - start
    out = proc.stdout.read().strip().splitlines() if proc.stdout else []
    if proc.returncode != 0 or not out:
        return {"setting": setting, "ok": False, "wall": wall}
    got = json.loads(out[-1])
    return {"setting": setting, "ok": got["bad"] == 0, "wall": round(wall, 2),
            "cold": round(got["cold"], 2), "warm": round(got["warm"], 2),
            "jvm_cpu": round(cpu, 1), "cores": round(cpu / wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--settings", default="tiered,c1,no-codegen")
    ap.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH",
                    help="also run 'tiered' with the code of the checkout at PATH, as NAME")
    ap.add_argument("--name", default="suite_cost")
    args = ap.parse_args()
    checkouts = dict(c.split("=", 1) for c in args.checkout)
    settings = args.settings.split(",") + list(checkouts)
    runs = []
    for i in range(args.pairs):
        for setting in settings:
            run = run_one(setting, checkouts)
            run["pair"] = i
            runs.append(run)
            print(json.dumps(run), flush=True)
    rows = []
    for setting in settings:
        mine = [r for r in runs if r["setting"] == setting and r["ok"]]
        if not mine:
            rows.append([setting, "failed", "", "", "", ""])
            continue
        med = {k: statistics.median(r[k] for r in mine) for k in ("cold", "warm", "wall",
                                                                 "cores")}
        rows.append([setting, f"{med['cold']:.1f}", f"{med['warm']:.1f}", f"{med['wall']:.1f}",
                     f"{med['cores']:.2f}", str(len(mine))])
    base = next((r for r in rows if r[0] == settings[0] and r[1] != "failed"), None)
    for r in rows:
        ok = base is not None and r[1] != "failed"
        r.append(f"{float(r[2]) / float(base[2]):.2f}" if ok else "")
    header = ["setting", "cold batch s", "warm batch s", "process wall s",
              "JVM cores used", "runs", f"warm ÷ {settings[0]}"]
    table = "\n".join(["| " + " | ".join(header) + " |",
                       "| " + " | ".join("---" for _ in header) + " |",
                       *("| " + " | ".join(r) + " |" for r in rows)])
    results = Path(__file__).resolve().parent / "results"
    meta = {"machine": runner.machine_facts_static(),
            "load": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M")}
    (results / f"{args.name}.json").write_text(json.dumps({"meta": meta, "runs": runs},
                                                          indent=1) + "\n")
    (results / f"{args.name}.md").write_text(
        f"# {args.name}\n\n`python3 -m benchmarks.suite_cost` ({meta['date']}, load at the "
        f"end {meta['load'][0]:.1f}); medians over the processes, every program checked "
        f"against the reference evaluator.\n\n{table}\n")
    print(table)


if __name__ == "__main__":
    main()
