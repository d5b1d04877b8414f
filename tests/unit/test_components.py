"""Soufflé's components (syntax/components.py): instances qualify what their component
declares, bases come first less what is overridden, type parameters bind, nested instances
nest their names; answers worked out by hand and checked by the reference evaluator."""

from __future__ import annotations

import pytest

from sparklog.errors import ParseError
from sparklog.syntax.parser import parse
from tests.reference import evaluate

GRAPHS = """
.comp Graph<N> {
  .decl edge(a:N, b:N) overridable
  .decl reach(a:N, b:N)
  .type Hop <: N
  .decl hop(h:Hop)
  reach(x, y) :- edge(x, y).
  reach(x, z) :- reach(x, y), edge(y, z).
  edge(x, y) :- base(x, y).
  hop(x) :- edge(x, _).
  .output reach
}
.comp Undirected<N> : Graph<N> {
  .override edge
  edge(x, y) :- base(x, y).
  edge(y, x) :- base(x, y).
}
.comp Pair {
  .init one = Graph<number>
  .init two = Undirected<number>
  .decl both(a:number, b:number)
  both(x, y) :- one.reach(x, y), two.reach(y, x).
}
.decl base(a:number, b:number)
base(1, 2). base(2, 3).
.init g = Graph<number>
.init p = Pair
g.edge(3, 4).
.decl out(a:number, b:number)
out(x, y) :- p.both(x, y), !g.reach(y, x).
"""


def test_instances_qualify_what_their_component_declares():
    program = parse(GRAPHS)
    got = evaluate(program)
    chain = {(1, 2), (1, 3), (2, 3)}
    assert got["g.reach"] == chain | {(1, 4), (2, 4), (3, 4)}
    assert got["p.one.reach"] == chain
    assert got["p.two.reach"] == {(a, b) for a in (1, 2, 3) for b in (1, 2, 3)}
    assert got["p.both"] == chain and got["out"] == chain
    assert {d.name for d in program.decls} >= {"g.edge", "p.one.hop", "p.two.edge", "base"}
    hop = program.decl("p.two.hop").attributes[0]
    assert hop.type == "p.two.Hop"  # types the component declares are qualified too
    assert {t.name: t.base for t in program.types}["p.two.Hop"] == "number"
    assert {d.relation for d in program.directives if d.kind == "output"} == {
        "g.reach", "p.one.reach", "p.two.reach"}
    # the base's rule for the overridden edge is gone, the others are inherited
    assert sum(c.head.relation == "p.two.edge" for c in program.clauses) == 2


@pytest.mark.parametrize(("text", "where", "message"), [
    (".init x = Nope", "1:11", "unknown component Nope"),
    (".comp A<T> { .decl r(x:T) }\n.init x = A", "2:11", "takes 1 type parameter"),
    (".comp A { .decl r(x:number) }\n.comp B : A { .override s }\n.init b = B",
     "2:15", ".override s: no base of B declares it"),
    (".comp A : B { }\n.comp B : A { }\n.init a = A", "", "contains or extends itself"),
    (".comp A { }\n.comp A { }", "2:1", "component A is defined twice"),
    (".decl r(x:number)\nr(a.b) :- r(a.b).", "2:3", "'a.b' is not a variable name"),
    (".override r", "1:1", ".override outside a component"),
])
def test_component_errors_name_the_place(text, where, message):
    with pytest.raises(ParseError) as err:
        parse(text, "c.dl")
    rendered = err.value.render()
    assert message in rendered
    assert f"c.dl:{where}" in rendered


def test_a_nested_component_sees_the_type_parameters_of_the_one_it_is_in():
    """Lexical scope, as Soufflé's: ``N`` inside ``Inner`` is ``Outer``'s parameter, bound
    per instance; a component defined at the top does not see it."""
    p = parse(".type N = symbol\n"
              ".comp Top { .decl t(x: N) }\n"
              ".comp Outer<N> {\n"
              "  .comp Inner { .decl r(x: N) }\n"
              "  .init inner = Inner\n"
              "  .init top = Top\n"
              "}\n"
              ".init a = Outer<number>\n"
              ".init b = Outer<float>\n"
              "a.inner.r(1). b.inner.r(1.5). a.top.t(\"x\").\n")
    types = {d.name: d.attributes[0].type for d in p.decls}
    assert types == {"a.inner.r": "number", "a.top.t": "N", "b.inner.r": "float",
                     "b.top.t": "N"}
    assert evaluate(p)["a.inner.r"] == {(1,)} and evaluate(p)["b.inner.r"] == {(1.5,)}


def test_an_override_drops_the_base_s_own_rules_not_those_of_its_instances():
    """Soufflé: ``.override r`` removes the rules a base writes for ``r``, at any depth of
    inheritance; the facts an instance nested in a base adds to ``r`` stay (Soufflé's
    inherit_instance_override test, where sparklog once dropped them: a wrong answer)."""
    p = parse(".comp Base {\n"
              "  .decl r(x: symbol) overridable\n"
              "  .comp Part { r(\"part\"). }\n"
              "  .init part = Part\n"
              "  r(\"base\").\n"
              "}\n"
              ".comp Middle : Base { r(\"middle\"). }\n"
              ".comp Top : Middle {\n"
              "  .override r\n"
              "  r(\"top\").\n"
              "}\n"
              ".init m = Middle\n"
              ".init t = Top\n")
    got = evaluate(p)
    assert got["m.r"] == {("part",), ("base",), ("middle",)}
    assert got["t.r"] == {("part",), ("top",)}


def test_a_component_defined_in_a_base_can_be_instantiated_in_the_derived():
    """Soufflé: the components a base defines are in scope in what extends it."""
    p = parse(".comp Model {\n"
              "  .comp Inner { r(\"inner\"). }\n"
              "}\n"
              ".comp Concrete : Model {\n"
              "  .decl r(s: symbol)\n"
              "  .init inner = Inner\n"
              "  r(\"concrete\").\n"
              "}\n"
              ".init c = Concrete\n"
              ".comp Inner { .decl r(s: symbol) r(\"top\"). }\n")
    # the base's Inner, not the top-level one of the same name
    assert evaluate(p)["c.r"] == {("inner",), ("concrete",)}
