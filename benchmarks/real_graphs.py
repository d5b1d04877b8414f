"""TC of the real graphs in ../shared/data with sparklog, checked against the README's sizes.

    python3 -m benchmarks.real_graphs [--graphs a.tsv,b.tsv] [--out benchmarks/results]
                                      [--codegen-too] [--duckdb]

Writes results/real_graphs.json and .md (seconds, iterations, TC size, expected, ok).
With ``--codegen-too`` each graph also runs with whole-stage code generation in every
round (``Engine(codegen_rows=0)``) in the same session, the two runs in alternating order
from graph to graph, and the table gains those seconds and their ratio. With ``--duckdb``
DuckDB's recursive CTE (``UNION``: set semantics) computes the same closure in the same
process right after sparklog's run of each graph (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

EXPECTED = {  # TC sizes from ../shared/data/README.md
    "greengenes-13_5-taxonomy.tsv": 16_764,
    "email-Eu-core.tsv": 793_283,
    "Lederberg.tsv": 3_359_842,
    "rome99.tsv": 11_242_609,
    "p2p-Gnutella08.tsv": 13_148_244,
    "ca-GrQc.tsv": 17_293_270,
    "wb-cs-stanford.tsv": 26_566_978,
}

PROGRAM = """
.decl edge(x: number, y: number)
.input edge(filename="{name}")
.decl tc(x: number, y: number)
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), edge(z, y).
"""
WEIGHTED = """
.decl edge(x: number, y: number, w: number)
.input edge(filename="{name}")
.decl tc(x: number, y: number)
tc(x, y) :- edge(x, y, _).
tc(x, y) :- tc(x, z), edge(z, y, _).
"""


def duckdb_tc(path: Path) -> tuple[float, int]:
    """Seconds and size of the closure by DuckDB's recursive CTE (set semantics), reading
    the first two columns of the graph's TSV file."""
    import duckdb

    width = len(path.read_text().splitlines()[0].split("\t"))
    columns = ", ".join(f"'c{i}': 'BIGINT'" for i in range(width))
    started = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"CREATE TABLE edge AS SELECT c0 AS x, c1 AS y FROM read_csv('{path}', "
                f"delim='\t', header=false, columns={{{columns}}})")
    size = con.execute("WITH RECURSIVE tc(x, y) AS (SELECT x, y FROM edge UNION "
                       "SELECT tc.x, edge.y FROM tc JOIN edge ON tc.y = edge.x) "
                       "SELECT count(*) FROM tc").fetchone()[0]
    con.close()
    return round(time.perf_counter() - started, 2), size


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--graphs", default=",".join(EXPECTED))
    p.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    p.add_argument("--partitions", type=int, default=None)
    p.add_argument("--codegen-too", action="store_true",
                   help="also run every graph with whole-stage code generation in every round")
    p.add_argument("--duckdb", action="store_true",
                   help="also time DuckDB's recursive CTE on every graph, in the same run")
    args = p.parse_args()

    import sparklog

    engine = sparklog.Engine(master="local[*]", partitions=args.partitions)
    codegen = sparklog.Engine(engine.spark, partitions=args.partitions, codegen_rows=0)
    rows = []
    for i, name in enumerate(args.graphs.split(",")):
        program = sparklog.Program.from_text(
            (WEIGHTED if name == "rome99.tsv" else PROGRAM).format(name=name))
        order = [("", engine), ("_codegen", codegen)] if args.codegen_too else [("", engine)]
        row = dict(graph=name, expected=EXPECTED[name])
        for suffix, eng in order[::-1] if i % 2 else order:
            started = time.perf_counter()
            result = eng.run(program, facts_dir=args.data)
            size = result.size("tc")
            row[f"seconds{suffix}"] = round(time.perf_counter() - started, 2)
            row[f"ok{suffix}"] = size == EXPECTED[name]
            if not suffix:
                row.update(iterations=result.iterations("tc"), tc=size,
                           derivations=sum(r["derivations"] for r in result.stats),
                           max_imbalance=max(r["imbalance"] for r in result.stats))
        if args.duckdb:
            row["duckdb_seconds"], size = duckdb_tc(args.data / name)
            row["ok_duckdb"] = size == EXPECTED[name]
        row["ok"] = all(v for k, v in row.items() if k.startswith("ok"))
        print(json.dumps(row), flush=True)
        rows.append(row)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "real_graphs.json"
    earlier = json.loads(path.read_text()) if path.exists() else []
    done = {r["graph"] for r in rows}  # keep earlier runs of the graphs not run now
    rows = [r for r in earlier if r["graph"] not in done] + rows
    rows.sort(key=lambda r: list(EXPECTED).index(r["graph"]))
    path.write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["| graph | TC size | expected | ok | iterations | seconds | derivations "
             "| seconds with codegen | ratio | DuckDB s | ÷ DuckDB |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        with_codegen = r.get("seconds_codegen")
        extra = (f"{with_codegen} | {r['seconds'] / with_codegen:.2f}x" if with_codegen
                 else "| ")
        duck = r.get("duckdb_seconds")
        extra += (f" | {duck} | {r['seconds'] / duck:.1f}x" if duck else " | | ")
        lines.append(f"| {r['graph']} | {r['tc']:,} | {r['expected']:,} "
                     f"| {'yes' if r['ok'] else 'NO'} | {r['iterations']} | {r['seconds']} "
                     f"| {r['derivations']:,} | {extra} |")
    (args.out / "real_graphs.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
