"""Spatial balance on complete binary trees: sparklog with refinement on and off, and the
hand-written expert loop with and without Spark's AQE skew-join handling.

    python3 -m benchmarks.balance [--workloads tree-up:17,tree-down:17] [--partitions 16,64]
        [--systems balance-on,balance-off,expert,expert-aqe] [--ratio 3.0] [--every 2]

Each run is a process of its own (a fresh JVM, as ``sparklog run`` has), linear TC over
the tree's edges with P partitions. For sparklog every round's seconds, largest and mean
partition of ``tc``, imbalance (largest / mean), derivations, sub-buckets and refinements
are kept; the peers give their wall time. The simulated cluster (``--simulate``) is read
off the same rounds: on a cluster of P workers a round lasts as long as its busiest
partition, so the critical path is the sum over rounds of the largest partition's rows,
against the sum of the mean partition's (perfect balance). Writes results/balance.json
and balance.md.
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


def one(spec: str, partitions: int, system: str, ratio: float, every: int) -> dict:
    """One run in this process."""
    from benchmarks.workloads import make

    workload = make(spec)
    if system.startswith("expert"):
        from benchmarks.peers import expert_loop
        from sparklog.spark import session

        spark = session.start("local[2]", partitions, {})
        edges = spark.createDataFrame(workload.edges, "src long, dst long")
        started = time.perf_counter()
        full, rounds = expert_loop(spark, edges, partitions=partitions,
                                   skew_join=system == "expert-aqe")
        size = full.count()
        wall = time.perf_counter() - started
        assert size == workload.expected_tc, (size, workload.expected_tc)
        return dict(workload=spec, partitions=partitions, system=system,
                    wall_seconds=round(wall, 2), rounds=[], iterations=rounds)
    import sparklog

    engine = sparklog.Engine(master="local[2]", partitions=partitions, strategy="asis",
                             balance=system == "balance-on", balance_ratio=ratio,
                             balance_every=every)
    edges = engine.spark.createDataFrame(workload.edges, "x long, y long")
    started = time.perf_counter()
    result = engine.run(sparklog.Program.from_text(PROGRAM), inputs={"edge": edges})
    wall = time.perf_counter() - started
    assert result.size("tc") == workload.expected_tc
    keep = ("iteration", "seconds", "delta", "full", "derivations", "max_partition",
            "mean_partition", "imbalance", "sub_buckets", "refined", "consolidated", "outer")
    rounds = [{k: r[k] for k in keep} for r in result.stats
              if r["relation"] == "tc" and r["iteration"] >= 1]
    return dict(workload=spec, partitions=partitions, system=system, ratio=ratio, every=every,
                wall_seconds=round(wall, 2), rounds=rounds)


def summary(run: dict) -> dict:
    rounds = run["rounds"]
    out = dict(workload=run["workload"], partitions=run["partitions"], system=run["system"],
               wall_seconds=run["wall_seconds"])
    if rounds:
        out.update(
            rounds=len(rounds),
            max_imbalance=max(r["imbalance"] for r in rounds),
            last_imbalance=rounds[-1]["imbalance"],
            refined=sum(r["refined"] for r in rounds),
            sub_buckets=rounds[-1]["sub_buckets"],
            # the simulated cluster: a round lasts as long as its busiest partition
            critical_path=sum(r["max_partition"] for r in rounds),
            ideal_path=round(sum(r["mean_partition"] for r in rounds)),
        )
        out["critical_over_ideal"] = round(out["critical_path"] / out["ideal_path"], 3)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workloads", default="tree-up:17,tree-down:17")
    p.add_argument("--partitions", default="16,64")
    p.add_argument("--systems", default="balance-on,balance-off,expert,expert-aqe")
    p.add_argument("--ratio", type=float, default=None,
                   help="balance_ratio for balance-on (default: sparklog's)")
    p.add_argument("--every", type=int, default=None,
                   help="balance_every for balance-on (default: sparklog's)")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--name", default="balance", help="results/<name>.json and .md")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    from sparklog.defaults import BALANCE_EVERY, BALANCE_RATIO

    ratio = args.ratio if args.ratio is not None else BALANCE_RATIO
    every = args.every if args.every is not None else BALANCE_EVERY
    if args.one:
        print(json.dumps(one(args.workloads, int(args.partitions), args.systems, ratio,
                             every)))
        return
    from benchmarks.runner import machine_facts_static

    load = open("/proc/loadavg").read().split()[:3]
    runs = []
    for spec in args.workloads.split(","):
        for partitions in map(int, args.partitions.split(",")):
            for _ in range(args.repeat):
                for system in args.systems.split(","):  # interleaved: noise lands on all
                    out = subprocess.run(
                        [sys.executable, "-m", "benchmarks.balance", "--one", "--workloads", spec,
                         "--partitions", str(partitions), "--systems", system,
                         "--ratio", str(ratio), "--every", str(every)],
                        capture_output=True, text=True)
                    if out.returncode:
                        runs.append(dict(workload=spec, partitions=partitions, system=system,
                                         wall_seconds=None, rounds=[],
                                         error=out.stderr.strip().splitlines()[-1:]))
                    else:
                        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
                    print(json.dumps(summary(runs[-1])), flush=True)
    facts = dict(machine_facts_static(), loadavg_start=load,
                 loadavg_end=open("/proc/loadavg").read().split()[:3], ratio=ratio,
                 every=every)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(dict(machine=facts, runs=runs),
                                                           indent=1) + "\n")
    (args.out / f"{args.name}.md").write_text(markdown(facts, runs))


def markdown(facts: dict, runs: list[dict]) -> str:
    lines = [
        "# Spatial balance: linear TC of complete binary trees",
        "",
        f"{facts['cpu_model']}, {facts['nproc']} cores, {facts['memory_gib']} GiB, PySpark "
        f"{facts['pyspark']}; load average {' '.join(facts['loadavg_start'])} at start, "
        f"{' '.join(facts['loadavg_end'])} at end. One process (a fresh JVM) per run, "
        f"`local[2]`. balance-on: refinement ratio {facts['ratio']:g}, checked every "
        f"{facts.get('every', 2)} round(s). Imbalance: largest over mean partition of `tc`. Critical path (the "
        "simulated cluster): the sum over rounds of the largest partition's rows, over the "
        "sum of the mean partition's (1.0 is perfect balance).",
        "",
        "| workload | P | system | wall s | rounds | max imbalance | last imbalance | refined "
        "| sub-buckets | critical ÷ ideal |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in runs:
        s = summary(run)
        wall = s["wall_seconds"] if s["wall_seconds"] is not None else "failed"
        cells = [s.get(k, "") for k in ("rounds", "max_imbalance", "last_imbalance", "refined",
                                         "sub_buckets", "critical_over_ideal")]
        lines.append(f"| {s['workload']} | {s['partitions']} | {s['system']} | {wall} | "
                     + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "Per round (sparklog): seconds / imbalance / sub-buckets.", ""]
    for run in runs:
        if run["rounds"]:
            cells = ", ".join(f"{r['seconds']:.1f}/{r['imbalance']}/{r['sub_buckets']}"
                              for r in run["rounds"])
            lines.append(f"- {run['workload']} P={run['partitions']} {run['system']}: {cells}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
