"""Staged recursions (ir/stages.py), without Spark: which strata have a stage column that
every recursive rule moves forward, and which do not."""

from __future__ import annotations

import pytest

from sparklog import programs
from sparklog.engine import Program
from sparklog.ir.stages import advances, stages

E = ".decl e(x:number, y:number)\n.input e\n"


def _stages(text: str) -> list[dict[str, int]]:
    program = Program.from_text(text)
    return [stages(sp, program.plan) for sp in program.plan.strata if sp.loop]


def test_pagerank_is_staged_by_its_iteration_including_the_sums_contributions():
    program = Program.from_file(programs.path("pagerank"))
    (found,) = [stages(sp, program.plan) for sp in program.plan.strata if sp.loop]
    # rank(n, i, r) and the $SUM contributions of share(t, i, s) and lost(i, s) (lower.py),
    # whose totals the rounds read where they are summed (rewrite/totals.py)
    assert found == {"rank": 1, "share@c": 1, "lost@c": 0}
    # the contributions move up a stage, the ranks do not: a round's new contributions
    # are a stage above every delta it reads (Database.beneath)
    (sp,) = [sp for sp in program.plan.strata if sp.loop]
    assert advances(sp, found) == {"rank": 0, "share@c": 1, "lost@c": 1}
    assert advances(sp, {}) == {}
    stored = program.plan_for(totals=False)
    (found,) = [stages(sp, stored) for sp in stored.strata if sp.loop]
    assert found == {"rank": 1, "share": 1, "lost": 0, "share@c": 1, "lost@c": 0}


def test_a_hop_counter_is_a_stage():
    assert _stages(E + ".decl w(x:number, d:number)\nw(x, 0) :- e(x, _).\n"
                   "w(y, d + 1) :- w(x, d), e(x, y), d < 5.\n") == [{"w": 1}]


@pytest.mark.parametrize("rules", [
    # a closure keeps its source column: a stage that never moves retires nothing
    ".decl t(x:number, y:number)\nt(x, y) :- e(x, y).\nt(x, z) :- t(x, y), e(y, z).\n",
    # the counter moves back
    ".decl w(x:number, d:number)\nw(x, 5) :- e(x, _).\nw(y, d - 1) :- w(x, d), e(x, y), d > 0.\n",
    # two recursive atoms at two stages
    ".decl w(x:number, d:number)\nw(x, 0) :- e(x, _).\n"
    "w(x, d + 1) :- w(x, d), w(x, c), c < d, d < 5.\nw(y, 1) :- w(x, 0), e(x, y).\n",
    # a head stage that is a constant
    ".decl w(x:number, d:number)\nw(x, 0) :- e(x, _).\nw(y, 1) :- w(x, d), e(x, y).\n",
    # the counter is the lattice's value, not a key column
    ".decl w(x:number, d:number)\nw(x, $MIN(0)) :- e(x, _).\nw(y, $MIN(d + 1)) :- w(x, d), e(x, y).\n",
    # a float counter
    ".decl w(x:number, d:float)\nw(x, 0.0) :- e(x, _).\nw(y, d + 1.0) :- w(x, d), e(x, y), d < 5.0.\n",
])
def test_strata_that_are_not_staged(rules):
    assert _stages(E + rules) == [{}]


def test_one_unstaged_rule_unstages_the_stratum():
    staged = (".decl w(x:number, d:number)\nw(x, 0) :- e(x, _).\n"
              "w(y, d + 1) :- w(x, d), e(x, y), d < 5.\n")
    assert _stages(E + staged) == [{"w": 1}]
    assert _stages(E + staged + "w(x, d) :- w(x, d), w(d, x).\n") == [{}]
