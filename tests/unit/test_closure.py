"""Transitive-closure strategies (rewrite/closure.py), without Spark: what is recognized,
what each strategy rewrites it to (golden files), and that every rewrite derives exactly
the facts of the program as written (the reference evaluator on random graphs)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparklog.engine import Program
from sparklog.errors import CheckError
from sparklog.explain import strategies
from sparklog.options import STRATEGIES
from tests import reference
from tests.closure_programs import generate_closure

GOLDEN = Path(__file__).parent.parent / "golden" / "closure"
FIXED = [s for s in STRATEGIES if s != "auto"]

HEAD = (".decl e(x:number, y:number)\n.input e\n.decl p(x:number, y:number)\n.output p\n"
        ".decl u(x:number)\n.decl t(x:number, y:number, z:number)\n.decl n()\n")


def _written(rules: str) -> str | None:
    program = Program.from_text(HEAD + rules)
    return program.closures[0].written if program.closures else None


@pytest.mark.parametrize("rules, written", [
    ("p(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y).", "left"),
    ("p(x, y) :- e(x, y). p(x, y) :- e(z, y), p(x, z).", "left"),
    ("p(x, y) :- e(x, y). p(x, y) :- e(x, z), p(z, y).", "right"),
    ("p(a, b) :- p(c, b), e(a, c). p(x, y) :- e(x, y).", "right"),
    ("p(x, y) :- e(x, y). p(u, v) :- p(u, w), p(w, v).", "nonlinear"),
])
def test_closures_are_recognized_in_every_written_form(rules, written):
    assert _written(rules) == written


@pytest.mark.parametrize("rules", [
    "p(x, y) :- e(y, x). p(x, y) :- p(x, z), e(z, y).",  # the base reverses e
    "p(x, y) :- e(x, y). p(x, y) :- p(z, x), e(z, y).",  # not a composition
    "p(x, y) :- e(x, y). p(x, x) :- p(x, z), e(z, x).",  # a diagonal head
    "p(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y), x != y.",  # a condition
    "p(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y), !e(y, x).",  # a negation
    "p(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y). p(x, y) :- e(y, x).",  # a third rule
    "p(x, y) :- e(x, y). p(x, y) :- p(x, z), p(z, y), e(x, y).",  # three atoms
    "p(x, y) :- e(x, y). p(x, y) :- p(x, 1), e(1, y).",  # a constant
    "p(1, 2). p(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y).",  # a fact
    "p(x, y) :- e(x, y). p(x, y) :- p(x, z), p(z, y). p(x, y) :- p(y, x).",  # symmetric
    "p(x, y) :- e(x, y). p(x, y) :- u(x), p(x, y).",  # a unary atom
    "p(x, y) :- e(x, y). p(x, y) :- p(x, y), u(x).",
    "p(x, y) :- e(x, y). p(x, y) :- p(x, z), t(z, y, x).",  # a ternary atom
    "p(x, y) :- e(x, y). p(x, y) :- n(), p(x, y).",  # a nullary atom
])
def test_other_shapes_run_as_written(rules):
    assert _written(rules) is None


HEAD3 = (".decl f(x:number, c:number, y:number)\n.decl q(x:number, c:number, y:number)\n"
         ".decl g(c:number, x:number, y:number, d:number)\n"
         ".decl r(c:number, x:number, y:number, d:number)\n")


@pytest.mark.parametrize("rules, written, ends", [
    ("q(x, c, y) :- f(x, c, y). q(x, c, y) :- q(x, c, z), f(z, c, y).", "left", (0, 2)),
    ("q(x, c, y) :- f(x, c, y). q(x, c, y) :- f(x, c, z), q(z, c, y).", "right", (0, 2)),
    ("q(x, c, y) :- f(x, c, y). q(x, c, y) :- q(x, c, z), q(z, c, y).", "nonlinear", (0, 2)),
    # read from the third column to the first: the same closure, right-linear from the first
    ("q(x, c, y) :- f(x, c, y). q(x, c, y) :- q(z, c, y), f(x, c, z).", "right", (0, 2)),
    ("r(c, x, y, d) :- g(c, x, y, d). r(c, x, y, d) :- r(c, x, z, d), g(c, z, y, d).",
     "left", (1, 2)),
])
def test_closures_with_parameter_columns_are_recognized(rules, written, ends):
    [closure] = Program.from_text(HEAD3 + rules).closures
    arity = 3 if rules.startswith("q") else 4
    assert (closure.written, closure.ends, closure.parameters) == (written, ends, arity - 2)


@pytest.mark.parametrize("rules", [
    "q(x, c, y) :- f(x, c, y). q(x, c, y) :- q(x, d, z), f(z, c, y).",  # c changes
    "q(x, c, y) :- f(x, c, y). q(x, c, y) :- q(x, c, z), f(z, z, y).",  # c is not carried
    "q(x, c, y) :- f(x, y, c). q(x, c, y) :- q(x, c, z), f(z, c, y).",  # the base permutes
    "q(x, c, y) :- f(x, c, y). q(x, c, y) :- q(x, y, z), f(z, c, y).",
])
def test_columns_that_change_along_a_path_are_no_parameters(rules):
    assert Program.from_text(HEAD3 + rules).closures == []


def test_a_third_column_or_an_input_closure_runs_as_written():
    three = (".decl e(x:number, y:number)\n.decl p(x:number, y:number, w:number)\n"
             "p(x, y, 0) :- e(x, y).\np(x, y, w) :- p(x, z, w), e(z, y).\n")
    assert Program.from_text(three).closures == []
    read = HEAD + ".input p\np(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y)."
    assert Program.from_text(read).closures == []


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.dl")))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_golden_rewrites(name, strategy, update_golden):
    """What `sparklog explain --show strategies` prints for each strategy."""
    program = Program.from_file(GOLDEN / f"{name}.dl")
    got = strategies(program, strategy) + "\n"
    path = GOLDEN / f"{name}.{strategy}.out"
    if update_golden:
        path.write_text(got)
    assert path.exists(), f"{path} missing: run pytest --update-golden"
    assert got == path.read_text()


def test_a_pragma_overrides_the_run_strategy_for_its_relation():
    text = HEAD + ".pragma p(strategy=thirds)\np(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y)."
    program = Program.from_text(text)
    for strategy in ("asis", "smart", "auto"):
        _, [choice] = program.rewritten(strategy)
        assert (choice.strategy, choice.why) == ("thirds", "asked by its .pragma")


@pytest.mark.parametrize("directive, message", [
    (".pragma p(strategy=fast)", "error: .pragma p(strategy=fast): the strategy must be one "
                                 "of auto, asis, linear, right, left, smart, balance, thirds, "
                                 "doubling, split"),
    (".pragma p(strategy=split)", "error: .pragma p(strategy=split) needs the first part's "
                                  "length as a term over the path's length l"),
    ('.pragma p(strategy=smart, first="1")', "error: .pragma p(first=...): first is the first "
                                            "part's length of strategy=split"),
    ('.pragma p(strategy=split, first="l / 2")', None),
    ('.pragma p(strategy=split, first="l / 3")', "error: .pragma p: first='l / 3' gives 0 for "
                                                "l = 2"),
    ('.pragma p(strategy=split, first="l - 1")', None),
    ('.pragma p(strategy=split, first="l - 2")', "error: .pragma p: first='l - 2' gives 0 for "
                                                "l = 2: a path of length l needs a first part "
                                                "between 1 and l - 1, else it is never derived"),
    ('.pragma p(strategy=split, first="max(1, l - 9000)")', None),
    ('.pragma p(strategy=split, first="min(l - 1, 9000)")', None),
    ('.pragma p(strategy=split, first="l bshr 1")', None),
    ('.pragma p(strategy=split, first="y / 2")', "error: .pragma p: first='y / 2' uses y: its "
                                                "only variable is l, the length"),
    ('.pragma p(strategy=split, first="strlen(l)")', "error: .pragma p: first='strlen(l)': only "
                                                    "integers, l, arithmetic and bitwise "
                                                    "operators, min and max"),
    ('.pragma p(strategy=split, first="l +")', "error: .pragma p: first='l +' is not a term "
                                              "over l"),
    (".pragma e(strategy=doubling)", "error: .pragma e(strategy=doubling): e is not in a chain "
                                     "program (Afrati & Ullman, Definition 3.1)"),
    (".pragma p(order=smart)", "error: unknown .pragma key 'order' for p: the keys are "
                               "strategy and, with strategy=split, first"),
    (".pragma p", "error: .pragma p says nothing"),
    (".pragma e(strategy=smart)", "error: .pragma e(strategy=...): e is not a transitive "
                                  "closure sparklog can rewrite: a base rule e(x, y) :- "),
    (".pragma q(strategy=smart)", "error: undeclared relation q in .pragma"),
])
def test_bad_pragmas_are_reported_where_they_are(directive, message):
    text = directive + "\n" + HEAD + "p(x, y) :- e(x, y). p(x, y) :- p(x, z), e(z, y)."
    if message is None:  # accepted
        assert Program.from_text(text, "prog.dl").rewritten("auto")[1][0].strategy == "split"
        return
    with pytest.raises(CheckError) as err:
        Program.from_text(text, "prog.dl")
    assert str(err.value).startswith(f"prog.dl:1:9: {message}"), str(err.value)


@pytest.mark.parametrize("strategy", ["smart", "balance", "thirds"])
def test_length_strategies_keep_shortest_lengths_in_a_min_lattice(strategy):
    program = Program.from_file(GOLDEN / "nonlinear.dl")
    plan = program.plan_for(strategy)
    assert plan.lattice("path@len") == "min"
    assert [s.stratum.relations for s in plan.strata] == [("arc",), ("path@len",), ("path",)]
    assert program.plan_for("asis").lattice("path") is None


_GRAPHS = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=24)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), strategy=st.sampled_from(FIXED),
       name=st.sampled_from(sorted(p.stem for p in GOLDEN.glob("*.dl"))))
def test_every_rewrite_derives_exactly_the_written_programs_facts(data, strategy, name):
    """The oracle: the reference evaluator on the program as written and as rewritten,
    on random graphs with cycles and self-loops; lengths are shortest-path lengths (per
    value of a closure's parameter columns, each a graph of its own)."""
    program = Program.from_file(GOLDEN / f"{name}.dl")
    inputs = {}
    for d in program.checked.inputs():
        kinds = program.checked.kinds[d.relation]
        edges = data.draw(_GRAPHS if len(kinds) == 2 else _COLOURED, label=d.relation)
        symbol = kinds[0] == "symbol"
        inputs[d.relation] = {tuple(map(str, t)) if symbol else t for t in edges}
    written = reference.evaluate(program.ast, inputs)
    rewritten, _ = program.rewritten(strategy)
    got = reference.evaluate(rewritten, inputs)
    for decl in program.ast.decls:
        assert got[decl.name] == written[decl.name], decl.name
    for closure in program.closures:
        lengths = closure.relation + "@len"
        if lengths in got:
            assert got[lengths] == _shortest(inputs[closure.edge], closure.ends)


# arcs (x, c, y) of two colours c
_COLOURED = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 1), st.integers(0, 7)),
                     max_size=30)


