"""Soufflé's subsumption (syntax/subsumption.py), without Spark: the reference evaluator's
answers for the rewritten program against hand-computed ones (Soufflé's own tests among
them), a property test against the meaning written in Python, and the refusals at their
places. tests/spark/test_cli.py runs one through the engine, with an input file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparklog.errors import CheckError, ParseError
from sparklog.syntax.parser import parse
from tests.reference import evaluate


def _rows(text: str, inputs=None) -> dict[str, set[tuple]]:
    return evaluate(parse(text, "s.dl"), inputs or {})


def test_soufflés_issue2551_a_negation_in_the_subsumption():
    # m(2) is dominated by m(1) because r(2) does not hold; m(1) by nothing, as r(1) does
    rows = _rows(".decl m(s: number)\n.decl r(s: number)\nr(1).\nm(1).\nm(2).\n"
                 "m(x) <= m(y) :- !r(x), m(y).\n")
    assert rows["m"] == {(1,)}


def test_soufflés_issue2322_the_greatest_survives():
    rows = _rows(".decl buyh(A:unsigned) magic\n.decl eozn(A:unsigned)\nbuyh(6).\nbuyh(7).\n"
                 "buyh(3).\neozn(E) :- buyh(E).\neozn(E1) <= eozn(E2) :- E1<E2.\n")
    assert rows["eozn"] == {(7,)}


def test_soufflés_issue2323_later_strata_read_what_survives():
    # kdof(1, -2) is dominated by kdof(1, 9): ovqb and khkw see kdof(1, 9) alone
    rows = _rows(".decl kdof(A:unsigned, B:number)\n.decl ovqb(A:number, B:unsigned) magic\n"
                 ".decl khkw(A:number, B:unsigned)\nkdof(1, -2).\nkdof(1, 9).\n"
                 "ovqb(A^-3, B) :- kdof(B, A).\nkdof(B, A1) <= kdof(B, A2) :- A1<A2.\n"
                 "khkw(A, B) :- kdof(B, A), !ovqb(A, B).\n")
    assert rows["kdof"] == {(1, 9)}
    assert rows["ovqb"] == {(0, 1)}  # 9 ^ -3 through a double, truncated
    assert rows["khkw"] == {(9, 1)}


def test_intervals_in_records_keep_the_widest_and_never_drop_themselves():
    """Containment holds of an interval and itself (``<=`` and ``>=``): only another
    tuple dominates, as in Soufflé's interval analysis (tests/semantic/leq)."""
    rows = _rows('.type P = [a: number, b: number]\n.decl iv(n: symbol, i: P)\n'
                 'iv("x", [0, 5]). iv("x", [1, 3]). iv("x", [2, 9]). iv("y", [4, 4]).\n'
                 'iv(n, [a, b]) <= iv(n, [c, d]) :- a >= c, b <= d.\n')
    assert rows["iv"] == {("x", 0, 5), ("x", 2, 9), ("y", 4, 4)}


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 3), st.integers(-3, 3)), max_size=12),
       st.sampled_from(["<", "<="]))
def test_a_dominance_keeps_each_keys_greatest(rows, op):
    """``r(k, v) <= r(k, w) :- v < w`` (or ``v <= w``) keeps each key's greatest value,
    from rows of an input relation; a rule reading r sees the same."""
    text = (".decl r(k: number, v: number)\n.input r\n.decl s(k: number, v: number)\n"
            f"s(k, v) :- r(k, v).\nr(k, v) <= r(k, w) :- v {op} w.\n")
    got = _rows(text, {"r": rows})
    best = {(k, max(v for k2, v in rows if k2 == k)) for k, _ in rows}
    assert got["r"] == best
    assert got["s"] == best


SSSP = """.decl edge(x:number, y:number, w:number)
.input edge
.decl dist(x:number, d:number)
dist(0, 0).
dist(y, d + w) :- dist(x, d), edge(x, y, w).
dist(x, d1) <= dist(x, d2) :- d2 <= d1.
"""


