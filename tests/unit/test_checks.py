"""Semantic checks: every problem reported at its place, all at once."""

from __future__ import annotations

import pytest

from sparklog.errors import CheckError
from sparklog.semantics.checks import check
from sparklog.syntax.parser import parse

DECLS = """.decl edge(x:number, y:number)
.decl name(s:symbol)
.decl p(x:number)
.decl q(x:number)
"""


COUNTER = ("__ITERATION__ (Soufflé's count of a recursion's iterations) is not supported: "
           "sparklog's rounds are not numbered as Soufflé's iterations")


def errors(body: str) -> list[str]:
    with pytest.raises(CheckError) as err:
        check(parse(DECLS + body, "c.dl"))
    return [f"{d.span.line}:{d.span.col} {d.message}" for d in err.value.diagnostics]


@pytest.mark.parametrize("rule, expected", [
    ("q(x) :- edge(x, y, z).", "5:9 relation edge has arity 2, used here with 3 arguments"),
    ("q(x) :- nope(x).", "5:9 undeclared relation nope"),
    ("q(y) :- edge(x, _).", "5:3 ungrounded variable y (in the head)"),
    ("q(x) :- edge(x, y), !edge(y, w).", "5:30 ungrounded variable w (in a negation)"),
    ("q(x) :- name(x).", "5:14 type mismatch: variable x is symbol here"),
    ('q(x) :- edge(x, _), x < "a".', "5:21 type mismatch: comparing number with symbol"),
    ("q(_) :- edge(_, _).", "5:3 underscore in the head of a clause"),
    ("q(x) :- edge(x, _), x = strlen(x).", "5:32 type mismatch: strlen expects symbol, got number"),
    (".output nothere", "5:9 undeclared relation nothere in .output"),
    (".decl p(x:number)", "5:7 relation p is declared twice"),
    (".decl t(x:Node)", "5:9 unknown type Node of attribute x"),
    (".printsize p\n.printsize p", "6:12 redefinition of .printsize for p"),
    ("p(x) :- y = sum v : edge(x, v).", "5:3 ungrounded variable x (in the head)"),
    ("p(x).", "5:3 a fact's arguments must be constants"),
    ("p(autoinc()) :- edge(_, _).", "5:3 autoinc() numbers tuples in Soufflé's evaluation "
     "order, which a distributed engine does not have: not supported"),
    # Soufflé's iteration counter, refused wherever it stands (as an atom's argument it
    # would otherwise bind like a variable)
    ("p(x) :- edge(x, _), __ITERATION__ < 3.", f"5:21 {COUNTER}"),
    ("p(x) :- edge(__ITERATION__, x).", f"5:14 {COUNTER}"),
    ("p(n) :- n = count : { edge(__ITERATION__, _) }.", f"5:28 {COUNTER}"),
    # inside an aggregate's body: the same checks, reported once
    ("p(n) :- n = count : { i = nofunctor(0, 3) }.", "5:27 unknown functor nofunctor"),
    ('p(n) :- n = count : { edge(x, _), name(y), x < y }.',
     "5:44 type mismatch: comparing number with symbol"),
    ("p(x) :- edge(x, _), x < range(1, 2).",
     "5:25 range generates values: bind them to a variable (x = range(a, b)) in a body"),
    ("p(x) :- x = range(1).", "5:13 functor range takes 2 or 3 arguments"),
    # each aggregate's body reads the x that only the other's value binds: neither can be
    # computed first (the engine's planner once failed an assertion on it)
    ("p(x) :- x = count : { edge(x, _) }, x = count : { edge(_, x) }.",
     "5:9 ungrounded variable x (only aggregates grouped by it bind it)"),
])
def test_each_check_names_the_place(rule, expected):
    assert expected in errors(rule)


@pytest.mark.parametrize("rule", [
    "p(x) :- x = count : { edge(x, _) }.",  # the inner x is the aggregate's own
    "p(x) :- x = count : { edge(x, _) }, y = count : { edge(y, x) }, q(y).",
    "p(x) :- q(x), x = count : { edge(x, _) }, x = count : { edge(_, x) }.",
])
def test_an_aggregate_grouped_by_what_another_binds_is_grounded(rule):
    check(parse(DECLS + rule, "c.dl"))


def test_an_aggregate_body_is_checked_once():
    assert errors("p(n) :- n = count : { i = nofunctor(0, 3) }.") == \
        ["5:27 unknown functor nofunctor"]


def test_negation_through_recursion_names_the_cycle():
    found = errors("p(x) :- q(x).\nq(x) :- edge(x, _), !p(x).")
    assert found == ["6:21 cannot stratify: negation of p in a rule for q, which p depends on "
                     "(cycle {p, q})"]


