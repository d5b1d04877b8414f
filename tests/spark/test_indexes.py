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


def _moves_old_version(plan: str) -> bool:
    """Whether some Exchange of the plan moves rows of a stored relation's old version
    (a subtree below the Exchange that filters `_it = 0`)."""
    lines = plan.splitlines()
    for i, line in enumerate(lines):
        if "Exchange hashpartitioning" not in line:
            continue
        depth = line.index("Exchange")
        for below in lines[i + 1:]:
            stripped = below.lstrip(" :|+-")
            if len(below) - len(stripped) <= depth:
                break
            if re.search(r"\(_it#\d+ = 0\)", below):
                return True
    return False


@pytest.mark.parametrize("indexes", [True, False])
def test_a_nonlinear_closure_round_moves_only_new_and_outer_rows(spark, tmp_path, indexes):
    """With indexes: the round's Exchanges are the home Exchange of tc's new tuples, the
    outer (delta) rows of the join with tc's own placement, and the index's copy of the
    delta; the join with the old version is partition-local. Without: the round
    reshuffles the stored old version for that join, every round."""
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
        assert not _moves_old_version(plan), plan
    else:
        assert set(found) == {""}, plan
        # the join with the old version moves the stored old rows, every round
        assert len(joins) >= 2 and _moves_old_version(plan), plan


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