@settings(max_examples=25, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 9)),
               max_size=14))
def test_a_recursive_minimum_is_dijkstra(edges):
    """Soufflé's shortest-path idiom: a recursive relation whose subsumption keeps one
    column's least value runs as ``$MIN`` (cycles included), and equals Dijkstra's."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_node(0)
    for a, b, w in edges:
        if not g.has_edge(a, b) or g[a][b]["weight"] > w:
            g.add_edge(a, b, weight=w)
    want = set(nx.single_source_dijkstra_path_length(g, 0).items())
    assert _rows(SSSP, {"edge": edges})["dist"] == want


def test_a_recursive_maximum_and_the_sides_either_way():
    """``c1 < c2`` keeps the greatest (the widest path), ``d2 > d1`` written the other way
    round as well."""
    text = (".decl e(x:number, y:number, w:number)\ne(1,2,5). e(2,3,1). e(1,3,9). e(3,1,1).\n"
            "e(3,4,2).\n.decl wide(x:number, c:number)\nwide(1, 100).\n"
            "wide(y, min(c, w)) :- wide(x, c), e(x, y, w).\n"
            "wide(x, c1) <= wide(x, c2) :- c2 > c1.\n")
    assert _rows(text)["wide"] == {(1, 100), (2, 5), (3, 9), (4, 2)}


@pytest.mark.parametrize("text, where, message", [
    (".decl a(x:number)\n.decl b(x:number)\na(x) <= b(y) :- x < y.", "s.dl:3:9",
     "a subsumption relates two tuples of one relation: a and b"),
    (".decl a(x:number)\na(x, z) <= a(y, w) :- x < y.", "s.dl:2:1", "relation a has arity 1"),
    # recursive, and its dominance no extremum of one column (the whole tuple here)
    (".decl a(x:number)\n.decl e(x:number, y:number)\na(x) :- e(x, _).\n"
     "a(y) :- a(x), e(x, y).\na(x) <= a(y) :- x < y.", "s.dl:5:1",
     "subsumption of a, whose rules read it (directly or through others)"),
    # a recursive relation's extremum is checked as any subsumption is
    (".decl a(x:number, v:number)\n.decl b(x:number, v:number)\n.decl e(x:number, y:number)\n"
     "a(x, 0) :- e(x, _).\na(y, v + 1) :- a(x, v), e(x, y), v < 3.\n"
     "a(x, v) <= b(x, w) :- v < w.", "s.dl:6:12",
     "a subsumption relates two tuples of one relation: a and b"),
    (".decl a(x:number, v:number)\n.decl e(x:number, y:number)\na(x, 0) :- e(x, _).\n"
     "a(y, v + 1) :- a(x, v), e(x, y), v < 3.\na(x, v, z) <= a(x, w, z) :- v < w.",
     "s.dl:5:1", "relation a has arity 2"),
    # recursive, with two dominances that disagree: neither is dropped silently
    (".decl a(k:number, v:number)\n.decl e(x:number, y:number)\na(x, 0) :- e(x, _).\n"
     "a(y, v + 1) :- a(x, v), e(x, y), v < 5.\na(k, v) <= a(k, w) :- v < w.\n"
     "a(k, v) <= a(k, w) :- v > w.", "s.dl:5:1", "subsumption of a, whose rules read it"),
])
def test_refusals_name_the_place(text, where, message):
    with pytest.raises(CheckError) as err:
        parse(text, "s.dl")
    assert err.value.render().splitlines()[0].startswith(f"{where}: error: {message}")


def test_only_less_or_equal_joins_two_atoms():
    with pytest.raises(ParseError) as err:
        parse(".decl a(x:number)\na(x) < a(y) :- x < y.", "s.dl")
    assert "s.dl:2:1: error: '<' between two atoms: a subsumption is written a(x) <= a(y)" \
        in err.value.render()
