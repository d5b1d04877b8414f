"""A linear recursion placed by the columns its head keeps, its lower relations sent to its
delta (rewrite/replicate.py, Options.replicate_static): the closure equals networkx's, the
rounds derive what they derive without it, and no derived tuple crosses a shuffle; random
closure programs agree with the reference evaluator, with buckets refined every round."""

from __future__ import annotations

import random

import networkx as nx
import pytest

import sparklog
from tests.campaign import make_case, report, run_cases
from tests.spark.helpers import TC, edges_df, rows, run

RIGHT = TC.replace("tc(x, z), edge(z, y)", "edge(x, z), tc(z, y)")


def _closure(edges) -> set[tuple[int, int]]:
    g = nx.DiGraph(edges)
    return {(a, b) for a in g for s in g.successors(a) for b in {s} | nx.descendants(g, s)}


@pytest.mark.parametrize("text", [TC, RIGHT], ids=["left-linear", "right-linear"])
def test_closure_rounds_shuffle_no_derived_tuple(spark, text):
    rng = random.Random(5)
    edges = sorted({(rng.randrange(40), rng.randrange(40)) for _ in range(70)})
    df = edges_df(spark, edges)
    results = {on: run(sparklog.Engine(spark=spark, partitions=2, strategy="asis",
                                       replicate_static=on), text, inputs={"edge": df})
               for on in (True, False)}
    for result in results.values():
        assert rows(result["tc"]) == _closure(edges)
    loops = {on: [r for r in result.stats if r["relation"] == "tc" and r["iteration"] > 0]
             for on, result in results.items()}
    # the same semi-naive rounds: each derives what it derives with the relation placed
    # by the join column
    assert [r["derivations"] for r in loops[True]] == [r["derivations"] for r in loops[False]]
    assert sum(r["derivations"] for r in loops[True]) > 300
    # no derived tuple moves (the edges' copies are the round's only shuffle); placed by
    # the join column instead, every derived tuple crosses to its home
    assert all(r["shuffled"] == 0 and r["outer"] == "inner" for r in loops[True]
               if r["derivations"]), loops[True]
    assert all(r["shuffled"] > 0 for r in loops[False] if r["derivations"])


@pytest.mark.parametrize("text", [TC, RIGHT], ids=["left-linear", "right-linear"])
def test_edges_sent_to_the_delta_are_copied_once_a_stratum(spark, text):
    """The copies of the edges a linear closure sends to every sub-bucket of its delta
    are stored once for the stratum (Database.copy_view): every loop round's job then
    crosses no shuffle at all, where shuffling them there (stored_copies off) is a
    shuffle in each. The same rounds, the same closure."""
    rng = random.Random(7)
    edges = sorted({(rng.randrange(40), rng.randrange(40)) for _ in range(70)})
    df = edges_df(spark, edges)
    shuffles, derivations = {}, {}
    for on in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=2, strategy="asis",
                                 replicate_static=True, stored_copies=on,
                                 trace_lineage=True)
        result = run(engine, text, inputs={"edge": df})
        assert rows(result["tc"]) == _closure(edges)
        loops = [r for r in result.stats if r["relation"] == "tc" and r["iteration"] > 0]
        assert all(r["outer"] == "inner" for r in loops if r["derivations"]), loops
        derivations[on] = [r["derivations"] for r in loops]
        # a round's job, after the first (which computes the deferred first version too)
        shuffles[on] = [t["shuffles"] for t in result.lineage][1:]
    assert derivations[True] == derivations[False]
    assert len(shuffles[True]) >= 3 and set(shuffles[True]) == {0}, shuffles
    assert all(n >= 1 for n in shuffles[False]), shuffles


@pytest.mark.parametrize("strategy", ["asis", "left"])
def test_random_closure_programs_agree_with_reference(spark, strategy):
    """Closure programs (tests/closure_programs.py: carried columns, filters, several
    edge relations, cycles) at 3 partitions with every bucket refined as soon as it can
    be, so the copies go to several sub-buckets per bucket and derived tuples that leave
    their delta row's sub-bucket are moved home."""
    engine = sparklog.Engine(spark=spark, partitions=3, strategy=strategy,
                             replicate_static=True, balance_ratio=1.0, balance_rows=0,
                             balance_every=1)
    cases = [make_case(s, f"r{s}_", closure=True) for s in range(1300, 1312)]
    replicated = [c for c in cases if any(
        lay.replicated for lay in sparklog.Program(c.ast).plan_for(
            strategy, replicate=True).layouts.values())]
    assert len(replicated) >= len(cases) // 3, len(replicated)  # the shape is drawn
    failed = [o for o in run_cases(engine, spark, cases) if o.status != "ok"]
    assert not failed, "\n".join(report(o) for o in failed)


@pytest.mark.parametrize("strategy", ["auto", "left"])
def test_by_default_a_linear_closure_over_few_measured_edges_is_sent_its_edges(
        spark, strategy):
    """replicate_static "auto" (the default): the closure's edges are measured (by auto's
    measurement, also under a fixed linear strategy) and, their copies a round being few,
    sent to the delta; "off" keeps the placement by the join column. Same closure."""
    rng = random.Random(11)
    edges = sorted({(rng.randrange(60), rng.randrange(60)) for _ in range(150)})
    df = edges_df(spark, edges)
    by = {}
    for choice in ("auto", "off"):
        engine = sparklog.Engine(spark=spark, partitions=2, strategy=strategy,
                                 replicate_static=choice)
        result = run(engine, TC, inputs={"edge": df})
        assert rows(result["tc"]) == _closure(edges)
        assert [s.strategy for s in result.strategies] == ["left"]
        by[choice] = [r for r in result.stats if r["relation"] == "tc" and r["iteration"] > 0
                      and r["derivations"]]
    assert by["auto"] and all(r["shuffled"] == 0 for r in by["auto"]), by["auto"]
    assert all(r["shuffled"] > 0 for r in by["off"]), by["off"]


def test_explain_says_whether_auto_sends_the_measured_edges(spark, tmp_path):
    """`sparklog explain -F` under replicate_static auto: the measured edges, their copies
    a round, and whether that is within the bound (rewrite/replicate.sendable)."""
    from sparklog.explain import explain

    edges = sorted({(i, (i * 7 + 3) % 150) for i in range(150)})
    (tmp_path / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    program = sparklog.Program.from_text(TC)
    few = explain(program, {"strategies"}, sparklog.Engine(spark=spark, partitions=2,
                                                           strategy="left"), tmp_path, "left")
    assert "edge: sent to every sub-bucket of the delta of tc (" in few, few
    assert "x 2 partitions" in few and "at most 200,000)" in few
    many = explain(program, {"strategies"}, sparklog.Engine(spark=spark, partitions=2000,
                                                            strategy="left"), tmp_path, "left")
    assert "edge: not sent to a delta (" in many and "x 2000 partitions" in many, many
    off = explain(program, {"strategies"}, sparklog.Engine(
        spark=spark, partitions=2, strategy="left", replicate_static="off"), tmp_path, "left")
    assert "sent" not in off, off
