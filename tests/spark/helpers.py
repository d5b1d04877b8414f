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
    """A relation's rounds as two runs of one program must agree on them: derivations
    and size of the first version; then per loop round its delta, size and derivations.
    The first version is deferred (computed by round 1's job, several stages of it at
    once): its sizes are observed counts that Spark 4 left short unless told to add up
    every stage's (session.REQUIRED_CONF)."""
    records = [r for r in result.stats if r["relation"] == relation]
    first = records[0]
    return [(first["iteration"], first["derivations"], first["full"])] + [
        (r["iteration"], r["delta"], r["full"], r["derivations"]) for r in records[1:]]
