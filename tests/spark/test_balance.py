"""Spatial balance (spark/balance.py): exact placement of sub-buckets, refinement and
consolidation between rounds.

Balancing changes where tuples live, never what a round derives: every test runs with a
balancer that refines at every round (ratio 1, no minimum size) and checks the result
against an oracle, its rounds against the same program with balancing off, and where
every stored row sits."""

from __future__ import annotations

import networkx as nx
import pytest
from pyspark.sql import functions as F

import sparklog
from sparklog import gen
from sparklog.spark.balance import murmur3_int, partition_of
from sparklog.spark.storage import home_value
from sparklog.syntax.parser import parse
from tests import reference
from tests.spark.helpers import TC, edges_df, rounds, rows, run
from tests.spark.test_runs import NONLINEAR as RUNS_NONLINEAR

EAGER = dict(balance_ratio=1.0, balance_rows=0, balance_every=1)



def assert_placed(result):
    """Every stored row's _sb is its sub-bucket's home value, and it sits on the partition
    that home value hashes to; no partition hosts more than one sub-bucket more than
    another while nothing was consolidated."""
    db = result._db
    parts = db.options.partitions
    for name in db.stored:
        home = home_value(db.layout(name), db.kinds(name), db.allocation(name))
        for run_ in db.runs(name):
            wrong = run_.filter((F.spark_partition_id() != F.pmod(F.hash("_sb"), F.lit(parts)))
                                | (F.col("_sb") != home)).count()
            assert wrong == 0, name
        counted = [0] * parts  # the sizes the balancer and the stats read are the rows'
        for run_ in db.runs(name):
            for p, n in run_.groupBy(F.spark_partition_id()).count().collect():
                counted[p] += n
        assert db.partition_sizes.get(name, counted) == counted, name
        hosted = db.allocation(name).hosted()
        if not any(r["consolidated"] for r in result.stats if r["relation"] == name):
            assert max(hosted) - min(hosted) <= 1, (name, hosted)


def test_home_values_hash_where_spark_places_them(spark):
    values = list(range(-40, 200)) + [2**31 - 1, -(2**31)]
    got = dict(spark.range(1).select(F.explode(F.array(*map(F.lit, values))).alias("v"))
               .select("v", F.hash("v")).collect())
    assert all(got[v] == murmur3_int(v) for v in values)
    placed = dict(spark.range(1).select(F.explode(F.array(*map(F.lit, values))).alias("v"))
                  .repartition(7, "v").select("v", F.spark_partition_id()).collect())
    assert all(placed[v] == partition_of(v, 7) for v in values)


@pytest.mark.parametrize("direction", ["up", "down"])
def test_trees_refined_every_round_are_exact(spark, direction):
    edges = list(gen.tree(9, direction))
    balanced = sparklog.Engine(spark=spark, strategy="asis", partitions=4, **EAGER)
    result = run(balanced, TC, {"edge": edges_df(spark, edges)})
    graph = nx.DiGraph(edges)
    assert rows(result["tc"]) == {(a, b) for a in graph for b in nx.descendants(graph, a)}
    records = [r for r in result.stats if r["relation"] == "tc"]
    assert sum(r["refined"] for r in records) > 0
    assert records[-1]["sub_buckets"] > 4
    assert_placed(result)
    plain = run(sparklog.Engine(spark=spark, strategy="asis", partitions=4, balance=False), TC,
                {"edge": edges_df(spark, edges)})
    assert rounds(result) == rounds(plain)
    assert all(r["sub_buckets"] == 4 and not r["refined"] for r in plain.stats)


NONLINEAR = RUNS_NONLINEAR + """
.decl far(x: number, y: number)
far(x, y) :- tc(x, y), !edge(x, y), tc(y, _).
"""


def test_refined_relations_on_both_sides_of_joins_tests_and_negations(spark):
    """tc joined with itself (both sides refined), existence tests and negations of
    refined relations (which meet their one sub-bucket, or fall back to a shuffle)."""
    graph = nx.gnm_random_graph(60, 150, seed=11, directed=True)
    edges = edges_df(spark, list(graph.edges()))
    result = run(sparklog.Engine(spark=spark, strategy="asis", partitions=3, **EAGER), NONLINEAR, {"edge": edges})
    expected = reference.evaluate(parse(NONLINEAR), {"edge": set(graph.edges())})
    for name in ("tc", "sg", "far"):
        assert rows(result[name]) == expected[name], name
    assert sum(r["refined"] for r in result.stats) > 0
    assert_placed(result)


CC = """
.decl edge(x: number, y: number)
.input edge
.decl cc(x: number, c: number)
cc(x, x) :- edge(x, _).
cc(y, $MIN(c)) :- cc(x, c), edge(x, y).
.decl sp(x: number, d: number)
sp(0, 0).
sp(y, $MIN(d + 1)) :- sp(x, d), edge(x, y).
"""


def test_lattice_relations_refined_keep_one_value_per_key(spark):
    """A star of stars: cc's buckets are lopsided; a refined lattice relation still has one
    row per key, on the partition its key's sub-bucket lives on."""
    star = [(0, i) for i in range(1, 40)] + [(i, 100 * i + j) for i in range(1, 40)
                                             for j in range(5)]
    both = star + [(b, a) for a, b in star]
    result = run(sparklog.Engine(spark=spark, strategy="asis", partitions=4, **EAGER), CC,
                 {"edge": edges_df(spark, both)})
    graph = nx.Graph(both)
    assert rows(result["cc"]) == {(n, min(c)) for c in nx.connected_components(graph) for n in c}
    lengths = nx.single_source_shortest_path_length(graph, 0)
    assert rows(result["sp"]) == set(lengths.items())
    assert_placed(result)


@pytest.mark.parametrize("options", [
    {"pipelined": False}, {"reuse_plans": "off"}, {"reuse_plans": "optimized"},
    {"run_rows": 4}], ids=["serial", "no-reuse", "optimized", "runs"])
def test_every_way_of_running_rounds_sees_the_new_placement(spark, options):
    engine = sparklog.Engine(spark=spark, strategy="asis", partitions=4, **EAGER, **options)
    edges = list(gen.tree(8, "up"))
    result = run(engine, TC, {"edge": edges_df(spark, edges)})
    graph = nx.DiGraph(edges)
    assert rows(result["tc"]) == {(a, b) for a in graph for b in nx.descendants(graph, a)}
    assert sum(r["refined"] for r in result.stats) > 0
    assert_placed(result)


def test_balance_options_are_checked(spark):
    for options, message in [({"balance_ratio": 0.5}, "balance_ratio must be at least 1"),
                             ({"balance_every": 0}, "balance_every must be at least 1"),
                             ({"balance": "yes"}, "balance must be True or False")]:
        with pytest.raises(sparklog.UsageError, match=message):
            sparklog.Engine(spark=spark, **options)
