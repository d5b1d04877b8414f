"""A recursive rule's one-row parameters read as literals (Database.constant_rows): the
values a lower stratum's relation of at most one row gives a cross join, exactly (the
extremes of number, unsigned, float and symbol), an empty parameter deriving nothing, a
parameter selected from a table of settings by a constant, and a relation of two rows
still joined. Oracles: the reference evaluator, and the same program with the step off."""

from __future__ import annotations

import pytest

import sparklog
from sparklog.spark.storage import Database
from sparklog.syntax.parser import parse
from tests import reference
from tests.spark.helpers import rows

PROGRAM = """
.decl lim(k: number)
lim(4).
.decl low(b: number)
low(b) :- b = -9223372036854775807 - 1.
.decl top(u: unsigned)
top(u) :- u = to_unsigned(-1).
.decl step(a: float)
step(0.1).
.decl far(a: float)
far(x) :- x = 1.0 / 0.0.
.decl tag(s: symbol)
tag("a 'quoted' tag").
.decl none(k: number)
none(k) :- lim(k), k > 100.
.decl two(j: number)
two(1). two(2).
.decl cfg(key: symbol, v: number)
cfg("steps", 3). cfg("other", 9).
.decl flag()
flag().
.decl off()
off() :- lim(k), k > 100.

.decl c(i: number, f: float, s: symbol, b: number, u: unsigned, z: float)
.output c
c(0, 0.0, "", 0, 0u, 0.0).
c(i + 1, f + a, s, b, u, z) :- c(i, f, _, _, _, _), lim(k), i < k, step(a), tag(s), low(b),
    top(u), far(z).
.decl e(i: number)
.output e
e(0).
e(i + 1) :- e(i), none(k), i < k.
.decl t(i: number, j: number)
.output t
t(0, 0).
t(i + 1, j) :- t(i, _), two(j), i < 3.
.decl g(i: number)
.output g
g(0).
g(i + 1) :- g(i), cfg("steps", k), i < k.
.decl h(i: number)
.output h
h(0).
h(i + 1) :- h(i), flag(), i < 2.
.decl n(i: number)
.output n
n(0).
n(i + 1) :- n(i), off(), i < 2.
n(i + 1) :- n(i), none(_), i < 2.
"""


@pytest.fixture(scope="module")
def answers(spark):
    """The program's outputs with the step on (and what it read as literals) and off."""
    seen: dict[str, object] = {}
    real = Database.constant_rows

    def spy(db, step, sql):
        got = real(db, step, sql)
        if db.running is not None:  # in a recursive stratum
            seen.setdefault(step.relation, got)
        return got

    Database.constant_rows = spy
    try:
        on = sparklog.Engine(spark=spark, partitions=2).run(sparklog.Program.from_text(PROGRAM))
        on_rows = {r: rows(on[r]) for r in "cetghn"}
    finally:
        Database.constant_rows = real
    off = sparklog.Engine(spark=spark, partitions=2, inline_constants=False).run(
        sparklog.Program.from_text(PROGRAM))
    return on_rows, {r: rows(off[r]) for r in "cetghn"}, seen


def test_parameters_agree_with_the_reference_evaluator(answers):
    on, off, _ = answers
    expected = reference.evaluate(parse(PROGRAM, "constants.dl"))
    for relation in "cetghn":
        assert on[relation] == expected[relation], relation
        assert off[relation] == on[relation], relation
    tops = {row[4] for row in on["c"] if row[0] > 0}
    assert tops == {2**64 - 1}
    assert {row[3] for row in on["c"] if row[0] > 0} == {-2**63}
    assert {row[5] for row in on["c"] if row[0] > 0} == {float("inf")}
    assert max(on["c"])[1] == 0.1 + 0.1 + 0.1 + 0.1  # added as Soufflé adds them
    assert on["e"] == on["n"] == {(0,)} and on["g"] == {(i,) for i in range(4)}
    assert on["t"] == {(0, 0)} | {(i, j) for i in (1, 2, 3) for j in (1, 2)}


def test_which_scans_are_read_as_literals(answers):
    """One-row relations of lower strata are; an empty one is, with no row; a table of
    settings is, by the constant that selects one row; a two-row relation is not."""
    _, _, seen = answers
    assert seen["lim"] == [(4,)] and seen["step"] == [(0.1,)] and seen["cfg"] == [(3,)]
    assert seen["none"] == [] and seen["two"] is None
    assert seen["tag"] is not None and seen["low"] == [(-2**63,)]
    assert seen["flag"] is not None and len(seen["flag"]) == 1 and seen["off"] == []
