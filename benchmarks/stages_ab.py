"""In-process A/B of a staged recursion over a set relation, with the stages of its runs
(``on``: the default, ir/stages.py) and without (``off``: ``retire_stages=False``): the
k-hop neighbourhood of ``programs/khop.dl``, whose ``within(node, d)`` moves up a hop a
round. With stages on, the runs of passed hops are retired (no round reads them) and a
round's deduplication passes over the runs below its new hop (storage.Database.beneath).
Both sides in one warm session, in alternating order; every run's answer is checked
against networkx's breadth-first distances cut at k.

    python3 -m benchmarks.stages_ab [--pairs 3] [--graphs p2p-Gnutella31] [--k 8]

Writes results/stages_ab.json and results/stages_ab.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

from . import runner
from .graph_peers import CACHE_DIR, load_edges
from .graphs import resolve_graph

SIDES = ("on", "off")
SOURCES = 20


def _expected(path, sources: list[int], k: int) -> set[tuple[int, int]]:
    import networkx as nx

    g = nx.DiGraph()
    with open(path) as f:
        g.add_edges_from(tuple(map(int, line.split()[:2])) for line in f)
    best: dict[int, int] = {}
    for s in sources:
        for node, d in nx.single_source_shortest_path_length(g, s, cutoff=k).items():
            best[node] = min(d, best.get(node, d))
    return set(best.items())


def main() -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.stages_ab")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--graphs", default="p2p-Gnutella31")
    p.add_argument("--k", type=int, default=8)
    args = p.parse_args()

    import sparklog
    from sparklog import programs
    from sparklog.spark import session

    spark = session.start("local[2]", partitions=2)
    engines = {side: sparklog.Engine(spark=spark, partitions=2, retire_stages=side == "on")
               for side in SIDES}
    program = sparklog.Program.from_file(programs.path("khop"))

    def run(edges, sources, side: str) -> tuple[float, int, set]:
        started = time.perf_counter()
        result = engines[side].run(program, inputs={
            "edge": edges, "source": programs._nodes(edges, sources),
            "k": programs._nodes(edges, [args.k])})
        got = {(r[0], r[1]) for r in result["khop"].collect()}  # what a caller waits for
        wall = time.perf_counter() - started
        return round(wall, 2), sum(r["retired"] for r in result.stats), got

    rows = []
    for spec in args.graphs.split(","):
        graph = resolve_graph(spec, CACHE_DIR / "graphs", print)
        edges = load_edges(spark, graph.path, 2).select("src", "dst")
        nodes = sorted({int(line.split()[0]) for line in open(graph.path)})
        sources = random.Random(0).sample(nodes, SOURCES)
        want = _expected(graph.path, sources, args.k)
        run(edges, sources, "on")  # warm-up
        for pair in range(args.pairs):
            for side in (SIDES if pair % 2 == 0 else SIDES[::-1]):
                wall, retired, got = run(edges, sources, side)
                rows.append({"graph": spec, "pair": pair, "side": side, "run_s": wall,
                             "retired": retired, "networkx": got == want,
                             "rows": len(got), "load": os.getloadavg()[0]})
                print(rows[-1], flush=True)
    facts = runner.machine_facts(spark)
    out = runner.DEFAULT_OUT / "stages_ab.json"
    out.write_text(json.dumps({"machine": facts, "k": args.k, "sources": SOURCES,
                               "runs": rows}, indent=2) + "\n")
    lines = ["# A staged recursion over a set relation, stages on and off: in-process A/B",
             "", f"{facts['date']} · {facts['nproc']} cores ({facts['cpu_model']}) · "
             f"load average at start {' '.join(facts['loadavg_start'])} · "
             f"programs/khop.dl, k = {args.k}, {SOURCES} random sources, one warm session, "
             f"{args.pairs} runs per side after one warm-up, sides alternating; medians.", "",
             "| graph | stages | run s | load | on ÷ off | runs retired | networkx's answer |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for spec in args.graphs.split(","):
        med = runner.side_medians([r for r in rows if r["graph"] == spec], SIDES, "retired",
                                  "networkx")
        for side, (run_s, load, retired, same) in med.items():
            lines.append(f"| {spec} | {side} | {run_s:.2f} | {load:.1f} | "
                         f"{run_s / med['off'][0]:.2f}× | {retired:.0f} | "
                         f"{'yes' if same else 'NO'} |")
    (runner.DEFAULT_OUT / "stages_ab.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
