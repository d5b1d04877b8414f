"""Benchmark workloads: edge lists for transitive closure, with their expected sizes.

Every workload is a plain Python list of ``(src, dst)`` integer pairs, plus the number of
distinct pairs its transitive closure must have, so every system's answer can be checked.

* ``chain(n)``: ``0 -> 1 -> ... -> n``, ``n`` edges; TC has ``n(n+1)/2`` pairs and linear
  semi-naive evaluation needs ``n`` rounds.
* ``tree_down(D)`` / ``tree_up(D)``: a complete binary tree with ``D`` levels in heap
  numbering from 1 (children of ``k`` are ``2k`` and ``2k+1``; nodes ``1 .. 2^D - 1``).
  "down" edges go parent -> child, "up" edges child -> parent. Each node at depth ``d``
  (root: 0) reaches (down) / is reached by (up) its ``d`` ancestors, so TC has
  ``sum_d d * 2^d = D*2^D - 2*(2^D - 1)`` pairs, and ``D - 1`` rounds of derivation.
  Both are DAGs, so the path-enumerating SQL ``WITH RECURSIVE`` peer terminates on them.
"""

from __future__ import annotations

from dataclasses import dataclass

Edge = tuple[int, int]


def chain(n: int) -> list[Edge]:
    """``n`` edges ``i -> i+1`` for ``i`` in ``0 .. n-1``."""
    return [(i, i + 1) for i in range(n)]


def chain_tc_size(n: int) -> int:
    return n * (n + 1) // 2


def tree_down(levels: int) -> list[Edge]:
    """Binary tree with ``levels`` levels, parent -> child, heap numbering from 1."""
    return [(k // 2, k) for k in range(2, 2**levels)]


def tree_up(levels: int) -> list[Edge]:
    """Binary tree with ``levels`` levels, child -> parent, heap numbering from 1."""
    return [(k, k // 2) for k in range(2, 2**levels)]


def tree_tc_size(levels: int) -> int:
    return levels * 2**levels - 2 * (2**levels - 1)


@dataclass(frozen=True)
class Workload:
    name: str  # e.g. "chain:200"
    edges: list[Edge]
    expected_tc: int  # distinct (x, y) pairs in tc
    depth: int  # longest path length in edges (bounds recursion levels)
    is_dag: bool


KINDS = ("chain", "tree-down", "tree-up")


def make(spec: str) -> Workload:
    """Build a workload from ``kind:size`` (``chain:200``, ``tree-down:12``, ``tree-up:12``)."""
    kind, sep, size_text = spec.partition(":")
    if not sep:
        raise ValueError(f"workload {spec!r}: expected KIND:SIZE with KIND one of {KINDS}")
    try:
        size = int(size_text)
    except ValueError:
        raise ValueError(f"workload {spec!r}: size {size_text!r} is not an integer") from None
    if size < 1:
        raise ValueError(f"workload {spec!r}: size must be >= 1")
    if kind == "chain":
        return Workload(spec, chain(size), chain_tc_size(size), size, True)
    if kind == "tree-down":
        return Workload(spec, tree_down(size), tree_tc_size(size), size - 1, True)
    if kind == "tree-up":
        return Workload(spec, tree_up(size), tree_tc_size(size), size - 1, True)
    raise ValueError(f"workload {spec!r}: unknown kind {kind!r}; expected one of {KINDS}")


def reference_tc_size(edges: list[Edge]) -> int:
    """Distinct TC pairs computed in plain Python (for self-checks on small inputs)."""
    succ: dict[int, set[int]] = {}
    for s, d in edges:
        succ.setdefault(s, set()).add(d)
    total = 0
    for start in list(succ):
        seen: set[int] = set()
        stack = list(succ[start])
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(succ.get(v, ()))
        total += len(seen)
    return total


# --------------------------------------------------------------------------------------
# programs: many small strata and rounds (benchmarks/programs.py)
# --------------------------------------------------------------------------------------

# Ten strata around a 300-round counter, every relation under 1,000 tuples: non-recursive
# joins, two negations, two aggregates and a second recursion (40 rounds over a chain).
# Soufflé evaluates it in milliseconds; for sparklog every round and stratum costs Spark's
# fixed price of planning and scheduling a job (issue 9, item 6).
STRATA10 = """\
.decl n(x:number)
n(0).
n(x + 1) :- n(x), x < 300.

.decl even(x:number)
even(x) :- n(x), x % 2 = 0.

.decl odd(x:number)
odd(x) :- n(x), !even(x).

.decl pair(x:number, y:number)
pair(x, y) :- even(x), odd(y), y = x + 1.

.decl square(x:number, y:number)
square(x, x * x) :- pair(x, _), x < 30.

.decl total(s:number)
total(s) :- s = sum x : even(x).

.decl edge(x:number, y:number)
edge(x, y) :- pair(x, y), x < 40.
edge(y, y + 1) :- pair(x, y), x < 40.

.decl reach(x:number, y:number)
reach(x, y) :- edge(x, y).
reach(x, z) :- reach(x, y), edge(y, z).

.decl far(x:number)
far(x) :- reach(0, x), !square(x, _).

.decl summary(a:number, b:number, c:number)
.output summary
summary(a, b, c) :- total(a), b = count : far(_), c = count : reach(_, _).
"""


@dataclass(frozen=True)
class ProgramWorkload:
    name: str
    text: str
    output: str  # the relation checked
    expected: frozenset[tuple[int, ...]]
    counter: int  # the stratum whose loop rounds are timed one by one


def strata10_expected() -> frozenset[tuple[int, ...]]:
    """summary: the sum of the even numbers to 300; of reach(0, x) for x in 1..40, those
    that are not an even number below 30 (2..28: 14 of them); the pairs of a 41-node chain."""
    return frozenset({(sum(range(0, 301, 2)), 40 - 14, 40 * 41 // 2)})


# Four mutually recursive relations whose rules join up to five atoms on the same
# variable, as Soufflé's own test programs and program analyses do: a value climbs from a
# to d in four rounds, then the next value starts. Every join is on the relations' bucket
# column, so a round needs no shuffle but the new tuples' own (translate._scan keeps the
# rows' placement through a chain of such joins).
MUTUAL4 = """\
.decl n(x:number)
n(0).
n(x + 1) :- n(x), x < 25.

.decl a(x:number)
.decl b(x:number)
.decl c(x:number)
.decl d(x:number)
a(0).
b(x) :- a(x), n(x).
c(x) :- b(x), a(x), n(x).
d(x) :- c(x), b(x), a(x), n(x).
a(y) :- d(x), c(x), b(x), a(x), n(x), y = x + 1, n(y).

.decl summary(c:number, s:number)
.output summary
summary(c, s) :- c = count : d(_), s = sum x : d(x).
"""

PROGRAMS = {"strata10": ProgramWorkload("strata10", STRATA10, "summary", strata10_expected(), 0),
            "mutual4": ProgramWorkload("mutual4", MUTUAL4, "summary",
                                       frozenset({(26, sum(range(26)))}), 1)}
