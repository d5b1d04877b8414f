"""Head aggregates over lattices ($MIN, $MAX): parsing, and every refusal of the
monotonicity checker with its message and place; the reference evaluator's lattice join."""

from __future__ import annotations

import pytest

from sparklog.errors import CheckError, ParseError
from sparklog.semantics.checks import check
from sparklog.syntax import nodes as n
from sparklog.syntax.parser import parse
from sparklog.syntax.printer import print_program
from tests.reference import evaluate

DECLS = """.decl e(x:number, y:number, w:number)
.decl sp(x:number, y:number, d:number)
.decl r(x:number, y:number)
.decl s(x:symbol, d:symbol)
"""
SSSP = "sp(f, t, $MIN(l + w)) :- sp(f, m, l), e(m, t, w).\n"


def errors(body: str) -> list[str]:
    with pytest.raises(CheckError) as err:
        check(parse(DECLS + body, "l.dl"))
    return [f"{d.span.line}:{d.span.col} {d.message}" for d in err.value.diagnostics]


def test_head_aggregate_parses_prints_and_declares_the_lattice():
    program = parse(DECLS + "sp(s, s, 0) :- e(s, _, _).\n" + SSSP)
    head = program.clauses[1].head.args[2]
    assert isinstance(head, n.HeadAggregate) and head.func == "min"
    assert "sp(f, t, $MIN((l + w))) :- sp(f, m, l), e(m, t, w)." in print_program(program)
    assert parse(print_program(program)).clauses == program.clauses
    lattice = check(program).lattices["sp"]
    assert (lattice.column, lattice.func) == (2, "min")


def test_unknown_dollar_aggregate_is_an_error():
    """``$AVG(l)`` reads as a value of an algebraic data type's branch AVG, in a number
    column: the error says which aggregates a head has."""
    with pytest.raises(CheckError, match=r"\$AVG\(\.\.\.\) where the column .* takes a "
                       r"number.*\$MIN, \$MAX, \$SUM and \$COUNT"):
        parse(DECLS + "sp(f, t, $AVG(l)) :- sp(f, t, l).")


@pytest.mark.parametrize("rule, expected", [
    # a dependent value as a join key, and read twice in one atom
    ("sp(f, t, $MIN(l + w)) :- sp(f, m, l), e(m, t, l), w = 1.",
     "5:47 l is the dependent value of sp ($MIN, column 3); it is used as a join key in e"),
    ("sp(f, t, $MIN(l)) :- sp(f, t, l), sp(t, f, l).",
     "5:44 l is the dependent value of sp ($MIN, column 3); it is used as a join key in sp"),
    # in a negation, a comparison, a constraint, a body aggregate
    ("sp(f, t, $MIN(l + w)) :- sp(f, m, l), e(m, t, w), !r(l, 1).",
     "5:51 l is the dependent value of sp ($MIN, column 3); it is used in a negation"),
    ("sp(f, t, $MIN(l + w)) :- sp(f, m, l), e(m, t, w), l < 10.",
     "5:51 l is the dependent value of sp ($MIN, column 3); it is used in a comparison"),
    ("sp(f, t, $MIN(c)) :- sp(f, t, l), e(f, t, _), c = count : { sp(_, _, l) }.",
     "5:51 l is the dependent value of sp ($MIN, column 3); it is used inside a count aggregate"),
    # non-monotone functions of it, in the head or through a binding
    ("sp(f, t, $MIN(w - l)) :- sp(f, m, l), e(m, t, w).",
     "5:19 l is the dependent value of sp ($MIN, column 3); it is on the right of -"),
    ("sp(f, t, $MIN(k)) :- sp(f, m, l), e(m, t, w), k = l % 7.",
     "5:51 l is the dependent value of sp ($MIN, column 3); it is an argument of %, which is "
     "not monotone"),
    ("sp(f, t, $MIN(-l)) :- sp(f, m, l), e(m, t, _).",
     "5:15 l is the dependent value of sp ($MIN, column 3); it is an argument of neg"),
    # into an independent column, a set relation, or the opposite lattice
    ("sp(f, l, $MIN(l)) :- sp(f, m, l), e(m, _, _).",
     "5:7 l is the dependent value of sp ($MIN, column 3); it is used in column 2 of sp, "
     "an independent column"),
    ("r(f, l) :- sp(f, _, l).\nsp(f, t, 0) :- r(f, t).\n" + SSSP,
     "5:6 l is the dependent value of sp ($MIN, column 3); it flows into r, a relation "
     "without an aggregated column, in the same recursive stratum"),
    # where head aggregates may stand, and what they may aggregate
    ("sp(f, t, $COUNT(l)) :- sp(f, m, l), e(m, t, _).",
     "5:10 l is the dependent value of sp ($COUNT, column 3); $COUNT of sp counts its "
     "distinct values, and every superseded value would stay counted"),
    (".decl m(x:number, d:number)\nm(x, $MIN(d)) :- m(x, d).\nm(x, 0) :- e(x, _, _).\n"
     "m(x, $MIN(d)) :- sp(x, _, d).\nsp(f, t, $SUM(d)) :- m(f, d), e(f, t, _).",
     "9:10 d is the dependent value of m ($MIN, column 2); it feeds $SUM of sp, the opposite"),
    (".decl f(x:number, c:number)\n.input f\nf(x, $COUNT(y)) :- e(x, y, _).",
     "6:8 .input of f, a $COUNT relation"),
    (".decl f(x:number, c:float)\nf(x, $COUNT(y)) :- e(x, y, _).",
     "6:6 $COUNT into a float column: a count is a number or unsigned"),
    ("sp(f, t, 1 + $MIN(l)) :- sp(f, t, l).",
     "5:14 $MIN must be a whole head argument, not part of an expression"),
    ("r(f, t) :- sp(f, t, l), l = $MIN(l).", "5:29 $MIN is only allowed as an argument of a rule's head"),
    ("sp(f, $MIN(t), $MIN(l)) :- sp(f, t, l).",
     "5:16 at most one aggregated (dependent) column per relation"),
    ('s(x, $MIN(d)) :- s(x, d).', "5:6 $MIN over a symbol column"),
    ("sp(f, t, $MIN(l)) :- sp(f, t, l).\nsp(f, t, $MAX(l)) :- sp(f, t, l).",
     "6:10 rules for sp disagree on its aggregated column: $MAX in column 3 here"),
    ("sp(f, t, 0) :- e(f, t, _).\nsp(f, t, $MIN(l)) :- sp(f, m, l), e(m, t, _), sp(t, f, 3).",
     "6:56 the dependent column of sp ($MIN) is matched against a value"),
])
def test_each_refusal_names_the_rule_and_column(rule, expected):
    found = errors(rule)
    assert any(e.startswith(expected) for e in found), found


