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


def test_unknown_dollar_aggregate_is_a_parse_error():
    with pytest.raises(ParseError):
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
    ("sp(f, t, $SUM(l)) :- sp(f, t, l).", "5:10 $SUM in a head is not supported yet"),
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
