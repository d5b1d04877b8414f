"""Iteration roll-over (rounds._slices): a round whose join output is estimated over
``rollover_rows`` tuples runs as inner iterations over slices of its delta.

Roll-over changes when tuples are derived inside a round, never what the round derives:
every test compares a run's rounds (delta, full, derivations) with the same program run
in one piece, and its result with an oracle, for thresholds down to 1."""

from __future__ import annotations

import networkx as nx
import pytest

import sparklog
from sparklog import gen
from sparklog.syntax.parser import parse
from tests import reference
from tests.spark.helpers import TC, edges_df, rounds, rows, run
from tests.spark.test_runs import NONLINEAR



@pytest.mark.parametrize("threshold", [1, 30, 300, 100_000])
def test_thresholds_change_no_round(spark, threshold):
    edges = list(gen.tree(9, "down"))
    result = run(sparklog.Engine(spark=spark, strategy="asis", partitions=4, rollover_rows=threshold), TC,
                 {"edge": edges_df(spark, edges)})
    graph = nx.DiGraph(edges)
    assert rows(result["tc"]) == {(a, b) for a in graph for b in nx.descendants(graph, a)}
    whole = run(sparklog.Engine(spark=spark, strategy="asis", partitions=4), TC, {"edge": edges_df(spark, edges)})
    assert rounds(result) == rounds(whole)
    rolled = [r for r in result.stats if r["inner_iteration"]]
    if threshold <= 30:  # every productive round from the third on rolls over
        assert len(rolled) >= 5
        assert all(1 < r["inner_iteration"] <= 16 for r in rolled)
        assert all(r["largest_inner"] <= r["derivations"] for r in rolled)
        assert all(r["spark_jobs"] == r["inner_iteration"] + 1 for r in rolled)
    if threshold == 100_000:
        assert not rolled


def test_nonlinear_rules_roll_over_alike(spark):
    """Without the dedup before a join (join_dedup), which works inside each inner
    iteration's slice: with it, sg's rule (``a`` dead once ``e(a, x)`` is joined) derives
    more when its delta is cut than whole, and the counts could not be compared. The
    answers with it on and roll-over are test_mechanisms_agree's."""
    graph = nx.gnm_random_graph(50, 110, seed=3, directed=True)
    edges = edges_df(spark, list(graph.edges()))
    result = run(sparklog.Engine(spark=spark, strategy="asis", partitions=3, rollover_rows=1,
                                 join_dedup=False), NONLINEAR, {"edge": edges})
    expected = reference.evaluate(parse(NONLINEAR), {"edge": set(graph.edges())})
    for name in ("tc", "sg"):
        assert rows(result[name]) == expected[name], name
    assert any(r["inner_iteration"] for r in result.stats)
    whole = run(sparklog.Engine(spark=spark, strategy="asis", partitions=3, join_dedup=False),
                NONLINEAR, {"edge": edges})
    assert rounds(result) == rounds(whole) and rounds(result, "sg") == rounds(whole, "sg")
    assert rounds(whole)[0] == (0, graph.number_of_edges(), graph.number_of_edges())


def test_rollover_threshold_is_checked(spark):
    with pytest.raises(sparklog.UsageError, match="rollover_rows must be at least 0"):
        sparklog.Engine(spark=spark, rollover_rows=-1)