@pytest.mark.parametrize("rule", [
    SSSP,  # the PARALAGG SSSP rule
    "sp(f, t, $MIN(k)) :- sp(f, m, l), e(m, t, w), k = l * 2 + w.",  # through a binding
    "sp(f, t, $MAX(min(l, w))) :- sp(f, m, l), e(m, t, w).",  # widest path
    "sp(f, t, $MIN(l)) :- sp(t, f, l).",  # a plain copy of the value
    "sp(f, t, 0) :- r(f, t).\nr(x, y) :- sp(x, y, _).\n" + SSSP,  # wildcards in its stratum
    "r(f, l) :- sp(f, _, l).",  # a higher stratum reads the values freely
    "sp(x, x, $MIN(w)) :- e(x, _, w), w < 3.",  # not recursive: comparisons are fine
])
def test_monotone_rules_are_accepted(rule):
    check(parse(DECLS + "sp(s, s, 0) :- e(s, _, _).\n" + rule))


@pytest.mark.parametrize("rule", [
    "r(y, $SUM(c)) :- r(x, c), e(x, y, _).",  # paths counted: a contribution replaced
    "r(y, $COUNT(x)) :- e(x, y, _).",  # not recursive: distinct x per y
    "r(y, $SUM(c * w)) :- r(x, c), e(x, y, w).",
    "r(y, $MAX(c)) :- r(x, c), e(x, y, _).\nr(y, $MAX(c + 1)) :- sp(y, _, c).\n"
    "sp(x, y, $SUM(c)) :- r(x, c), e(x, y, _).",  # $SUM and $MAX grow the same way
])
def test_sums_and_counts_are_accepted(rule):
    found = check(parse(DECLS + "r(1, 1).\n" + rule)).lattices
    assert {lattice.func for lattice in found.values()} <= {"sum", "count", "max"}


def test_all_refusals_are_reported_at_once():
    found = errors("sp(f, t, $MIN(w - l)) :- sp(f, m, l), e(m, t, w), l > 0, !r(l, 0).")
    assert len(found) == 3


