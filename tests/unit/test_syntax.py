"""Parser: round trips through the printer, desugaring, and error messages with places."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparklog.errors import ParseError
from sparklog.semantics.checks import check
from sparklog.syntax import nodes as n
from sparklog.syntax.fold import fact
from sparklog.syntax.parser import _head_aggregates, parse, parse_file
from sparklog.syntax.printer import print_clause, print_program, print_type
from sparklog.syntax.walk import map_terms
from tests.strategies import programs


def _strip(p: n.Program) -> n.Program:
    return dataclasses.replace(p, sources=())


def _as_parsed(node):
    """``node`` as the parser builds it: ``-4`` is a literal, facts are not folded (their
    constants' types are not known yet: semantics/literals.py)."""
    if isinstance(node, tuple):
        return tuple(_as_parsed(x) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    node = dataclasses.replace(node, **{f.name: _as_parsed(getattr(node, f.name))
                                        for f in dataclasses.fields(node)
                                        if f.name not in ("span", "sources")})
    match node:
        case n.UnaryOp(op="neg", arg=n.Number(unsigned=False) | n.Float() as lit):
            return dataclasses.replace(lit, value=-lit.value)
        case n.Clause():  # a fact folded, an aggregate in a head bound in the body
            return _head_aggregates(fact(node.head, node.span, folded=False) if node.is_fact
                                    else node)
    return node


def _printable(program: n.Program) -> n.Program:
    """``program`` with the variables the parser binds head aggregates to (``@h0``, which
    no program can write) renamed to names a program can write."""
    rename = lambda t: dataclasses.replace(t, name="hagg" + t.name[2:]) \
        if isinstance(t, n.Var) and t.name.startswith("@h") else t  # noqa: E731
    return dataclasses.replace(program, clauses=map_terms(program.clauses, rename))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_printed_programs_parse_back_to_the_same_ast(drawn):
    program, _facts = drawn
    assert _strip(parse(print_program(program))) == _strip(_as_parsed(program))


_OPPOSITE = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _sugared(literal: n.Literal, rng) -> str:
    """``literal`` in one of the forms Soufflé reads as it: in parentheses, negated twice,
    a comparison as the negation of its complement, a negated atom with its atom in
    parentheses, with comments and line breaks around it."""
    from sparklog.syntax.printer import print_literal, print_term

    text = print_literal(literal)
    pick = rng.random()
    if isinstance(literal, n.Comparison) and pick < 0.4:
        text = (f"!({print_term(literal.left)} {_OPPOSITE[literal.op]} "
                f"{print_term(literal.right)})")
    elif isinstance(literal, (n.Atom, n.Constraint)) and pick < 0.3:
        text = f"!!{text}" if rng.random() < 0.5 else f"!(!({text}))"
    elif isinstance(literal, n.Negation) and pick < 0.3:
        text = f"!({text[1:]})"
    if rng.random() < 0.3:
        depth = rng.randint(1, 2)
        text = "(" * depth + text + ")" * depth
    gap = rng.choice(["", " ", "\n  ", " /* c */ ", " // c\n"])
    return gap + text


def _sugared_program(program: n.Program, seed: int) -> str:
    """The printed program with every rule body sugared (``_sugared``), adjacent literals
    sometimes grouped ``(A, B)`` and the whole body sometimes in parentheses."""
    import random

    from sparklog.syntax.printer import print_clause

    rng = random.Random(seed)
    lines = print_program(dataclasses.replace(program, clauses=())).splitlines()
    for clause in program.clauses:
        if clause.is_fact:
            lines.append(print_clause(clause))
            continue
        parts = [_sugared(lit, rng) for lit in clause.body]
        i = rng.randrange(len(parts))
        if i + 1 < len(parts) and rng.random() < 0.4:
            parts[i:i + 2] = [f"({parts[i]}, {parts[i + 1]})"]
        body = ", ".join(parts)
        if rng.random() < 0.2:
            body = f"({body})"
        head = print_clause(dataclasses.replace(clause, body=())).rstrip(".")
        lines.append(f"{head} :- {body}.")
    return "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**32))
def test_programs_with_groups_double_negation_and_comments_parse_to_the_same_ast(drawn, seed):
    """What the LALR(1) table must tell apart (grammar.lark): a group and a parenthesized
    expression, an atom and a call, ``!(..)`` of a comparison, an atom or a group."""
    program, _facts = drawn
    plain = _printable(parse(print_program(program)))
    assert _strip(parse(_sugared_program(plain, seed))) == _strip(plain)


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


def test_an_aggregate_in_a_head_is_bound_in_the_body():
    """Soufflé's ``b(s, count : { c(s, _) }) :- w(s).``: the aggregate is evaluated in the
    body's scope, as ``@h0 = count : {...}``; a fact with one becomes such a rule."""
    p = parse('.decl c(s:number, t:number)\n.decl w(s:number)\n.decl b(s:number, n:number)\n'
              'b(s, 1 + count : { c(s, _) }) :- w(s).\nb(0, max t : c(_, t)).')
    rule, fact = p.clauses
    count = n.Aggregate("count", None, (n.Atom("c", (n.Var("s"), n.Wildcard())),))
    assert rule.head.args == (n.Var("s"), n.BinOp("+", n.Number(1), n.Var("@h0")))
    assert rule.body == (n.Atom("w", (n.Var("s"),)), n.Comparison("=", n.Var("@h0"), count))
    assert fact.head.args == (n.Number(0), n.Var("@h0"))
    assert [type(lit).__name__ for lit in fact.body] == ["Comparison"]
    assert fact.body[0].right.func == "max" and not fact.is_fact


def test_keywords_do_not_swallow_identifiers():
    p = parse(".decl countx(x:number)\n.decl band_(x:number)\ncountx(x) :- band_(x).")
    assert p.clauses[0].head.relation == "countx"


@pytest.mark.parametrize("text, where, message", [
    ("tc(x,y) :- edge(x,y)", "f.dl:1:21", "missing '.' at the end of this rule"),
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


@pytest.mark.parametrize("text, where, message", [
    # a missing period is reported where its rule ends, not at the next rule
    (".decl a(x:number)\na(1)\na(2).", "f.dl:2:5", "missing '.' at the end of this rule"),
    (".decl a(x:number)\na(x) :- a(x)\n\n.decl b(x:number)", "f.dl:2:13",
     "missing '.' at the end of this rule"),
    (".decl a(x:number)\n/* open\na(1).", "f.dl:2:1", "unterminated comment"),
    ('.decl a(x:symbol)\na("abc).', "f.dl:2:3", "unterminated string"),
    ('.decl a(x:symbol)\na("ab\\").', "f.dl:2:3", "unterminated string"),
    (".decl a(x:number)\na(x) :- a(y), x = y bshru.", "f.dl:2:26",
     "unexpected '.'; expected an expression"),
    (".decl a(x:number)\na(1", "f.dl:2:4", "unexpected end of input; expected an operator, "
     "',' or ')'"),
    (".decl a(x:number)\n% x", "f.dl:2:1", "unexpected '%'; expected a directive, a name, "
     "'.comp', '.type', '.lattice' or '.decl'"),
    (".decl a(x:number)\n.limitsize a(n=5)", "f.dl:2:1", ".limitsize is not supported"),
])
def test_parse_errors_are_in_words_at_the_mistake(text, where, message):
    with pytest.raises(ParseError) as err:
        parse(text, "f.dl")
    first = err.value.render().splitlines()[0]
    assert first == f"{where}: error: {message}"
    assert "__ANON" not in first and "BSHRU" not in first


def test_one_declaration_or_directive_names_several_relations():
    p = parse(".decl A, B, C(x:number, y:symbol)\n.output C, A(IO=stdout, headers=true)")
    assert [(d.name, [a.type for a in d.attributes]) for d in p.decls] == [
        (name, ["number", "symbol"]) for name in "ABC"]
    assert [(d.kind, d.relation, d.params) for d in p.directives] == [
        ("output", r, (("IO", "stdout"), ("headers", "true"))) for r in "CA"]


@pytest.mark.parametrize("fact, value", [
    ("n(1 + 2).", n.Number(3)),
    ("n(-(3)).", n.Number(-3)),
    ("n(2 * 3 + 2).", n.Number(8)),
    ("n(-7 / 2).", n.Number(-3)),  # C division truncates toward zero
    ("n(-7 % 2).", n.Number(-1)),  # the remainder has the dividend's sign
    ("n(9223372036854775807 + 1).", n.Number(-2**63)),  # 64-bit wraparound
    ("n(1 bshl 65).", n.Number(2)),
    ("n(-8 bshr 1).", n.Number(-4)),
    ("n(-8 bshru 60).", n.Number(15)),
    ("n(bnot 0).", n.Number(-1)),
    ("n(lnot 5 lor 0).", n.Number(0)),
    ("u(0u - 1u).", n.Number(2**64 - 1, True)),
    ("u(18446744073709551615u / 2u).", n.Number(2**63 - 1, True)),
    ("f(1.5 * -2.0).", n.Float(-3.0)),
    # an untyped constant takes its column's type, as in Soufflé (semantics/literals.py)
    ("f(22 / 7).", n.Float(22 / 7)),
    ("f(2 - 3 * 0.5).", n.Float(0.5)),
    ("u((0 - 1) / 2).", n.Number(2**63 - 1, True)),
    ("u(-1).", n.Number(2**64 - 1, True)),
])
def test_constant_expressions_in_facts_are_folded(fact, value):
    p = check(parse(".decl n(x:number)\n.decl u(x:unsigned)\n.decl f(x:float)\n" + fact)).program
    assert p.clauses[0].is_fact and p.clauses[0].head.args == (value,)


@pytest.mark.parametrize("fact", ['n(strlen("abc")).', "n(7 / 0).", "n(max(1, 2) + 1).",
                                  "n(3 ^ 39).", "n(2 ^ 64)."])  # ^ through doubles, as in rules
def test_facts_that_only_the_engine_can_evaluate_become_rules(fact):
    clause = check(parse(".decl n(x:number)\n" + fact)).program.clauses[0]
    assert clause.body == (n.BoolLit(True),)


@pytest.mark.parametrize("data, where", [
    (b'.decl e(x:symbol)\ne("caf\xe9").\n', "2:7"),  # Latin-1
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\xd0", "1:11"),  # binary
])
def test_a_program_that_is_not_utf8_is_a_parse_error_at_its_first_bad_byte(tmp_path, data, where):
    path = tmp_path / "p.dl"
    path.write_bytes(data)
    with pytest.raises(ParseError) as err:
        parse_file(path)
    assert err.value.render().startswith(f"{path}:{where}: error: byte ")


def test_crlf_programs_parse_as_lf(tmp_path):
    path = tmp_path / "p.dl"
    path.write_bytes(b".decl e(x:number)\r\ne(1).\r\ne(2)\r\ne(3).\r\n")
    with pytest.raises(ParseError) as err:
        parse_file(path)
    assert err.value.render().startswith(f"{path}:3:5: error: missing '.'")


def test_eqrel_adds_the_rules_of_an_equivalence_relation():
    p = parse(".decl e(a:number, b:number) eqrel\ne(1, 2).")
    rules = {print_program(dataclasses.replace(p, clauses=(c,), decls=())).strip()
             for c in p.clauses if c.body}
    assert rules == {"e(y, x) :- e(x, y).", "e(x, z) :- e(x, y), e(y, z)."}


def test_qualifiers_souffle_1_declarations_and_pragmas():
    p = parse(".symbol_type S\n.number_type N\n.pragma \"magic-transform\" \"*\"\n"
              ".decl r(x:S, y:N) output brie\n.decl q(x:number) input printsize")
    assert [(t.name, t.base, t.subtype) for t in p.types] == \
        [("S", "symbol", True), ("N", "number", True)]
    assert {(d.kind, d.relation) for d in p.directives} == \
        {("output", "r"), ("input", "q"), ("printsize", "q")}


def test_union_and_bare_type_declarations_parse_and_print():
    p = parse(".type A = B | C | D\n.type E\ne(1).")
    assert [(t.name, t.members, t.subtype) for t in p.types] == \
        [("A", ("B", "C", "D"), False), ("E", (), True)]
    assert print_type(p.types[0]) == ".type A = B | C | D"
    assert print_type(p.types[1]) == ".type E <: symbol"


@pytest.mark.parametrize("text, where, message", [
    (".decl e(a:number, b:symbol) eqrel", "f.dl:1:29",
     "an eqrel relation has two attributes of the same type"),
    (".decl e(a:number) fancy", "f.dl:1:19", "unknown qualifier 'fancy'"),
    ('.output "e"', "f.dl:1:9", ".output takes a relation name, not a string"),
    (".decl a(x:number)\n.functor f(x:number):number", "f.dl:2:1",
     "user-defined functors (.functor): a Soufflé feature sparklog does not support"),
    (".decl a(x:number)\n.frobnicate a", "f.dl:2:1", "unknown directive .frobnicate"),
    (".decl a(x:number)\n.debug_delta a()", "f.dl:2:1", "each iteration's new tuples written "
     "out (.debug_delta): a Soufflé feature sparklog does not support"),
    (".decl a(x:number, y:number) choice-domain x", "f.dl:1:29",
     "choice domains (choice-domain): a Soufflé feature sparklog does not support"),
    (".decl a(x:[a:number])", "f.dl:1:11", "unexpected '['; expected a name"),
    (".decl a(x:number)\n.decl c(x:number)\nc($ + 1) :- a(_).", "f.dl:3:3",
     "$ (autoinc() in Soufflé 1.x) numbers tuples in Soufflé's evaluation order"),
])
def test_qualifier_errors_name_the_place(text, where, message):
    with pytest.raises(ParseError) as err:
        parse(text, "f.dl")
    assert err.value.render().splitlines()[0].startswith(f"{where}: error: {message}")


def test_forms_that_share_a_prefix_parse_apart():
    """An atom and a call, a group and a parenthesized expression, ``min(..)`` the
    function and ``min(..) : {..}`` the aggregate, a qualifier and the next clause's head
    begin alike; each is read as what it is (the grammar is LALR(1), see grammar.lark)."""
    p = parse(".decl b(x:number)\n.decl c(x:number, y:number) inline\nc(1, 2).\n"
              ".decl q(x:number) btree\n\nq (3).\n"
              "b(x) :- c(x, _), (c(x, x) ; (x + 1) * 2 < 3), (c(x, 1)).\n"
              "b(m) :- b(x), m = min(x, 2) + 1, m != min (x) : { c(x, _) }, "
              "m < max y : c(y, _).")
    assert [d.name for d in p.decls] == ["b", "c", "q"]
    assert [c.head.relation for c in p.clauses[:2]] == ["c", "q"]
    first, second = p.clauses[2:4]  # one clause per alternative of the group
    assert [type(lit).__name__ for lit in first.body] == ["Atom", "Atom", "Atom"]
    assert second.body[1] == n.Comparison("<", n.BinOp(
        "*", n.BinOp("+", n.Var("x"), n.Number(1)), n.Number(2)), n.Number(3))
    minimum = p.clauses[4].body
    assert minimum[1].right == n.BinOp("+", n.Call("min", (n.Var("x"), n.Number(2))), n.Number(1))
    assert minimum[2].right == n.Aggregate("min", n.Var("x"), (
        n.Atom("c", (n.Var("x"), n.Wildcard())),))
    assert minimum[3].right.func == "max"


@pytest.mark.parametrize("literal", ["x", "3", "(x)", "min(x, 2)", "@f(x)"])
def test_an_expression_where_a_literal_stands_is_an_error_at_its_place(literal):
    with pytest.raises(ParseError) as err:
        parse(f".decl b(x:number)\nb(x) :- b(x), {literal}.", "f.dl")
    rendered = err.value.render()
    column = 15 + (literal == "(x)")
    assert rendered.startswith(f"f.dl:2:{column}: error: expected a literal (an atom, a "
                               "comparison, a negation or a group), found an expression")


@pytest.mark.parametrize("terms, where", [(101, "f.dl:2:19"), (3000, "f.dl:2:23")])
def test_a_term_nested_past_what_spark_parses_is_an_error_at_its_place(terms, where):
    """``x + 1 + ... + 1`` of 250 terms fails in Spark's SQL parser, of a thousand in
    Python's stack: both are refused by name, at the term, before anything runs."""
    from sparklog.syntax.parser import MAX_NESTING

    body = " + ".join(["x"] + ["1"] * terms)
    with pytest.raises(ParseError) as err:
        parse(f".decl a(x:number)\na(y) :- a(x), y = {body}.", "f.dl")
    assert err.value.render().startswith(
        f"{where}: error: this term nests operators and calls more than {MAX_NESTING} deep")
    fits = " + ".join(["x"] + ["1"] * MAX_NESTING)
    assert parse(f".decl a(x:number)\na(y) :- a(x), y = {fits}.").clauses


def test_plan_hints_are_read_and_dropped():
    p = parse(".decl a(x:number)\na(x) :- a(x), a(x). .plan 0:(2,1), 1:(1,2)\na(1).")
    assert len(p.clauses) == 2 and not p.directives


def test_souffle_casts_and_variadic_min_max():
    from tests.reference import evaluate

    p = parse(".type Id <: number\n.decl r(x:Id)\nr(1). r(5).\n.decl s(x:number, m:number)\n"
              "s(as(x, number), max(x, 3, 2 * x)) :- r(x).\n"
              "s(0, min(4, 2, 7, 3)).")
    assert evaluate(p)["s"] == {(1, 3), (5, 10), (0, 2)}


def test_negation_of_constraints_and_groups_as_in_souffle():
    """`!` before a comparison takes its complement, before a group the normal form of its
    negation (De Morgan), `!!a` is `a`: each rule's answer worked out by hand."""
    from tests.reference import evaluate

    p = parse(".decl a(x:number)\n.decl b(x:number)\na(1). a(2). a(3). a(4). b(2). b(4).\n"
              ".decl c1(x:number)\n.decl c2(x:number)\n.decl c3(x:number)\n"
              ".decl c4(x:number)\n.decl c5(x:number)\n"
              "c1(x) :- a(x), !(x = 2), !(x >= 4).\n"
              "c2(x) :- a(x), !(b(x), x < 3 ; x = 1).\n"
              "c3(x) :- a(x), !!b(x), !(x > 3 ; false).\n"
              "c5(x) :- a(x), !(true).\n"
              'c4(x) :- a(x), !(!b(x) ; !match("[[:digit:]]", to_string(x))).\n')
    got = evaluate(p)
    assert [lit.op for lit in p.clauses[6].body[1:]] == ["!=", "<"]
    assert got["c1"] == {(1,), (3,)}
    assert got["c2"] == {(3,), (4,)}  # not (b and < 3), and not 1
    assert got["c3"] == {(2,)}
    assert got.get("c5", set()) == set()
    assert got["c4"] == {(2,), (4,)}
    assert len([c for c in p.clauses if c.head.relation == "c2"]) == 2  # !b(x) ; x >= 3


def test_the_c_preprocessor_runs_as_in_souffle(tmp_path):
    """#include (next to the including file), #define with and without arguments, #ifdef;
    every span names the file and line the user wrote."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "edges.dl").write_text(".decl edge(x:number, y:number)\n"
                                              "edge(1, 2). edge(2, 3).\n")
    main = tmp_path / "main.dl"
    main.write_text('// a program\n#include "lib/edges.dl"\n#define LIMIT 10\n'
                    "#define STEP(a, b) edge(a, b)\n.decl tc(x:number, y:number)\n"
                    "tc(x, y) :- STEP(x, y), y < LIMIT.\n#ifdef NEVER\ntc(0, 0).\n#endif\n"
                    "tc(x, z) :- tc(x, y), STEP(y, z).\n")
    program = parse_file(main)
    assert [print_clause(c) for c in program.clauses if c.head.relation == "tc"] == \
        ["tc(x, y) :- edge(x, y), y < 10.", "tc(x, z) :- tc(x, y), edge(y, z)."]
    assert [(c.span.file.endswith("edges.dl"), c.span.line) for c in program.clauses] == \
        [(True, 2), (True, 2), (False, 6), (False, 10)]
    assert program.source_map()[str(main)].startswith("// a program")


def test_preprocessor_and_later_errors_name_the_written_place(tmp_path):
    (tmp_path / "inc.dl").write_text(".decl r(x:number)\nr(x) :- r(y), x = y + \"a\".\n")
    main = tmp_path / "main.dl"
    main.write_text('#include "inc.dl"\n#include "gone.dl"\n#error not yet\n')
    with pytest.raises(ParseError) as err:
        parse_file(main)
    assert [f"{d.span.line} {d.message}" for d in err.value.diagnostics] == \
        ["2 cannot find the included file gone.dl", "3 #error not yet"]
    main.write_text('#include "inc.dl"\n.decl q(x:number)\nq(1) :- nope(1).\n')
    from sparklog.errors import CheckError
    from sparklog.semantics.checks import check
    with pytest.raises(CheckError) as err:
        check(parse_file(main))
    rendered = err.value.render()
    assert f"{tmp_path / 'inc.dl'}:2:23: error: type mismatch" in rendered
    assert 'r(x) :- r(y), x = y + "a".' in rendered  # the included file's own line
    assert f"{main}:3:9: error: undeclared relation nope" in rendered


def test_include_dirs_and_macros_as_soufflés_minus_i_and_minus_m(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "e.dl").write_text(".decl edge(x:number, y:number)\nedge(1, 2).\n")
    main = tmp_path / "m.dl"
    main.write_text('#include "e.dl"\n.decl c(x:number)\nc(y) :- edge(_, y), y < LIMIT.\n'
                    "#ifdef TWICE\nc(y * 2) :- edge(_, y).\n#endif\n")
    program = parse_file(main, include_dirs=[tmp_path / "shared"], macros=["LIMIT=10", "TWICE"])
    assert [print_clause(c) for c in program.clauses][1:] == \
        ["c(y) :- edge(_, y), y < 10.", "c((y * 2)) :- edge(_, y)."]
    # a macro without a directive in the program: preprocessed all the same
    plain = tmp_path / "p.dl"
    plain.write_text(".decl c(x:number)\nc(LIMIT).\n")
    assert print_clause(parse_file(plain, macros=["LIMIT=3"]).clauses[0]) == "c(3)."


def test_ram_domain_size_is_predefined_as_in_soufflés_64_bit_build():
    """Soufflé defines RAM_DOMAIN_SIZE for the preprocessor; programs pick their word size
    with it (Soufflé's bitwise test: without it, no branch declared its relations)."""
    program = parse("#if RAM_DOMAIN_SIZE == 64\n.decl wide(x: number)\nwide(1).\n#else\n"
                    ".decl narrow(x: number)\n#endif\n", "w.dl")
    assert [d.name for d in program.decls] == ["wide"]


def test_a_name_may_start_with_a_question_mark():
    """Soufflé's names may start with ``?``, and Doop writes its variables so: ``?heap``."""
    p = parse(".decl ?e(?x: number, ?y: number)\n?e(1, 2).\n.decl t(x: number)\n"
              "t(?x) :- ?e(?x, ?y), ?y != ?x.")
    assert [d.name for d in p.decls] == ["?e", "t"]
    assert [a.name for a in p.decls[0].attributes] == ["?x", "?y"]
    assert p.clauses[1].body[0] == n.Atom("?e", (n.Var("?x"), n.Var("?y")))


def test_soufflés_older_conversion_functors_are_its_newer_ones():
    p = parse(".decl a(x: number)\n.decl b(f: float, u: unsigned, n: number)\n"
              "b(itof(x), itou(x), ftoi(utof(ftou(itof(utoi(itou(x))))))) :- a(x).")
    f, u, i = p.clauses[0].head.args
    assert (f.name, u.name, i.name) == ("to_float", "to_unsigned", "to_number")
    chain = []
    while isinstance(i, n.Call):
        chain.append(i.name)
        i = i.args[0]
    assert chain == ["to_number", "to_float", "to_unsigned", "to_float", "to_number",
                     "to_unsigned"]


def test_the_parse_tables_are_kept_in_the_cache_and_a_damaged_entry_is_rebuilt(
        tmp_path, monkeypatch):
    """syntax/parser.py keeps the grammar's LALR tables in sparklog's cache: a second
    build loads them, the loaded parser parses as the built one (positions too), and a
    damaged entry is built again and replaced."""
    from sparklog import cache
    from sparklog.syntax import parser

    monkeypatch.setenv(cache.ENV, str(tmp_path))
    text = ".decl e(x: number)\ne(1).\np(x) :- e(x), x > 0.\n"
    built = parser._parser.__wrapped__()
    (entry,) = tmp_path.glob("grammar-*.lark")
    assert entry.stat().st_size > 1000 and not list(tmp_path.glob("*.tmp"))
    loaded = parser._parser.__wrapped__()
    assert loaded is not built and loaded.parse(text) == built.parse(text)
    tree = loaded.parse(text)
    assert [t.meta.line for t in tree.children] == [t.meta.line for t in built.parse(text).children]
    entry.write_bytes(b"not a pickle")
    again = parser._parser.__wrapped__()
    assert again.parse(text) == built.parse(text)
    assert entry.read_bytes() != b"not a pickle"
    monkeypatch.setenv(cache.ENV, "off")  # off: built, nothing written
    entry.unlink()
    assert parser._parser.__wrapped__().parse(text) == built.parse(text)
    assert not list(tmp_path.iterdir())
