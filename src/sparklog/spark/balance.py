"""Spatial balance (Kumar & Gilray §3, §3.2): buckets, sub-buckets, and where they live.

A stored relation's tuples fall into B buckets by a hash of their bucket columns (the join
columns; B is the partition count P) and, inside its bucket b, into k_b sub-buckets by a
hash of their other columns (k_b a power of 4, 1 until refined). Every sub-bucket lives on
one partition, chosen when it is allocated: one hosting the fewest sub-buckets, in
round-robin order (Fig. 4), so no partition hosts more than one sub-bucket more than
another; of those, the one holding the fewest rows.

Spark places a row by ``pmod(murmur3(partitioning columns), P)``. To put a sub-bucket on
the partition chosen for it, each row carries in ``_sb`` its sub-bucket's *home value*: an
int whose murmur3 hash lands on that partition (:func:`home_values`), distinct for every
sub-bucket of a relation. A relation is hash-partitioned by ``_sb`` alone. A join with it
gives the other side the home values of the sub-buckets its join values fall into, and
equates them with ``_sb`` (:meth:`Allocation.homes_sql`): the stored side stays where it
is, and an outer tuple whose bucket has k_b sub-buckets is replicated to each of them
(the paper's intra-bucket communication).

Refinement and consolidation (:func:`rebalance`) change a relation's :class:`Allocation`
between rounds; the rows whose home value changes then move to their new partition
(storage.Database.place).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparklog.ir.nodes import Layout

_MASK = 0xFFFFFFFF
SEED = 42  # Spark's seed for hash() and for HashPartitioning


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix(h1: int, word: int) -> int:
    """One 32-bit word into the hash state (Murmur3_x86_32's mixK1, then mixH1)."""
    k1 = _rotl((word & _MASK) * 0xCC9E2D51 & _MASK, 15) * 0x1B873593 & _MASK
    return (_rotl(h1 ^ k1, 13) * 5 + 0xE6546B64) & _MASK


def _finish(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def murmur3_int(value: int, seed: int = SEED) -> int:
    """Spark's ``hash()`` of one int (Murmur3_x86_32.hashInt), as a signed 32-bit int."""
    return _finish(_mix(seed & _MASK, value), 4)


def murmur3_long(value: int, seed: int = SEED) -> int:
    """Spark's ``hash()`` of one bigint (Murmur3_x86_32.hashLong: the low word, then the
    high one): the bucket of a stored number is ``pmod`` of it."""
    return _finish(_mix(_mix(seed & _MASK, value), value >> 32), 8)


@cache
def _partition_of(value: int, partitions: int) -> int:
    return murmur3_int(value) % partitions  # Python's % is Spark's pmod for partitions > 0


class _Homes:
    """The non-negative ints in increasing order, dealt out by the partition their hash
    lands on: ``value(p, j)`` is the j-th home value of partition p."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self.lists: list[list[int]] = [[] for _ in range(partitions)]
        self.scanned = 0

    def value(self, partition: int, index: int) -> int:
        while len(self.lists[partition]) <= index:
            self.lists[_partition_of(self.scanned, self.partitions)].append(self.scanned)
            self.scanned += 1
        return self.lists[partition][index]


@cache
def home_values(partitions: int) -> _Homes:
    return _Homes(partitions)


def partition_of(value: int, partitions: int) -> int:
    """The partition a home value places its rows on."""
    return _partition_of(value, partitions)


@dataclass(frozen=True)
class Allocation:
    """A relation's sub-buckets: per bucket, the home value of each of its sub-buckets.

    ``issued`` counts, per partition, the home values handed out so far (never reused, so
    a relation's live sub-buckets always have distinct ones); ``cursor`` is where the
    round-robin order resumes.
    """

    partitions: int
    homes: tuple[tuple[int, ...], ...]
    issued: tuple[int, ...]
    cursor: int = 0

    @classmethod
    def initial(cls, partitions: int) -> Allocation:
        """One sub-bucket per bucket, bucket b on partition b."""
        values = home_values(partitions)
        return cls(partitions, tuple((values.value(b, 0),) for b in range(partitions)),
                   (1,) * partitions, 0)

    @property
    def refined(self) -> bool:
        return any(len(h) > 1 for h in self.homes)

    @property
    def sub_buckets(self) -> int:
        return sum(len(h) for h in self.homes)

    def k(self, bucket: int) -> int:
        return len(self.homes[bucket])

    def hosted(self) -> list[int]:
        """Sub-buckets per partition."""
        counts = [0] * self.partitions
        for homes in self.homes:
            for h in homes:
                counts[partition_of(h, self.partitions)] += 1
        return counts

    def where(self) -> dict[int, tuple[int, int]]:
        """Home value -> (bucket, sub-bucket)."""
        return {h: (b, s) for b, homes in enumerate(self.homes) for s, h in enumerate(homes)}

    def _reallocated(self, changes: dict[int, tuple[tuple[int, ...], int]],
                     sizes: dict[int, int] | None = None) -> Allocation:
        """The allocation with bucket b's sub-buckets set to ``kept + count new ones`` for
        each ``b: (kept, count)``. Each new one goes to a partition that hosts the fewest
        sub-buckets (Fig. 4's round robin), of those one without a sub-bucket of this
        bucket first, and of those the one holding the fewest rows, given ``sizes`` (rows
        per home value): a changed bucket's rows are spread evenly over its sub-buckets,
        and the heaviest changed bucket is placed first. Without sizes, ties go in
        round-robin order from the cursor."""
        sizes = sizes or {}
        homes = list(self.homes)
        for b, (kept, _) in changes.items():
            homes[b] = kept
        counts = [0] * self.partitions
        rows = [0.0] * self.partitions
        for b, hs in enumerate(homes):
            for h in hs:
                counts[partition_of(h, self.partitions)] += 1
                if b not in changes:
                    rows[partition_of(h, self.partitions)] += sizes.get(h, 0)
        issued, cursor, values = list(self.issued), self.cursor, home_values(self.partitions)
        held = {b: sum(sizes.get(h, 0) for h in self.homes[b]) for b in changes}
        for b in sorted(changes, key=lambda b: (-held[b], b)):
            kept, count = changes[b]
            share = held[b] / (len(kept) + count)
            for h in kept:
                rows[partition_of(h, self.partitions)] += share
            fresh: list[int] = []
            for _ in range(count):
                mine = {partition_of(h, self.partitions) for h in kept + tuple(fresh)}
                order = [q % self.partitions for q in range(cursor, cursor + self.partitions)]
                p = min(order, key=lambda q: (counts[q], q in mine, rows[q]))
                fresh.append(values.value(p, issued[p]))
                issued[p] += 1
                counts[p] += 1
                rows[p] += share
                cursor = p + 1
            homes[b] = kept + tuple(fresh)
        return Allocation(self.partitions, tuple(homes), tuple(issued),
                          cursor % self.partitions)

    def refine(self, buckets: list[int], sizes: dict[int, int] | None = None) -> Allocation:
        """Quadruple each bucket's sub-buckets. A row of sub-bucket s (hash mod k) goes to
        one of s, s + k, s + 2k, s + 3k (hash mod 4k): a quarter stays, the rest move to
        the 3k new sub-buckets."""
        return self._reallocated({b: (self.homes[b], 3 * self.k(b)) for b in buckets}, sizes)

    def consolidate(self, buckets: list[int], sizes: dict[int, int] | None = None
                    ) -> Allocation:
        """A quarter as many sub-buckets for each bucket, all freshly allocated."""
        return self._reallocated({b: ((), self.k(b) // 4) for b in buckets}, sizes)

    # -- SQL ---------------------------------------------------------------------------
    def _array(self, values: list[int]) -> str:
        return f"array({', '.join(map(str, values))})"

    def bucket_sql(self, keys: list[str]) -> str:
        """The bucket of a row from its (normalized, see hash_input) bucket columns."""
        return f"CAST(pmod(hash({', '.join(keys) or '0'}), {self.partitions}) AS INT)"

    def _tables(self) -> tuple[str, str, str]:
        """Every sub-bucket's home value, bucket after bucket; where each bucket's start;
        how many each bucket has: SQL arrays, indexed by the bucket."""
        starts, flat = [], []
        for hs in self.homes:
            starts.append(len(flat))
            flat.extend(hs)
        return (self._array(flat), self._array(starts),
                self._array([len(h) for h in self.homes]))

    def home_sql(self, keys: list[str], others: list[str]) -> str:
        """A row's home value from its bucket columns and the columns its sub-bucket hashes
        (xxhash64, not murmur3: independent of the bucket's hash)."""
        bucket = self.bucket_sql(keys)
        if not self.refined:
            return f"element_at({self._array([h[0] for h in self.homes])}, {bucket} + 1)"
        flat, starts, ks = self._tables()
        sub = (f"CAST(pmod(xxhash64({', '.join(others or keys) or '0'}), "
               f"element_at({ks}, {bucket} + 1)) AS INT)")
        return f"element_at({flat}, element_at({starts}, {bucket} + 1) + {sub} + 1)"

    def every_home_sql(self) -> str:
        """Every sub-bucket's home value, one row each (a row replicated to all of them)."""
        return f"explode({self._array([h for hs in self.homes for h in hs])})"

    def homes_sql(self, keys: list[str]) -> str:
        """The home values of every sub-bucket of the bucket that ``keys`` fall into: one
        value while the relation is not refined, else an array (to explode)."""
        bucket = self.bucket_sql(keys)
        if not self.refined:
            return f"element_at({self._array([h[0] for h in self.homes])}, {bucket} + 1)"
        flat, starts, ks = self._tables()
        return (f"slice({flat}, element_at({starts}, {bucket} + 1) + 1, "
                f"element_at({ks}, {bucket} + 1))")


def home_sql(layout: Layout, kinds: tuple[str, ...], allocation: Allocation,
             column: Callable[[int], str] = lambda i: f"c{i}") -> str:
    """A stored row's ``_sb`` as SQL text (storage.home_value): the home value of its
    sub-bucket from its bucket columns and the columns its sub-bucket hashes, each named
    by ``column``."""
    value = lambda i: hash_input(column(i), kinds[i])  # noqa: E731
    keys = [value(i) for i in (layout.key or layout.hashed)]
    others = [value(i) for i in layout.hashed] if layout.key else []
    return allocation.home_sql(keys, others)


def hash_input(expr: str, kind: str) -> str:
    """A value as the stored column holds it, for hashing: a long, or a double with -0.0
    made 0.0 (equal values must hash alike; NaN hashes as one value already)."""
    if kind == "float":
        return f"(CAST({expr} AS DOUBLE) + 0.0D)"
    return f"CAST({expr} AS BIGINT)"


@dataclass(frozen=True)
class Decision:
    """What one balance check did to a relation."""

    allocation: Allocation
    refined: int = 0  # buckets refined
    consolidated: int = 0  # buckets consolidated


def rebalance(allocation: Allocation, sizes: dict[int, int], ratio: float, min_rows: int,
              ) -> Decision:
    """Refinement and consolidation (§3.2) from the rows of each sub-bucket, by home value.

    A bucket whose heaviest sub-bucket holds more than ``ratio`` times the mean sub-bucket
    (and at least ``min_rows`` rows) gets four times as many sub-buckets, at most the first
    power of 4 that reaches the partition count (beyond it every partition already hosts
    one). When more than 60% of buckets have 4 or more sub-buckets, each bucket so refined
    whose heaviest sub-bucket would stay under the refinement bound with a quarter as many
    sub-buckets (4 x heaviest <= ratio x mean) gets a quarter as many; the paper says
    "below-average" buckets, and this reading keeps a consolidated bucket from being
    refined again at the next check.
    """
    total, count = sum(sizes.values()), allocation.sub_buckets
    if not total:
        return Decision(allocation)
    mean = total / count
    cap = 1
    while cap < allocation.partitions:
        cap *= 4
    heaviest = [max((sizes.get(h, 0) for h in hs), default=0) for hs in allocation.homes]
    refine = [b for b, top in enumerate(heaviest)
              if top > ratio * mean and top >= min_rows and allocation.k(b) < cap]
    many = sum(allocation.k(b) >= 4 for b in range(len(allocation.homes)))
    consolidate = []
    if many > 0.6 * len(allocation.homes):
        consolidate = [b for b, top in enumerate(heaviest)
                       if allocation.k(b) >= 4 and 4 * top <= ratio * mean and b not in refine]
    if not refine and not consolidate:
        return Decision(allocation)
    changed = allocation.refine(refine, sizes) if refine else allocation
    if consolidate:
        spread = dict(sizes)  # a refined bucket's rows, spread over its new sub-buckets
        for b in refine:
            held = sum(sizes.get(h, 0) for h in allocation.homes[b])
            spread.update({h: held / changed.k(b) for h in changed.homes[b]})
        changed = changed.consolidate(consolidate, spread)
    return Decision(changed, len(refine), len(consolidate))
