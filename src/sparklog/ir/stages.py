"""Staged recursion: a recursive stratum whose rules only ever derive forward in a counter.

PageRank's ``rank(n, i)`` feeds ``share(t, i + 1)``, which feeds ``rank(t, i + 1)``: every
recursive rule reads its recursive atoms at one stage ``i`` (the same variable in the same
column of each) and derives a tuple at stage ``i`` or ``i + c``, ``c >= 0`` (Zaniolo's
XY-stratified programs have this shape). Then no tuple of a round is below the lowest stage
among the deltas of the round before, since each derivation reads one delta tuple and moves
its stage up or not at all; so the lowest delta stage never falls from round to round, and a
stored tuple below it can neither join a delta tuple (the stages are equated) nor equal a new
one. storage.Database retires the stored runs wholly below it: the stratum's joins and its
deduplication stop reading them, and later strata read every run as before.

:func:`stages` finds the stage column of each relation of a stratum, or none. Decided on
the plan's loop kernels, after every rewrite, so the $SUM contributions and the secondary
indexes that lowering and the index pass add are covered as the user's relations are.
"""

from __future__ import annotations

from collections.abc import Iterator

from sparklog.ir.nodes import AggregateJoin, AntiJoin, Kernel, Plan, Scan, StratumPlan, Total
from sparklog.syntax import nodes as n

# signed: an unsigned counter is stored as its 64-bit pattern, whose min and max are
# observed in signed order
INTEGER = ("number",)
_SEARCH = 100_000  # stage assignments tried at most (a stratum has a few relations)


def stages(sp: StratumPlan, plan: Plan) -> dict[str, int]:
    """The stage column of each relation the stratum's rounds store, or {} if it has none.

    A stage column holds integers and is not a lattice's dependent column; in every loop
    kernel, each read of the stratum's relations has the same variable ``v`` in its stage
    column, and the head's stage column is ``v`` or ``v + c`` with a constant ``c >= 0``,
    ``c > 0`` in one kernel at least (a column every rule keeps, the source of a closure,
    rarely lets a run retire).
    """
    relations = sp.relations
    if not sp.stratum.recursive or not sp.loop or any(k.delta is None for k in sp.loop):
        return {}
    if any(_reads_inside(k, set(relations)) for k in sp.loop):
        return {}
    candidates = {r: [i for i, kind in enumerate(plan.kinds[r])
                      if kind in INTEGER and i != plan.layouts[r].dependent]
                  for r in relations}
    if any(not c for c in candidates.values()):
        return {}
    reads = {id(k): _reads(k, set(relations)) for k in sp.loop}
    for tried, assignment in enumerate(_assignments(relations, candidates)):
        if tried >= _SEARCH:
            return {}
        offsets = [_forward(k, reads[id(k)], assignment) for k in sp.loop]
        if None not in offsets and any(offsets):
            return assignment
    return {}


def advances(sp: StratumPlan, assignment: dict[str, int]) -> dict[str, int]:
    """Per relation of a staged stratum, the least ``c`` of the loop kernels deriving it:
    a round's new tuples of it are at least ``c`` stages above the lowest delta stage the
    round reads, so a stored run wholly below that cannot hold one of them
    (Database.beneath: the combine step does not read it)."""
    if not assignment:
        return {}
    out: dict[str, int] = {}
    relations = set(sp.relations)
    for kernel in sp.loop:
        c = _forward(kernel, _reads(kernel, relations), assignment)
        if c is None:  # stages() found every kernel forward; be safe if one is not
            return {}
        out[kernel.relation] = min(c, out.get(kernel.relation, c))
    return out


def _assignments(relations: tuple[str, ...], candidates: dict[str, list[int]]
                 ) -> Iterator[dict[str, int]]:
    if not relations:
        yield {}
        return
    first, rest = relations[0], relations[1:]
    for column in candidates[first]:
        for tail in _assignments(rest, candidates):
            yield {first: column, **tail}


def _reads(kernel: Kernel, relations: set[str]) -> list[tuple[str, dict[int, n.Term]]]:
    """The kernel's reads of the stratum's relations: each read's term per column."""
    out = []
    for step in kernel.steps:
        if isinstance(step, Scan) and step.relation in relations:
            out.append((step.relation, dict(enumerate(step.args))))
        elif isinstance(step, Total) and step.relation in relations:
            out.append((step.relation, dict(zip(step.group, step.args))))
    return out


def _reads_inside(kernel: Kernel, relations: set[str]) -> bool:
    """Whether a negation or a body aggregate reads the stratum's relations (stratification
    forbids both; a rewrite that made one would not be staged)."""
    def inside(steps) -> bool:
        for step in steps:
            if isinstance(step, AntiJoin) and step.atom.relation in relations:
                return True
            if isinstance(step, AggregateJoin) and (
                    inside(step.body) or any(isinstance(s, Scan) and s.relation in relations
                                             for s in step.body)):
                return True
        return False
    return inside(kernel.steps)


def _forward(kernel: Kernel, reads: list[tuple[str, dict[int, n.Term]]],
             assignment: dict[str, int]) -> int | None:
    """``c`` if the kernel reads one stage ``v`` and derives at ``v + c``, else None."""
    names = set()
    for relation, terms in reads:
        term = terms.get(assignment[relation])
        if not isinstance(term, n.Var):
            return None
        names.add(term.name)
    if len(names) != 1:
        return None
    (v,) = names
    return _offset(kernel.head[assignment[kernel.relation]], v)


def _offset(term: n.Term, v: str) -> int | None:
    """``c`` if ``term`` is ``v`` or ``v + c`` (``c + v``) with an integer ``c >= 0``."""
    if isinstance(term, n.Var):
        return 0 if term.name == v else None
    if isinstance(term, n.BinOp) and term.op == "+":
        for var, const in ((term.left, term.right), (term.right, term.left)):
            if (isinstance(var, n.Var) and var.name == v and isinstance(const, n.Number)
                    and isinstance(const.value, int) and const.value >= 0):
                return const.value
    return None
