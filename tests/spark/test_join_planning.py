"""Dynamic join planning (PARALAGG §IV-D): a join that is not partition-local broadcasts
the round's delta when it is small, or else moves the side that is not in place (here the
stored `edge`, to the delta's sub-buckets: "inner"); a small stored side goes to every
sub-bucket of the rows it meets, or a few rows to every sub-bucket of a large side
(``replicate``), so they stay where they are; the results are the same, and the stats say
which way each round went."""

from __future__ import annotations

import pytest

import sparklog
from sparklog import programs
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
    ("dynamic", 1_000, False, {"delta"}), ("dynamic", 8, False, {"delta", "inner"}),
    ("off", 1_000, False, {"inner"}), ("replicate", 1_000, False, {"inner"}),
    ("dynamic", 1_000, True, {"local"})])
def test_choices_agree_with_the_reference(spark, planning, limit, indexes, moved):
    engine = sparklog.Engine(spark=spark, partitions=2, join_planning=planning,
                             broadcast_rows=limit, indexes=indexes)
    program = sparklog.Program.from_text(CC)
    result = engine.run(program)
    expected = reference.evaluate(program.ast, {})
    for name in ("cc", "sg"):
        assert rows(result[name]) == expected[name], name
    loop = [r for r in result.stats if r["relation"] == "cc" and r["iteration"] >= 2]
    # planned a round ahead, a round sees the delta of the round two before it (cc's
    # deltas: 12, 9, 6, 4, 2): rounds 2 and 3 move the stored side, rounds 4 and 5 the delta
    assert {r["outer"] for r in loop} == moved
    assert all(r["outer"] == "local" for r in result.stats if r["relation"] == "edge")


def test_usage_errors(spark):
    with pytest.raises(sparklog.UsageError, match="join_planning must be one of"):
        sparklog.Engine(spark=spark, join_planning="sometimes")
    with pytest.raises(sparklog.UsageError, match="broadcast_rows must be at least 0"):
        sparklog.Engine(spark=spark, broadcast_rows=-1)


def test_small_sides_go_to_the_rows_so_the_ranks_stay_where_their_contributions_are(spark):
    """PageRank's rank round: each node's total joins the iteration's dangling mass, one
    stored key, and the parameters. Moved to that key's one sub-bucket, every total
    crosses a shuffle there and another to its rank's home; with ``replicate`` the mass and
    the parameters come to the totals' sub-buckets instead, the ranks are made where their
    contributions are stored, and none crosses the round's shuffle (its rows are counted:
    ``shuffled``). The ranks are the same to the bit. Every contribution is stored
    (``presum=False``): summed per node (ir/presum.py), a round starts from 8 totals, fewer
    than the stored masses' copies, and replicating them would not pay."""
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3), (6, 0), (1, 6), (7, 7)]
    df = spark.createDataFrame(edges, "src long, dst long")
    shuffled, ranks = {}, {}
    for planning in ("replicate", "off"):
        engine = sparklog.Engine(spark=spark, partitions=2, join_planning=planning,
                                 presum=False)
        result = engine.run(sparklog.Program.from_file(programs.path("pagerank")), {
            "edge": df, "iterations": spark.createDataFrame([(6,)], "k long"),
            "damping": spark.createDataFrame([(0.85,)], "a double")})
        ranks[planning] = dict(rows(result["pagerank"]))
        # the rank rounds after the first two, whose plans had sizes to go by
        shuffled[planning] = [r["shuffled"] for r in result.stats
                              if r["relation"] == "rank" and r["iteration"] >= 4 and r["delta"]]
    assert ranks["replicate"] == ranks["off"]
    assert shuffled["off"] and all(n == 8 for n in shuffled["off"]), shuffled  # 8 nodes
    assert shuffled["replicate"] == [0] * len(shuffled["off"]), shuffled