def test_reference_keeps_one_tuple_per_key():
    text = DECLS + """
e(1, 2, 5). e(2, 3, 1). e(1, 3, 9). e(3, 1, 1). e(4, 4, 1).
sp(s, s, 0) :- e(s, _, _).
""" + SSSP + """
.decl wide(x:number, y:number, c:number)
wide(x, y, c) :- e(x, y, c).
wide(f, t, $MAX(min(c, w))) :- wide(f, m, c), e(m, t, w).
"""
    result = evaluate(parse(text))
    assert sorted(result["sp"]) == [(1, 1, 0), (1, 2, 5), (1, 3, 6), (2, 1, 2), (2, 2, 0),
                                    (2, 3, 1), (3, 1, 1), (3, 2, 6), (3, 3, 0), (4, 4, 0)]
    assert (1, 3, 9) in result["wide"] and (1, 1, 5) not in result["wide"]
    assert (3, 3, 1) in result["wide"]  # 3 -> 1 -> 3: min(1, 9)


MASK = ".lattice Mask<> { Bottom -> 0, Lub(x, y) -> x bor y, Glb(x, y) -> x band y }\n"


@pytest.mark.parametrize("text, expected", [
    (".decl m(x:number, v:Nope<>)", "5:19 Nope<> of attribute v is not a lattice"),
    (".lattice L<> { Bottom -> 0 }", "5:1 lattice L needs Bottom and Lub"),
    (".lattice L<> { Bottom -> 0, Lub(x, y) -> x + z }", "5:46 z is not an argument of Lub (x, y)"),
    (".lattice L<> { Bottom -> 0, Lub(x, x) -> x }", "5:29 Lub of lattice L needs two different"),
    (".lattice L<> { Bottom -> 0, Join(x, y) -> x }", "5:29 unknown lattice operation Join"),
    (".lattice L<> { Bottom -> 0, Lub -> max(x, _) }", "5:29 Lub of lattice L: write Lub(x, y)"),
    (".lattice L<> { Bottom -> \"a\", Lub(x, y) -> x }", "5:26 Bottom of lattice L must be a number"),
    (MASK + ".decl m(x:Mask<>, v:Mask<>)", "6:19 at most one lattice column per relation"),
    (MASK + ".decl m(x:number, v:Mask<>)\nm(x, $MIN(v)) :- m(x, v).",
     "7:6 $MIN in a head of m, whose column 2 is typed Mask<>"),
    (MASK + ".decl m(x:number, v:Mask<>)\nm(x, v) :- m(x, w), v = @f(w, 1).",
     "7:25 user functor @f: user functors are supported as a .lattice's Lub or Glb only"),
    (MASK + ".decl m(x:number, v:Mask<>)\nm(x, v) :- m(x, v), m(v, _).",
     "7:23 v is the dependent value of m (Mask<>, column 2); it is used as a join key in m"),
])
def test_user_lattice_refusals(text, expected):
    found = errors(text)
    assert any(e.startswith(expected) for e in found), found


def test_user_lattice_relation_is_a_lattice_of_its_column():
    program = parse(DECLS + MASK + ".decl m(x:number, v:Mask<>)\n"
                    "m(x, 1 bshl x) :- e(x, _, _).\nm(y, v) :- m(x, v), e(x, y, _).\n")
    lattice = check(program).lattices["m"]
    assert (lattice.column, lattice.user, lattice.notation) == (1, "Mask", "Mask<>")
    assert parse(print_program(program)).lattices == program.lattices
    db = evaluate(program, {"e": {(0, 1, 0), (1, 2, 0), (2, 0, 0), (3, 0, 0)}})
    assert db["m"] == {(0, 15), (1, 15), (2, 15), (3, 8)}  # the sources reaching each node


def test_a_total_is_planned_as_contributions_summed_a_round_later():
    from sparklog.ir.printer import print_plan
    from sparklog.rewrite import planned

    program = parse(DECLS + MASK + ".decl m(x:number, v:Mask<>)\nm(x, 1) :- e(x, _, _).\n"
                    "m(y, v) :- m(x, v), e(x, y, _).\n"
                    ".decl c(x:number, n:number)\nc(y, $COUNT(x)) :- e(x, y, _).\n")
    text = print_plan(planned(check(program), with_indexes=False))
    assert "layout m: bucket by (c0), sub-buckets by (), one tuple per key: c1 is Mask<>" in text
    assert ("layout c@c: bucket by (c0), sub-buckets by (), one tuple per contribution, told "
            "apart by (c1, c2) (not hashed): c3 is its newest value") in text
    assert "once  c@c(y, 0, x, 1) <- scan full e(x, y, _)" in text
    assert ("loop  c(@k0, @t) <- scan delta c@c(@k0, _, _, _) ; "
            "total @t = sum c3 of full c@c by (@k0)") in text
