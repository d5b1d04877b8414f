"""Graph programs against networkx: TC, reachability, same-generation, trees."""

from __future__ import annotations

import networkx as nx
import pytest

import sparklog
from sparklog import gen
from tests.spark.helpers import TC, edges_df, rows, run


@pytest.fixture(scope="module")
def as_written(spark):
    """The closures' rules as written (no strategy rewrites them), to count their rounds."""
    return sparklog.Engine(spark=spark, partitions=2, strategy="asis")


def tc_oracle(edges) -> set[tuple]:
    g = nx.DiGraph(list(edges))
    return {(x, y) for x in g for y in nx.descendants(g, x)} | \
        {(x, x) for x in g if any(x in c and (len(c) > 1 or g.has_edge(x, x))
                                  for c in nx.strongly_connected_components(g))}


@pytest.mark.parametrize("edges", [
    [(1, 2), (2, 3), (3, 1), (3, 4)],  # a cycle with a tail
    list(gen.gnm(40, 90, seed=3)),
    list(gen.chain(25)),
])
def test_tc_matches_networkx(engine, spark, edges):
    result = run(engine, TC, inputs={"edge": edges_df(spark, edges)})
    assert rows(result["tc"]) == tc_oracle(edges)


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("depth", [2, 5, 7])
def test_binary_tree_tc_size(as_written, spark, depth, direction):
    edges = list(gen.tree(depth, direction))
    result = run(as_written, TC, inputs={"edge": edges_df(spark, edges)})
    expected = depth * 2**depth - 2 * (2**depth - 1)
    assert result["tc"].count() == expected == result.size("tc")
    # semi-naive converges in depth-1 productive iterations plus one that finds nothing
    assert result.iterations("tc") == depth - 1


def test_reachability_from_source(engine, spark):
    edges = list(gen.gnm(60, 120, seed=11))
    program = """
    .decl edge(x: number, y: number)
    .input edge
    .decl reach(x: number)
    reach(0).
    reach(y) :- reach(x), edge(x, y).
    """
    result = run(engine, program, inputs={"edge": edges_df(spark, edges)})
    g = nx.DiGraph(edges)
    g.add_node(0)
    assert rows(result["reach"]) == {(v,) for v in nx.descendants(g, 0) | {0}}


def test_same_generation(engine, spark):
    edges = list(gen.tree(5, "down"))  # parent -> child
    program = """
    .decl parent(p: number, c: number)
    .input parent
    .decl sg(x: number, y: number)
    sg(x, y) :- parent(p, x), parent(p, y), x != y.
    sg(x, y) :- parent(a, x), sg(a, b), parent(b, y).
    """
    result = run(engine, program, inputs={"parent": edges_df(spark, edges)})
    depth = nx.shortest_path_length(nx.DiGraph(edges), 1)
    expected = {(x, y) for x in depth for y in depth if x != y and depth[x] == depth[y] and depth[x] > 0}
    assert rows(result["sg"]) == expected


def test_nonlinear_tc(engine, spark):
    edges = list(gen.gnm(30, 60, seed=5))
    program = TC.replace("tc(x, y) :- tc(x, z), edge(z, y).", "tc(x, y) :- tc(x, z), tc(z, y).")
    result = run(engine, program, inputs={"edge": edges_df(spark, edges)})
    assert rows(result["tc"]) == tc_oracle(edges)


def test_stratified_negation_and_aggregate(engine, spark):
    edges = list(gen.gnm(25, 50, seed=8))
    program = TC + """
    .decl node(x: number)
    node(x) :- edge(x, _). node(y) :- edge(_, y).
    .decl unreachable(x: number, y: number)
    unreachable(x, y) :- node(x), node(y), !tc(x, y).
    .decl outdeg(x: number, n: number)
    outdeg(x, n) :- node(x), n = count : { tc(x, _) }.
    .decl total(s: number)
    total(s) :- s = sum n : { outdeg(_, n) }.
    """
    result = run(engine, program, inputs={"edge": edges_df(spark, edges)})
    reach = tc_oracle(edges)
    nodes = {v for e in edges for v in e}
    assert rows(result["unreachable"]) == {(x, y) for x in nodes for y in nodes} - reach
    assert rows(result["outdeg"]) == {(x, sum(1 for p in reach if p[0] == x)) for x in nodes}
    assert rows(result["total"]) == {(len(reach),)}


@pytest.mark.parametrize("rule", ["tc(x, y) :- tc(x, z), edge(z, y).",   # left-linear
                                  "tc(x, y) :- edge(x, z), tc(z, y)."])  # right-linear
def test_paired_trees_derivations_match_afrati_ullman(as_written, spark, rule):
    """Fig. 2 of Afrati & Ullman (H=4): 60 arcs, 279 TC facts, 268 recursive derivations."""
    edges = list(gen.paired_trees(4))
    program = TC.replace("tc(x, y) :- tc(x, z), edge(z, y).", rule)
    result = run(as_written, program, inputs={"edge": edges_df(spark, edges)})
    assert len(edges) == 60 and result.size("tc") == 279
    recursive = sum(r["derivations"] for r in result.stats
                    if r["relation"] == "tc" and r["iteration"] > 0)
    assert recursive == 268
