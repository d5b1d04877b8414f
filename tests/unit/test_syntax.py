"""Parser: round trips through the printer, desugaring, and error messages with places."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from sparklog.errors import ParseError
from sparklog.syntax import nodes as n
from sparklog.syntax.parser import parse
from sparklog.syntax.printer import print_program
from tests.strategies import programs


def _strip(p: n.Program) -> n.Program:
    return dataclasses.replace(p, sources=())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_printed_programs_parse_back_to_the_same_ast(drawn):
    program, _facts = drawn
    assert _strip(parse(print_program(program))) == _strip(program)


def test_disjunction_and_several_heads_become_horn_clauses():
    p = parse(".decl a(x:number)\n.decl b(x:number)\n.decl c(x:number)\n.decl d(x:number)\n"
              "a(x), b(x) :- (c(x) ; d(x)), c(x).")
    bodies = [(c.head.relation, [lit.relation for lit in c.body]) for c in p.clauses]
    assert bodies == [("a", ["c", "c"]), ("b", ["c", "c"]), ("a", ["d", "c"]), ("b", ["d", "c"])]


def test_operator_precedence_and_literals():
    p = parse('.decl r(x:number)\nr(x) :- r(y), x = 1 + 2 * 3 ^ 2 band 0x0f, y != -4.')
    bind = p.clauses[0].body[1]
    assert bind.right == n.BinOp("band", n.BinOp("+", n.Number(1), n.BinOp(
        "*", n.Number(2), n.BinOp("^", n.Number(3), n.Number(2)))), n.Number(15))
    assert p.clauses[0].body[2].right == n.Number(-4)


def test_strings_unescape_and_keep_unicode():
    p = parse('.decl s(x:symbol)\ns("a\\"b\\tc\\\\ é ∀").')
    assert p.clauses[0].head.args[0] == n.String('a"b\tc\\ é ∀')


def test_aggregates_and_constraints():
    p = parse('.decl r(x:number, s:symbol)\n.decl c(n:number)\n'
              'c(n) :- n = count : { r(_, _) }.\nc(m) :- m = sum x : r(x, _).\n'
              'c(x) :- r(x, s), contains("a", s), !match("b.*", s).')
    assert p.clauses[0].body[0].right == n.Aggregate("count", None, (
        n.Atom("r", (n.Wildcard(), n.Wildcard())),))
    assert p.clauses[1].body[0].right.func == "sum"
    assert [type(lit).__name__ for lit in p.clauses[2].body] == ["Atom", "Constraint", "Constraint"]
    assert p.clauses[2].body[2].negated


def test_keywords_do_not_swallow_identifiers():
    p = parse(".decl countx(x:number)\n.decl band_(x:number)\ncountx(x) :- band_(x).")
    assert p.clauses[0].head.relation == "countx"


@pytest.mark.parametrize("text, where, message", [
    ("tc(x,y) :- edge(x,y)", "f.dl:1:21", "unexpected end of input"),
    ("tc(x,y) :- edge(x,y) edge(y).", "f.dl:1:22", "unexpected"),
    (".decl a(x:number)\na(x) :- b(x), x = 3 $ 4.", "f.dl:2:21", "unexpected character '$'"),
    ('.decl a(x:symbol)\na("\\q").', "f.dl:2:3", "unknown escape"),
    (".decl a(x:number)\na(99999999999999999999).", "f.dl:2:3", "does not fit in 64 bits"),
])
def test_parse_errors_name_the_place(text, where, message):
    with pytest.raises(ParseError) as err:
        parse(text, "f.dl")
    rendered = err.value.render()
    assert rendered.startswith(f"{where}: error:") and message in rendered
    assert "^" in rendered  # the source line with a caret