def _shortest(arcs: set[tuple], ends: tuple[int, int]) -> set[tuple]:
    """(..., length) per path with at least one arc: its shortest length, per value of the
    parameter columns (every column but the two ends)."""
    i, j = ends
    graphs: dict[tuple, nx.DiGraph] = {}
    for t in arcs:
        rest = tuple(v for k, v in enumerate(t) if k not in ends)
        graphs.setdefault(rest, nx.DiGraph()).add_edge(t[i], t[j])
    found = set()
    for rest, g in graphs.items():
        for a in g:
            for b in nx.descendants(g, a) | ({a} if _on_cycle(g, a) else set()):
                row, others = [None] * (len(rest) + 2), iter(rest)
                row[i], row[j] = a, b
                found.add(tuple(v if v is not None else next(others) for v in row)
                          + (min(_length(g, a, b)),))
    return found


# first parts a user may give (each valid from l = 2 on): Balance's, the two linear ones,
# fixed-size steps, a third, a bit shift, and one that changes its rule at l = 6
SPLITS = ["(l + 1) / 2", "l - 1", "1", "min(l - 1, 2)", "max(1, l / 3)", "(l bshr 1) + l % 2",
          "max(1, l - 3)", "min(l - 1, max(1, l - 5))"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=_GRAPHS, first=st.sampled_from(SPLITS), written=st.sampled_from(
    ["p(x, y) :- p(x, z), e(z, y).", "p(x, y) :- e(x, z), p(z, y).",
     "p(x, y) :- p(x, z), p(z, y)."]))
