"""In-process A/B of one engine option (a field of sparklog.options.Options) on the graph
programs: two engines that differ in it alone, in one warm session, in alternating order,
so they share the JVM's state and the machine's load; each run's result is compared with
the first run's (floats within 1e-12, relative).

    python3 -m benchmarks.option_ab --option inline_constants --sides true,false
        [--pairs 3] [--graphs rmat:14] [--algos pagerank]

``python3 -m benchmarks.join_planning_ab`` is this with ``--option join_planning --sides
replicate,off``: which side of a join that is not partition-local moves (``replicate``
sends a small stored side to every sub-bucket of the rows it meets, or a few rows to every
sub-bucket of a large stored side: translate._replicated, _spread; ``off`` moves the rows
to the stored side's matching sub-buckets, or that side to theirs).

``--program FILE`` runs another PageRank program in place of ``sparklog.programs``' (the
same inputs, its output ``pagerank``): benchmarks/programs/pagerank_one_relation.dl keeps an
iteration's ranks in one ``$SUM`` relation that reads its own totals, which ``--option
presum`` measures (``--name presum-own-total``).

Reports per graph and program the median run seconds and the rows that crossed the rounds'
home shuffles (the stats' ``shuffled``, summed over the run). Writes
results/<name>.json and results/<name>.md (``--name``, by default <option>_ab;
join_planning_ab for join planning).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from . import runner
from .graph_peers import CACHE_DIR, load_edges
from .graphs import resolve_graph

ITERATIONS = 20


def _value(text: str) -> object:
    return {"true": True, "false": False}.get(text.lower(), text)


def _same(rows: list, first: list) -> bool:
    """The same rows, floats within 1e-12 of each other (relative): sides that sum in
    another order (presummed or not) differ in the last bits."""
    def close(a, b) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return abs(a - b) <= 1e-12 * max(1.0, abs(a))
        return a == b
    return len(rows) == len(first) and all(
        len(r) == len(f) and all(close(a, b) for a, b in zip(r, f)) for r, f in zip(rows, first))


def main(argv: list[str] | None = None, option: str | None = None,
         sides: str | None = None) -> None:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.option_ab")
    p.add_argument("--option", default=option, required=option is None)
    p.add_argument("--sides", default=sides, required=sides is None,
                   help="the option's two values, the second the baseline")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--graphs", default="rmat:14,rmat:16")
    p.add_argument("--algos", default="pagerank,cc,bfs")
    p.add_argument("--program", default=None,
                   help="a .dl file run as the pagerank program (same inputs and output)")
    p.add_argument("--name", default=None, help="results/NAME.{json,md} (default <option>_ab)")
    args = p.parse_args(argv)
    name_out = args.name or f"{args.option}_ab"
    values = tuple(args.sides.split(","))
    assert len(values) == 2, "--sides takes two values"

    import sparklog
    from sparklog import programs
    from sparklog.spark import session

    spark = session.start("local[2]", partitions=2)
    engines = {side: sparklog.Engine(spark=spark, partitions=2, **{args.option: _value(side)})
               for side in values}

    def inputs(algo: str, edges) -> tuple[str, str, dict]:
        one = spark.range(1)
        if algo == "pagerank":
            return "pagerank", "pagerank", {
                "edge": edges, "iterations": one.selectExpr(f"{ITERATIONS} AS k"),
                "damping": one.selectExpr("0.85D AS a")}
        if algo == "cc":
            return "cc", "cc", {"edge": edges}
        return "bfs", "hops", {"edge": edges, "source": one.selectExpr("0L AS n")}

    def run(algo: str, edges, side: str) -> tuple[float, int, int, list]:
        name, output, given = inputs(algo, edges)
        source = args.program if args.program and algo == "pagerank" else programs.path(name)
        started = time.perf_counter()
        result = engines[side].run(sparklog.Program.from_file(source), inputs=given)
        answer = sorted(result[output].collect())  # inside the clock: what a caller waits for
        wall = time.perf_counter() - started
        shuffled = sum(r["shuffled"] or 0 for r in result.stats)
        last = {r["relation"]: r["full"] or 0 for r in result.stats}  # each one's final size
        return round(wall, 2), shuffled, sum(last.values()), answer

    rows = []
    algos = args.algos.split(",")
    for spec in args.graphs.split(","):
        graph = resolve_graph(spec, CACHE_DIR / "graphs", print)
        edges = load_edges(spark, graph.path, 2).select("src", "dst")
        for algo in algos:
            *_, first = run(algo, edges, values[0])  # warm-up
            run(algo, edges, values[1])
            for pair in range(args.pairs):
                for side in (values if pair % 2 == 0 else values[::-1]):
                    wall, shuffled, stored, answer = run(algo, edges, side)
                    rows.append({"graph": spec, "algo": algo, "pair": pair, "side": side,
                                 "run_s": wall, "shuffled": shuffled, "stored": stored,
                                 "same_result": _same(answer, first),
                                 "load": os.getloadavg()[0]})
                    print(rows[-1], flush=True)
    facts = runner.machine_facts(spark)
    out = runner.DEFAULT_OUT / f"{name_out}.json"
    out.write_text(json.dumps({"machine": facts, "option": args.option, "sides": values,
                               "program": args.program, "iterations": ITERATIONS,
                               "runs": rows},
                              indent=2) + "\n")
    lines = [f"# In-process A/B of `{args.option}`", "",
             f"{facts['date']} · {facts['nproc']} cores ({facts['cpu_model']}) · "
             f"load average at start {' '.join(facts['loadavg_start'])} · one warm session "
             f"(`local[2]`, 2 partitions), {args.pairs} runs per side after one warm-up "
             f"each, sides alternating; medians. PageRank: {ITERATIONS} iterations; BFS from "
             "node 0." + (f" PageRank's program: `{args.program}`." if args.program else ""),
             "",
             f"| graph | program | {args.option} | run s | load | ÷ {values[1]} | rows shuffled | "
             "rows stored | result equal (floats within 1e-12) |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for spec in args.graphs.split(","):
        for algo in algos:
            mine = [r for r in rows if (r["graph"], r["algo"]) == (spec, algo)]
            med = runner.side_medians(mine, values, "shuffled", "same_result")
            stored = runner.side_medians(mine, values, "stored", "same_result")
            for side, (run_s, load, shuffled, same) in med.items():
                lines.append(f"| {spec} | {algo} | {side} | {run_s:.2f} | {load:.1f} | "
                             f"{run_s / med[values[1]][0]:.2f}× | {shuffled:,.0f} | "
                             f"{stored[side][2]:,.0f} | {'yes' if same else 'NO'} |")
    (runner.DEFAULT_OUT / f"{name_out}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
