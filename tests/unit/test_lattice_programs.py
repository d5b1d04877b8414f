"""The random lattice programs (tests/strategies.py ``generate_lattice``): every drawn program
passes the checker and converges in the reference evaluator, and the generator draws every
shape it promises (so a generator bug shows here, not as a puzzling differential failure)."""

from __future__ import annotations

import signal

import pytest
from hypothesis import HealthCheck, given, settings

from sparklog.semantics.checks import check
from sparklog.syntax.nodes import (
    Aggregate, Atom, BinOp, Call, Clause, Comparison, HeadAggregate, Negation, Number, Float,
    String, Var,
)
from sparklog.syntax.parser import parse
from sparklog.syntax.printer import print_program, print_term
from tests.reference import evaluate, lattices
from tests.spark.test_reference_agreement import LATTICE_SEEDS, LATTICE_SIZES
from tests.strategies import generate_lattice, lattice_programs

# the sizes of the fixed CI set (tests/spark/test_reference_agreement.py) and the defaults
SIZES = (LATTICE_SIZES, {})


def _aggregates(clause: Clause):
    for lit in clause.body:
        if isinstance(lit, Comparison):
            for side in (lit.left, lit.right):
                if isinstance(side, Aggregate):
                    yield side


def features(program) -> set[str]:
    """The lattice shapes a program contains, by name."""
    found: set[str] = set()
    lat = lattices(program)
    checked = check(program)
    stratum = {r: s for s in checked.strata for r in s.relations}
    kinds = {d.name: tuple(a.type for a in d.attributes) for d in program.decls}
    for s in checked.strata:
        mine = [r for r in s.relations if r in lat]
        if len(mine) >= 2 and s.recursive:
            found.add("several lattices in one recursive stratum")
        if len({lat[r][1] for r in mine}) == 2:
            found.add("min and max in one stratum")
        if mine and any(r not in lat for r in s.relations) and s.recursive:
            found.add("set relation in a lattice stratum")
    for name, (column, func) in lat.items():
        arity = len(kinds[name])
        found.add(f"{func} over {kinds[name][column]}")
        found.add(f"{arity - 1} independent")
        found.add("dependent first" if column == 0 else "dependent last"
                  if column == arity - 1 else "dependent inside")
        if any(k == "symbol" for i, k in enumerate(kinds[name]) if i != column):
            found.add("symbol independent column")
        if name in {d.relation for d in program.directives if d.kind == "input"}:
            found.add("input seeds")
        if not stratum[name].recursive:
            found.add("stratified lattice")
    for clause in program.clauses:
        head = clause.head.relation
        for lit in clause.body:
            if isinstance(lit, Negation) and lit.atom.relation in lat:
                found.add("negation of a lattice")
        for agg in _aggregates(clause):
            if any(isinstance(x, Atom) and x.relation in lat for x in agg.body):
                found.add("aggregate over a lattice")
        if head not in lat:
            continue
        column, func = lat[head]
        value = clause.head.args[column]
        wrapped = isinstance(value, HeadAggregate)
        inner = value.arg if wrapped else value
        if clause.is_fact:
            found.add("fact seed")
            if isinstance(inner, Number) and inner.unsigned and inner.value >= 1 << 63:
                found.add("unsigned seed above 2^63")
            continue
        same = [x for x in clause.body if isinstance(x, Atom) and x.relation in lat
                and stratum[x.relation] is stratum[head]]
        if not same or not stratum[head].recursive:
            if stratum[head].recursive and not wrapped:
                found.add("rule seed without head aggregate")
            continue
        text = print_term(inner)
        if not wrapped:
            found.add("recursive rule without head aggregate")
        if any(x.relation != head for x in same):
            found.add("mutual recursion")
        if len(same) >= 2:
            found.add("nonlinear")
            if isinstance(inner, BinOp) and "+" in text and func == "min":
                found.add("nonlinear $MIN(a + b)")
        if func == "min" and isinstance(inner, BinOp) and inner.op == "+" and \
                isinstance(inner.right, Var) and inner.right.name == "w":
            found.add("sssp $MIN(d + w)")
        if func == "max" and isinstance(inner, Call) and inner.name == "min" and \
                Var("w") in inner.args:
            found.add("widest $MAX(min(d, w))")
        if isinstance(inner, Var) and func == "min" and kinds[head][column] in ("number",
                                                                                "unsigned"):
            found.add("copy $MIN(d)")
        if "to_float(d)" in text:
            found.add("to_float of a dependent value")
        if isinstance(inner, Var) and inner.name == "v":
            found.add("value through a binding")
        if any(isinstance(a, (Number, Float, String)) for i, a in enumerate(clause.head.args)
               if i != column):
            found.add("constant in an independent head column")
        if any(isinstance(x, Atom) and x.relation in lat and
               any(isinstance(a, (Number, Float, String)) for i, a in enumerate(x.args)
                   if i != lat[x.relation][0]) for x in same):
            found.add("constant in an independent body column")
        if any(isinstance(x, Negation) for x in clause.body):
            found.add("negation in a recursive lattice rule")
    return found


