"""Soufflé's records, stored as their fields (syntax/records.py): the rewrite, the answers
the reference evaluator gives the rewritten program against hand-computed ones, and the
errors at their places."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparklog.errors import CheckError, ParseError
from sparklog.syntax.parser import parse
from sparklog.syntax.printer import print_clause, print_decl
from tests.reference import evaluate

PAIRS = """
.type Pair = [a: number, b: symbol]
.type Nest = [p: Pair, w: number]
.type Alias = Pair
.decl p(x: Pair, n: number)
p([1, "x"], 3).
p([2, "y"], 4).
p([2, "x"], 4).
.decl q(v: Nest)
q([x, n]) :- p(x, n).
.decl r(a: number, s: symbol)
r(a, s) :- q([[a, s], _]).
.decl d(x: Alias, y: Pair)
d(x, y) :- p(x, _), p(y, _), x != y.
.decl e(x: Pair)
e(x) :- p(x, _), x = [2, _].
.decl same(x: Pair)
same(x) :- p(x, n), p(y, n), x = y.
.decl c(n: number)
c(n) :- n = count : { q([_, w]), w > 3 }.
.decl built(x: Pair)
built(y) :- r(a, s), y = [a + 10, s].
"""


def test_records_become_their_fields():
    program = parse(PAIRS)
    decls = {d.name: d for d in program.decls}
    assert print_decl(decls["q"]) == ".decl q(v_p_a:number, v_p_b:symbol, v_w:number)"
    assert decls["q"].records == (("v", (("p", (("a", None), ("b", None))), ("w", None))),)
    assert decls["r"].records == ()  # no record column: nothing to put back together
    clauses = [print_clause(c) for c in program.clauses]
    assert 'p(1, "x", 3).' in clauses
    assert "q(x.a, x.b, n) :- p(x.a, x.b, n)." in clauses
    assert "r(a, s) :- q(a, s, _)." in clauses
    # x != y: some field differs, one clause per field
    assert "d(x.a, x.b, y.a, y.b) :- p(x.a, x.b, _), p(y.a, y.b, _), x.a != y.a." in clauses
    assert "d(x.a, x.b, y.a, y.b) :- p(x.a, x.b, _), p(y.a, y.b, _), x.b != y.b." in clauses
    assert "e(x.a, x.b) :- p(x.a, x.b, _), x.a = 2." in clauses  # a wildcard field: any
    assert "built(y.a, y.b) :- r(a, s), y.a = (a + 10), y.b = s." in clauses
    assert not program.types or all(t.fields is None for t in program.types)


def test_the_rewritten_program_derives_what_soufflé_does():
    """Hand-computed from Soufflé's meaning of records (equal when their fields are)."""
    rows = evaluate(parse(PAIRS), {})
    assert rows["q"] == {(1, "x", 3), (2, "y", 4), (2, "x", 4)}
    assert rows["r"] == {(1, "x"), (2, "y"), (2, "x")}
    ps = [(1, "x"), (2, "y"), (2, "x")]
    assert rows["d"] == {(*x, *y) for x in ps for y in ps if x != y}
    assert rows["e"] == {(2, "y"), (2, "x")}
    assert rows["same"] == set(ps)
    assert rows["c"] == {(2,)}
    assert rows["built"] == {(11, "x"), (12, "y"), (12, "x")}


