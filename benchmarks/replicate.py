"""A linear recursion placed by the columns its head keeps, its lower relations sent to its
delta (``--replicate-static``, rewrite/replicate.py; ``auto``, the default, sends a
closure's edges when they make few copies a round), against the placement by the join
column (``off``): left-linear TC of real graphs, warm, in one session, beside DuckDB.
``--option NAME --sides A,B`` compares another engine option the same way (A the side
measured, B the baseline): ``--option stored_copies --sides true,false --name
stored_copies`` reads the edges sent to the delta from a copy stored once per stratum
(Database.copy_view) against shuffling them there every round.

``--graphs`` takes ``chain:N`` too: the chain 0 -> 1 -> ... -> N (its closure N(N+1)/2
pairs), written to a temporary folder; with ``--strategy left`` it takes N rounds.

    python3 -m benchmarks.replicate [--graphs email-Eu-core,Lederberg] [--repeat 3]
                                    [--name replicate] [--no-duckdb]
                                    [--option replicate_static --sides auto,off]

One ``local[2]`` session; each graph is evaluated once each way unmeasured (the JVM's
warm-up), then ``--repeat`` times each way, the order alternating, and DuckDB's recursive
CTE (``UNION``) on the same file after each pair. Every size is checked against
../shared/data/README.md. Writes results/NAME.{json,md}: medians, the ratio of the two,
and each against DuckDB, with the rounds' shuffled tuples and seconds of the last run.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.real_graphs import EXPECTED, PROGRAM, duckdb_tc
from benchmarks.settings import DATA, RESULTS


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", default="email-Eu-core,Lederberg")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--name", default="replicate")
    p.add_argument("--no-duckdb", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--strategy", default="auto",
                   help="the engines' --strategy (left: a chain evaluated linearly)")
    p.add_argument("--option", default="replicate_static")
    p.add_argument("--sides", default="auto,off",
                   help="the option's two values: the side measured, then the baseline")
    args = p.parse_args()
    import sparklog
    from benchmarks.runner import machine_facts_static

    tested, baseline = args.sides.split(",")
    value = lambda text: {"true": True, "false": False}.get(text.lower(), text)  # noqa: E731
    base = sparklog.Engine(master="local[2]", strategy=args.strategy,
                           **{args.option: value(baseline)})
    engines = {baseline: base, tested: sparklog.Engine(
        base.spark, strategy=args.strategy, **{args.option: value(tested)})}
    report: dict[str, Any] = dict(date=_dt.datetime.now().isoformat(timespec="seconds"),
                                  machine=machine_facts_static(), load_before=os.getloadavg(),
                                  option=args.option, sides=[tested, baseline],
                                  strategy=args.strategy, graphs=[])
    scratch = Path(tempfile.mkdtemp(prefix="sparklog-replicate-"))
    for graph in args.graphs.split(","):
        folder, expected = _graph(graph, scratch)
        file = f"{graph.replace(':', '-')}.tsv"  # no colon in a Hadoop path
        program = sparklog.Program.from_text(PROGRAM.format(name=file))
        runs: dict[str, list[float]] = {name: [] for name in engines}
        rounds: dict[str, list[dict[str, Any]]] = {}
        ok, duck = True, []
        for rep in range(args.repeat + 1):
            order = list(engines.items())
            for name, engine in order[::-1] if rep % 2 else order:
                started = time.perf_counter()
                result = engine.run(program, facts_dir=folder)
                size = result.size("tc")
                seconds = round(time.perf_counter() - started, 2)
                ok &= size == expected
                if rep:  # the first pass warms the JVM
                    runs[name].append(seconds)
                rounds[name] = [dict(iteration=r["iteration"], seconds=r["seconds"],
                                     derivations=r["derivations"], shuffled=r["shuffled"])
                                for r in result.stats if r["relation"] == "tc"]
                print(f"{graph:14} {name:11} {seconds:7.2f} s", flush=True)
            if rep and not args.no_duckdb:
                seconds, size = duckdb_tc(folder / file)
                ok &= size == expected
                duck.append(seconds)
        report["graphs"].append(dict(graph=graph, runs=runs, duckdb=duck, ok=ok,
                                     rounds=rounds))
    report["load_after"] = os.getloadavg()
    _write(args.out, args.name, report)
    return 0 if all(g["ok"] for g in report["graphs"]) else 1


def _graph(graph: str, scratch: Path) -> tuple[Path, int]:
    """The folder holding ``graph``.tsv and the size of its closure: a graph of the shared
    data, or ``chain:N`` written to ``scratch``."""
    if not graph.startswith("chain:"):
        return DATA, EXPECTED[f"{graph}.tsv"]
    n = int(graph.split(":")[1])
    (scratch / f"chain-{n}.tsv").write_text("".join(f"{i}\t{i + 1}\n" for i in range(n)))
    return scratch, n * (n + 1) // 2


def _write(out: Path, name: str, report: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=1) + "\n")
    machine = report["machine"]
    option = report.get("option", "replicate_static")
    tested, baseline = report.get("sides", ["auto", "off"])
    title = ("# Left-linear TC, placed by the join column (`--replicate-static off`) or "
             "with the edges sent to the delta (`auto`, the default), warm"
             if option == "replicate_static" else
             f"# Left-linear TC, `{option}` {tested} against {baseline}, warm")
    lines = [title, "",
             f"{report['date']}, {machine.get('cpu_model', '')}, {machine.get('nproc', '')} "
             f"cores, one `local[2]` session, `--strategy {report.get('strategy', 'auto')}`; "
             f"load before {report['load_before'][0]:.1f}, "
             f"after {report['load_after'][0]:.1f}. Medians of the runs after a warm-up "
             "pass, the two ways alternating; DuckDB's recursive CTE on the same file in the "
             "same process after each pair.", "",
             f"| graph | {baseline} s | {tested} s | {tested} ÷ {baseline} | DuckDB s "
             f"| {baseline} ÷ DuckDB | {tested} ÷ DuckDB | all right |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for g in report["graphs"]:
        a = statistics.median(g["runs"][baseline])
        b = statistics.median(g["runs"][tested])
        d = statistics.median(g["duckdb"]) if g["duckdb"] else None
        duck = (f"{d:.2f} | {a / d:.1f}x | {b / d:.1f}x" if d else " | | ")
        lines.append(f"| {g['graph']} | {a:.2f} | {b:.2f} | {b / a:.2f} | {duck} | "
                     f"{'yes' if g['ok'] else 'NO'} |")
    lines += ["", "Rounds of the last run each way (seconds, derivations, tuples shuffled "
              "to their home):", ""]
    for g in report["graphs"]:
        for way, rounds in g["rounds"].items():
            loop = [r for r in rounds if r["iteration"]]
            shown = loop if len(loop) <= 20 else loop[:10] + loop[-5:]  # a chain's hundreds
            text = [f"{r['iteration']}: {r['seconds']:.2f} s, {r['derivations']:,} derived, "
                    f"{r['shuffled']:,} shuffled" for r in shown]
            if len(shown) < len(loop):
                text.insert(10, f"... ({len(loop) - 15} rounds, "
                                f"{sum(r['seconds'] for r in loop[10:-5]):.2f} s)")
            lines.append(f"- {g['graph']}, {way}: " + "; ".join(text))
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
