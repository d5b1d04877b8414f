"""Iteration roll-over on bowtie graphs: time and peak memory per threshold (as Fig. 12).

    python3 -m benchmarks.rollover [--width 3000] [--length 20]
        [--thresholds 0,10000,100000,1000000,10000000] [--memory 1g]

A bowtie's W sources reach a chain of L nodes that reaches W sinks: linear TC derives W²
pairs in the one round after the chain is walked, and almost nothing before. Each run is
a process of its own (a fresh JVM) with a fixed driver memory, linear TC with
``--rollover-threshold`` T (0: off). Per run: wall seconds, whether it finished, the
JVM's peak resident memory (VmHWM), the rounds that rolled over, and the largest inner
iteration's join output. Writes results/rollover.json and rollover.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
PROGRAM = (".decl edge(x:number, y:number)\n.decl tc(x:number, y:number)\n"
           "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n")


def one(width: int, length: int, threshold: int, memory: str) -> dict:
    import sparklog
    from sparklog import gen
    from sparklog.spark import session

    spark = session.start("local[2]", 2, {"spark.driver.memory": memory})
    engine = sparklog.Engine(spark=spark, partitions=2, rollover_rows=threshold,
                             strategy="asis")
    edges = spark.createDataFrame(list(gen.bowtie(width, length)), "x long, y long")
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    started = time.perf_counter()
    result = engine.run(sparklog.Program.from_text(PROGRAM), inputs={"edge": edges})
    wall = time.perf_counter() - started
    expected = width * width + 2 * length * width + length * (length - 1) // 2
    assert result.size("tc") == expected, (result.size("tc"), expected)
    peak = next(int(line.split()[1]) for line in open(f"/proc/{pid}/status")
                if line.startswith("VmHWM:"))
    rolled = [r for r in result.stats if r["relation"] == "tc" and r["inner_iteration"]]
    heaviest = max((r for r in result.stats if r["relation"] == "tc"),
                   key=lambda r: r["derivations"])
    return dict(width=width, length=length, threshold=threshold, memory=memory,
                wall_seconds=round(wall, 2), peak_rss_mib=round(peak / 1024),
                rolled_rounds=len(rolled),
                inner_iterations=max((r["inner_iteration"] for r in rolled), default=0),
                largest_inner=max((r["largest_inner"] for r in rolled), default=None),
                heaviest_round=dict(iteration=heaviest["iteration"],
                                    derivations=heaviest["derivations"],
                                    seconds=heaviest["seconds"]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--width", type=int, default=3000)
    p.add_argument("--length", type=int, default=20)
    p.add_argument("--thresholds", default="0,10000,100000,1000000,10000000")
    p.add_argument("--memory", default="1g", help="spark.driver.memory of every run")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    thresholds = [int(t) for t in args.thresholds.split(",")]
    if args.one:
        print(json.dumps(one(args.width, args.length, thresholds[0], args.memory)))
        return
    from benchmarks.runner import machine_facts_static

    load = open("/proc/loadavg").read().split()[:3]
    runs = []
    for threshold in thresholds:
        out = subprocess.run([sys.executable, "-m", "benchmarks.rollover", "--one",
                              "--width", str(args.width), "--length", str(args.length),
                              "--thresholds", str(threshold), "--memory", args.memory],
                             capture_output=True, text=True)
        if out.returncode:
            tail = [line for line in out.stderr.strip().splitlines() if line.strip()][-1:]
            runs.append(dict(width=args.width, length=args.length, threshold=threshold,
                             memory=args.memory, wall_seconds=None, error=tail))
        else:
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(runs[-1]), flush=True)
    facts = dict(machine_facts_static(), loadavg_start=load,
                 loadavg_end=open("/proc/loadavg").read().split()[:3])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rollover.json").write_text(json.dumps(dict(machine=facts, runs=runs),
                                                       indent=1) + "\n")
    lines = [
        "# Iteration roll-over: linear TC of a bowtie",
        "",
        f"{facts['cpu_model']}, {facts['nproc']} cores, {facts['memory_gib']} GiB, PySpark "
        f"{facts['pyspark']}; load average {' '.join(facts['loadavg_start'])} at start, "
        f"{' '.join(facts['loadavg_end'])} at end. Bowtie W = {args.width}, L = "
        f"{args.length}; one process per run, `local[2]`, 2 partitions, driver memory "
        f"{args.memory}. Peak RSS: the JVM's VmHWM.",
        "",
        "| threshold | wall s | peak RSS MiB | rounds rolled over | inner iterations | largest "
        "inner output | heaviest round: derivations, s |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in runs:
        label = "0 (off)" if r["threshold"] == 0 else f"{r['threshold']:,}"
        if r["wall_seconds"] is None:
            lines.append(f"| {label} | failed: {' '.join(r['error'])[:120]} | | | | | |")
            continue
        h = r["heaviest_round"]
        lines.append(f"| {label} | {r['wall_seconds']} | {r['peak_rss_mib']:,} | "
                     f"{r['rolled_rounds']} | {r['inner_iterations']} | "
                     f"{r['largest_inner'] if r['largest_inner'] is not None else ''} | "
                     f"{h['derivations']:,} in {h['seconds']} |")
    (args.out / "rollover.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
