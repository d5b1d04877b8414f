"""In-process A/B of the runs a staged recursion's deduplication passes over
(storage.Database.unread): PageRank's contributions of iteration i + 1 are derived while
the run of iteration i's is still live, and with the refinement on the round's combine step
does not probe them against it ("on"); "off" plans every round as before it, reading every
live run (ir/stages.advances made to find nothing). Both sides in one warm session, in
alternating order, so they share the JVM's state and the machine's load; each run's ranks
are compared with the first run's, bit for bit.

    python3 -m benchmarks.unread_ab [--pairs 4] [--graphs rmat:14,p2p-Gnutella08]

Writes results/unread_ab.json and results/unread_ab.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from . import runner
from .graph_peers import CACHE_DIR, load_edges
from .graphs import resolve_graph

SIDES = ("on", "off")
ITERATIONS = 20


def main() -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.unread_ab")
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--graphs", default="rmat:14,p2p-Gnutella08")
    args = p.parse_args()

    import sparklog
    from sparklog import programs
    from sparklog.ir import stages
    from sparklog.spark import rounds, session

    spark = session.start("local[2]", partitions=2)
    engine = sparklog.Engine(spark=spark, partitions=2)
    program = sparklog.Program.from_file(programs.path("pagerank"))

    def run(edges, side: str) -> tuple[float, int, dict]:
        rounds.advances = stages.advances if side == "on" else (lambda sp, found: {})
        started = time.perf_counter()
        result = engine.run(program, inputs={
            "edge": edges,
            "iterations": spark.createDataFrame([(ITERATIONS,)], "k long"),
            "damping": spark.createDataFrame([(0.85,)], "a double")})
        ranks = result["pagerank"].collect()  # inside the clock: what a caller waits for
        wall = time.perf_counter() - started
        unread = sum(r["unread"] for r in result.stats)
        return round(wall, 2), unread, {r[0]: r[1] for r in ranks}

    rows = []
    try:
        for spec in args.graphs.split(","):
            graph = resolve_graph(spec, CACHE_DIR / "graphs", print)
            edges = load_edges(spark, graph.path, 2).select("src", "dst")
            _, _, first = run(edges, "on")  # warm-up
            for pair in range(args.pairs):
                for side in (SIDES if pair % 2 == 0 else SIDES[::-1]):
                    wall, unread, ranks = run(edges, side)
                    rows.append({"graph": spec, "pair": pair, "side": side, "run_s": wall,
                                 "unread": unread, "same_ranks": ranks == first,
                                 "load": os.getloadavg()[0]})
                    print(rows[-1], flush=True)
    finally:
        rounds.advances = stages.advances
    facts = runner.machine_facts(spark)
    out = runner.DEFAULT_OUT / "unread_ab.json"
    out.write_text(json.dumps({"machine": facts, "iterations": ITERATIONS, "runs": rows},
                              indent=2) + "\n")
    lines = ["# Runs a staged recursion's deduplication passes over: in-process A/B", "",
             f"{facts['date']} · {facts['nproc']} cores ({facts['cpu_model']}) · "
             f"load average at start {' '.join(facts['loadavg_start'])} · PageRank, "
             f"{ITERATIONS} iterations, one warm session, {args.pairs} runs per side "
             "after one warm-up, sides alternating; medians.", "",
             "| graph | passed over | run s | load | on ÷ off | runs passed over | ranks equal |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for spec in args.graphs.split(","):
        med = runner.side_medians([r for r in rows if r["graph"] == spec], SIDES, "unread",
                                  "same_ranks")
        for side, (run_s, load, unread, same) in med.items():
            lines.append(f"| {spec} | {side} | {run_s:.2f} | {load:.1f} | "
                         f"{run_s / med['off'][0]:.2f}× | {unread:.0f} | "
                         f"{'yes' if same else 'NO'} |")
    (runner.DEFAULT_OUT / "unread_ab.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
