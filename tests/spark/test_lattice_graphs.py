"""Recursive aggregates over lattices on Spark: the graph programs of sparklog.programs
against networkx, the storage they promise (one tuple per key, placed by the independent
columns), every way a round can be planned, and the error a diverging run ends with."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparklog
from sparklog import programs
from tests.conftest import SHARED
from tests.spark.helpers import rows

SLOW = settings(max_examples=6, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def weighted_graphs(draw, max_nodes: int = 9):
    """Directed graphs with parallel edges, self-loops and weights 0..9 (a few zero)."""
    n = draw(st.integers(2, max_nodes))
    edge = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 9))
    return draw(st.lists(edge, min_size=1, max_size=3 * n))


def frame(spark, edges, weighted=True):
    if weighted:
        return spark.range(1).selectExpr(
            f"inline(array({', '.join(f'struct({a}L, {b}L, {w}L)' for a, b, w in edges)}))"
        ).toDF("src", "dst", "weight")
    return spark.range(1).selectExpr(
        f"inline(array({', '.join(f'struct({a}L, {b}L)' for a, b, *_ in edges)}))"
    ).toDF("src", "dst")


def digraph(edges) -> nx.DiGraph:
    g = nx.DiGraph()
    for a, b, w in edges:  # the lightest of parallel edges counts, as $MIN keeps it
        if not g.has_edge(a, b) or g[a][b]["weight"] > w:
            g.add_edge(a, b, weight=w)
    return g


@SLOW
@given(weighted_graphs())
def test_sssp_is_dijkstra(engine, edges):
    source = edges[0][0]
    got = rows(programs.sssp(frame(engine.spark, edges), source, engine))
    want = nx.single_source_dijkstra_path_length(digraph(edges), source)
    assert got == set(want.items())


@SLOW
@given(weighted_graphs(max_nodes=6))
def test_all_pairs_shortest_paths_are_dijkstra(engine, edges):
    got = rows(programs.apsp(frame(engine.spark, edges), engine=engine))
    want = {(a, b, d) for a, dist in nx.all_pairs_dijkstra_path_length(digraph(edges))
            for b, d in dist.items()}
    assert got == want


@SLOW
@given(weighted_graphs())
def test_connected_components_and_bfs_are_networkx(engine, edges):
    g = digraph(edges)
    labels = rows(programs.connected_components(frame(engine.spark, edges, False), engine))
    want = {(v, min(c)) for c in nx.connected_components(g.to_undirected()) for v in c}
    assert labels == want
    source = edges[-1][0]
    hops = rows(programs.bfs(frame(engine.spark, edges, False), source, engine))
    assert hops == set(nx.single_source_shortest_path_length(g, source).items())


def widest(edges, source) -> dict[int, int]:
    """Per node, the largest c such that a path of at least one edge, every edge of
    capacity >= c, leads there from ``source``: reachability in thresholded graphs."""
    want = {}
    for c in sorted({w for *_, w in edges}):  # ascending: the last c written is the largest
        g = nx.DiGraph([(a, b) for a, b, w in edges if w >= c])
        if source not in g:
            continue
        reached = nx.descendants(g, source)
        if any(m == source or m in reached for m in g.predecessors(source)):
            reached.add(source)  # back to the source along a cycle
        want.update({t: c for t in reached})
    return want


@SLOW
@given(weighted_graphs())
def test_widest_path_is_the_best_bottleneck(engine, edges):
    source = edges[0][0]
    got = rows(programs.widest_path(frame(engine.spark, edges), source, engine))
    assert got == set(widest(edges, source).items())


def test_k_hop_and_reach(engine):
    edges = [(1, 2, 0), (2, 3, 0), (3, 4, 0), (4, 1, 0), (2, 5, 0), (6, 7, 0)]
    df = frame(engine.spark, edges, False)
    assert rows(programs.k_hop(df, [1], 2, engine)) == {(1, 0), (2, 1), (3, 2), (5, 2)}
    assert rows(programs.reach(df, [2], engine)) == {(2,), (3,), (4,), (1,), (5,)}


LATTICE = """
.decl e(x: number, y: number, w: number)
e(1, 2, 4). e(2, 3, 1). e(1, 3, 7). e(3, 1, 2). e(3, 4, 3). e(4, 2, 0). e(5, 5, 1).
.decl sp(x: number, y: number, d: number)
sp(x, x, 0) :- e(x, _, _).
sp(f, t, $MIN(l + w)) :- sp(f, m, l), e(m, t, w).
.decl far(x: number, y: number)
far(x, y) :- sp(x, y, d), d > 4.
"""


@pytest.mark.parametrize("options", [
    dict(reuse_plans="executed"), dict(reuse_plans="optimized"), dict(reuse_plans="off"),
    dict(pipelined=False, deferred=False), dict(codegen_rows=0)])
def test_every_planning_mode_gives_one_tuple_per_key(spark, options):
    engine = sparklog.Engine(spark=spark, partitions=2, **options)
    result = engine.run(sparklog.Program.from_text(LATTICE))
    want = {(a, b, d) for a, dist in nx.all_pairs_dijkstra_path_length(digraph(
        [(1, 2, 4), (2, 3, 1), (1, 3, 7), (3, 1, 2), (3, 4, 3), (4, 2, 0), (5, 5, 1)]))
        for b, d in dist.items()}
    assert rows(result["sp"]) == want
    assert result.size("sp") == len(want)  # one stored tuple per (x, y)
    assert rows(result["far"]) == {(a, b) for a, b, d in want if d > 4}
    loop = [r for r in result.stats if r["relation"] == "sp" and r["iteration"] >= 1]
    assert loop[-1]["delta"] == 0 and all(r["improved"] == r["delta"] for r in loop)


def test_reliable_checkpoints(spark, tmp_path):
    engine = sparklog.Engine(spark=spark, partitions=2, checkpoint="reliable",
                             checkpoint_dir=str(tmp_path))
    result = engine.run(sparklog.Program.from_text(LATTICE))
    assert result.size("sp") == len(rows(result["sp"])) == 17


def test_placed_by_the_independent_columns(engine):
    """Every stored row is on the partition its independent key hashes to: an improved
    value must replace the old one in the same partition, never sit beside it."""
    from pyspark.sql import functions as F

    result = engine.run(sparklog.Program.from_text(LATTICE))
    layout = result._db.layout("sp")
    assert layout.dependent == 2 and 2 not in layout.key
    stored = result._db.stored["sp"]
    from sparklog.spark.storage import home_value

    home = home_value(layout, result._db.kinds("sp"), result._db.allocation("sp"))
    misplaced = stored.select(F.spark_partition_id().alias("p"), (F.col("_sb") == home).alias("ok"),
                              F.pmod(F.hash("_sb"), F.lit(2)).alias("home")
                              ).where("p != home OR NOT ok")
    assert misplaced.count() == 0


@pytest.mark.parametrize("kind, values", [
    ("unsigned", "18446744073709551615u, 1u, 9223372036854775808u"),
    ("float", "2.5, -1.5, 0.25")])
def test_min_and_max_in_the_column_type_order(engine, kind, values):
    a, b, c = values.split(", ")
    text = f"""