def test_aggregation_through_recursion_is_rejected():
    found = errors("p(n) :- edge(n, _), n = count : { p(_) }.")
    assert any("aggregation of p" in f for f in found)


def test_all_checks_run_before_reporting():
    found = errors("q(x) :- nope(x).\nq(y) :- edge(x, _).\nq(x) :- name(x).")
    assert len(found) == 3


def test_type_aliases_and_subtypes_resolve_to_primitives():
    checked = check(parse(".type Node <: number\n.type Id = symbol\n.type N2 <: Node\n"
                          ".decl e(a:N2, b:Id)\n"))
    assert checked.kinds["e"] == ("number", "symbol")


def test_union_and_equivalence_types_in_any_order_as_in_souffle():
    # Soufflé's tests/evaluation/subtype2: a union of aliases declared after it, bare
    # `.type E` (Soufflé 1.x: a symbol type)
    checked = check(parse(".type A = B | BA\n.type B = C\n.type C\n.type BA <: C\n"
                          ".type U = N | M\n.type N <: number\n.type M = number\n"
                          ".decl r(a:A, u:U)\n"))
    assert checked.kinds["r"] == ("symbol", "number")


@pytest.mark.parametrize("types, message", [
    (".type A = B | C\n.type B <: number\n.type C <: symbol",
     "1:1 union type A mixes primitive types (B is number, C is symbol)"),
    (".type A = B\n.type B = A", "1:1 type A is defined in terms of itself"),
    (".type A = B | Nope\n.type B <: number", "1:1 unknown type Nope"),
    (".type A <: number\n.type A <: symbol", "2:1 type A is declared twice"),
])
def test_type_declaration_errors(types, message):
    with pytest.raises(CheckError) as err:
        check(parse(types + "\n.decl r(a:number)\n", "c.dl"))
    found = [f"{d.span.line}:{d.span.col} {d.message}" for d in err.value.diagnostics]
    assert message in found, found


def test_strata_are_in_dependency_order():
    checked = check(parse(DECLS + "p(x) :- edge(x, _).\nq(x) :- p(x), !edge(x, x).\n"
                          "p(y) :- p(x), edge(x, y).\n"))
    order = [s.relations for s in checked.strata]
    assert order.index(("p",)) < order.index(("q",))
    assert [s.recursive for s in checked.strata if s.relations == ("p",)] == [True]


def test_outputs_may_repeat_as_in_souffle():
    checked = check(parse(DECLS + ".output p\n.output p(IO=stdout)\n.input edge, p"))
    assert [d.relation for d in checked.outputs()] == ["p", "p"]


def test_plus_of_two_symbols_is_their_concatenation():
    """Soufflé's ``+`` on symbols: written as cat from the checks on; on a symbol and a
    number it stays an error."""
    from sparklog.syntax import nodes as n
    checked = check(parse(DECLS + 'name(s) :- name(x), s = x + "!" + x.', "c.dl"))
    rule = checked.program.clauses[0]
    assert rule.body[1].right == n.Call("cat", (n.Call("cat", (n.Var("x"), n.String("!"))),
                                                n.Var("x")))
    assert errors('name(s) :- name(x), s = x + 1.') == \
        ["5:25 type mismatch: operator + on a symbol"]


def test_a_failed_type_is_reported_once_not_again_where_it_is_used():
    with pytest.raises(CheckError) as err:
        check(parse(".type A = B\n.type B = A\n.type C = Nope\n.type D = C\n.decl r(x:D)\n",
                    "c.dl"))
    assert [f"{d.span.line} {d.message}" for d in err.value.diagnostics] == \
        ["1 type A is defined in terms of itself", "3 unknown type Nope"]


def test_thousands_of_relations_in_a_chain_stratify_in_dependency_order():
    """A chain of 3,000 relations, each read by the one declared before it: one stratum
    each, the last declared first, and a cycle of the chain's two ends is recursive."""
    from sparklog.semantics.strata import stratify

    size = 3000
    text = ".decl e(x:number)\n" + "".join(f".decl r{i}(x:number)\n" for i in range(size))
    text += f"r{size - 1}(x) :- e(x).\n" + "".join(f"r{i}(x) :- r{i + 1}(x).\n"
                                                    for i in range(size - 1))
    strata, bad = stratify(parse(text))
    assert [s.relations for s in strata] == [("e",), *((f"r{i}",) for i in reversed(range(size)))]
    assert not bad and not any(s.recursive for s in strata)
    looped, _ = stratify(parse(text + f"r{size - 1}(x) :- r0(x).\n"))
    assert len(looped) == 2 and looped[1].recursive and len(looped[1].relations) == size