def test_a_user_length_partition_derives_the_closure_with_shortest_lengths(edges, first, written):
    """A split pragma's rewrite (``l1 = first(l1 + l2)``) derives the closure as written and
    each path's shortest length (networkx), on random graphs with cycles and self-loops."""
    text = (HEAD + f'.pragma p(strategy=split, first="{first}")\n'
            f"p(x, y) :- e(x, y). {written}")
    program = Program.from_text(text)
    rewritten, [choice] = program.rewritten("auto")
    bare = lambda text: text.translate({ord(c): None for c in " ()"})  # noqa: E731
    assert choice.strategy == "split" and bare(first) in bare(choice.why)
    inputs = {"e": set(edges)}
    got = reference.evaluate(rewritten, inputs)
    assert got["p"] == reference.evaluate(program.ast, inputs)["p"]
    assert got["p@len"] == _shortest(inputs["e"], (0, 1))


def _on_cycle(g: nx.DiGraph, a) -> bool:
    return any(a in c for c in nx.simple_cycles(g))


def _length(g: nx.DiGraph, a, b) -> list[int]:
    """The shortest path from a to b with at least one arc."""
    if a != b:
        return [nx.shortest_path_length(g, a, b)]
    return [1 + nx.shortest_path_length(g, c, a) for c in g.successors(a) if nx.has_path(g, c, a)]


