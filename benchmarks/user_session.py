"""The graph programs on a session a user built (``SparkSession.builder.master("local[2]")``,
Spark's defaults otherwise: 200 shuffle partitions, 100 compiled classes kept), as a
Python caller meets sparklog. Two arms in that one session, alternating:

- ``run's partitions`` (the default since 2e63e21): a run sets
  ``spark.sql.shuffle.partitions`` to its own partitions while it runs (session.apply_required);
- ``session's 200``: the same code with that one setting left to the session, as before
  (session.apply_required called without the run's partitions).

Every answer is compared bit for bit with the first run's.

    python3 -m benchmarks.user_session [--pairs 3] [--graphs rmat:14] [--algos pagerank,cc]

Writes results/user_session.json and results/user_session.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from . import runner
from .graph_peers import CACHE_DIR, load_edges
from .graphs import resolve_graph

SIDES = ("run's partitions", "session's 200")
ITERATIONS = 20


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.user_session")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--graphs", default="rmat:14")
    p.add_argument("--algos", default="pagerank,cc")
    args = p.parse_args(argv)

    from pyspark.sql import SparkSession

    import sparklog
    from sparklog import programs
    from sparklog.spark import session

    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "2g")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    engine = sparklog.Engine(spark=spark)
    applied = session.apply_required

    def run(algo: str, edges, side: str) -> tuple[float, list]:
        one = spark.range(1)
        given = {"edge": edges}
        if algo == "pagerank":
            given |= {"iterations": one.selectExpr(f"{ITERATIONS} AS k"),
                      "damping": one.selectExpr("0.85D AS a")}
        session.apply_required = applied if side == SIDES[0] else \
            (lambda s, partitions=None: applied(s))
        try:
            started = time.perf_counter()
            result = engine.run(sparklog.Program.from_file(programs.path(algo)), inputs=given)
            answer = sorted(result[algo].collect())  # what a caller waits for
            return round(time.perf_counter() - started, 2), answer
        finally:
            session.apply_required = applied

    rows = []
    algos = args.algos.split(",")
    for spec in args.graphs.split(","):
        graph = resolve_graph(spec, CACHE_DIR / "graphs", print)
        edges = load_edges(spark, graph.path, engine.options.partitions).select("src", "dst")
        for algo in algos:
            _, first = run(algo, edges, SIDES[0])  # warm-up, each side
            run(algo, edges, SIDES[1])
            for pair in range(args.pairs):
                for side in (SIDES if pair % 2 == 0 else SIDES[::-1]):
                    wall, answer = run(algo, edges, side)
                    rows.append({"graph": spec, "algo": algo, "pair": pair, "side": side,
                                 "run_s": wall, "same_result": answer == first,
                                 "load": os.getloadavg()[0]})
                    print(rows[-1], flush=True)
    facts = runner.machine_facts(spark)
    out = runner.DEFAULT_OUT / "user_session.json"
    out.write_text(json.dumps({"machine": facts, "partitions": engine.options.partitions,
                               "iterations": ITERATIONS, "runs": rows}, indent=2) + "\n")
    lines = ["# The graph programs on a session a user built (Spark's defaults)", "",
             f"{facts['date']} · {facts['nproc']} cores ({facts['cpu_model']}) · "
             f"load average at start {' '.join(facts['loadavg_start'])} · one warm session "
             "`SparkSession.builder.master(\"local[2]\")` (200 shuffle partitions, 100 "
             f"compiled classes kept), runs in {engine.options.partitions} partitions; "
             f"{args.pairs} runs per side after one warm-up each, sides alternating; "
             f"medians. PageRank: {ITERATIONS} iterations.", "",
             "| graph | program | Spark's own shuffles | run s | load | ÷ session's 200 | "
             "result equal |", "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for spec in args.graphs.split(","):
        for algo in algos:
            med = runner.side_medians([r for r in rows if (r["graph"], r["algo"]) == (spec, algo)],
                                      SIDES, "run_s", "same_result")
            for side, (run_s, load, _, same) in med.items():
                lines.append(f"| {spec} | {algo} | {side} | {run_s:.2f} | {load:.1f} | "
                             f"{run_s / med[SIDES[1]][0]:.2f}× | {'yes' if same else 'NO'} |")
    (runner.DEFAULT_OUT / "user_session.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
