"""Lattice relations stored as runs (combine.LatticeCombine, storage.Database.compact).

A round writes the keys it improves and a bounded newest run, never every stored key
again; a key improved while its old row lies in a sealed run leaves a stale row there,
removed before the next round reads the runs. Every test seals runs at a handful of rows,
so relations keep several runs and improvements keep reaching sealed ones, and checks the
result against networkx and the stored size against one row per key (a stale row left
behind would add one, and a stale contribution would change a sum)."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings

import sparklog
from sparklog import programs
from tests.spark.helpers import rows
from tests.spark.test_lattice_graphs import LATTICE, digraph, frame, weighted_graphs
from tests.spark.test_sums import EDGES

SLOW = settings(max_examples=5, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def sealed(spark):
    return sparklog.Engine(spark=spark, partitions=2, run_rows=3)


APSP = """
.decl e(x: number, y: number, w: number)
.input e
.decl sp(x: number, y: number, d: number)
sp(x, x, 0) :- e(x, _, _).
sp(x, x, 0) :- e(_, x, _).
sp(f, t, $MIN(l + w)) :- sp(f, m, l), e(m, t, w).
"""


def _loop(result, relation):
    return [r for r in result.stats if r["relation"] == relation and r["iteration"] >= 1]


@SLOW
@given(weighted_graphs(max_nodes=7))
def test_all_pairs_shortest_paths_in_runs_are_dijkstra(sealed, edges):
    result = sealed.run(sparklog.Program.from_text(APSP),
                        {"e": frame(sealed.spark, edges)})
    want = {(a, b, d) for a, dist in nx.all_pairs_dijkstra_path_length(digraph(edges))
            for b, d in dist.items()}
    assert rows(result["sp"]) == want
    assert result.size("sp") == len(want)  # one stored row per key: no stale row left


# a ring whose long way round is found first: every key improves once it is sealed
RING = [(i, (i + 1) % 12, 10) for i in range(12)] + [(i, (i + 5) % 12, 1) for i in range(12)]


@pytest.mark.parametrize("options", [
    dict(), dict(pipelined=False), dict(reuse_plans="off"), dict(reuse_plans="optimized"),
    dict(balance_ratio=1.0, balance_rows=0, balance_every=1, partitions=3)],
    ids=["pipelined", "serial", "no-reuse", "optimized", "balance"])
def test_improvements_in_sealed_runs_are_compacted(spark, options):
    engine = sparklog.Engine(spark=spark, **{"partitions": 2, "run_rows": 3, **options})
    result = engine.run(sparklog.Program.from_text(APSP),
                        {"e": frame(spark, RING)})
    want = {(a, b, d) for a, dist in nx.all_pairs_dijkstra_path_length(digraph(RING))
            for b, d in dist.items()}
    assert rows(result["sp"]) == want
    assert result.size("sp") == len(want)
    loop = _loop(result, "sp")
    assert max(r["runs"] for r in loop) >= 2
    assert sum(r["stale"] for r in loop) > 0  # the case under test happened
    single = sparklog.Engine(spark=spark, **{"partitions": 2, "run_rows": 0, **options}).run(
        sparklog.Program.from_text(APSP), {"e": frame(spark, RING)})
    assert [r["delta"] for r in loop] == [r["delta"] for r in _loop(single, "sp")]
    # runs write less than one run rewritten every round
    assert sum(r["written"] for r in loop) < sum(r["written"] for r in _loop(single, "sp"))


def test_reliable_checkpoints_with_runs(spark, tmp_path):
    engine = sparklog.Engine(spark=spark, partitions=2, run_rows=2, checkpoint="reliable",
                             checkpoint_dir=str(tmp_path))
    result = engine.run(sparklog.Program.from_text(LATTICE))
    assert result.size("sp") == len(rows(result["sp"])) == 17


def test_pagerank_in_runs_is_networkx(sealed):
    """Totals and contributions ($SUM) in runs: the value derived last replaces the
    stored one, so a contribution left behind in a sealed run would be summed twice."""
    df = frame(sealed.spark, [(a, b, 0) for a, b in EDGES], weighted=False)
    got = dict(rows(programs.pagerank(df, iterations=25, damping=0.5, engine=sealed)))
    want = nx.pagerank(nx.DiGraph(EDGES), alpha=0.5, tol=1e-14, max_iter=1000)
    assert set(got) == set(want)
    assert sum(abs(got[v] - want[v]) for v in want) < 1e-6


def test_growing_counts_in_runs(sealed):
    """A recursive $COUNT whose totals grow round by round, kept in several runs: a total
    left behind in a sealed run would be a second row for its key."""
    program = """
    .decl e(x: number, y: number)
    .input e
    .decl reach(x: number, y: number)
    reach(x, y) :- e(x, y).
    reach(x, z) :- reach(x, y), e(y, z), n(x, _).
    .decl n(x: number, c: number)
    n(x, $COUNT(y)) :- reach(x, y).
    .decl m(c: number, s: number)
    m(0, $SUM(c)) :- n(_, c).
    """
    edges = [(i, i + 1) for i in range(9)] + [(3, 0), (9, 5)]
    df = sealed.spark.createDataFrame(edges, "x long, y long")
    result = sealed.run(sparklog.Program.from_text(program), {"e": df})
    closure = nx.transitive_closure(nx.DiGraph(edges), reflexive=False)
    want = {(x, closure.out_degree(x)) for x in closure}
    assert rows(result["n"]) == want
    assert result.size("n") == len(want)
    assert rows(result["m"]) == {(0, closure.number_of_edges())}
    assert sum(r["stale"] for r in _loop(result, "n")) > 0


def test_sealed_runs_do_not_derive_the_candidates_again(spark, monkeypatch):
    """The round's candidates are derived once however many sealed runs they are combined
    with: its plan has one home Exchange (REPARTITION_BY_NUM), as with a single run. (Each
    sealed run semi-joined with the candidates' keys once pruned the candidates' columns
    below that Exchange, so Spark could not reuse it and derived the round again per run.)"""
    from sparklog.spark import combine

    plans: list[tuple[int, str]] = []
    merge = combine.LatticeCombine.merge

    def spy(self, db, relation, new, runs, merged, *args):
        out = merge(self, db, relation, new, runs, merged, *args)
        plans.append((len(runs) - len(merged), out.queryExecution().executedPlan().toString()))
        return out

    monkeypatch.setattr(combine.LatticeCombine, "merge", spy)
    engine = sparklog.Engine(spark=spark, partitions=2, run_rows=3, pipelined=False)
    result = engine.run(sparklog.Program.from_text(APSP), {"e": frame(spark, RING)})
    assert result.size("sp") == 144
    with_sealed = [plan for sealed, plan in plans if sealed >= 2]
    assert with_sealed  # the case under test happened
    for plan in with_sealed:
        assert plan.count("REPARTITION_BY_NUM") == 1, plan