@pytest.mark.parametrize("shape, strategy", [
    ((1020, 766, 765, 765), "left"),  # the paired trees H = 8: 16 deep, about 18 estimated
    ((65532, 49150, 49149, 49149), "smart"),  # H = 14: 28 deep, about 36 estimated
    ((201, 200, 199, 199), "smart"),  # chain(200)
    ((60, 46, 45, 45), "left"),  # the paired trees H = 4: 8 deep
    ((1000, 1001, 1000, 1000), "smart"),  # a chain
    ((4094, 4095, 2047, 4094), "left"),  # a tree of 12 levels, edges down: 11 deep
    ((4094, 4095, 4094, 2047), "left"),  # and up
    ((131070, 131071, 65535, 131070), "left"),  # 17 levels: 16 deep
    ((963, 778, 776, 776), "left"),  # paired trees H=8 (16 deep) as measured (1.24)
    ((4092, 3070, 3069, 3069), "left"),  # paired trees H=10, exactly: 20 deep
    ((25571, 1005, 1000, 990), "left"),  # email-Eu-core: dense
    (None, "left"),  # not measured: linear, as a nonlinear closure's safe choice
])
def test_auto_takes_smart_for_sparse_deep_graphs_and_linear_for_others(shape, strategy):
    program = Program.from_file(GOLDEN / "nonlinear.dl")
    _, [choice] = program.rewritten("auto", {"arc": shape} if shape else {})
    assert choice.strategy == strategy
    assert choice.why.startswith("auto: arc ")
    written_right = Program.from_file(GOLDEN / "right.dl")
    _, [choice] = written_right.rewritten("auto", {"e": (25571, 1005, 1000, 990)})
    assert choice.strategy == "right"  # a linear closure stays as written when dense


_OFF = st.floats(0.94, 1.06)  # an estimate's error (spark/load.SHAPE_RSD is 5%)


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(["chain", "down", "up"]),
       size=st.integers(40, 1000) | st.integers(1001, 1 << 20),  # short chains are the edge
       levels=st.integers(3, 17), arcs=_OFF, nodes=_OFF, tails=_OFF, heads=_OFF)
def test_auto_decides_alike_on_estimates_off_by_their_error(kind, size, levels, arcs, nodes,
                                                            tails, heads):
    """auto reads HyperLogLog estimates, each off by about 5% (up to 6% here): a chain of 40
    arcs or more still takes Smart, a complete binary tree of up to 17 levels (16 arcs deep)
    still stays linear, whichever way its edges point."""
    if kind == "chain":
        exact, expected = (size, size + 1, size, size), "smart"
    else:
        inner, count = (1 << (levels - 1)) - 1, (1 << levels) - 1
        exact = (count - 1, count, inner, count - 1) if kind == "down" else \
            (count - 1, count, count - 1, inner)
        expected = "left"
    shape = tuple(max(1, round(v * f)) for v, f in zip(exact, (arcs, nodes, tails, heads)))
    program = Program.from_file(GOLDEN / "nonlinear.dl")
    _, [choice] = program.rewritten("auto", {"arc": shape})
    assert choice.strategy == expected, (shape, choice.why)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(red=_GRAPHS, blue=_GRAPHS, name=st.sampled_from(["example-3-2", "left-chain"]))
def test_doubled_chain_programs_derive_the_written_programs_facts(red, blue, name):
    """Theorem 3.1: the t predicates' program is equivalent to the chain program."""
    program = Program.from_file(GOLDEN / f"{name}.dl")
    inputs = {"r": set(red), "b": set(blue)}
    rewritten, [choice] = program.rewritten("doubling")
    assert choice.strategy == "doubling"
    written, got = reference.evaluate(program.ast, inputs), reference.evaluate(rewritten, inputs)
    assert (got["p"], got["q"]) == (written["p"], written["q"])


