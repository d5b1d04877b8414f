"""A stratum that only projects a $MIN/$MAX relation's value away (rounds._projection):
the last stratum of a Smart, Balance or Thirds closure, ``tc(x, y) :- tc@len(x, y, _)``,
or a user's ``reached(x) :- dist(x, _)``. Its runs are the scanned relation's, projected,
with no job: the results equal networkx's, later strata read them, and a projection that
keeps the value, or renames a column, is computed as any other stratum is."""

from __future__ import annotations

import random

import networkx as nx
import pytest

import sparklog
from tests.spark.helpers import edges_df, rows, run

CLOSURE = """
.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
.decl loop(x: number)
.decl from(x: number, y: number)
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), tc(z, y).
loop(x) :- tc(x, x).
from(x, y) :- tc(x, y), edge(x, _), x < 10.
"""
# a later join on both columns may place tc otherwise than tc@len: then tc is stored
BACK = CLOSURE + ".decl back(x: number, y: number)\nback(x, y) :- tc(x, y), edge(y, x).\n"


def _graph(seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return sorted({(rng.randrange(50), rng.randrange(50)) for _ in range(90)})


@pytest.mark.parametrize("strategy", ["smart", "balance", "thirds"])
@pytest.mark.parametrize("text", [CLOSURE, BACK], ids=["in-place", "placed-otherwise"])
def test_a_closure_s_last_stratum_reads_its_lengths_in_place(spark, strategy, text):
    edges = _graph(3)
    g = nx.DiGraph(edges)
    closure = {(a, b) for a in g for b in nx.descendants(g, a)} | {
        (a, a) for a in g if any(a in nx.descendants(g, s) or s == a for s in g[a])}
    result = run(sparklog.Engine(spark=spark, partitions=2, strategy=strategy), text,
                 inputs={"edge": edges_df(spark, edges)})
    assert rows(result["tc"]) == closure
    assert result.size("tc") == len(closure) == result.size("tc@len")
    assert rows(result["loop"]) == {(a,) for a, b in closure if a == b}
    assert rows(result["from"]) == {(a, b) for a, b in closure if a < 10}
    if text == BACK:
        assert rows(result["back"]) == {(a, b) for a, b in closure if (b, a) in set(edges)}
    (record,) = [r for r in result.stats if r["relation"] == "tc"]
    assert record["full"] == record["delta"] == len(closure)
    layouts = sparklog.Program.from_text(text).plan_for(strategy).layouts
    in_place = (layouts["tc"].key, layouts["tc"].hashed) == (layouts["tc@len"].key,
                                                             layouts["tc@len"].hashed)
    if text == CLOSURE and strategy == "smart":
        assert in_place  # the case this is for (Balance and Thirds place tc@len by c1)
    if in_place:  # no job: the runs are the lengths' runs, projected
        assert record["spark_jobs"] == 0 and record["shuffled"] == 0 and record["written"] == 0
    else:  # stored by a job, as any stratum
        assert record["written"] == len(closure)
    lengths = [r for r in result.stats if r["relation"] == "tc@len"]
    assert record["runs"] == lengths[-1]["runs"]


SSSP = """
.decl edge(x: number, y: number, w: number)
.input edge
.decl start(x: number)
.input start
.decl dist(x: number, d: number)
.decl reached(x: number)
.decl far(x: number, d: number)
.decl named(y: number)
dist(x, $MIN(0)) :- start(x).
dist(y, $MIN(d + w)) :- dist(x, d), edge(x, y, w).
reached(x) :- dist(x, _).
far(x, d) :- dist(x, d).
named(y) :- dist(y, d), d > 3.
"""


def test_a_min_relation_s_keys_projected_and_other_projections_computed(spark):
    rng = random.Random(7)
    edges = sorted({(rng.randrange(40), rng.randrange(40), rng.randrange(1, 5))
                    for _ in range(90)})
    df = spark.createDataFrame(edges, "x long, y long, w long")
    g = nx.DiGraph()
    for a, b, w in edges:  # the lightest of parallel arcs
        if not g.has_edge(a, b) or g[a][b]["weight"] > w:
            g.add_edge(a, b, weight=w)
    best = nx.single_source_dijkstra_path_length(g, 0) if 0 in g else {0: 0}
    result = run(sparklog.Engine(spark=spark, partitions=2), SSSP,
                 inputs={"edge": df, "start": spark.createDataFrame([(0,)], "x long")})
    assert rows(result["dist"]) == set(best.items())
    assert rows(result["reached"]) == {(x,) for x in best}
    assert rows(result["far"]) == set(best.items())
    assert rows(result["named"]) == {(x,) for x, d in best.items() if d > 3}
    written = {r["relation"]: r["written"] for r in result.stats
               if r["relation"] in ("reached", "far", "named")}
    # reached is dist's runs projected; far keeps the value, named filters: both stored
    assert written == {"reached": 0, "far": len(best),
                       "named": len([d for d in best.values() if d > 3])}