@pytest.mark.parametrize("sizes", SIZES, ids=("ci", "default"))
def test_drawn_lattice_programs_pass_the_checker(sizes):
    for seed in range(500):
        program, _facts = generate_lattice(seed, **sizes)
        # the engine reads the printed text; parsing is slow, so every tenth program
        ast = parse(print_program(program)) if seed % 10 == 0 else program
        try:
            checked = check(ast)
        except Exception as exc:
            raise AssertionError(f"seed {seed}: {exc}\n{print_program(program)}") from None
        assert checked.lattices, seed


def test_lattice_generator_draws_every_shape():
    found: set[str] = set()
    for seed in range(300):
        found |= features(generate_lattice(seed)[0])
    wanted = {
        "min over number", "min over unsigned", "min over float", "max over number",
        "max over unsigned", "max over float", "1 independent", "2 independent",
        "3 independent", "0 independent", "unsigned seed above 2^63", "dependent first", "dependent inside", "dependent last",
        "symbol independent column", "input seeds", "fact seed",
        "rule seed without head aggregate", "recursive rule without head aggregate",
        "stratified lattice", "negation of a lattice", "aggregate over a lattice",
        "several lattices in one recursive stratum", "min and max in one stratum",
        "set relation in a lattice stratum", "mutual recursion", "nonlinear",
        "nonlinear $MIN(a + b)", "sssp $MIN(d + w)", "widest $MAX(min(d, w))",
        "copy $MIN(d)", "to_float of a dependent value", "value through a binding",
        "constant in an independent head column", "constant in an independent body column",
        "negation in a recursive lattice rule",
    }
    assert wanted <= found, wanted - found


def test_the_ci_set_draws_the_main_shapes():
    # the 40 programs of tests/spark/test_reference_agreement.py
    found: set[str] = set()
    for seed in range(LATTICE_SEEDS):
        found |= features(generate_lattice(seed, **LATTICE_SIZES)[0])
    wanted = {"min over number", "min over unsigned", "min over float", "max over number",
              "max over float", "stratified lattice", "mutual recursion", "nonlinear",
              "nonlinear $MIN(a + b)", "sssp $MIN(d + w)", "widest $MAX(min(d, w))",
              "copy $MIN(d)", "fact seed", "several lattices in one recursive stratum",
              "negation of a lattice", "aggregate over a lattice", "3 independent"}
    assert wanted <= found, wanted - found


def test_lattice_generator_is_deterministic_and_prefix_blind():
    one, facts = generate_lattice(7)
    assert print_program(one) == print_program(generate_lattice(7)[0])
    other, other_facts = generate_lattice(7, "p7_")
    assert print_program(other).replace("p7_", "") == print_program(one)
    assert {k.removeprefix("p7_"): v for k, v in other_facts.items()} == facts


def _timeout(*_args):
    raise TimeoutError


def test_lattice_programs_converge_in_the_reference():
    # a program that does not converge would loop forever: give each a few seconds
    previous = signal.signal(signal.SIGALRM, _timeout)
    try:
        for seed in range(150):
            program, facts = generate_lattice(seed)
            signal.alarm(20)
            try:
                result = evaluate(program, facts)
            except TimeoutError:
                raise AssertionError(f"seed {seed} does not converge") from None
            finally:
                signal.alarm(0)
            assert all(len(rows) < 2000 for rows in result.values()), seed
    finally:
        signal.signal(signal.SIGALRM, previous)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lattice_programs())
def test_lattice_programs_strategy_draws_checked_programs(drawn):
    program, facts = drawn
    assert check(parse(print_program(program))).lattices
    result = evaluate(program, facts)
    assert set(result) >= {d.name for d in program.decls}


def test_reference_orders_unsigned_lattice_values_as_unsigned():
    # campaign seed 2060, shrunk: 2^63 + 5 plus 3 is a negative signed pattern in the
    # reference's arithmetic; the unsigned $MIN must still keep 2^63 + 5 (as the engine does)
    program = parse(""".decl e(x:number, y:number, w:unsigned)
e(1, 2, 3u). e(2, 1, 3u).
.decl r(x:number, d:unsigned)
r(1, 9223372036854775813u).
r(y, $MIN(d + w)) :- r(x, d), e(x, y, w).
.decl h(x:number, d:unsigned)
h(x, $MAX(d / 2u)) :- r(x, d).
.decl m(d:unsigned)
m($MAX(9223372036854775807u + 2u)).
m(9223372036854775808u).
""")
    result = evaluate(program)
    assert sorted(result["r"]) == [(1, (1 << 63) + 5), (2, (1 << 63) + 8)]
    assert sorted(result["h"]) == [(1, (1 << 62) + 2), (2, (1 << 62) + 4)]
    assert result["m"] == {((1 << 63) + 1,)}
