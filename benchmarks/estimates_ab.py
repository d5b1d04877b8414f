"""In-process A/B of the checkpoint rewrite that drops a version's inherited size
estimate (storage._without_estimates): strata10 runs alternately with and without it in
one warm session, so both sides share the JVM's state and the machine's load.

    python3 -m benchmarks.estimates_ab [--pairs 3]

Prints one line per run (wall seconds, median counter-round milliseconds) and writes
results/estimates_ab.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from . import runner
from .workloads import STRATA10


def main() -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.estimates_ab")
    p.add_argument("--pairs", type=int, default=3)
    args = p.parse_args()

    import sparklog
    from sparklog.spark import session, storage

    spark = session.start("local[2]", partitions=2)
    engine = sparklog.Engine(spark=spark, partitions=2, strategy="asis")
    rewrite = storage._without_estimates

    def run() -> tuple[float, float]:
        started = time.perf_counter()
        result = engine.run(STRATA10)
        wall = time.perf_counter() - started
        rounds = [r["seconds"] for r in result.stats if r["relation"] == "n" and r["iteration"] > 1]
        return round(wall, 2), round(statistics.median(rounds) * 1000, 1)

    run()  # warm-up
    rows = []
    for pair in range(args.pairs):
        for side, fn in (("with", rewrite), ("without", lambda df: df)):
            storage._without_estimates = fn
            wall, round_ms = run()
            rows.append({"pair": pair, "side": side, "run_s": wall, "round_ms": round_ms,
                         "load": os.getloadavg()[0]})
            print(rows[-1], flush=True)
    storage._without_estimates = rewrite
    out = runner.DEFAULT_OUT / "estimates_ab.json"
    out.write_text(json.dumps({"machine": runner.machine_facts(spark), "runs": rows},
                              indent=2) + "\n")


if __name__ == "__main__":
    main()
