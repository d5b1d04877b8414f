"""Untyped numeric constants typed from their contexts (semantics/literals.py), without
Spark. Oracles: Soufflé's rule (a constant takes the type its context asks for, else it
is a number), worked out by hand; and, over the random programs, the drawn programs
themselves: the generator writes every constant with its type (``2.0``, ``3u``), so
erasing the type of a constant whose context fixes it must give back the same program."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from sparklog.semantics.checks import check, typed_literals
from sparklog.syntax import nodes as n
from sparklog.syntax.parser import parse
from sparklog.syntax.printer import print_clause
from sparklog.syntax.walk import map_terms
from tests.strategies import programs

DECLS = """.decl f(x: float)
.decl u(x: unsigned)
.decl i(x: number)
.decl s(x: symbol)
.decl g(x: float)
"""


@pytest.mark.parametrize("clause, typed", [
    ("f(x) :- f(x), x > 1 / 2.", "f(x) :- f(x), x > (1.0 / 2.0)."),
    ("f(x / 2) :- x = 1.", "f((x / 2.0)) :- x = 1.0."),
    ("u(x) :- u(x), x < 0 - 1.", "u(x) :- u(x), x < (0u - 1u)."),
    ("f(x) :- i(y), x = to_float(y / 2) + 1.", "f(x) :- i(y), x = (to_float((y / 2)) + 1.0)."),
    ("i(x) :- f(y), x = to_number(y * 2) + 1.", "i(x) :- f(y), x = (to_number((y * 2.0)) + 1)."),
    ("s(to_string(x)) :- x = 1 / 2.", "s(to_string(x)) :- x = (1 / 2)."),  # no context: number
    ("f(x) :- x = sum y + 1 : { g(y) }.", "f(x) :- x = sum (y + 1.0) : { g(y) }."),
    ("f(max(x, 3)) :- f(x).", "f(max(x, 3.0)) :- f(x)."),
    ("u(x band 7) :- u(x).", "u((x band 7u)) :- u(x)."),
])
def test_a_constant_takes_its_contexts_type(clause, typed):
    program = check(parse(DECLS + clause)).program
    assert print_clause(program.clauses[0]) == typed


@pytest.mark.parametrize("fact, value", [
    ("f(22 / 7).", n.Float(22 / 7)),
    ("u((0 - 1) / 2).", n.Number(2**63 - 1, True)),
    ("i((0 - 1) / 2).", n.Number(0)),
    ("f(1 bshl 2).", None),  # a bit operator is not a float's: left to the checks' error
])
def test_facts_fold_after_their_constants_are_typed(fact, value):
    clause = typed_literals(parse(DECLS + fact)).clauses[0]
    if value is not None:
        assert clause.is_fact and clause.head.args == (value,)


def _erased(program: n.Program) -> n.Program:
    """``program`` with the type of each constant erased where its context fixes it: an
    atom's argument, or an arithmetic operand or a comparison side next to a variable."""
    def plain(t: n.Term) -> n.Term:
        match t:
            case n.Float(value=v) if v == int(v) and abs(v) < 2**53:
                return n.Number(int(v), span=t.span)
            case n.Number(unsigned=True, value=v) if v < 2**63:
                return n.Number(v, span=t.span)
        return t

    def erase(t):
        match t:
            case n.Atom(args=args):
                return dataclasses.replace(t, args=tuple(plain(a) for a in args))
            case n.BinOp(op=op, left=n.Var() as var, right=right) if op in "+-*/^":
                return dataclasses.replace(t, left=var, right=plain(right))
            case n.BinOp(op=op, left=left, right=n.Var() as var) if op in "+-*/^":
                return dataclasses.replace(t, left=plain(left), right=var)
            case n.Comparison(left=n.Var() as var, right=right):
                return dataclasses.replace(t, left=var, right=plain(right))
        return t

    def clause(c: n.Clause) -> n.Clause:
        c = map_terms(c, erase)
        body = tuple(erase(lit) for lit in c.body)
        head = erase(c.head) if not c.is_fact else c.head  # a fact's row is data as written
        return dataclasses.replace(c, head=head, body=body)
    return dataclasses.replace(program, clauses=tuple(clause(c) for c in program.clauses))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_erasing_a_constants_type_where_its_context_fixes_it_changes_nothing(drawn):
    program, _ = drawn
    assert typed_literals(_erased(program)).clauses == typed_literals(program).clauses


def test_a_term_nested_as_deep_as_allowed_is_typed_whole():
    """99 operators deep (the deepest a term may nest): every constant becomes a float. Each
    level's kind is read from its sides once, so this takes as many steps as the term has
    nodes (it once read each side twice a level: 2^99 steps)."""
    chain = "x" + " + 1" * 99
    clause = check(parse(DECLS + f"g(y) :- g(x), y = {chain}.")).program.clauses[0]
    floats = [t for t in _constants(clause.body[1].right)]
    assert len(floats) == 99 and all(isinstance(t, n.Float) for t in floats)


def _constants(term: n.Term) -> list[n.Term]:
    if isinstance(term, n.BinOp):
        return _constants(term.left) + _constants(term.right)
    return [term] if isinstance(term, n.Number | n.Float) else []