@pytest.mark.parametrize("text, where, message", [
    (".type L = [h: number, t: L]\n.decl a(x: L)", "f.dl:1:1",
     "record type L contains itself (L -> L)"),
    (".type Nat = Zero {} | Succ {n: Nat}", "f.dl:1:1",
     "algebraic data type Nat contains itself (Nat -> Nat)"),
    (".type T = A {x: number} | B {}\n.decl p(v: T)\np($C(1)).", "f.dl:3:3",
     "T has no branch C (its branches: A, B)"),
    (".type T = A {x: number} | B {}\n.decl p(v: T)\np($A(1, 2)).", "f.dl:3:3",
     "branch A of T has 1 fields, this value 2"),
    (".type T = A {x: number} | B {}\n.decl p(v: T)\np([1]).", "f.dl:3:3",
     "a T value goes here: write it as $A(...) or a variable"),
    (".decl p(v: number)\np($A(1)).", "f.dl:2:3",
     "$A(...) where the column or operation takes a number, float or symbol"),
    (".type A = [b: B]\n.type B = [a: A]\n.decl x(v: A)", "f.dl:1:1",
     "record type A contains itself (A -> B -> A)"),
    (".type P = [a: number, b: number]\n.decl p(x: P)\np(nil).", "f.dl:3:3",
     "nil (the empty record) is not supported"),
    (".type P = [a: number, b: number]\n.decl p(x: P)\np([1, 2, 3]).", "f.dl:3:3",
     "a P record has 2 fields, this one 3"),
    (".type P = [a: number, b: number]\n.decl p(x: P)\n.decl n(v: number)\n"
     "n(v) :- p(x), v = x + 1.", "f.dl:4:19", "x is a P record: it cannot be used as a number"),
    (".decl n(v: number)\nn([1, 2]).", "f.dl:2:3",
     "a record where the column or operation takes a number, float or symbol"),
    (".type P = [a: number, b: number]\n.decl p(x: P)\n.decl n(x: P)\n"
     "n(x) :- p(x), p(y), x < y.", "f.dl:4:21", "records have no order: < compares P records"),
    (".type P = [a: number, b: number]\n.decl p(x: P)\n.decl n(x: P)\n"
     "n(x) :- p(x), x != [1, _].", "f.dl:4:15", "_ in a record compared with !=: name the field"),
    (".type P = [a: number, b: number]\n.type Q = [a: number, b: number]\n.decl p(x: P)\n"
     ".decl q(x: Q)\nq(x) :- p(x).", "f.dl:5:3",
     "variable x stands for a P record elsewhere and for a Q record here"),
    (".type P = [a: number, b: number]\n.decl p(x: P)\n.decl n(v: number)\n"
     "n(1) :- p(_), [1, 2] = [1, 2].", "f.dl:4:15", "cannot tell this record's type"),
    (".type P = [a: number, b: number]\n.decl p(x: P)\n.decl m(v: number)\n"
     "m(s) :- s = sum x : { p(x) }.", "f.dl:4:17", "x is a P record: it cannot be used as a"),
])
def test_what_records_cannot_do_is_an_error_at_its_place(text, where, message):
    with pytest.raises((CheckError, ParseError)) as err:
        parse(text, "f.dl")
    first = err.value.render().splitlines()[0]
    assert first.startswith(f"{where}: error: {message}"), first


def test_a_program_without_records_is_left_as_it_is():
    text = ".decl e(x: number, y: number)\ne(1, 2).\n.decl t(x: number)\nt(x) :- e(x, _).\n"
    program = parse(text)
    assert [d.records for d in program.decls] == [(), ()]
    assert [print_clause(c) for c in program.clauses] == ["e(1, 2).", "t(x) :- e(x, _)."]


def test_soufflés_inline_records_test():
    """Soufflé's tests/evaluation/inline_records (one `!=` turned around, as Soufflé also
    reads it); ``d`` computed by hand: b((good job, bad job), (can, do)) meets a((can, do),
    (my, value)), b((Hello, Goodbye), (temporary, value)) meets a((temporary, value), (NO,
    NO)), and no a starts at (my, value)."""
    program = parse("""
        .symbol_type Thing
        .type Conn = [first : Thing, second : Thing]
        .decl a(x:Conn, y:Conn) inline
        a(["Hello", "Goodbye"], ["temporary", "value"]).
        a(["temporary", "value"], ["NO", "NO"]).
        a(["can", "do"], ["my", "value"]).
        .decl b(x:Conn, y:Conn) inline
        b(["good job", "bad job"], ["can", "do"]).
        b(x, y) :- a(x, y), ["temporary", "value"] != x.
        .decl c(x:Conn) inline
        c(x) :- a(z, y), b(x, z), x != y.
        .decl d(x:Thing)
        d(x) :- c([x, _]).
        .output d()
        """)
    assert evaluate(program, {})["d"] == {("Hello",), ("good job",)}


def test_a_malformed_record_in_a_facts_file_is_named_at_its_place(tmp_path):
    """The error path of reading records (io/facts.first_bad_line): a record of the wrong
    shape, then a field of the wrong type inside a well-formed record."""
    from sparklog.io.facts import Source, first_bad_line

    shapes = (("x", (("a", None), ("b", (("c", None), ("d", None))))), ("n", None))
    kinds = ("number", "symbol", "number", "number")
    path = tmp_path / "p.facts"
    path.write_text("[1, [x, 2]]\t3\n[1, x, 2]\t3\n")
    where = first_bad_line(Source("p", "file", path), kinds, shapes)
    assert (where.span.line, where.span.col) == (2, 1)
    assert where.message.startswith("'[1, x, 2]' is not a record of 3 fields")
    path.write_text("[1, [x, 2]]\t3\n[ 1 ,[y,z]]\t3\n")
    where = first_bad_line(Source("p", "file", path), kinds, shapes)
    assert where.span.line == 2
    assert where.message.startswith("'z' is not a number (column 3 of p")


