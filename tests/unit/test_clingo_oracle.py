"""The reference evaluator against a second oracle that shares none of its evaluation:
clingo, through tests/clingo_oracle.py. No Spark: the engine meets the reference in
tests/spark/test_reference_agreement.py, so the two agreements together compare the engine
with clingo. ``python3 -m tests.campaign --clingo N`` compares many more seeds."""

from __future__ import annotations

from sparklog.syntax.parser import parse
from tests import clingo_oracle as oracle
from tests.closure_programs import generate_closure
from tests.reference import evaluate
from tests.staged_programs import generate_staged
from tests.strategies import generate

SEEDS = range(1000)  # about ten seconds

# Hand-computed answers, so that the translation itself is checked, not only its agreement.
HAND = """
.decl e(x:number, y:number)
.decl c(n:number)
.decl t(x:number, s:number)
.decl w(x:number, m:number)
.decl r(x:number, y:number)
.decl nr(x:number)
.decl f(v:float)
.decl k(x:number)
.decl u(v:unsigned)
.output c
.output t
.output w
.output r
.output nr
.output f
.output k
.output u
e(1, 2). e(2, 3). e(3, 1). e(4, 6).
c(n) :- n = count : { e(_, _) }.
t(x, s) :- e(x, _), s = sum y : { e(x, y) }.
w(x, m) :- m = min y : { e(x, y) }.
r(x, y) :- e(x, y).
r(x, z) :- r(x, y), e(y, z).
nr(x) :- e(x, _), !r(x, x).
f(v) :- v = mean y : { e(_, y) }.
k(x) :- e(x, _), n = count : { e(x, y), m = count : { e(y, _) }, m >= 1 }, n >= 1.
u(max(to_unsigned(x) - 2u, 1u)) :- e(x, 6).
"""
CYCLE = {(a, b) for a in (1, 2, 3) for b in (1, 2, 3)}
EXPECTED = {
    "c": {(4,)},
    "t": {(1, 2), (2, 3), (3, 1), (4, 6)},
    "w": {(3, 1)},  # min's witness: the x of the tuple that has it
    "r": CYCLE | {(4, 6)},
    "nr": {(4,)},
    "f": {(3.0,)},
    "k": {(1,), (2,), (3,)},  # 4's successor 6 has none
    "u": {(2,)},
}


def test_the_translation_gives_hand_computed_answers():
    program = parse(HAND, "hand.dl")
    assert oracle.agree(program, {}, EXPECTED) == {}
    assert evaluate(program)["k"] == EXPECTED["k"]  # and the reference says the same


def test_a_wrong_answer_is_named_with_the_rows_that_differ():
    program = parse(HAND, "hand.dl")
    wrong = {**EXPECTED, "r": EXPECTED["r"] - {(2, 2)}, "f": {(3.25,)}}
    assert oracle.agree(program, {}, wrong) == {"r": ({(2, 2)}, set()),
                                               "f": ({(3.0,)}, {(3.25,)})}


def test_random_programs_agree_with_clingo():
    compared, differ = 0, []
    for seed in SEEDS:
        program, facts = generate(seed)
        found = oracle.agree(program, facts, evaluate(program, facts))
        if found is None:
            continue
        compared += 1
        if found:
            differ.append(f"seed {seed}: {found}")
    assert not differ, "\n".join(differ)
    # nearly every program translates: a change that made most of them unsupported would
    # leave this test comparing nothing
    assert compared >= 0.9 * len(SEEDS), compared


def test_closure_and_staged_programs_agree_with_clingo():
    """The programs around the recursions sparklog rewrites (every one translates) and
    the staged recursions (those without a $SUM)."""
    differ, compared = [], 0
    for generate_family in (generate_closure, generate_staged):
        for seed in range(200):
            program, facts = generate_family(seed)
            found = oracle.agree(program, facts, evaluate(program, facts))
            compared += found is not None
            if found:
                differ.append(f"{generate_family.__name__}({seed}): {found}")
    assert not differ, "\n".join(differ)
    assert compared >= 250, compared


def test_a_program_outside_the_translation_is_skipped_not_compared():
    program = parse(".decl a(x:number)\n.output a\na(ord(\"s\")).", "o.dl")
    assert oracle.agree(program, {}, {"a": {(1,)}}) is None
