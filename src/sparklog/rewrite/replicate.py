"""Small sides sent to the delta: a linear recursion placed by the columns its head keeps.

A left-linear closure ``tc(x, y) :- tc(x, z), edge(z, y).`` is placed by the join column
(layouts.py): the delta ``tc(x, z)`` meets the stored ``edge`` where it is, and every
derived ``tc(x, y)`` crosses the round's shuffle to the bucket of ``y``, deduplicated on
either side of it. Where the relations the recursion joins are computed by lower strata
(fixed while it runs) and few, placing the recursive relation by the columns its head
takes from its delta scan (``x``) and sending those relations to every sub-bucket of it
(translate._replicated) keeps each derived tuple where its delta row was: no derivation
crosses a shuffle, each round's are deduplicated where they are made, and the stored
copies the small side needs are the only rows moved. They are met by a hash join whose
other side streams the delta in its stored order, so a derived tuple's duplicates come
close together (grouped by ``x``) and the deduplication's hash table stays warm. This is
the broadcast of the base relation in a linear recursion (BigDatalog's plan for TC on
Spark), made with the round's one shuffle instead of a broadcast, so rounds stay planned
ahead and their plans rerun.

Applied to a set relation of a recursive stratum when (1) each of its loop kernels reads
its delta first and, after it, only relations of lower strata (positive scans, filters,
binds: no negation or aggregate), (2) some columns of the head hold the same variables
as the delta scan's same columns in every such kernel (those become the bucket), and (3)
nothing else in the stratum reads it. Sizes are not known here, so the caller says which
relations may be sent (Options.replicate_static; under "auto", the edges of closures whose
measured arcs times the partitions are few, Engine.replicable): the copies are the small
side times the sub-buckets, which pays where that side is small next to the rows its
rounds derive (a graph's edges next to its closure) and on few partitions.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace

from sparklog.defaults import REPLICATE_ROWS
from sparklog.ir.nodes import DELTA, Bind, Filter, Kernel, Plan, Scan
from sparklog.syntax import nodes as n


def replicate_static(plan: Plan, allowed: Collection[str] | None = None) -> Plan:
    """The plan with each relation that qualifies (above) placed by the columns its head
    keeps from its delta scan, and its joined relations marked as sent to its delta; with
    ``allowed``, only those whose joined relations are all in it."""
    layouts = dict(plan.layouts)
    for sp in plan.strata:
        if not sp.stratum.recursive:
            continue
        for relation in sp.stratum.relations:
            layout = layouts.get(relation)
            if layout is None or layout.lattice is not None or layout.index_of:
                continue
            mine = [k for k in sp.loop if k.relation == relation]
            others = [k for k in sp.loop + sp.preamble if k.relation != relation]
            if not mine or any(relation in k.reads() for k in others):
                continue
            sides = [_static_sides(k, relation, set(sp.relations)) for k in mine]
            if any(s is None for s in sides) or allowed is not None and any(
                    not s <= set(allowed) for s in sides):
                continue
            kept = set.intersection(*(_kept_columns(k) for k in mine))
            if not kept:
                continue
            layouts[relation] = replace(layout, key=tuple(sorted(kept)), replicated=tuple(
                sorted(set().union(*sides))))
    return replace(plan, layouts=layouts)


def sendable(choice: str, shapes: Mapping[str, tuple[int, ...]], partitions: int,
             bound: int = REPLICATE_ROWS) -> bool | frozenset[str]:
    """What :func:`replicate_static` may send under the option ``choice``: every relation
    ("on"), none ("off"), or ("auto") the edge relations auto measured (``shapes``: arcs
    first) whose copies a round, arcs times ``partitions``, are at most ``bound``.

    >>> sorted(sendable("auto", {"edge": (25_571, 1_005), "big": (900_000, 10)}, 2))
    ['edge']
    >>> sendable("on", {}, 2), sendable("off", {"edge": (10, 5)}, 2)
    (True, False)
    """
    if choice != "auto":
        return choice == "on"
    return frozenset(edge for edge, (arcs, *_) in shapes.items() if arcs * partitions <= bound)


def _static_sides(kernel: Kernel, relation: str, stratum: set[str]) -> set[str] | None:
    """The relations the kernel joins to its delta scan of ``relation``, if it has the
    shape: that scan first, then positive scans of lower strata' relations sharing a
    variable with what came before, filters and binds; else None."""
    steps = kernel.steps
    if kernel.delta != 0 or not isinstance(steps[0], Scan) or steps[0].relation != relation \
            or steps[0].version != DELTA or steps[0].exists:
        return None
    bound = {a.name for a in steps[0].args if isinstance(a, n.Var)}
    sides: set[str] = set()
    for step in steps[1:]:
        if isinstance(step, Bind):
            bound.add(step.var)
            continue
        if isinstance(step, Filter):
            continue
        if not isinstance(step, Scan) or step.relation in stratum or step.exists \
                or step.summed is not None:
            return None
        names = {a.name for a in step.args if isinstance(a, n.Var)}
        if not names & bound:
            return None  # a cross join: nothing to meet the delta rows on
        bound |= names
        sides.add(step.relation)
    return sides or None


def _kept_columns(kernel: Kernel) -> set[int]:
    """The columns where the head holds the variable its delta scan holds there."""
    scan = kernel.steps[0]
    assert isinstance(scan, Scan)
    return {i for i, (h, a) in enumerate(zip(kernel.head, scan.args))
            if isinstance(h, n.Var) and isinstance(a, n.Var) and h.name == a.name}
