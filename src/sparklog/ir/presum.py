"""Contributions summed before they are stored: a ``$SUM`` whose contributions are each
derived once keeps one row per key and round instead of one per contribution.

lower.py stores a ``$SUM`` relation ``h`` as its contributions ``h@c``, one row per
contributing body tuple, so that a contribution derived again (its value read from a
lattice value that improved) replaces its old value instead of adding to it. PageRank's
``share(t, i + 1, $SUM(r / d)) :- rank(f, i, r), degree(f, d), edge(f, t)`` stores every
edge's share, iteration after iteration (240,842 rows an iteration on R-MAT 14), where the
totals need 12,513.

No contribution is ever derived twice when (1) each loop kernel of ``h@c`` reads one
relation of its stratum, as a delta scan (its other atoms are lower strata's: sets, or one
row per key), so a round derives each body tuple once; and (2) no key of a lattice
relation it reads improves twice, so no round derives a body tuple an earlier round
derived. A ``$SUM`` read in its own stratum is read as the delta of its contributions and
the total of each key the delta holds (rewrite/totals.py): that is one read, so a ``$SUM``
a stage above its own value (walks counted by length) or another's is presummed too. A
total read so changes whenever its key gains a contribution, a new row that the read
``$SUM``'s combine step does not count as raised (unless it is presummed as well), so the
presummed relation itself is guarded then: deriving again from a changed total adds to a
key it summed in an earlier round. Then a round's contributions of a key can be summed
before they are stored, the sum added to the key's stored sum: one row per key whose
identity columns hold a marker (clause ``-1``, zeros), summed inside each partition before
the round's shuffle as a combiner does (translate.kernel_query) and after it in the
combine step (combine.LatticeCombine, ``accumulate``).

(1) is decided here, from the plan. (2) is a fact about the data: each such lattice
relation is *guarded*, its combine step counting the keys that improve a stored value
(``raised``); a round that raises one stops the run, which Engine.run then evaluates again
without presumming (PresumRefuted). Only staged strata (ir/stages.py) whose contributions
move up at least one stage are presummed: there each stage's contributions arrive in one
round, and a rank computed once is the rule, so the guard is not expected to stop a run.
Options.presum.
"""

from __future__ import annotations

from sparklog.ir.nodes import DELTA, Kernel, Plan, Scan, StratumPlan, Total
from sparklog.ir.stages import advances, stages
from sparklog.lower import CONTRIBUTIONS
from sparklog.syntax import nodes as n

MARKER = -1  # the clause column of a presummed row (a clause's own contributions hold j >= 0)


class PresumRefuted(Exception):
    """A guarded lattice relation improved keys it held: a contribution read from one of
    them may have been summed with its old value, so the run is evaluated again without
    presumming (Engine.run)."""

    def __init__(self, relation: str, keys: int, iteration: int) -> None:
        super().__init__(f"{relation}: {keys} key(s) improved again in round {iteration}")
        self.relation, self.keys, self.iteration = relation, keys, iteration


def presummed(sp: StratumPlan, plan: Plan) -> dict[str, tuple[str, ...]]:
    """Per ``$SUM`` contributions relation of the stratum whose contributions are summed
    before they are stored, the lattice relations its loop kernels read (to be guarded)."""
    staged = stages(sp, plan)
    if not staged:
        return {}
    moved = advances(sp, staged)
    relations = set(sp.relations)
    out: dict[str, tuple[str, ...]] = {}
    for relation in sp.stratum.relations:
        if not _is_sum_contributions(relation, plan) or moved.get(relation, 0) < 1:
            continue
        kernels = [k for k in sp.loop if k.relation == relation]
        reads = [_one_read(k, relations) for k in kernels]
        if not kernels or None in reads:
            continue
        guards = {r for r in reads if plan.layouts[r].lattice is not None}
        if any(plan.layouts[r].lattice == "contribution" for r in reads):
            # a $SUM's total gains with every new contribution row of its key, which its
            # own combine step does not count as raised (unless it is presummed too):
            # summed again, what was summed from the old total would stay. Each such
            # round adds to a key of this relation that a round before summed: guarded
            guards.add(relation)
        out[relation] = tuple(sorted(guards))
    return out


def guarded(presums: dict[str, tuple[str, ...]]) -> set[str]:
    """The lattice relations whose keys must not improve twice while presumming."""
    return {r for sources in presums.values() for r in sources}


def _is_sum_contributions(relation: str, plan: Plan) -> bool:
    if not relation.endswith(CONTRIBUTIONS) or relation not in plan.layouts:
        return False
    total = plan.layouts.get(relation[:-len(CONTRIBUTIONS)])
    return plan.layouts[relation].lattice == "contribution" and total is not None \
        and total.lattice == "sum"


def _one_read(kernel: Kernel, relations: set[str]) -> str | None:
    """The one relation of the stratum the kernel reads, as its delta scan; None if it
    reads the stratum otherwise (a second atom, a total). A negation or an aggregate over
    the stratum never gets here: such a stratum is not staged (ir/stages.py)."""
    if kernel.delta is None:
        return None
    delta = kernel.steps[kernel.delta]
    if not isinstance(delta, Scan) or delta.version != DELTA or delta.summed is not None:
        return None
    others = kernel.steps[:kernel.delta] + kernel.steps[kernel.delta + 1:]
    if any(isinstance(s, Scan | Total) and s.relation in relations
           and not _own_total(s, delta) for s in others):
        return None
    return delta.relation


def _own_total(step: Scan | Total, delta: Scan) -> bool:
    """Whether ``step`` is the total of each key the delta scan read (rewrite/totals.py
    reads a $SUM's delta so): part of that one read, not a second one."""
    return isinstance(step, Total) and step.relation == delta.relation and all(
        isinstance(delta.args[g], n.Var) and delta.args[g].name == a.name
        for g, a in zip(step.group, step.args))