def test_a_fields_column_name_never_repeats_a_declared_one():
    program = parse(".type P = [a: number, b: number]\n.decl p(x: P, x_a: number)\np([1, 2], 3).")
    assert [a.name for a in program.decls[0].attributes] == ["x_a_", "x_b", "x_a"]


ADT = """
.type Shape = Circle {r: number} | Rect {w: number, h: number} | Dot {} | Tagged {t: Pair}
.type Pair = [a: number, b: symbol]
.decl s(v: Shape, n: number)
s($Circle(2), 1). s($Rect(2, 3), 2). s($Dot, 3). s($Dot(), 4). s($Tagged([7, "x"]), 5).
.decl area(n: number, a: number)
area(n, 3 * r * r) :- s($Circle(r), n).
area(n, w * h) :- s($Rect(w, h), n).
.decl dots(n: number)
dots(n) :- s($Dot, n).
.decl other(n: number, m: number)
other(n, m) :- s(v, n), s(w, m), v != w, n < m.
.decl same(n: number, m: number)
same(n, m) :- s(v, n), s(w, m), v = w, n < m.
.decl tagged(b: symbol)
tagged(b) :- s($Tagged([_, b]), _).
.decl made(v: Shape)
made($Rect(a, a)) :- s($Tagged([a, _]), _).
"""


def test_algebraic_data_types_are_their_branch_and_fields():
    """Non-recursive ADTs stored as the branch's number and every branch's fields (the
    others' zeros); answers hand-computed from Soufflé's meaning (values equal when their
    branch and fields are)."""
    program = parse(ADT)
    decl = next(d for d in program.decls if d.name == "s")
    assert [a.name for a in decl.attributes] == [
        "v_tag", "v_Circle_r", "v_Rect_w", "v_Rect_h", "v_Tagged_t_a", "v_Tagged_t_b", "n"]
    rows = evaluate(program, {})
    assert rows["area"] == {(1, 12), (2, 6)}
    assert rows["dots"] == {(3,), (4,)}  # $Dot and $Dot() are one value
    assert rows["same"] == {(3, 4)}
    assert rows["other"] == {(n, m) for n in range(1, 6) for m in range(n + 1, 6)} - {(3, 4)}
    assert rows["tagged"] == {("x",)}
    # branches numbered by name, as Soufflé numbers them: Circle 0, Dot 1, Rect 2, Tagged 3
    assert rows["made"] == {(2, 0, 7, 7, 0, "")}


# Each rule written twice: with records, and by hand with a column per field (a
# disjunction where records differ). The reference evaluator must derive the same rows
# from both, for any facts: the rewrite is checked against a spelling it did not make.
# ``o``/``q`` stand for the i-th rule's own relation.
_RULES = [
    ("o(x) :- e(x, _), e(y, _), x != y.",
     "o(xa, xb) :- e(xa, xb, _), e(ya, yb, _), (xa != ya ; xb != yb)."),
    ("o(x) :- e(x, n), x = [n, _].", "o(xa, xb) :- e(xa, xb, n), xa = n."),
    ("o([b, a]) :- e([a, b], K).", "o(b, a) :- e(a, b, K)."),
    ("o(x) :- e(x, _), !f([x, K]).", "o(xa, xb) :- e(xa, xb, _), !f(xa, xb, K)."),
    ("o(x) :- e(x, _). o([b, a]) :- o([a, b]). o([a, K]) :- o([a, _]).",
     "o(xa, xb) :- e(xa, xb, _). o(b, a) :- o(a, b). o(a, K) :- o(a, _)."),
    ("o(x) :- f([x, c]), e(y, c), x = y.",
     "o(xa, xb) :- f(xa, xb, c), e(ya, yb, c), xa = ya, xb = yb."),
    ("q(z) :- f([x, c]), e(x, _), z = [x, c + K].",
     "q(xa, xb, c + K) :- f(xa, xb, c), e(xa, xb, _)."),
    ("q(y) :- f(y), y != [[K, 0], 1].",
     "q(a, b, c) :- f(a, b, c), (a != K ; b != 0 ; c != 1)."),
    ("q(y) :- f(y), g(w), y = w.", "q(a, b, c) :- f(a, b, c), g(a, b, c)."),
    ("q(y) :- f(y), g(w), y != w, w = [[_, K], _].",
     "q(a, b, c) :- f(a, b, c), g(x, K, z), (a != x ; b != K ; c != z)."),
    ("o(c) :- c = count : { e([a, a], _) }.", "o(c) :- c = count : { e(a, a, _) }."),
]
_ROWS = st.sets(st.tuples(*[st.integers(0, 2)] * 3), max_size=6)


