"""Buckets, sub-buckets and their placement (spark/balance.py), without Spark."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from sparklog.spark.balance import (Allocation, murmur3_int, murmur3_long, partition_of,
                                    rebalance)


def test_murmur3_matches_sparks_hash_of_an_int():
    # values printed by Spark 4.3: SELECT hash(CAST(v AS INT)) for these v
    assert [murmur3_int(v) for v in (0, 1, 42, -1)] == [
        933211791, -559580957, 29417773, -1604776387]


def test_murmur3_long_matches_sparks_hash_of_a_bigint():
    # SELECT hash(CAST(v AS BIGINT)), Spark 4.3: how a stored number's bucket is chosen
    assert [murmur3_long(v) for v in (0, 1, 42, -1, 123456789012)] == [
        -1670924195, -1712319331, 1316951768, -939490007, -1439831649]


def test_the_initial_allocation_puts_bucket_b_on_partition_b():
    for partitions in (1, 2, 7, 64):
        allocation = Allocation.initial(partitions)
        assert [partition_of(h[0], partitions) for h in allocation.homes] == list(
            range(partitions))
        assert allocation.hosted() == [1] * partitions and not allocation.refined


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 24), st.lists(st.tuples(st.booleans(), st.integers(0, 23)), max_size=12))
def test_partitions_host_within_one_sub_bucket_of_each_other(partitions, steps):
    """Round-robin placement (Fig. 4): after any refinements no partition hosts more than
    one sub-bucket more than another. A consolidation frees sub-buckets where they are,
    which can leave a hole (the paper allocates the consolidated ones afresh, as here);
    every live sub-bucket keeps a home value of its own either way."""
    allocation = Allocation.initial(partitions)
    consolidated = False
    for refine, bucket in steps:
        bucket %= partitions
        if refine and allocation.k(bucket) < 64:
            allocation = allocation.refine([bucket])
        elif not refine and allocation.k(bucket) >= 4:
            allocation = allocation.consolidate([bucket])
            consolidated = True
        hosted = allocation.hosted()
        assert consolidated or max(hosted) - min(hosted) <= 1, (hosted, allocation)
        homes = [h for hs in allocation.homes for h in hs]
        assert len(homes) == len(set(homes)) == sum(hosted)
        assert all(len(hs) in (1, 4, 16, 64) for hs in allocation.homes)


def test_refinement_keeps_the_old_sub_buckets_where_they_are():
    allocation = Allocation.initial(4)
    refined = allocation.refine([2])
    assert refined.k(2) == 4 and refined.homes[2][0] == allocation.homes[2][0]
    assert [refined.homes[b] for b in (0, 1, 3)] == [allocation.homes[b] for b in (0, 1, 3)]
    # the three new ones go to the three partitions that host one sub-bucket only
    assert sorted(partition_of(h, 4) for h in refined.homes[2][1:]) == [0, 1, 3]


def test_a_heavy_bucket_is_refined_and_small_ones_are_not():
    allocation = Allocation.initial(4)
    sizes = {allocation.homes[b][0]: rows for b, rows in enumerate([100, 100, 100, 900])}
    decision = rebalance(allocation, sizes, ratio=3.0, min_rows=0)
    assert decision.refined == 0  # 900 is 3 times the mean, not more
    decision = rebalance(allocation, sizes, ratio=2.0, min_rows=0)
    assert decision.refined == 1 and decision.allocation.k(3) == 4
    assert [decision.allocation.k(b) for b in range(3)] == [1, 1, 1]
    # under min_rows nothing is worth moving
    assert rebalance(allocation, sizes, ratio=2.0, min_rows=901).refined == 0


def test_refinement_stops_once_every_partition_hosts_a_sub_bucket_of_the_bucket():
    allocation = Allocation.initial(2).refine([0])  # 4 sub-buckets: the cap for 2 partitions
    sizes = {h: 10_000 for h in allocation.homes[0]} | {allocation.homes[1][0]: 1}
    assert rebalance(allocation, sizes, ratio=1.0, min_rows=0).refined == 0


def test_consolidation_when_most_buckets_are_refined_and_light():
    allocation = Allocation.initial(4).refine([0, 1, 2])
    heavy = allocation.homes[3][0]
    sizes = {h: 1 for hs in allocation.homes for h in hs} | {heavy: 100}
    decision = rebalance(allocation, sizes, ratio=3.0, min_rows=10_000)
    assert decision.consolidated == 3
    assert [decision.allocation.k(b) for b in range(4)] == [1, 1, 1, 1]
    # fewer than 60% refined: no consolidation
    allocation = Allocation.initial(4).refine([0, 1])
    sizes = {h: 1 for hs in allocation.homes for h in hs}
    assert rebalance(allocation, sizes, ratio=3.0, min_rows=10_000).consolidated == 0


def test_new_sub_buckets_go_to_the_partitions_holding_the_fewest_rows():
    """Of the partitions that host the fewest sub-buckets, the lightest get the new ones."""
    allocation = Allocation.initial(8)
    rows = [900, 50, 400, 10, 300, 20, 600, 5]
    sizes = {allocation.homes[b][0]: r for b, r in enumerate(rows)}
    refined = allocation.refine([0], sizes)
    assert sorted(partition_of(h, 8) for h in refined.homes[0][1:]) == [3, 5, 7]
    assert refined.hosted().count(2) == 3  # still within one sub-bucket of each other
    # without sizes, round robin from the cursor, as before
    assert sorted(partition_of(h, 8) for h in allocation.refine([0]).homes[0][1:]) == [1, 2, 3]


def _up_tree_imbalance(levels: int, partitions: int, every: int, ratio: float) -> list[float]:
    """Each round's partition imbalance (largest over mean) of the linear closure of a
    complete binary tree with edges up, ``tc`` bucketed by the ancestor (the join column
    of ``tc(x, y) :- tc(x, z), edge(z, y)``), under the balance checks: round k adds 2^k
    pairs to every ancestor at least k levels above the leaves, a bucket's rows spread
    evenly over its sub-buckets (their hash is of the descendant), and the record is taken
    before the round's check, as the engine's stats record is."""
    ancestors = range(1, 2 ** (levels - 1))  # heap-numbered, as sparklog.gen.tree
    bucket = [murmur3_long(a) % partitions for a in ancestors]
    depth = [a.bit_length() - 1 for a in ancestors]
    allocation, held, imbalance = Allocation.initial(partitions), [0] * partitions, []
    for k in range(1, levels):
        for b, d in zip(bucket, depth):
            if d + k <= levels - 1:
                held[b] += 2 ** k
        sizes = {h: held[b] / len(hs) for b, hs in enumerate(allocation.homes) for h in hs}
        load = [0.0] * partitions
        for h, rows in sizes.items():
            load[partition_of(h, partitions)] += rows
        imbalance.append(max(load) * partitions / sum(load))
        if k % every == 0:
            allocation = rebalance(allocation, sizes, ratio, 10_000).allocation
    return imbalance


@pytest.mark.parametrize("partitions", [16, 64])
def test_checked_every_round_at_ratio_1_2_an_up_tree_stays_within_1_5(partitions):
    """Kumar & Gilray's skewed workload: the root's bucket takes a pair for every node,
    half of them in the last round. Checked every round at ratio 1.2, with new sub-buckets
    placed by rows, no round's partitions differ by more than 1.5x (the model above; the
    engine's own rounds: benchmarks/balance.py). At the paper's every 2 rounds and ratio 3
    the root's bucket is never refined at 16 partitions, and the last round is 1.75x."""
    assert max(_up_tree_imbalance(17, partitions, every=1, ratio=1.2)) <= 1.5
    assert max(_up_tree_imbalance(17, partitions, every=2, ratio=3.0)) > 1.7


def test_a_row_replicated_to_every_sub_bucket_meets_each_of_them_once():
    """Join planning's copies (translate._replicated): one per live sub-bucket, none twice,
    also after a refinement has given a bucket more."""
    allocation = Allocation.initial(4).refine([1, 3])
    text = allocation.every_home_sql()
    assert text.startswith("explode(array(") and text.endswith("))")
    values = [int(v) for v in text[len("explode(array("):-2].split(", ")]
    assert sorted(values) == sorted(h for homes in allocation.homes for h in homes)
    assert len(values) == len(set(values)) == allocation.sub_buckets == 10
