"""Theorem 3.2 (rewrite/arity.py) without Spark: what it recognizes and refuses, what it
rewrites to (golden files), and that the rewritten program derives exactly the written
program's facts (the reference evaluator on random inputs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparklog.engine import Program
from sparklog.errors import CheckError
from sparklog.explain import strategies
from tests import reference

GOLDEN = Path(__file__).parent.parent / "golden" / "arity"


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.dl")))
def test_golden_rewrites(name, update_golden):
    """Example 3.3 (same-generation) and a mutual recursion: the printed rewrite."""
    program = Program.from_file(GOLDEN / f"{name}.dl")
    got = strategies(program, "auto") + "\n"
    path = GOLDEN / f"{name}.out"
    if update_golden:
        path.write_text(got)
    assert path.exists(), f"{path} missing: run pytest --update-golden"
    assert got == path.read_text()


_PAIRS = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14)
_TRIPLES = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)),
                    max_size=14)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(sorted(p.stem for p in GOLDEN.glob("*.dl"))))
def test_the_doubled_program_derives_exactly_the_written_programs_facts(data, name):
    program = Program.from_file(GOLDEN / f"{name}.dl")
    inputs = {}
    for d in program.checked.inputs():
        arity = len(program.checked.kinds[d.relation])
        drawn = data.draw({1: st.lists(st.integers(0, 6), max_size=3).map(
            lambda xs: [(x,) for x in xs]), 2: _PAIRS, 3: _TRIPLES}[arity], label=d.relation)
        inputs[d.relation] = set(drawn)
    rewritten, [choice] = program.rewritten("auto")
    assert choice.strategy == "doubling-arity" and "warning: Theorem 3.2" in choice.why
    written = reference.evaluate(program.ast, inputs)
    got = reference.evaluate(rewritten, inputs)
    for decl in program.ast.decls:
        assert got[decl.name] == written[decl.name], decl.name


SG = (".decl par(x:number, y:number)\n.input par\n.decl sg(x:number, y:number)\n"
      "sg(X, Y) :- par(X, Z), par(Y, Z).\n")


@pytest.mark.parametrize("step", [
    "sg(X, Y) :- par(X, Xp), sg(Xp, Yp), sg(Yp, Y).",  # two atoms of the recursion
    "sg(X, Y) :- par(X, Xp), sg(Xp, Y).",  # Y bound by the recursion alone
    "sg(X, X) :- par(X, Xp), par(X, Yp), sg(Xp, Yp).",  # a repeated head variable
    "sg(X, Y) :- par(X, Xp), par(Y, Yp), sg(Xp, 1).",  # a constant in the recursion's atom
])
def test_a_pragma_on_what_theorem_3_2_cannot_double_is_refused(step):
    text = ".pragma sg(strategy=doubling)\n" + SG + step + "\n"
    with pytest.raises(CheckError) as err:
        Program.from_text(text, "prog.dl")
    assert str(err.value).startswith("prog.dl:1:9: error: .pragma sg(strategy=doubling): sg "
                                     "is not in a chain program"), str(err.value)
    assert "nor in a linear recursion Theorem 3.2 doubles" in str(err.value)


def test_without_the_pragma_nothing_is_doubled():
    text = SG + "sg(X, Y) :- par(X, Xp), par(Y, Yp), sg(Xp, Yp).\n"
    for strategy in ("auto", "doubling", "smart"):
        rewritten, choices = Program.from_text(text).rewritten(strategy)
        assert choices == [] and not any(d.name.startswith("t@") for d in rewritten.decls)
