"""Dynamic join planning (PARALAGG §IV-D): a join that is not partition-local broadcasts
the round's delta when it is small, or else moves the side that is not in place (here the
stored `edge`, to the delta's sub-buckets: "inner"); the results are the same, and the
stats say which way each round went."""

from __future__ import annotations

import pytest

import sparklog
from tests import reference
from tests.spark.helpers import rows

# the second rule joins cc's delta with edge on edge's second column, which edge is not
# bucketed by: without secondary indexes that join is not partition-local, and edge's
# rows go to the delta's places (with them it reads edge's copy placed by that column,
# rewrite/indexes.py, and moves nothing)
CC = """
.decl edge(src: number, dst: number)
edge(1, 2). edge(2, 3). edge(3, 4). edge(5, 4). edge(6, 7). edge(8, 8). edge(9, 6).
edge(10, 9). edge(11, 10). edge(12, 11).
.decl cc(n: number, label: number)
cc(x, x) :- edge(x, _).
cc(y, y) :- edge(_, y).
cc(y, $MIN(z)) :- cc(x, z), edge(x, y).
cc(x, $MIN(z)) :- cc(y, z), edge(x, y).
.decl sg(x: number, y: number)
sg(x, y) :- edge(p, x), edge(p, y).
sg(x, y) :- sg(a, b), edge(a, x), edge(b, y).
"""


@pytest.mark.parametrize("planning, limit, indexes, moved", [
    ("dynamic", 1_000, False, {"delta"}), ("dynamic", 3, False, {"delta", "inner"}),
    ("off", 1_000, False, {"inner"}), ("dynamic", 1_000, True, {"local"})])
def test_choices_agree_with_the_reference(spark, planning, limit, indexes, moved):
    engine = sparklog.Engine(spark=spark, partitions=2, join_planning=planning,
                             broadcast_rows=limit, indexes=indexes)
    program = sparklog.Program.from_text(CC)
    result = engine.run(program)
    expected = reference.evaluate(program.ast, {})
    for name in ("cc", "sg"):
        assert rows(result[name]) == expected[name], name
    loop = [r for r in result.stats if r["relation"] == "cc" and r["iteration"] >= 2]
    assert {r["outer"] for r in loop} == moved  # the first loop round had no size yet
    assert all(r["outer"] == "local" for r in result.stats if r["relation"] == "edge")


def test_usage_errors(spark):
    with pytest.raises(sparklog.UsageError, match="join_planning must be one of"):
        sparklog.Engine(spark=spark, join_planning="sometimes")
    with pytest.raises(sparklog.UsageError, match="broadcast_rows must be at least 0"):
        sparklog.Engine(spark=spark, broadcast_rows=-1)
