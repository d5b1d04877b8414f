"""Soufflé's user lattices on Spark (``.lattice T<>`` and columns typed ``T<>``): a Lub
written in the language and one registered from Python (``Engine.functor``), against
networkx and against the same program with ``$MAX``."""

from __future__ import annotations

import networkx as nx
import pytest
from pyspark.sql import functions as F

import sparklog
from sparklog.errors import EngineError
from tests.spark.helpers import rows
from tests.spark.test_lattice_graphs import frame

SOURCES = """
.lattice Sources<> { Bottom -> 0, Lub(x, y) -> x bor y, Glb(x, y) -> x band y }
.decl e(x: number, y: number)
.input e
.decl start(x: number)
.input start
// the set of start nodes that reach each node, as a bit mask
.decl seen(x: number, m: Sources<>)
.output seen
seen(x, 1 bshl x) :- start(x).
seen(y, m) :- seen(x, m), e(x, y).
"""

FARTHEST = """
.lattice Far<> { Bottom -> -1, Lub -> @farther(_, _) }
.decl e(x: number, y: number)
.input e
.decl far(x: number, m: Far<>)
.output far
far(x, y) :- e(x, y).
far(x, m) :- far(y, m), e(x, y).
"""


@pytest.mark.parametrize("run_rows", [None, 3])
def test_a_bitwise_or_lattice_is_reachability_from_each_source(engine, spark, run_rows):
    """With runs sealed at 3 rows a node's mask grows while its row lies in a sealed run:
    the Lub must fold the sealed value in (and compaction drop the old row)."""
    if run_rows is not None:
        engine = sparklog.Engine(spark=spark, partitions=2, run_rows=run_rows)
    g = nx.gnm_random_graph(40, 70, seed=7, directed=True)
    starts = [0, 3, 9, 17, 25, 38]
    df = frame(engine.spark, [(a, b, 0) for a, b in g.edges()], weighted=False)
    start = engine.spark.range(1).selectExpr(f"explode(array({', '.join(map(str, starts))}))")
    result = engine.run(sparklog.Program.from_text(SOURCES), inputs={"e": df, "start": start})
    want: dict[int, int] = {}
    for s in starts:
        for v in nx.descendants(g, s) | {s}:
            want[v] = want.get(v, 0) | (1 << s)
    assert rows(result["seen"]) == set(want.items())
    assert result.size("seen") == len(want)  # one stored tuple per node
    if run_rows is not None:  # some masks grew while their rows lay in sealed runs
        assert sum(r.get("stale") or 0 for r in result.stats if r["relation"] == "seen") > 0


def test_a_python_functor_is_the_lub(spark):
    engine = sparklog.Engine(spark=spark, partitions=2)
    engine.functor("farther", lambda a, b: F.greatest(a, b))
    edges = [(1, 2), (2, 3), (3, 1), (4, 5), (5, 6), (0, 4), (6, 6)]
    df = frame(spark, [(a, b, 0) for a, b in edges], weighted=False)
    got = rows(engine.run(sparklog.Program.from_text(FARTHEST), inputs={"e": df})["far"])
    same = FARTHEST.replace(".lattice Far<> { Bottom -> -1, Lub -> @farther(_, _) }\n", "") \
        .replace("m: Far<>", "m: number").replace("far(x, y) :-", "far(x, $MAX(y)) :-")
    want = rows(engine.run(sparklog.Program.from_text(same), inputs={"e": df})["far"])
    g = nx.DiGraph(edges)
    reach = {v: set().union(*({w} | nx.descendants(g, w) for w in g.successors(v)))
             for v in g}
    assert got == want == {(v, max(r)) for v, r in reach.items() if r}


def test_an_unregistered_functor_is_named(spark):
    engine = sparklog.Engine(spark=spark, partitions=2)
    df = frame(spark, [(1, 2, 0)], weighted=False)
    with pytest.raises(EngineError, match="no functor 'farther' is registered"):
        engine.run(sparklog.Program.from_text(FARTHEST), inputs={"e": df})
