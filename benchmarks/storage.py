"""Storage whose cost follows the delta: linear TC, stored as runs or as one.

    python3 -m benchmarks.storage [--workloads chain:2000,tree-down:19] [--run-rows 100000,0]
        [--name storage]

Each configuration runs in a process of its own (a fresh JVM, as `sparklog run` has): with
runs (``run_rows`` N: the newest run is sealed at N rows, runs of like size merge) and with
one run (``run_rows`` 0: every round rewrites all of ``tc``); a configuration written
``100000:FORM`` keeps the stored versions in that form (``Options.stored``: columnar, the
default, deserialized or serialized), and ``100000:serialized-kryo`` keeps them serialized
with Kryo as the session's serializer. Per run it records every
round's seconds, rows written and runs, and Spark's block storage at the end (the versions
still stored), and reports the median seconds per round of the first and of the last 100
rounds and their ratio, the rows written over the whole run, and the block bytes per
stored tuple. Writes results/storage.json and storage.md.
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


def one(spec: str, config: str) -> dict:
    """One run in this process: the rounds of tc and the block storage at the end."""
    import sparklog
    from benchmarks.workloads import make

    from sparklog.options import DEFAULTS
    from sparklog.spark import session

    rows, _, form = config.partition(":")
    run_rows = int(rows)
    kept_as = "serialized" if form.startswith("serialized") else form or DEFAULTS.stored
    workload = make(spec)
    kryo = {"spark.serializer": "org.apache.spark.serializer.KryoSerializer"}
    spark = session.start("local[2]", 2, kryo if form.endswith("kryo") else {})
    engine = sparklog.Engine(spark=spark, partitions=2, run_rows=run_rows, strategy="asis",
                             stored=kept_as)
    sc = engine.spark.sparkContext
    edges = engine.spark.createDataFrame(workload.edges, "x long, y long")
    program = sparklog.Program.from_text(
        ".decl edge(x:number, y:number)\n.decl tc(x:number, y:number)\n"
        "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n")
    started = time.perf_counter()
    result = engine.run(program, inputs={"edge": edges})
    wall = time.perf_counter() - started
    assert result.size("tc") == workload.expected_tc
    infos = sc._jsc.sc().getRDDStorageInfo()
    stored = sum(i.memSize() + i.diskSize() for i in infos)
    rounds = [dict(iteration=r["iteration"], seconds=r["seconds"], delta=r["delta"],
                   full=r["full"], written=r["written"], runs=r["runs"])
              for r in result.stats if r["relation"] == "tc" and r["iteration"] >= 1]
    return dict(workload=spec, run_rows=run_rows, stored=kept_as, form=form,
                wall_seconds=round(wall, 2),
                storage_bytes=stored, tuples=result.size("tc") + len(workload.edges),
                rounds=rounds)


def summary(run: dict) -> dict:
    seconds = [r["seconds"] for r in run["rounds"] if r["delta"] or r is run["rounds"][-1]]
    k = min(100, max(1, len(seconds) // 3))  # 100 rounds, a third of a short run
    first, last = seconds[:k], seconds[-k:]
    stored = run.get("stored") or ("serialized" if run.get("serialized") else "deserialized")
    return dict(run_rows=run["run_rows"], stored=stored + ("-kryo" * run.get("form", "").endswith("kryo")),
                workload=run["workload"],
                wall_seconds=run["wall_seconds"],
                rounds=len(run["rounds"]),
                first_100=round(statistics.median(first), 4),
                last_100=round(statistics.median(last), 4),
                last_over_first=round(statistics.median(last) / statistics.median(first), 2),
                written=sum(r["written"] or 0 for r in run["rounds"]),
                max_runs=max(r["runs"] for r in run["rounds"]),
                bytes_per_tuple=round(run["storage_bytes"] / run["tuples"], 1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workloads", default="chain:2000", help="KIND:SIZE, comma-separated")
    p.add_argument("--run-rows", default="100000,0", help="configurations, comma-separated")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--name", default="storage", help="results/<name>.json and .md")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    configs = args.run_rows.split(",")
    if args.one:
        print(json.dumps(one(args.workloads, configs[0])))
        return
    from benchmarks.runner import machine_facts_static

    load = open("/proc/loadavg").read().split()[:3]
    runs = []
    for spec, repeat in [(w, r) for w in args.workloads.split(",") for r in range(args.repeat)]:
        for config in configs:  # interleaved: noise lands on every configuration
            out = subprocess.run([sys.executable, "-m", "benchmarks.storage", "--one",
                                  "--workloads", spec, "--run-rows", str(config)],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(summary(runs[-1])), flush=True)
    facts = dict(machine_facts_static(), loadavg_start=load,
                 loadavg_end=open("/proc/loadavg").read().split()[:3])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(dict(machine=facts, runs=runs),
                                                           indent=1) + "\n")
    (args.out / f"{args.name}.md").write_text(markdown(facts, [summary(r) for r in runs]))


def markdown(facts: dict, rows: list[dict]) -> str:
    lines = [
        "# Storage whose cost follows the delta: linear TC",
        "",
        f"{facts['cpu_model']}, {facts['nproc']} cores, {facts['memory_gib']} GiB, PySpark "
        f"{facts['pyspark']}; load average {' '.join(facts['loadavg_start'])} at start, "
        f"{' '.join(facts['loadavg_end'])} at end. One process (a fresh JVM) per run, "
        "`local[2]`, 2 partitions. Seconds per round: medians over the first and the last 100 "
        "productive rounds (a third of the rounds, when fewer than 300). Written: rows the rounds stored (new tuples and the runs they "
        "rewrote). Bytes per tuple: Spark's block storage at the end over the stored tuples "
        "(tc and edge).",
        "",
        "| workload | run_rows | stored | rounds | wall s | s/round first 100 | s/round last 100 "
        "| last ÷ first | rows written | most runs | bytes/tuple |",
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        label = "0 (one run)" if r["run_rows"] == 0 else f"{r['run_rows']:,}"
        lines.append(f"| {r['workload']} | {label} | {r['stored']} | {r['rounds']} | {r['wall_seconds']} | "
                     f"{r['first_100']} | {r['last_100']} | {r['last_over_first']} | "
                     f"{r['written']:,} | {r['max_runs']} | {r['bytes_per_tuple']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