.decl v(k: number, x: {kind})
v(1, {a}). v(1, {b}). v(2, {c}).
.decl lo(k: number, x: {kind})
lo(k, $MIN(x)) :- v(k, x).
.decl hi(k: number, x: {kind})
hi(k, $MAX(x)) :- v(k, x).
"""
    result = engine.run(sparklog.Program.from_text(text))
    lo, hi = rows(result["lo"]), rows(result["hi"])
    cast = float if kind == "float" else (lambda v: int(str(v).rstrip("u")))
    assert {k: cast(x) for k, x in lo} == {1: min(cast(a), cast(b)), 2: cast(c)}
    assert {k: cast(x) for k, x in hi} == {1: max(cast(a), cast(b)), 2: cast(c)}


def test_a_negative_cycle_stops_at_max_iterations_with_an_error(spark):
    engine = sparklog.Engine(spark=spark, partitions=2, max_iterations=20)
    text = """
.decl e(x: number, y: number, w: number)
e(1, 2, 1). e(2, 1, -3).
.decl sp(x: number, d: number)
sp(1, 0).
sp(t, $MIN(d + w)) :- sp(m, d), e(m, t, w).
"""
    with pytest.raises(sparklog.EngineError, match=r"sp did not converge: 1 of its keys still "
                       r"improved in iteration 20"):
        engine.run(sparklog.Program.from_text(text))


@pytest.mark.skipif(not (SHARED / "data" / "rome99.tsv").exists(),
                    reason="../shared/data is not beside the repository")
def test_rome99_weighted_sssp_and_components(engine):
    """The figures of ../shared/data/README.md: Dijkstra from node 1, and the WCC min-label
    sum (rome99 is strongly connected, so every label is 1)."""
    from pyspark.sql import functions as F

    edges = engine.spark.read.csv(str(SHARED / "data" / "rome99.tsv"), sep="\t",
                                  schema="src long, dst long, weight long")
    dist = programs.sssp(edges, 1, engine)
    summary = dist.agg(F.count("*"), F.sum("d"), F.max("d")).first()
    assert tuple(summary) == (3353, 116_006_476, 69_102)
    assert {r["node"]: r["d"] for r in dist.where("node <= 10").collect()} == {
        1: 0, 2: 193, 3: 381, 4: 596, 5: 2891, 6: 5458, 7: 5584, 8: 4698, 9: 8839, 10: 8935}
    labels = programs.connected_components(edges, engine)
    assert labels.agg(F.sum("label")).first()[0] == 3353
