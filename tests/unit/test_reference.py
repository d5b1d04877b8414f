"""The test oracle against networkx and hand-computed cases; the printer on drawn programs."""

from __future__ import annotations

import re

import sys
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root, for `tests.*`

from sparklog.syntax.nodes import (  # noqa: E402
    Aggregate, Atom, Attribute, BinOp, BoolLit, Call, Clause, Comparison, Constraint, Decl,
    Directive, Float, Negation, Number, Program, String, TypeDecl, UnaryOp, Var, Wildcard,
)
from sparklog.syntax.printer import print_clause, print_program, print_term  # noqa: E402
from tests.reference import evaluate  # noqa: E402
from tests.strategies import programs  # noqa: E402

X, Y, Z, P, Q, N = (Var(n) for n in "xyzpqn")
_ = Wildcard()
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


def A(relation, *args):
    """An atom; ints and strs become constants."""
    return Atom(relation, tuple(_const(a) for a in args))


def _const(value):
    """A term for a Python value, or the term itself."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return value
    return {int: Number, float: Float, str: String}[type(value)](value)


def R(head, *body):
    """A clause."""
    return Clause(head, tuple(body))


def prog(*clauses, decls=(), types=()):
    """A program of the given clauses; relations declared with number columns unless given."""
    names = {c.head.relation: len(c.head.args) for c in clauses}
    declared = {d.name for d in decls}
    decls = tuple(decls) + tuple(Decl(n, tuple(Attribute(f"c{i}", "number") for i in range(k)))
                                 for n, k in names.items() if n not in declared)
    return Program(types=tuple(types), decls=decls, clauses=tuple(clauses))


def run(*clauses, inputs=None, rel="out", **kw):
    """The tuples of ``rel`` after evaluating the clauses."""
    return evaluate(prog(*clauses, **kw), inputs)[rel]


def value(term, *body):
    """The single value ``term`` takes in ``out(term) :- body``, or None if the body fails."""
    rows = run(R(A("out", term), *body))
    assert len(rows) <= 1
    return next(iter(rows))[0] if rows else None


# ---------------------------------------------------------------------------------------
# Graph programs against networkx

TC_LINEAR = (R(A("path", X, Y), A("edge", X, Y)),
             R(A("path", X, Z), A("path", X, Y), A("edge", Y, Z)))
TC_NONLINEAR = (R(A("path", X, Y), A("edge", X, Y)),
                R(A("path", X, Z), A("path", X, Y), A("path", Y, Z)))

edge_sets = st.sets(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=30)


@pytest.mark.parametrize("rules", [TC_LINEAR, TC_NONLINEAR], ids=["linear", "nonlinear"])
@settings(max_examples=25, deadline=None)
@given(edges=edge_sets)
def test_transitive_closure_matches_networkx(rules, edges):
    g = nx.DiGraph(list(edges))
    expected = set(nx.transitive_closure(g, reflexive=False).edges())
    assert evaluate(prog(*rules), {"edge": edges})["path"] == expected


@settings(max_examples=25, deadline=None)
@given(edges=edge_sets, source=st.integers(0, 12))
def test_reachability_matches_networkx(edges, source):
    rules = (R(A("reach", X), A("start", X)), R(A("reach", Y), A("reach", X), A("edge", X, Y)))
    g = nx.DiGraph(list(edges))
    g.add_node(source)
    got = evaluate(prog(*rules), {"edge": edges, "start": {(source,)}})["reach"]
    assert got == {(v,) for v in nx.descendants(g, source) | {source}}


@settings(max_examples=25, deadline=None)
@given(parents=st.lists(st.integers(0, 1000), max_size=25))
def test_same_generation_matches_tree_depths(parents):
    par = {(i + 1, p % (i + 1)) for i, p in enumerate(parents)}  # child, parent
    nodes = {(v,) for v in range(len(parents) + 1)}
    rules = (R(A("sg", X, X), A("node", X)),
             R(A("sg", X, Y), A("par", X, P), A("sg", P, Q), A("par", Y, Q)))
    got = evaluate(prog(*rules), {"par": par, "node": nodes})["sg"]
    tree = nx.DiGraph([(p, c) for c, p in par])
    tree.add_node(0)
    depth = nx.shortest_path_length(tree, 0)
    assert got == {(a, b) for a in depth for b in depth if depth[a] == depth[b]}


def test_large_transitive_closure_is_fast_enough():
    edges = {(i, i + 1) for i in range(60)}
    assert len(evaluate(prog(*TC_LINEAR), {"edge": edges})["path"]) == 60 * 61 // 2


# ---------------------------------------------------------------------------------------
# Negation and stratification


def test_stratified_negation():
    clauses = (R(A("reach", X), A("start", X)), R(A("reach", Y), A("reach", X), A("edge", X, Y)),
               R(A("out", X), A("node", X), Negation(A("reach", X))))
    inputs = {"start": {(1,)}, "edge": {(1, 2), (3, 4)}, "node": {(v,) for v in range(1, 6)}}
    assert run(*clauses, inputs=inputs) == {(3,), (4,), (5,)}


def test_negation_with_wildcard_and_constant():
    inputs = {"r": {(1, 2), (3, 4)}, "s": {(1,), (2,), (3,)}}
    assert run(R(A("out", X), A("s", X), Negation(A("r", X, _))), inputs=inputs) == {(2,)}
    assert run(R(A("out", X), A("s", X), Negation(A("r", X, 4))), inputs=inputs) == {(1,), (2,)}


def test_unstratifiable_programs_are_rejected():
    with pytest.raises(ValueError, match="stratif"):
        run(R(A("out", X), A("s", X), Negation(A("out", X))), inputs={"s": {(1,)}})
    count = Aggregate("count", None, (A("out", _),))
    with pytest.raises(ValueError, match="stratif"):
        run(R(A("out", N), A("s", X), Comparison("=", N, count)), inputs={"s": {(1,)}})


def test_unsafe_rule_is_rejected():
    with pytest.raises(ValueError, match="unsafe"):
        run(R(A("out", X), A("s", Y), Comparison("<", X, Y)), inputs={"s": {(1,)}})


# ---------------------------------------------------------------------------------------
# Aggregates

SALES = {"sale": {("a", 1), ("a", 5), ("b", 2), ("b", 4), ("c", 7)}}


def _agg_rule(func, target, body):
    """``out(g, v) :- group(g), v = func target : { body }``."""
    return R(A("out", X, N), A("group", X), Comparison("=", N, Aggregate(func, target, body)))


@pytest.mark.parametrize("func, expected", [
    ("count", {("a", 2), ("b", 2), ("c", 1), ("d", 0)}),
    ("sum", {("a", 6), ("b", 6), ("c", 7), ("d", 0)}),
    ("min", {("a", 1), ("b", 2), ("c", 7)}),
    ("max", {("a", 5), ("b", 4), ("c", 7)}),
    ("mean", {("a", 3.0), ("b", 3.0), ("c", 7.0)}),
])
def test_grouped_aggregates(func, expected):
    target = None if func == "count" else Y
    rule = _agg_rule(func, target, (A("sale", X, Y),))
    inputs = {**SALES, "group": {("a",), ("b",), ("c",), ("d",)}}
    assert run(rule, inputs=inputs) == expected


def test_count_counts_tuples_under_wildcards_and_filters():
    inputs = {"sale": {("a", 1), ("a", 5), ("b", 2)}, "group": {("a",), ("b",)}}
    assert run(_agg_rule("count", None, (A("sale", _, Y), Comparison(">", Y, Number(1)))),
               inputs=inputs) == {("a", 2), ("b", 2)}


def test_aggregate_without_grouping_and_mean_is_float():
    inputs = {"v": {(1,), (2,)}}
    rule = R(A("out", N), Comparison("=", N, Aggregate("mean", X, (A("v", X),))))
    rows = run(rule, inputs=inputs)
    assert rows == {(1.5,)} and isinstance(next(iter(rows))[0], float)


# ---------------------------------------------------------------------------------------
# Arithmetic


@pytest.mark.parametrize("term, expected", [
    (BinOp("+", Number(INT_MAX), Number(1)), INT_MIN),
    (BinOp("-", Number(INT_MIN), Number(1)), INT_MAX),
    (BinOp("*", Number(1 << 62), Number(4)), 0),
    (UnaryOp("neg", Number(INT_MIN)), INT_MIN),
    (BinOp("^", Number(2), Number(64)), INT_MIN),  # through a double, as Soufflé
    (BinOp("^", Number(3), Number(4)), 81),
    (BinOp("/", Number(-7), Number(2)), -3),
    (BinOp("%", Number(-7), Number(2)), -1),
    (BinOp("%", Number(7), Number(-2)), 1),
    (BinOp("/", Number(INT_MIN), Number(-1)), INT_MIN),
    (BinOp("/", Float(7.0), Float(2.0)), 3.5),
    (BinOp("band", Number(12), Number(10)), 8),
    (BinOp("bor", Number(12), Number(10)), 14),
    (BinOp("bxor", Number(12), Number(10)), 6),
    (UnaryOp("bnot", Number(0)), -1),
    (BinOp("bshl", Number(1), Number(65)), 2),
    (BinOp("bshl", Number(1), Number(63)), INT_MIN),
    (BinOp("bshr", Number(-8), Number(1)), -4),
    (BinOp("bshru", Number(-1), Number(60)), 15),
    (BinOp("land", Number(2), Number(3)), 1),
    (BinOp("lor", Number(0), Number(0)), 0),
    (BinOp("lxor", Number(5), Number(0)), 1),
    (UnaryOp("lnot", Number(7)), 0),
])
def test_arithmetic(term, expected):
    assert value(term) == expected


@pytest.mark.parametrize("op", ["/", "%"])
def test_division_by_zero_fails_the_body(op):
    inputs = {"v": {(0,), (2,)}}
    rule = R(A("out", X, BinOp(op, Number(6), X)), A("v", X))
    assert run(rule, inputs=inputs) == {(2, 6 // 2 if op == "/" else 0)}


def test_binding_equality_in_any_order():
    rule = R(A("out", Y), Comparison("<", Y, Number(3)),
             Comparison("=", Y, BinOp("+", X, Number(1))), A("v", X))
    assert run(rule, inputs={"v": {(0,), (1,), (5,)}}) == {(1,), (2,)}


def test_head_arithmetic_and_facts():
    assert run(R(A("out", BinOp("*", Number(6), Number(7)), "s"))) == {(42, "s")}


# ---------------------------------------------------------------------------------------
# Functors and constraints


@pytest.mark.parametrize("term, expected", [
    (Call("cat", (String("a"), String("b"), String("c"))), "abc"),
    (Call("strlen", (String("hello"),)), 5),
    (Call("substr", (String("hello"), Number(1), Number(3))), "ell"),
    (Call("substr", (String("hello"), Number(3), Number(10))), "lo"),
    (Call("substr", (String("hello"), Number(9), Number(1))), ""),
    (Call("to_number", (String("-42"),)), -42),
    (Call("to_number", (String("4x"),)), 4),  # the longest number prefix, as std::stoll
    (Call("to_number", (String("x4"),)), None),
    (Call("to_string", (Number(17),)), "17"),
    (Call("min", (Number(3), Number(-2))), -2),
    (Call("max", (Number(3), Number(-2))), 3),
    (Call("to_float", (Number(3),)), 3.0),
])
def test_functors(term, expected):
    assert value(term) == expected


def test_ord_is_stable_and_distinct():
    rule = R(A("out", X, Call("ord", (X,))), A("s", X))
    first = run(rule, inputs={"s": {("a",), ("b",), ("c",)}})
    assert first == run(rule, inputs={"s": {("a",), ("b",), ("c",)}})
    assert len({o for _, o in first}) == 3


@pytest.mark.parametrize("literal, holds", [
    (Constraint("contains", (String("ell"), String("hello"))), True),
    (Constraint("contains", (String("elo"), String("hello"))), False),
    (Constraint("match", (String("h.*o"), String("hello"))), True),
    (Constraint("match", (String("ell"), String("hello"))), False),
    (Constraint("match", (String("ell"), String("hello")), negated=True), True),
    (BoolLit(True), True),
    (BoolLit(False), False),
    (Comparison("<", String("abc"), String("abd")), True),
    (Comparison("!=", String("a"), String("a")), False),
])
def test_constraints(literal, holds):
    assert (value(Number(1), literal) is not None) == holds


def test_input_values_follow_declared_types():
    decls = (Decl("s", (Attribute("a", "T"), Attribute("b", "float"))),)
    types = (TypeDecl("T", "symbol", subtype=True),)
    rows = run(R(A("out", X, Y), A("s", X, Y)), inputs={"s": {(1, 2)}}, decls=decls, types=types)
    assert rows == {("1", 2.0)}


# ---------------------------------------------------------------------------------------
# The printer


def test_printer_examples():
    assert print_term(String('a"b\\c\nd\te')) == '"a\\"b\\\\c\\nd\\te"'
    assert [print_term(Float(v)) for v in (1.0, -2.5, 1e20, 1e-7)] == \
        ["1.0", "-2.5", "100000000000000000000.0", "0.0000001"]
    assert print_term(BinOp("band", X, Number(-3))) == "(x band -3)"
    assert print_term(UnaryOp("neg", X)) == "-(x)" and print_term(UnaryOp("bnot", X)) == "(bnot x)"
    agg = Aggregate("sum", Y, (A("r", X, Y), Negation(A("s", Y))))
    rule = R(A("h", X, N), A("a", X, _), Comparison("=", N, agg),
             Constraint("match", (String("a.*"), X), negated=True))
    assert print_clause(rule) == \
        'h(x, n) :- a(x, _), n = sum y : { r(x, y), !s(y) }, !match("a.*", x).'
    assert print_clause(R(A("r", 1, "a", Number(7, unsigned=True)))) == 'r(1, "a", 7u).'


def test_print_program_layout():
    program = Program(
        types=(TypeDecl("T", "number", subtype=True), TypeDecl("S", "symbol", subtype=False)),
        decls=(Decl("r", (Attribute("a", "number"), Attribute("b", "symbol"))),),
        directives=(Directive("input", "r", (("IO", "file"), ("filename", "x.csv"),
                                             ("delimiter", ","))),
                    Directive("output", "r"), Directive("printsize", "r")),
        clauses=(R(A("r", 1, "a")),))
    assert print_program(program) == "\n".join([
        ".type T <: number", ".type S = symbol", ".decl r(a:number, b:symbol)",
        '.input r(IO=file, filename="x.csv", delimiter=",")', ".output r", ".printsize r",
        'r(1, "a").', ""])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_drawn_programs_print_stably_and_evaluate(drawn):
    program, facts = drawn
    text = print_program(program)
    assert text and text == print_program(program)
    assert all(print_clause(c) in text for c in program.clauses)
    result = evaluate(program, facts)
    assert set(result) >= {d.name for d in program.decls}
    assert all(result[name] >= rows for name, rows in facts.items())


# ---------------------------------------------------------------------------------------
# Shapes the random programs draw


def test_atom_expressions_are_checked_once_bound_anywhere():
    # Soufflé binds the plain variables of atoms; each expression argument is a filter
    rule = R(A("out", X, Y), A("a", X, BinOp("+", Y, Number(1))),
             A("b", Y, BinOp("-", X, Number(1))))
    inputs = {"a": {(1, 3), (2, 3), (5, 1), (4, 4)}, "b": {(2, 0), (2, 1), (0, 4), (3, 0)}}
    assert run(rule, inputs=inputs) == {(1, 2), (2, 2), (5, 0)}


def test_issue_1_addition_has_every_sum_up_to_six():
    from sparklog.syntax.parser import parse
    from tests.programs import ADD
    assert evaluate(parse(ADD))["add"] == {(a, b, a + b) for a in range(7) for b in range(7)
                                           if a + b <= 6}


def _features(program) -> set[str]:
    """What a generated program contains, by name."""
    from sparklog.syntax.printer import print_program

    text, found = print_program(program), set()
    heads = {}
    for clause in program.clauses:
        heads.setdefault(clause.head.relation, set()).add(clause)
    level = {d.name: i for i, d in enumerate(program.decls)}
    for clause in program.clauses:
        atoms = [lit for lit in clause.body if isinstance(lit, Atom)]
        found.add(f"atoms{len(atoms)}")
        names = [a.relation for a in atoms]
        head = clause.head.relation
        if head in names and any(names.count(n) >= 2 and n != head for n in names):
            found.add("delta joined with two atoms of one relation")
        if head in names and any(level[n] > level[head] for n in names if n != head):
            found.add("mutual recursion")
        if clause.is_fact and any(not isinstance(a, (Number, Float, String))
                                  for a in clause.head.args):
            found.add("arithmetic in a fact")
        for lit in clause.body:
            if isinstance(lit, Negation) and any(isinstance(a, (BinOp, Call, UnaryOp))
                                                 for a in lit.atom.args):
                found.add("expression in a negated atom")
            if isinstance(lit, Comparison) and isinstance(lit.right, Aggregate):
                found.add(lit.right.func)
        if any(isinstance(a, (BinOp, Call)) for a in clause.head.args) and clause.body:
            found.add("expression in a head")
        if any(isinstance(a, (Number, Float, String)) for a in clause.head.args) and clause.body:
            found.add("constant in a head")
    for decl in program.decls:
        found.add(f"arity{decl.arity}")
        found |= {a.type for a in decl.attributes}
    for needle, name in (("substr(s", "substr of a variable"), ('< "', "symbol comparison"),
                         ("cat(", "cat"), ("strlen(s", "strlen of a variable"),
                         ("match(", "match"), ("range(", "range"),
                         (": { xi", "range in an aggregate")):
        if needle in text:
            found.add(name)
    if re.search(r'(\bs\d+|"[^"]*") \+ ', text):
        found.add("symbol +")
    return found


def test_generator_draws_every_feature_over_a_few_hundred_seeds():
    from tests.strategies import generate

    found: set[str] = set()
    for seed in range(300):
        found |= _features(generate(seed)[0])
    wanted = {"atoms1", "atoms2", "atoms3", "atoms4", "arity0", "arity4", "number", "unsigned",
              "float", "symbol", "count", "sum", "min", "max", "mean", "mutual recursion",
              "delta joined with two atoms of one relation", "expression in a negated atom",
              "expression in a head", "constant in a head", "arithmetic in a fact",
              "substr of a variable", "cat", "strlen of a variable", "match", "range",
              "range in an aggregate", "symbol +"}
    assert wanted <= found, wanted - found


def test_generator_is_deterministic_and_prefix_blind():
    from sparklog.syntax.printer import print_program
    from tests.strategies import generate

    one, facts = generate(7)
    assert print_program(one) == print_program(generate(7)[0])
    other, other_facts = generate(7, "p7_")
    assert print_program(other).replace("p7_", "") == print_program(one)
    assert {k.removeprefix("p7_"): v for k, v in other_facts.items()} == facts


def test_no_drawn_rule_binds_a_variable_only_through_aggregates_that_read_it():
    """These seeds once drew ``x = count : { a(x) }, x = count : { b(x) }`` and kin (the
    second binder a range over another aggregate's value, or a count over a range of x):
    the checker refuses them as ungrounded, the planner had failed an assertion, the
    reference answered. The generator now draws the first aggregate without the name."""
    from sparklog.semantics.checks import check
    from sparklog.syntax.parser import parse
    from tests.strategies import generate

    for seed in (3364, 4735, 5148, 7217, 14459):
        program, facts = generate(seed)
        check(parse(print_program(program), f"seed{seed}.dl"))
        evaluate(program, facts)


def test_the_sum_of_no_floats_is_a_float():
    """``sum f : { a(f) }`` over no rows is 0.0, not the integer 0: it prints as a float
    and a range over it steps by floats (the reference once crashed on seed 201822's
    ``range(s, s - 2.25, 0.1)``). Worked out by hand."""
    from sparklog.syntax.parser import parse

    text = """
    .decl a(f:float)
    .decl t(s:symbol)
    .decl n(x:float)
    t(to_string(s)) :- s = sum f : { a(f) }.
    n(x) :- s = sum f + 1.0 : { a(f) }, x = range(s, s + 0.75, 0.25).
    """
    result = evaluate(parse(text, "sum.dl"))
    assert result["t"] == {("0.000000",)}
    assert result["n"] == {(0.0,), (0.25,), (0.5,)}


def test_generated_programs_terminate_in_the_reference():
    from tests.strategies import generate

    for seed in range(300):
        program, facts = generate(seed)
        result = evaluate(program, facts)
        assert all(len(rows) < 2000 for rows in result.values()), seed


def test_unsigned_literals_and_inputs_wrap_and_order_as_unsigned():
    """``1u - 3u`` is 2^64 - 2, so ``min(4u, 1u - 3u)`` is 4 (the reference once took the
    literals as signed numbers and answered -2); input rows of unsigned columns and sums of
    unsigned values are unsigned too. Values worked out by hand."""
    from sparklog.syntax.parser import parse

    text = """
    .decl u(x:unsigned)
    .decl a(x:unsigned)
    .decl b(x:unsigned)
    .decl d(x:number)
    .decl f(x:float)
    .decl h(x:unsigned)
    .decl m(x:unsigned)
    u(2u). u(5u).
    a(min(4u, 1u - 3u)).
    b(y) :- u(x), y = x - 3u, y > 1u.
    d(to_number(x - 3u)) :- u(x).
    f(to_float(x - 3u)) :- u(x), x < 3u.
    h(s) :- s = sum x - 3u : { u(x) }.
    m(v) :- v = max x - 3u : { u(x) }.
    """
    got = evaluate(parse(text), {"u": {(7,)}})
    top = (1 << 64) - 1
    assert got["a"] == {(4,)}
    assert got["b"] == {(2,), (4,), (top,)}
    assert got["d"] == {(-1,), (2,), (4,)}
    assert got["f"] == {(float(top),)}
    assert got["h"] == {(5,)}  # (2^64 - 1) + 2 + 4, modulo 2^64
    assert got["m"] == {(top,)}