def _named(rule: str, i: int, k: int) -> str:
    return re.sub(r"\b([oq])\(", rf"\g<1>{i}(", rule).replace("K", str(k))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2), _ROWS, _ROWS, _ROWS)
def test_records_derive_what_their_fields_written_out_derive(k, e, f, g):
    types = {"o": ("x: P", "a: number, b: number"), "q": ("y: Q", "a: number, b: number, "
                                                          "c: number")}
    head = lambda rule: rule.split("(")[0]  # noqa: E731
    decls = [(f"o{i}" if head(r) == "o" else f"q{i}", types[head(r)]) for i, (r, _) in
             enumerate(_RULES)]
    decls[-1] = ("o10", ("c: number", "c: number"))
    with_records = (".type P = [a: number, b: number]\n.type Q = [p: P, c: number]\n"
                    ".decl e(x: P, n: number)\n.decl f(y: Q)\n.decl g(w: Q)\n" +
                    "".join(f".decl {name}({rec})\n" for name, (rec, _) in decls))
    by_hand = (".decl e(a: number, b: number, n: number)\n.decl f(a: number, b: number, "
               "c: number)\n.decl g(a: number, b: number, c: number)\n" +
               "".join(f".decl {name}({cols})\n" for name, (_, cols) in decls))
    records = parse(with_records + "\n".join(_named(r, i, k) for i, (r, _) in enumerate(_RULES)))
    fields = parse(by_hand + "\n".join(_named(h, i, k) for i, (_, h) in enumerate(_RULES)))
    facts = {"e": e, "f": f, "g": g}
    got, expected = evaluate(records, facts), evaluate(fields, facts)
    assert {name: got[name] for name, _ in decls} == {name: expected[name] for name, _ in decls}


_ADT_RULES = [
    ("t(x) :- e($A(x)).", "t(x) :- e(0, x, 0, 0)."),
    ("u(v) :- e(v), v != $B(K, K).", "u(t, a, b, c) :- e(t, a, b, c), "
     "(t != 1 ; a != 0 ; b != K ; c != K)."),
    ("w($B(y, x)) :- e($B(x, y)). w($A(K)) :- e($C).", "w(1, 0, y, x) :- e(1, 0, x, y). "
     "w(0, K, 0, 0) :- e(2, 0, 0, 0)."),
    ("z(v) :- e(v), e(y), v = y, v != $C.", "z(t, a, b, c) :- e(t, a, b, c), "
     "(t != 2 ; a != 0 ; b != 0 ; c != 0)."),
]
_VALUES = st.sets(st.one_of(st.tuples(st.just(0), st.integers(0, 2), st.just(0), st.just(0)),
                            st.tuples(st.just(1), st.just(0), st.integers(0, 2),
                                      st.integers(0, 2)),
                            st.just((2, 0, 0, 0))), max_size=6)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2), _VALUES)
def test_adts_derive_what_their_columns_written_out_derive(k, e):
    """The same for algebraic data types: a value of ``S`` by hand is its branch's number
    and every branch's fields, the other branches' 0 (records.py's layout)."""
    adt = ".type S = A {x: number} | B {x: number, y: number} | C {}\n.decl e(v: S)\n" \
        ".decl t(x: number)\n" + "".join(f".decl {r}(v: S)\n" for r in "uwz")
    four = "t: number, a: number, b: number, c: number"
    by_hand = f".decl e({four})\n.decl t(x: number)\n" + \
        "".join(f".decl {r}({four})\n" for r in "uwz")
    with_adts = parse(adt + "\n".join(r.replace("K", str(k)) for r, _ in _ADT_RULES))
    fields = parse(by_hand + "\n".join(h.replace("K", str(k)) for _, h in _ADT_RULES))
    got, expected = evaluate(with_adts, {"e": e}), evaluate(fields, {"e": e})
    assert {r: got[r] for r in "tuwz"} == {r: expected[r] for r in "tuwz"}
