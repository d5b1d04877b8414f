"""The secondary-index pass (rewrite/indexes.py), on plans: no Spark."""

from __future__ import annotations

from sparklog.engine import Program
from sparklog.ir.nodes import DELTA, FULL, Scan
from sparklog.ir.printer import print_kernel, print_plan

NONLINEAR = """
.decl e(x: number, y: number)
.input e
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), tc(y, z).
"""

SAME_GENERATION = """
.decl e(x: number, y: number)
.input e
.decl sg(x: number, y: number)
sg(x, y) :- e(p, x), e(p, y), x != y.
sg(x, y) :- e(x, a), e(y, b), sg(a, b).
"""


def _loop(program: Program, stratum: int = 1) -> list[str]:
    return [print_kernel(k) for k in program.plan_for("asis").strata[stratum].loop]


def test_nonlinear_closure_reads_its_old_version_from_a_lagging_index():
    program = Program.from_text(NONLINEAR)
    assert program.plan_for("asis").layouts["tc"].key == (0,)  # the full scan's placement
    index = program.plan_for("asis").layouts["tc@o1"]
    assert (index.key, index.index_of, index.lagging) == ((1,), "tc", True)
    sp = program.plan_for("asis").strata[1]
    assert sp.indexes == ("tc@o1",) and sp.relations == ("tc", "tc@o1")
    assert _loop(program) == [
        "tc(x, z) <- scan delta tc(x, y) ; scan full tc(y, z)",
        "tc(x, z) <- scan delta tc(y, z) ; scan full tc@o1(x, y)",
        "tc@o1(@x0, @x1) <- scan delta tc(@x0, @x1)",
    ]
    assert program.plan_for("asis").kinds["tc@o1"] == program.plan_for("asis").kinds["tc"]
    assert ("  index tc@o1 of tc: bucket by (c1), one round behind tc (its old version), "
            "from each round's delta") in print_plan(program.plan_for("asis")).splitlines()


def test_without_indexes_the_plan_reads_the_relation_itself():
    program = Program.from_text(NONLINEAR)
    assert not any("@" in r for r in program.plan_for("asis", indexes=False).layouts)
    assert [print_kernel(k) for k in program.plan_for("asis", indexes=False).strata[1].loop] == [
        "tc(x, z) <- scan delta tc(x, y) ; scan full tc(y, z)",
        "tc(x, z) <- scan delta tc(y, z) ; scan old tc(x, y)",
    ]


def test_a_lower_stratum_relation_gets_a_static_index():
    program = Program.from_text(SAME_GENERATION)
    sp = program.plan_for("asis").strata[1]
    assert [print_kernel(k) for k in sp.preamble] == [
        "sg(x, y) <- scan full e(p, x) ; scan full e@k0(p, y) ; filter x != y"]
    index = program.plan_for("asis").layouts["e@k0"]
    assert (index.key, index.index_of, index.lagging) == ((0,), "e", False)
    assert sp.indexes == ()  # built once, from e: nothing for the rounds to maintain
    # the loop's scans of e are keyed on its placement already (bucket by c1)
    assert program.plan_for("asis").layouts["e"].key == (1,)
    assert _loop(program) == [
        "sg(x, y) <- scan delta sg(a, b) ; scan full e(x, a) ; scan full e(y, b)"]


def test_the_index_key_follows_the_first_scan_so_the_join_stays_local():
    text = """
    .decl a(x: number, y: number, z: number)
    .input a
    .decl b(x: number, y: number)
    .input b
    .decl c(x: number, y: number)
    .input c
    .decl u(x: number, y: number)
    u(x, y) :- a(x, y, z), c(x, z).
    u(x, y) :- a(x, z, y), c(x, z).
    .decl q(x: number, y: number)
    q(x, y) :- b(y, x), a(_, x, y).
    """
    program = Program.from_text(text)
    assert program.plan_for("asis").layouts["a"].key == (0, 2) and program.plan_for("asis").layouts["b"].key == (0, 1)
    kernel = next(k for sp in program.plan_for("asis").strata for k in sp.preamble if k.relation == "q")
    scan = [s for s in kernel.steps if isinstance(s, Scan)][1]
    layout = program.plan_for("asis").layouts[scan.relation]
    assert layout.index_of == "a" and scan.version == FULL
    first = program.plan_for("asis").layouts["b"]
    # a's columns in the order of b's bucket columns' variables
    names = [kernel.steps[0].args[i].name for i in first.key]
    assert [scan.args[i].name for i in layout.key] == names == ["y", "x"]
    assert layout.key == (2, 1)


def test_what_is_never_indexed():
    text = """
    .decl e(x: number, y: number, w: number)
    .input e
    .decl d(x: number, l: number)
    d(x, $MIN(0)) :- e(x, _, _).
    d(y, $MIN(l + w)) :- d(x, l), e(x, y, w).
    .decl p(x: number, y: number)
    p(x, y) :- e(x, y, _).
    p(x, z) :- p(x, y), p(y, z), p(z, x).
    .decl s(x: number, l: number)
    s(x, l) :- d(y, l), e(x, y, _).
    """
    program = Program.from_text(text)
    indexed = {r for r, lay in program.plan_for("asis").layouts.items() if lay.index_of}
    assert not any(r.startswith("d@") for r in indexed)  # a lattice relation
    for sp in program.plan_for("asis").strata:
        for kernel in sp.loop:
            for step in kernel.steps:
                if isinstance(step, Scan) and step.version == FULL and step.relation == "p":
                    continue  # its own placement, or a shuffle: never a lagging copy
                if isinstance(step, Scan) and "@o" in step.relation:
                    base = program.plan_for("asis").layouts[step.relation].index_of
                    assert base in sp.relations and step.version == FULL
    lagging = [k for sp in program.plan_for("asis").strata for k in sp.loop if "@o" in k.relation]
    assert all(k.steps[0].version == DELTA for k in lagging)
