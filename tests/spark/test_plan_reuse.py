"""Loop rounds planned from the plans of the rounds before (Options.reuse_plans).

From the second loop round on, a stratum's rounds are planned by swapping the stored
versions in the first loop round's optimized plan ("optimized"), and from the third on by
running the second's executed plan with its scans swapped ("executed", the default), not
from the rules' SQL. A leaf swapped for the wrong version, or left unswapped, would make a
round read stale tuples and end the recursion early or late; a metric read off the wrong
plan would book wrong sizes. Each program is checked against the reference evaluator in
every mode, its stats against those of planning every round from SQL, and the rounds are
checked to have used the mode.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from pyspark.sql import functions as F

import sparklog
from sparklog.spark import jvm, rounds
from sparklog.syntax.parser import parse
from tests import reference
from tests.programs import ADD
from tests.spark.helpers import rows

PROGRAMS = {
    # issue 9, item 1 (tests/programs.py)
    "add through succ": ADD,
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
    # a lower relation joined twice on different columns in the loop (same generation)
    "same generation": """
.decl e(x:number, y:number)
e(1, 2). e(1, 3). e(2, 4). e(2, 5). e(3, 6). e(3, 7). e(4, 8). e(6, 9). e(8, 10). e(9, 11).
.decl sg(x:number, y:number)
sg(x, x) :- e(x, _).
sg(x, y) :- e(a, x), e(b, y), sg(a, b).
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
    """Run ``text``; the relations, the iterations at which a loop round was planned from
    the rules' SQL and at which one was a rerun of an executed plan, and the keys of the
    plans kept for reuse (rounds._plan) that a round found nothing kept for."""
    program = parse(text, "reuse")
    planned_from_sql: list[int] = []
    reruns: list[int] = []
    fresh: list[str] = []
    derive, swapped, replan = rounds._derive, jvm.swapped, rounds._replan

    def deriving(db, relation, kernels, combine=None):
        planned_from_sql.append(db.iteration)
        return derive(db, relation, kernels, combine)

    def rerunning(spark, kept, versions):
        reruns.append(len(reruns))
        return swapped(spark, kept, versions)

    def replanning(db, key, *args):
        planned = replan(db, key, *args)
        if planned is None:
            fresh.append(key)
        return planned

    monkeypatch.setattr(rounds, "_derive", deriving)
    monkeypatch.setattr(jvm, "swapped", rerunning)
    monkeypatch.setattr(rounds, "_replan", replanning)
    result = engine.run(sparklog.Program(program))
    return program, result, planned_from_sql, reruns, fresh


def _planned_twice(fresh: list[str]) -> list[str]:
    """The kept-plan keys planned from SQL more than once: a kept plan not reused. A
    staged recursion's rounds cycle through a few shapes of live runs as passed stages
    retire (``nat`` above: 1, 2, 1 runs ...); each shape is planned once."""
    return sorted({key for key in fresh if fresh.count(key) > 1})


def _sizes(stats):
    return [(r["stratum"], r["iteration"], r["relation"], r["delta"], r["full"],
             r["derivations"]) for r in stats]


_SQL_PLANNED_STATS: dict[str, list[tuple]] = {}


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("reuse", ["executed", "optimized", "off"])
def test_rounds_agree_with_reference(engine, monkeypatch, name, reuse):
    if name not in _SQL_PLANNED_STATS:  # each program's stats planned from SQL, run once
        # every relation runs every round (skip_idle off), and combines every round
        # (combine on): a skipped relation, or one "auto" stops combining, changes the
        # round's plan, which is then planned from SQL once more
        monkeypatch.setattr(engine, "options", replace(engine.options, reuse_plans="off",
                                                       skip_idle=False, combine="on"))
        _SQL_PLANNED_STATS[name] = _sizes(_run_counting(engine, PROGRAMS[name],
                                                        monkeypatch)[1].stats)
    monkeypatch.setattr(engine, "options", replace(engine.options, reuse_plans=reuse,
                                                   skip_idle=False, combine="on"))
    program, result, planned_from_sql, reruns, fresh = _run_counting(
        engine, PROGRAMS[name], monkeypatch)
    expected = reference.evaluate(program, {})
    for decl in program.decls:
        assert rows(result[decl.name]) == expected[decl.name], decl.name
    assert _sizes(result.stats) == _SQL_PLANNED_STATS[name]  # the metrics of the right plan
    later = [i for i in planned_from_sql if i >= 2]  # rounds after the first loop round
    assert max(r["iteration"] for r in result.stats) >= 4  # rounds enough to reuse plans
    if reuse == "off":
        assert later and not fresh
    else:  # after the first loop round, only a shape of runs not seen before is planned
        assert len(later) <= len(fresh) and _planned_twice(fresh) == [], fresh
    assert bool(reruns) == (reuse == "executed")


@pytest.mark.parametrize("name", ["add through succ", "non-linear closure"])
def test_reused_plans_with_reliable_checkpoints(spark, tmp_path, monkeypatch, name):
    """Reliable checkpoints store each round eagerly, one round at a time: the versions a
    template swaps in are written by jobs of their own, not computed lazily."""
    engine = sparklog.Engine(spark=spark, partitions=2, checkpoint="reliable",
                             checkpoint_dir=str(tmp_path), combine="on")
    program, result, planned_from_sql, reruns, fresh = _run_counting(
        engine, PROGRAMS[name], monkeypatch)
    expected = reference.evaluate(program, {})
    for decl in program.decls:
        assert rows(result[decl.name]) == expected[decl.name], decl.name
    assert len([i for i in planned_from_sql if i >= 2]) <= len(fresh)
    assert _planned_twice(fresh) == [], fresh
    assert reruns


def test_no_rerun_of_a_plan_that_reuses_an_exchange(spark):
    """A reused exchange points at another exchange, outside its children: swapping the
    scans below that one would leave the reuse reading the old version."""
    version = spark.range(10).repartition(2, "id").localCheckpoint()
    counts = spark.range(30).groupBy((F.col("id") % 3).alias("id")).count().select("id")
    reusing = counts.union(counts).union(version)._jdf
    assert "ReusedExchange" in reusing.queryExecution().executedPlan().toString()
    versions = {"r": jvm.stored_rdd(version)}
    assert jvm.executed(spark, reusing, versions, "false") is None
    assert jvm.executed(spark, counts.union(version)._jdf, versions, "false") is not None


@pytest.mark.parametrize("tiny_rows", [10_000, 0], ids=["tiny", "not tiny"])
def test_tiny_reruns_store_their_versions_serialized(spark, tiny_rows):
    """A tiny rerun stores its version serialized (jvm.stored: the rows its plan reuses
    are written out one by one); other rounds store them as row objects. The reference
    evaluator agrees either way (the programs above run tiny)."""
    import dataclasses

    engine = sparklog.Engine(spark=spark, partitions=2, strategy="asis", stored="deserialized")
    engine.options = dataclasses.replace(engine.options, tiny_rows=tiny_rows)
    program = sparklog.Program.from_text(PROGRAMS["non-linear closure"])
    result = engine.run(program)
    expected = reference.evaluate(program.ast)
    assert rows(result["tc"]) == expected["tc"]
    level = jvm.stored_rdd(result._db.stored["tc"]).getStorageLevel()
    assert level.deserialized() == (tiny_rows == 0), level.toString()
