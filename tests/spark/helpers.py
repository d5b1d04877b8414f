"""Small helpers for Spark tests: run a program, get its relations as Python sets."""

from __future__ import annotations

import sparklog


def rows(df) -> set[tuple]:
    """A result DataFrame as a set of tuples (test oracles compare sets)."""
    return {tuple(r) for r in df.collect()}


def run(engine, text: str, inputs: dict | None = None, facts_dir=None) -> sparklog.Result:
    return engine.run(sparklog.Program.from_text(text), inputs=inputs, facts_dir=facts_dir)


def edges_df(spark, edges, names=("x", "y")):
    return spark.createDataFrame([tuple(e) for e in edges], f"{names[0]} long, {names[1]} long")


TC = """
.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
.output tc
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), edge(z, y).
"""


def rounds(result, relation="tc"):
    """A relation's rounds as two runs of one program must agree on them: derivations of
    the first version; then per loop round its delta, derivations and growth of ``full``.
    Growth, not size: the size a deferred first version is booked with can miss a
    partition's rows when two stages of one job compute it (seen about once in ten runs
    of the nonlinear closure; the rows themselves are right), and every later size adds
    to it."""
    records = [r for r in result.stats if r["relation"] == relation]
    first = records[0]
    return [(first["iteration"], first["derivations"])] + [
        (r["iteration"], r["delta"], r["full"] - first["full"], r["derivations"])
        for r in records[1:]]