def test_explain_says_what_log_rounds_would_cost_for_reachability_and_same_generation():
    """Afrati & Ullman §4: no rewrite keeps their arity; explain says so, and why."""
    from sparklog.rewrite.limits import notes

    text = (".decl e(x:number, y:number)\n.decl s(x:number)\n.decl r(x:number)\n"
            "r(x) :- s(x).\nr(y) :- e(x, y), r(x).\n"
            ".decl sg(x:number, y:number)\nsg(x, y) :- e(x, z), e(y, z).\n"
            "sg(x, y) :- e(x, xp), sg(xp, yp), e(y, yp).\n"
            ".decl tc(x:number, y:number)\ntc(x, y) :- e(x, y).\ntc(x, y) :- tc(x, z), e(z, y).\n"
            ".decl odd(x:number, y:number)\nodd(x, y) :- e(x, y).\n"
            "odd(x, y) :- e(x, xp), odd(xp, yp), s(yp), e(y, yp).\n")
    found = notes(Program.from_text(text).checked)
    assert [line.split(":")[0] for line in found] == ["r", "sg"]
    assert "Theorem 4.1" in found[0] and "binary closure of e" in found[0]
    assert "ternary predicate" in found[1] and ".pragma sg(strategy=doubling)" in found[1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_random_recursions_around_the_rewritten_shapes_keep_their_facts(seed):
    """Closures, chain programs and same-generation, written in every form and mutated
    out of the recognized shapes (tests/closure_programs.py): for every strategy, the
    program the rewrite passes make derives exactly the written program's facts."""
    ast, facts = generate_closure(seed)
    program = Program(ast)
    written = reference.evaluate(program.ast, facts)
    for strategy in STRATEGIES:
        got = reference.evaluate(program.rewritten(strategy)[0], facts)
        for decl in program.ast.decls:
            assert got.get(decl.name, set()) == written.get(decl.name, set()), \
                (strategy, decl.name)


@pytest.mark.parametrize("strategy, found", [
    ("smart", {"tc@len": 2}), ("balance", {}), ("thirds", {}), ("left", {}), ("asis", {})])
def test_only_smart_stops_at_its_last_round(strategy, found):
    """ir/smart.py: Smart's rounds derive lengths in (2^(k-1), 2^k], so the round after one
    that found no power of two derives nothing; Balance's and Thirds' bands give no such
    test, and a set closure has no lengths."""
    from sparklog.ir.smart import smart_lengths

    text = (".decl edge(x:number, y:number)\n.input edge\n.decl tc(x:number, y:number)\n"
            ".output tc\ntc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), tc(z, y).\n")
    plan = Program.from_text(text).plan_for(strategy)
    assert [smart_lengths(sp, plan) for sp in plan.strata if sp.stratum.recursive] == [found]


def test_smart_with_a_parameter_column_or_a_seed_above_one_is_told_apart():
    """A parameter column keeps the bands (each value's graph moves in lockstep); a seed of
    another length than 1 breaks them, and so does a rule that is not Smart's."""
    import dataclasses

    from sparklog.ir.smart import smart_lengths
    from sparklog.syntax import nodes as n

    text = (".decl e(g:number, x:number, y:number)\n.input e\n"
            ".decl tc(g:number, x:number, y:number)\n.output tc\n"
            "tc(g, x, y) :- e(g, x, y).\ntc(g, x, y) :- tc(g, x, z), tc(g, z, y).\n")
    plan = Program.from_text(text).plan_for("smart")
    (sp,) = [sp for sp in plan.strata if sp.stratum.recursive]
    assert smart_lengths(sp, plan) == {"tc@len": 3}
    seed = sp.preamble[0]
    two = dataclasses.replace(seed, head=seed.head[:3] + (n.Number(2),))
    assert smart_lengths(dataclasses.replace(sp, preamble=(two,)), plan) == {}
    kernel = sp.loop[0]
    body = tuple(lit for lit in kernel.clause.body if not isinstance(lit, n.Comparison)
                 or lit.op != "<=")  # l2 <= l1 dropped: l2 may be longer than l1
    loose = dataclasses.replace(kernel, clause=dataclasses.replace(kernel.clause, body=body))
    assert smart_lengths(dataclasses.replace(sp, loop=(loose, *sp.loop[1:])), plan) == {}
