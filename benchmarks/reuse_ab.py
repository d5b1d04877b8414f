"""In-process A/B of reused plans (Options.reuse_plans, ``--plan-reuse``): each workload
runs in turn with loop rounds rerun from the executed plan of the round before
("executed"), planned from its optimized plan ("optimized") and planned from the rules'
SQL ("off"), in one warm session, so all sides share the JVM's state and the machine's
load.

    python3 -m benchmarks.reuse_ab [--pairs 3] [--workloads strata10,chain:200]

Prints one line per run (wall seconds, median loop-round milliseconds) and writes
results/reuse_ab.json and results/reuse_ab.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time

from . import runner, workloads
from .workloads import PROGRAMS

SIDES = ("executed", "optimized", "off")



def main() -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.reuse_ab")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--workloads", default="strata10,chain:200")
    args = p.parse_args()

    import sparklog
    from sparklog.spark import session

    spark = session.start("local[2]", partitions=2)
    engine = sparklog.Engine(spark=spark, partitions=2, strategy="asis")

    def case(spec: str):
        """(program, inputs, output relation, expected rows, loop relation)."""
        if spec in PROGRAMS:
            wl = PROGRAMS[spec]
            return wl.text, None, wl.output, set(wl.expected), "n"
        wl = workloads.make(spec)
        return runner.TC_PROGRAM, {"edge": runner.edges_dataframe(spark, wl)}, "tc", wl.expected_tc, "tc"

    def run(spec: str) -> tuple[float, float, bool]:
        text, inputs, output, expected, loop = case(spec)
        started = time.perf_counter()
        result = engine.run(text, inputs=inputs)
        if isinstance(expected, set):  # a program: its output rows
            ok = {tuple(r) for r in result[output].collect()} == expected
        else:  # transitive closure: its size
            ok = result[output].count() == expected
        wall = time.perf_counter() - started
        rounds = [r["seconds"] for r in result.stats if r["relation"] == loop
                  and r["iteration"] > 1]
        return round(wall, 2), round(statistics.median(rounds) * 1000, 1), ok

    rows = []
    for spec in args.workloads.split(","):
        run(spec)  # warm-up
        for pair in range(args.pairs):
            for side in SIDES:
                engine.options = dataclasses.replace(engine.options, reuse_plans=side)
                wall, round_ms, ok = run(spec)
                rows.append({"workload": spec, "pair": pair, "side": side, "run_s": wall,
                             "round_ms": round_ms, "ok": ok, "load": os.getloadavg()[0]})
                print(rows[-1], flush=True)
    engine.options = dataclasses.replace(engine.options, reuse_plans="executed")
    facts = runner.machine_facts(spark)
    out = runner.DEFAULT_OUT / "reuse_ab.json"
    out.write_text(json.dumps({"machine": facts, "runs": rows}, indent=2) + "\n")
    lines = ["# Reused plans: in-process A/B (one warm session, sides alternating)", "",
             f"{facts['date']} · {facts['nproc']} cores ({facts['cpu_model']}) · "
             f"load average at start {' '.join(facts['loadavg_start'])} · "
             f"{args.pairs} pairs per workload, medians shown.", "",
             "| workload | plan reuse | run s | loop round ms | load | × off (round) | ok |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for spec in args.workloads.split(","):
        med = {}
        for side in SIDES:
            mine = [r for r in rows if r["workload"] == spec and r["side"] == side]
            med[side] = (statistics.median(r["run_s"] for r in mine),
                         statistics.median(r["round_ms"] for r in mine),
                         statistics.median(r["load"] for r in mine),
                         all(r["ok"] for r in mine))
        for side, (run_s, round_ms, load, ok) in med.items():
            ratio = round_ms / med["off"][1]
            lines.append(f"| {spec} | {side} | {run_s:.1f} | {round_ms:.0f} | {load:.1f} | "
                         f"{ratio:.2f}× | {'yes' if ok else 'NO'} |")
    (runner.DEFAULT_OUT / "reuse_ab.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
