"""Secondary indexes (rewrite/indexes.py) on Spark: no stored side is reshuffled by a
round, and the answers and rounds are those of the plan without indexes."""

from __future__ import annotations

import random
import re

import networkx as nx
import pytest

import sparklog
from sparklog import gen
from sparklog.explain import iteration_plan
from sparklog.gen import write_facts
from tests import reference
from tests.spark.helpers import edges_df, rounds, rows, run
from tests.unit.test_indexes import NONLINEAR, SAME_GENERATION


def _exchanges(plan: str) -> dict[str, list[tuple[str, str]]]:
    """The Exchanges of each relation's part of an iteration plan (explain's text)."""
    parts = re.split(r"^-- (\S+) --$", plan, flags=re.M)
    named = dict(zip(parts[1::2], parts[2::2])) if len(parts) > 1 else {"": plan}
    return {r: re.findall(r"Exchange hashpartitioning\(([^)]*)\), (\w+)", text)
            for r, text in named.items()}


@pytest.mark.parametrize("indexes", [True, False])
def test_a_nonlinear_closure_round_moves_only_new_and_outer_rows(spark, tmp_path, indexes):
    """With indexes: the round's Exchanges are the home Exchange of tc's new tuples, the
    outer (delta) rows of the join with tc's own placement, and the index's copy of the
    delta; the join with the old version is partition-local. Without: Spark reshuffles
    the stored relation for that join, every round."""
    write_facts(gen.tree(6, "down"), tmp_path / "e.facts")
    engine = sparklog.Engine(spark=spark, partitions=2, indexes=indexes, strategy="asis")
    plan = iteration_plan(engine, sparklog.Program.from_text(NONLINEAR), tmp_path)
    found = _exchanges(plan)
    tc = found["tc"] if indexes else found[""]  # one relation: explain prints no header
    home = [(k, o) for k, o in tc if o == "REPARTITION_BY_NUM"]
    joins = [k for k, o in tc if o != "REPARTITION_BY_NUM"]
    assert len(home) == 1 and home[0][0].startswith("_sb#"), plan
    if indexes:
        assert set(found) == {"tc", "tc@o1"}, plan
        assert len(joins) == 1 and re.fullmatch(r"_q#\d+, 2", joins[0]), plan  # outer rows
        assert [o for _, o in found["tc@o1"]] == ["REPARTITION_BY_NUM"], plan
    else:
        assert set(found) == {""}, plan
        # the old version's join shuffles both sides on the join column
        assert len(joins) >= 2 and any(not k.startswith("_q#") for k in joins), plan


def _closure(edges) -> set[tuple[int, int]]:
    """Pairs joined by a path of one edge or more (a node on a cycle reaches itself)."""
    g = nx.DiGraph(edges)
    return {(a, b) for a in g for s in g.successors(a) for b in {s} | nx.descendants(g, s)}


@pytest.mark.parametrize("seed", [1, 2])
def test_nonlinear_closure_with_and_without_indexes(spark, seed):
    rng = random.Random(seed)
    edges = {(rng.randrange(40), rng.randrange(40)) for _ in range(70)}
    df = edges_df(spark, sorted(edges))
    results = {}
    for indexes in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=3, indexes=indexes, strategy="asis")
        results[indexes] = run(engine, NONLINEAR, inputs={"e": df})
        assert rows(results[indexes]["tc"]) == _closure(edges)
    assert rounds(results[True]) == rounds(results[False])
    assert not any("@" in r["relation"] for r in results[True].stats)


def test_same_generation_with_and_without_indexes(spark):
    rng = random.Random(7)
    parent = {i: rng.randrange(i) for i in range(1, 60) if rng.random() < 0.9}
    edges = sorted((p, c) for c, p in parent.items())
    program = sparklog.Program.from_text(SAME_GENERATION)
    expected = reference.evaluate(program.ast, {"e": set(edges)})["sg"]
    df = edges_df(spark, edges)
    results = {}
    for indexes in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=2, indexes=indexes)
        results[indexes] = run(engine, SAME_GENERATION, inputs={"e": df})
        assert rows(results[indexes]["sg"]) == expected
    assert rounds(results[True], "sg") == rounds(results[False], "sg")


SMART = NONLINEAR.replace("tc(x, y) :- e(x, y).", ".pragma tc(strategy=smart)\ntc(x, y) :- e(x, y).")


@pytest.mark.parametrize("indexes", [True, False])
def test_a_smart_round_reads_its_old_lengths_from_a_lattice_index(spark, tmp_path, indexes):
    """Smart's tc@len is a $MIN relation read by both columns: with indexes, its old version
    comes from a lagging lattice index (its copy of the delta is its one Exchange), and the
    round moves only the new tuples (home) and the delta rows meeting tc@len's placement;
    without, the stored relation is reshuffled for one of the joins, every round."""
    write_facts(gen.chain(40), tmp_path / "e.facts")
    engine = sparklog.Engine(spark=spark, partitions=2, indexes=indexes)
    plan = iteration_plan(engine, sparklog.Program.from_text(SMART), tmp_path)
    found = _exchanges(plan)
    lengths = found["tc@len"] if indexes else found[""]
    assert [o for _, o in lengths].count("REPARTITION_BY_NUM") == 1, plan
    joins = [k for k, o in lengths if o != "REPARTITION_BY_NUM"]
    if indexes:
        assert set(found) == {"tc@len", "tc@len@o1"}, plan
        assert len(joins) == 1 and re.fullmatch(r"_q#\d+, 2", joins[0]), plan
        assert [o for _, o in found["tc@len@o1"]] == ["REPARTITION_BY_NUM"], plan
    else:
        assert len(joins) >= 2 and any(not k.startswith("_q#") for k in joins), plan


SQUARING = """
.decl edge(x: number, y: number, w: number)
.input edge
.decl d(x: number, y: number, l: number)
d(x, y, $MIN(w)) :- edge(x, y, w).
d(x, y, $MIN(a + b)) :- d(x, z, a), d(z, y, b).
"""


def _floyd_warshall(edges) -> set[tuple[int, int, int]]:
    """(x, y, the least weight of a path of one edge or more from x to y)."""
    inf = float("inf")
    nodes = sorted({v for a, b, _ in edges for v in (a, b)})
    d = {(a, b): inf for a in nodes for b in nodes}
    for a, b, w in edges:
        d[a, b] = min(d[a, b], w)
    for k in nodes:
        for a in nodes:
            for b in nodes:
                d[a, b] = min(d[a, b], d[a, k] + d[k, b])
    return {(a, b, w) for (a, b), w in d.items() if w < inf}


@pytest.mark.parametrize("seed", [3, 4])
def test_a_nonlinear_min_relation_with_and_without_indexes(spark, seed):
    """All-pairs shortest paths by squaring: values improve in place, so the lagging
    lattice index still holds a key's previous value where ``old`` leaves the key out;
    the values are Floyd-Warshall's either way."""
    rng = random.Random(seed)
    edges = [(rng.randrange(12), rng.randrange(12), rng.randrange(10)) for _ in range(30)]
    df = spark.createDataFrame(edges, "x long, y long, w long")
    for indexes in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=3, indexes=indexes, run_rows=20)
        result = run(engine, SQUARING, inputs={"edge": df})
        assert rows(result["d"]) == _floyd_warshall(edges), indexes
