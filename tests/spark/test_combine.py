"""The combine before the shuffle (Options.combine): a round's candidates still placed by a
stored relation are deduplicated (a set relation) or reduced to each key's best value (a
$MIN/$MAX relation) inside their partition, so fewer rows cross the round's one shuffle.
The answer and the derivation counts must not change; the rows that cross the shuffle
(stats ``shuffled``) must."""

from __future__ import annotations

import sparklog
from tests import reference
from tests.spark.helpers import rows

# Four layers of eight nodes, every node linked to every node of the next layer: a pair of
# the closure is derived once per path, so most of a round's derivations are duplicates
# (more than two partitions keep apart), and a key's label or width arrives along many
# paths in one round.
LAYERS = "\n".join(f"edge({10 * a + i}, {10 * (a + 1) + j})."
                   for a in range(3) for i in range(8) for j in range(8))
PROGRAM = f"""
.decl edge(x: number, y: number)
{LAYERS}
.decl tc(x: number, y: number)
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), edge(z, y).
.decl both(x: number, y: number)
both(x, y) :- edge(x, y).
both(x, y) :- both(x, z), edge(z, y).
both(x, y) :- edge(x, z), both(z, y).
.decl link(x: number, y: number)
link(x, y) :- edge(x, y).
link(y, x) :- edge(x, y).
.decl cc(n: number, label: number)
cc(x, x) :- link(x, _).
cc(y, $MIN(z)) :- cc(x, z), link(x, y).
.decl wide(n: number, w: float)
wide(x, 100.0) :- edge(x, _), x < 10.
wide(y, $MAX(min(w, to_float(x + y)))) :- wide(x, w), edge(x, y).
.decl far(n: number, d: unsigned)
far(x, 0) :- edge(x, _), x < 10.
far(y, $MIN(d + 1)) :- far(x, d), edge(x, y).
"""
RELATIONS = ("tc", "both", "cc", "wide", "far")


def _run(spark, combine: str, text: str = PROGRAM, **options):
    engine = sparklog.Engine(spark=spark, partitions=2, combine=combine, strategy="asis",
                             **options)
    program = sparklog.Program.from_text(text)
    return program, engine.run(program)


def _sum(result, relation: str, field: str) -> int:
    return sum(r[field] or 0 for r in result.stats if r["relation"] == relation)


def _by_rule(result, relation: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in result.stats:
        if record["relation"] == relation:
            for rule, n in (record["rules"] or {}).items():
                counts[rule] = counts.get(rule, 0) + n
    return counts


def test_combining_changes_what_crosses_the_shuffle_not_the_answer(spark):
    program, off = _run(spark, "off")
    _, on = _run(spark, "on")
    expected = reference.evaluate(program.ast, {})
    for result in (off, on):
        for name in RELATIONS:
            assert rows(result[name]) == expected[name], name
    for name in RELATIONS:  # derivations are counted before the combine, rule by rule too
        assert _sum(on, name, "derivations") == _sum(off, name, "derivations"), name
        assert _by_rule(on, name) == _by_rule(off, name), name
        assert _sum(off, name, "shuffled") == _sum(off, name, "derivations"), name
    assert not any(r["combined"] for r in off.stats)
    for name in ("tc", "both", "cc", "wide"):  # sets, a $MIN of numbers, a $MAX of floats
        assert any(r["combined"] for r in on.stats if r["relation"] == name), name
        assert _sum(on, name, "shuffled") < _sum(on, name, "derivations"), name
    # an unsigned $MIN is ordered by flipped bits, which SQL's min() does not know
    assert not any(r["combined"] for r in on.stats if r["relation"] == "far")


CHAIN = """
.decl edge(x: number, y: number)
""" + "\n".join(f"edge({i}, {i + 1})." for i in range(14)) + """
.decl tc(x: number, y: number)
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), edge(z, y).
"""


def test_auto_stops_combining_what_has_no_duplicates(spark):
    """A chain's closure derives each pair once: the first combined rounds drop nothing,
    so ``auto`` stops combining (decided from counted rounds, one or two rounds late)."""
    program, result = _run(spark, "auto", CHAIN)
    assert rows(result["tc"]) == reference.evaluate(program.ast, {})["tc"]
    loop = [r for r in result.stats if r["relation"] == "tc" and r["iteration"] >= 1]
    assert loop[0]["combined"]
    assert not any(r["combined"] for r in loop[4:])
    assert all(r["shuffled"] == r["derivations"] for r in loop)


def test_auto_keeps_combining_what_it_reduces(spark):
    _, result = _run(spark, "auto")
    tc = [r for r in result.stats if r["relation"] == "tc" and r["derivations"]]
    assert all(r["combined"] for r in tc)
    assert all(3 * r["shuffled"] <= r["derivations"] for r in tc[1:])

