"""The rows going into a rule's next join drop the variables nothing after it reads, and
their duplicates (translate._distinct_before): the same answer as without, fewer
derivations, and no shuffle more."""

from __future__ import annotations

import random

import sparklog
from sparklog import programs
from sparklog.explain import iteration_plan
from sparklog.syntax.parser import parse
from tests import reference
from tests.spark.helpers import rows


def _inputs() -> dict[str, set[tuple[int, int]]]:
    rng = random.Random(7)
    return {"assign": {(rng.randrange(30), rng.randrange(30)) for _ in range(36)},
            "dereference": {(rng.randrange(30), rng.randrange(30)) for _ in range(18)}}


def _derivations(result, relation: str) -> int:
    return sum(r["derivations"] or 0 for r in result.stats if r["relation"] == relation)


def test_an_alias_analysis_derives_less_and_shuffles_no_more(spark, tmp_path):
    """programs/cspa.dl, whose alias rule joins three atoms: ``z`` is dead once
    ``valueFlow(z, x)`` has met ``memoryAlias(z, w)``."""
    text = programs.path("cspa").read_text()
    facts = _inputs()
    expected = reference.evaluate(parse(text, "cspa.dl"), facts)
    assert len(expected["valueAlias"]) > 100  # a real workload, not an empty one
    for name, pairs in facts.items():
        (tmp_path / f"{name}.facts").write_text("".join(f"{a}\t{b}\n" for a, b in pairs))
    results, plans = {}, {}
    for dedup in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=2, join_dedup=dedup, deferred=False)
        program = sparklog.Program.from_text(text)
        results[dedup] = engine.run(program, facts_dir=tmp_path)
        plans[dedup] = iteration_plan(engine, program, tmp_path)
        for relation in ("valueFlow", "valueAlias", "memoryAlias"):
            assert rows(results[dedup][relation]) == expected[relation], (dedup, relation)
    assert _derivations(results[True], "valueAlias") < _derivations(results[False], "valueAlias")
    assert plans[True].count("Exchange") == plans[False].count("Exchange")
    assert plans[True].count("HashAggregate") > plans[False].count("HashAggregate")


def test_an_aggregate_counts_every_binding_of_its_body(spark):
    """Inside an aggregate's body nothing is dropped: ``count`` counts each binding of
    ``r(x, z), s(z, w)``, though ``z`` is dead once ``s`` is joined."""
    text = """
.decl r(x: number, z: number)
.decl s(z: number, w: number)
.decl t(w: number)
.decl c(x: number, n: number)
r(1, 1). r(1, 2). r(2, 1).
s(1, 5). s(2, 5). s(1, 6).
t(5). t(6).
c(x, n) :- r(x, _), n = count : { r(x, z), s(z, w), t(w) }.
"""
    engine = sparklog.Engine(spark=spark, partitions=2)
    got = rows(engine.run(sparklog.Program.from_text(text))["c"])
    assert got == {(1, 3), (2, 2)} == reference.evaluate(parse(text), {})["c"]
