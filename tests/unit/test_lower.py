"""Lowering decisions that change what a kernel computes, read off the printed plan."""

from __future__ import annotations

from sparklog.ir.printer import print_plan
from sparklog.rewrite import planned
from sparklog.semantics.checks import check
from sparklog.syntax.parser import parse


def plan_lines(text: str, relation: str) -> list[str]:
    plan = print_plan(planned(check(parse(text, "t.dl")), with_indexes=False))
    return [line.split("<- ", 1)[1] for line in plan.splitlines()
            if line.lstrip().startswith(("once", "loop")) and f" {relation}(" in f" {line.split()[1]}"]


DECLS = """
.decl a()
.decl c(x:number, y:number, z:number)
.decl f(x:number, y:number)
.decl i(x:number)
.decl q(x:number)
"""


def test_atoms_nothing_else_reads_are_existence_tests():
    lines = plan_lines(DECLS + "q(x) :- a(), c(_, _, _), i(x), f(x, _).", "q")
    assert lines == ["scan full a() ; exists full c(_, _, _) ; scan full i(x) ; exists full f(x, _)"]


def test_a_variable_used_nowhere_else_is_unread_too():
    lines = plan_lines(DECLS + "q(x) :- i(x), f(x, z), c(y, y, 1).", "q")
    assert lines == ["scan full i(x) ; exists full f(x, z) ; exists full c(y, y, 1)"]


def test_an_atom_whose_columns_are_all_read_stays_a_join():
    """At most one match per row (relations are sets): nothing to save, and the delta of
    a linear rule keeps driving its round."""
    text = DECLS + "q(x) :- i(x).\nq(y) :- q(x), f(x, y).\nq(x) :- i(x), f(x, x)."
    lines = plan_lines(text, "q")
    assert "scan delta q(x) ; scan full f(x, y)" in lines
    assert "scan full i(x) ; scan full f(x, x)" in lines


def test_two_atoms_never_rely_on_each_other_to_bind():
    """``f(x, _)`` twice: the first becomes a test only while the second binds x."""
    lines = plan_lines(DECLS + "q(1) :- f(x, _), f(_, x).", "q")
    assert lines == ["scan full f(_, x) ; exists full f(x, _)"]


def test_a_body_of_tests_alone_and_a_recursive_test():
    text = DECLS + "q(1) :- c(_, _, _), f(_, _).\nq(x) :- i(x), q(_)."
    lines = plan_lines(text, "q")
    assert "exists full c(_, _, _) ; exists full f(_, _)" in lines
    assert "scan full i(x) ; exists delta q(_)" in lines


def test_aggregate_bodies_keep_their_joins():
    """``count : { f(_, y), f(y, _) }`` counts the join's tuples: no test inside it."""
    text = DECLS + "q(n) :- n = count : { f(_, y), f(y, _) }."
    [line] = plan_lines(text, "q")
    assert "exists" not in line
