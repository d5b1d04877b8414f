"""Loop rounds planned from the analyzed plan of the round before (Options.reuse_plans).

From the second loop round on, a stratum's rounds are planned by swapping the stored
versions in the first loop round's plan, not from the rules' SQL. A leaf swapped for the
wrong version, or left unswapped, would make a round read stale tuples and end the
recursion early or late: each program is checked against the reference evaluator, with
the mechanism on and off, and the rounds are checked to have used it.
"""

from __future__ import annotations

import pytest

import sparklog
from sparklog.spark import driver
from sparklog.syntax.parser import parse
from tests import reference
from tests.spark.helpers import rows

PROGRAMS = {
    # issue 9, item 1: add bucketed by its second column, joined to succ twice on different
    # columns; the head constant in add(a, 0, a) makes Spark lose the placement
    "add through succ": """
.decl nat(x:number)
nat(0).
nat(x + 1) :- nat(x), x < 6.
.decl succ(a:number, b:number)
succ(a, b) :- nat(a), nat(b), b = a + 1.
.decl add(a:number, b:number, r:number)
add(a, 0, a) :- nat(a).
add(a, b, r) :- succ(pb, b), add(a, pb, pr), succ(pr, r).
""",
    # two leaves of the one recursive relation, with different attribute ids
    "non-linear closure": """
.decl e(x:number, y:number)
e(1, 2). e(2, 3). e(3, 4). e(4, 5). e(5, 6). e(6, 7). e(7, 8). e(8, 9). e(9, 1). e(4, 10).
.decl tc(x:number, y:number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), tc(y, z).
""",
    # each round's plan of a reads b's version and b's reads a's, plus a negated lower one
    "mutual recursion over a negated lower stratum": """
.decl e(x:number, y:number)
e(0, 1). e(1, 2). e(2, 3). e(3, 4). e(4, 5). e(5, 6). e(6, 7). e(7, 8). e(2, 9).
.decl blocked(x:number)
blocked(7).
.decl a(x:number, d:number)
.decl b(x:number, d:number)
a(0, 0).
a(y, d + 1) :- b(x, d), e(x, y), !blocked(y).
b(y, d + 1) :- a(x, d), e(x, y), d < 20.
.decl both(x:number)
both(x) :- a(x, _), b(x, _).
""",
    # a symbol-typed recursion that makes no symbols in its loop (their ids are joined)
    "a path of symbols with a counter": """
.decl link(x:symbol, y:symbol)
link("a", "b"). link("b", "c"). link("c", "d"). link("d", "e"). link("e", "a").
.decl walk(x:symbol, n:number)
walk("a", 0).
walk(y, n + 1) :- walk(x, n), link(x, y), n < 12.
""",
}


def _run_counting(engine, text, monkeypatch):
    """Run ``text``; the relations and the iterations at which a loop round was planned
    from the rules' SQL."""
    program = parse(text, "reuse")
    planned_from_sql: list[int] = []
    derive = driver._derive

    def counting(db, relation, kernels):
        planned_from_sql.append(db.iteration)
        return derive(db, relation, kernels)

    monkeypatch.setattr(driver, "_derive", counting)
    result = engine.run(sparklog.Program(program))
    return program, result, planned_from_sql


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("reuse", [True, False], ids=["reuse", "no-reuse"])
def test_rounds_agree_with_reference(engine, monkeypatch, name, reuse):
    monkeypatch.setattr(engine.options, "reuse_plans", reuse)
    program, result, planned_from_sql = _run_counting(engine, PROGRAMS[name], monkeypatch)
    expected = reference.evaluate(program, {})
    for decl in program.decls:
        assert rows(result[decl.name]) == expected[decl.name], decl.name
    later = [i for i in planned_from_sql if i >= 2]  # rounds after the first loop round
    assert max(r["iteration"] for r in result.stats) >= 4  # rounds enough to reuse plans
    if reuse:
        assert later == []
    else:
        assert later


@pytest.mark.parametrize("name", ["add through succ", "non-linear closure"])
def test_reused_plans_with_reliable_checkpoints(spark, tmp_path, monkeypatch, name):
    """Reliable checkpoints store each round eagerly, one round at a time: the versions a
    template swaps in are written by jobs of their own, not computed lazily."""
    engine = sparklog.Engine(spark=spark, partitions=2, checkpoint="reliable",
                             checkpoint_dir=str(tmp_path))
    program, result, planned_from_sql = _run_counting(engine, PROGRAMS[name], monkeypatch)
    expected = reference.evaluate(program, {})
    for decl in program.decls:
        assert rows(result[decl.name]) == expected[decl.name], decl.name
    assert [i for i in planned_from_sql if i >= 2] == []
