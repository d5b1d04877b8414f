"""Which $SUM contributions are summed before they are stored (ir/presum.py), without
Spark: a staged stratum's contributions that move up a stage and read one of its relations,
and the lattice relations guarded for them. Spark runs: tests/spark/test_presum.py."""

from __future__ import annotations

import pytest

from sparklog import programs
from sparklog.engine import Program
from sparklog.ir.presum import guarded, presummed
from tests.staged_programs import generate_staged

E = ".decl e(x:number, y:number)\n.input e\n"
# a $MAX at stage i feeds a $SUM at stage i + 1 that feeds the $MAX again: PageRank's shape
A = ".decl a(n:number, i:number, v:number)\n.decl s(n:number, i:number, v:number)\n" \
    "a(x, 0, $MAX(1)) :- e(x, _).\na(n, i, $MAX(v)) :- s(n, i, v).\n"


def _presummed(text: str) -> dict[str, tuple[str, ...]]:
    program = Program.from_text(text)
    found: dict[str, tuple[str, ...]] = {}
    for sp in program.plan.strata:
        found.update(presummed(sp, program.plan))
    return found


def test_pageranks_shares_and_dangling_mass_are_presummed_guarded_by_the_ranks():
    program = Program.from_file(programs.path("pagerank"))
    (sp,) = [sp for sp in program.plan.strata if sp.loop]
    found = presummed(sp, program.plan)
    assert found == {"share@c": ("rank",), "lost@c": ("rank",)}
    assert guarded(found) == {"rank"}


def test_a_sum_along_the_edges_one_stage_up_is_presummed():
    assert _presummed(E + A + "s(y, i + 1, $SUM(v)) :- a(x, i, v), e(x, y), i < 4.\n") \
        == {"s@c": ("a",)}
    # reading a set relation of the stratum: nothing to guard
    assert _presummed(E + ".decl w(x:number, i:number)\n.decl c(x:number, i:number, k:number)\n"
                      "w(x, 0) :- e(x, _).\nw(y, i) :- c(y, i, _).\n"
                      "c(y, i + 1, $SUM(1)) :- w(x, i), e(x, y), i < 4.\n") == {"c@c": ()}


# walks counted by length: a $SUM one stage up from its own value
W = ".decl w(x:number, i:number, c:number)\nw(x, 0, $SUM(1)) :- e(x, _).\n"


def test_a_sum_read_a_stage_below_itself_is_presummed_guarded_by_itself():
    """Its delta and the total of each key the delta holds are one read (rewrite/totals.py
    reads a $SUM so): each round derives a body tuple once while no key of it is summed in
    two rounds, which its own combine step counts."""
    found = _presummed(E + W + "w(y, i + 1, $SUM(c)) :- w(x, i, c), e(x, y), i < 4.\n")
    assert found == {"w@c": ("w@c",)}
    assert guarded(found) == {"w@c"}


def test_a_sum_read_from_another_sums_total_guards_itself():
    """Another $SUM's total grows with each new contribution row of its key, which that
    $SUM's combine step does not count as raised: the presummed $SUM is guarded itself,
    since summing again from a grown total adds to one of its keys a second time."""
    found = _presummed(E + W + ".decl a(x:number, i:number)\n.decl b(x:number, i:number)\n"
                       ".decl t(x:number, i:number, c:number)\n"
                       "a(x, 0) :- e(x, _).\na(x, i) :- w(x, i, _).\nb(x, i) :- a(x, i).\n"
                       "t(x, i, $SUM(1)) :- a(x, i).\nt(x, i, $SUM(1)) :- b(x, i).\n"
                       "w(x, i + 1, $SUM(v)) :- t(x, i, v), i < 3.\n")
    assert found == {"w@c": ("t@c", "w@c")}


def test_a_sum_read_twice_a_stage_below_itself_is_not_presummed():
    # the total of another key than the delta's: a second read of the stratum
    assert _presummed(E + W + "w(y, i + 1, $SUM(c)) :- w(x, i, c), w(y, i, _), e(x, y), "
                              "i < 4.\n") == {}


@pytest.mark.parametrize("rule", [
    # two atoms of the stratum: a round's two kernels may derive one body tuple twice
    "s(y, i + 1, $SUM(v)) :- a(x, i, v), a(y, i, _), e(x, y), i < 4.\n",
    # the sum stays at its stage: its contributions are not a stage above every delta
    "s(y, i, $SUM(v)) :- a(x, i, v), e(x, y), i < 4.\n",
    # a $COUNT counts distinct values, not contributions
    "s(y, i + 1, $COUNT(x)) :- a(x, i, _), e(x, y), i < 4.\n",
])
def test_sums_that_are_not_presummed(rule):
    assert _presummed(E + A + rule) == {}


def test_an_unstaged_sum_is_not_presummed():
    # a path count over a DAG: its contributions' value improves, round after round
    assert _presummed(E + ".decl p(x:number, y:number, c:number)\np(x, y, $SUM(1)) :- e(x, y).\n"
                      "p(x, z, $SUM(c)) :- p(x, y, c), e(y, z).\n") == {}


def test_the_staged_generator_draws_presummed_sums():
    """tests/staged_programs.py draws the shape on purpose, so the campaigns and the
    agreement tests compare it with the reference evaluator."""
    hits = 0
    for seed in range(60):
        program = Program(generate_staged(seed)[0])
        hits += any(presummed(sp, program.plan) for sp in program.plan.strata)
    assert hits >= 4
