"""$SUM and $COUNT on Spark: totals over distinct contributions, recursive ones whose
contributions change as the totals they read grow, the stored contributions' placement,
and PageRank (sparklog.programs) against networkx."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparklog
from sparklog import programs
from sparklog.explain import iteration_plan
from tests.spark.helpers import rows
from tests.spark.test_lattice_graphs import frame

SLOW = settings(max_examples=5, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

PATHS = """
.decl e(x: number, y: number)
.input e
.decl paths(x: number, c: number)
.output paths
paths(0, 1).
paths(y, $SUM(c)) :- paths(x, c), e(x, y).
.decl into(x: number, c: number)
.output into
into(y, $COUNT(x)) :- e(x, y).
.decl out(x: number, c: number)
out(x, $SUM(1)) :- e(x, _).
.decl weight(s: number)
.output weight
weight($SUM(c)) :- out(_, c).
"""


@st.composite
def dags(draw, max_nodes: int = 10):
    """Edges from a lower to a higher node, repeated ones included."""
    n = draw(st.integers(2, max_nodes))
    pairs = st.tuples(st.integers(0, n - 2), st.integers(1, n - 1)).filter(lambda p: p[0] < p[1])
    return draw(st.lists(pairs, min_size=1, max_size=3 * n))


@SLOW
@given(dags())
def test_paths_are_counted_and_neighbours_counted_once(engine, edges):
    df = frame(engine.spark, [(a, b, 0) for a, b in edges], weighted=False)
    result = engine.run(sparklog.Program.from_text(PATHS), inputs={"e": df})
    g = nx.DiGraph(edges)
    g.add_node(0)
    count = {0: 1}  # paths from 0: one path per sequence of distinct edges
    for v in nx.topological_sort(g):
        if v != 0:
            count[v] = sum(count.get(u, 0) for u in g.predecessors(v))
    assert rows(result["paths"]) == {(v, c) for v, c in count.items() if c}
    assert rows(result["into"]) == {(v, d) for v, d in g.in_degree() if d}
    assert rows(result["weight"]) == {(g.number_of_edges(),)}


def test_contributions_live_with_their_key(engine, tmp_path):
    """Every contribution of a key is stored on the key's partition, so the round that
    sums a key's contributions moves nothing but its totals to their home (one Exchange
    at most)."""
    edges = [(a, b) for a in range(12) for b in range(a + 1, min(a + 4, 12))]
    df = frame(engine.spark, [(a, b, 0) for a, b in edges], weighted=False)
    program = sparklog.Program.from_text(PATHS)
    result = engine.run(program, inputs={"e": df})
    layout = program.plan.layouts["paths@c"]  # key, clause, the edge's source, value
    assert layout.key == (0,) and layout.detail == (1, 2) and layout.dependent == 3
    stored = result._db.stored["paths@c"]
    placed = stored.selectExpr("c0", "spark_partition_id() AS p").distinct().collect()
    homes: dict[int, set[int]] = {}
    for key, part in placed:
        homes.setdefault(key, set()).add(part)
    assert len(homes) == 12 and all(len(parts) == 1 for parts in homes.values())

    (tmp_path / "e.facts").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    counts = ".decl e(x: number, y: number)\n.input e\n.decl into(x: number, c: number)\n" \
             "into(y, $COUNT(x)) :- e(x, y).\n"
    plan = iteration_plan(engine, sparklog.Program.from_text(counts), tmp_path)
    exchanges = re.findall(r"Exchange (\w+)\(([^)]*)\)", plan)
    # at most the home Exchange: none here, as the totals come out placed by their key
    assert len(exchanges) <= 1 and all(e[0] == "hashpartitioning" for e in exchanges), plan


EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (4, 1), (4, 5), (5, 6), (1, 2), (7, 4)]


def test_pagerank_is_networkx(engine):
    """25 iterations at damping 0.5: within 1e-6 (L1) of networkx's converged pagerank,
    and within 1e-12 of 25 steps of power iteration with networkx's Google matrix (nodes
    6 and 2's... dangling node 6 spreads its rank over every node)."""
    df = frame(engine.spark, [(a, b, 0) for a, b in EDGES], weighted=False)
    got = dict(rows(programs.pagerank(df, iterations=25, damping=0.5, engine=engine)))
    g = nx.DiGraph(EDGES)
    want = nx.pagerank(g, alpha=0.5, tol=1e-14, max_iter=1000)
    assert set(got) == set(want)
    assert sum(abs(got[v] - want[v]) for v in want) < 1e-6
    nodes = list(g)
    google = nx.google_matrix(g, alpha=0.5, nodelist=nodes)
    x = np.full(len(nodes), 1 / len(nodes))
    for _ in range(25):
        x = x @ google
    assert sum(abs(got[v] - x[i]) for i, v in enumerate(nodes)) < 1e-12


def test_idle_relations_are_skipped_with_the_same_ranks(spark):
    """PageRank's relations take turns (ranks, contributions, totals): a round runs only
    those with a delta to read (rounds._prune). The ranks equal those of every relation run
    every round, bit for bit, and the skipped records ran no job and wrote nothing."""
    df = frame(spark, [(a, b, 0) for a, b in EDGES], weighted=False)
    results = {}
    for skip in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=2, skip_idle=skip)
        result = engine.run(sparklog.Program.from_text(programs.path("pagerank").read_text()),
                            {"edge": df, "iterations": spark.range(1).selectExpr("6L AS k"),
                             "damping": spark.range(1).selectExpr("0.85D AS a")})
        results[skip] = result
    assert rows(results[True]["pagerank"]) == rows(results[False]["pagerank"])
    loop = lambda r: [s for s in r.stats if s["iteration"] >= 2 and s["relation"] in  # noqa
                      ("rank", "share", "share@c")]
    skipped = [s for s in loop(results[True]) if s["spark_jobs"] == 0]
    assert skipped and all(s["delta"] == 0 and s["written"] == 0 for s in skipped)
    assert not [s for s in loop(results[False]) if s["spark_jobs"] == 0]
    jobs = {k: sum(s["spark_jobs"] for s in r.stats) for k, r in results.items()}
    assert jobs[True] < jobs[False]


def test_totals_read_where_summed_take_a_round_less_an_iteration(spark):
    """rewrite/totals.py: the ranks read share's and lost's totals in the round that stores
    their contributions. Two rounds an iteration instead of three, the same ranks (the
    same contributions, summed in another order: within a rounding)."""
    df = frame(spark, [(a, b, 0) for a, b in EDGES], weighted=False)
    iterations = 6
    ranks, rounds = {}, {}
    for inline in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=2, inline_totals=inline)
        result = engine.run(sparklog.Program.from_text(programs.path("pagerank").read_text()),
                            {"edge": df,
                             "iterations": spark.range(1).selectExpr(f"{iterations}L AS k"),
                             "damping": spark.range(1).selectExpr("0.85D AS a")})
        ranks[inline] = dict(rows(result["pagerank"]))
        rounds[inline] = max(s["iteration"] for s in result.stats if s["relation"] == "rank")
        assert ("share" in {s["relation"] for s in result.stats if s["iteration"] > 1}) \
            == (not inline)  # summed once, after the stratum, when inlined
    assert rounds == {True: 2 * iterations + 1, False: 3 * iterations + 1}
    assert ranks[True].keys() == ranks[False].keys()
    assert all(abs(ranks[True][v] - ranks[False][v]) < 1e-12 for v in ranks[True])
