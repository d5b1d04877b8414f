"""Where each relation is stored: its bucket columns, voted by the joins that read it.

A relation is hash-partitioned by its bucket columns (ir.nodes.Layout), so a join on
those columns needs no shuffle of the stored side and the delta that meets it moves
once. The pass runs on the plan lower() makes, before the secondary indexes
(rewrite/indexes.py), which serve the scans this placement does not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from sparklog.ir.nodes import OLD, Filter, Kernel, Layout, Plan, Scan
from sparklog.lower import CONTRIBUTIONS
from sparklog.semantics.checks import Checked
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import variables


def place(plan: Plan, checked: Checked) -> Plan:
    """The plan with a layout for every relation it stores.

    A loop kernel joins its delta scan with the next scan on their shared variables; both
    relations want those columns as their bucket key, in the same variable order, so the
    join is partition-local and the delta needs no shuffle. A scan of a set relation's
    ``old`` version within its own stratum does not vote: an index one round behind the
    relation serves it (rewrite/indexes.py), so the relation's own placement goes to the
    scans of its ``full`` version. A lattice relation is never bucketed on its dependent
    column (Layout), so a key that names it gets no vote. A $SUM/$COUNT relation's
    contributions (lower.CONTRIBUTIONS) are placed by the total's key columns.
    """
    votes: dict[str, Counter] = {name: Counter() for name in checked.kinds}
    for sp in plan.strata:
        for kernel in sp.loop + sp.preamble:
            scans = kernel.scans()
            if len(scans) < 2:
                continue
            a, b = scans[0], scans[1]
            shared = [v.name for v in a.args if isinstance(v, n.Var)
                      and v.name in {w.name for w in b.args if isinstance(w, n.Var)}]
            shared = list(dict.fromkeys(shared))
            if not shared:
                continue
            for scan in (a, b):
                if scan is b and scan.version == OLD and scan.relation in sp.relations \
                        and scan.relation not in checked.lattices:
                    continue  # a lagging index serves it (rewrite/indexes.py)
                key = _positions(scan, shared)
                lattice = checked.lattices.get(scan.relation)
                if lattice is None or lattice.column not in key:
                    votes.setdefault(scan.relation, Counter())[key] += _weight(kernel, scan)
    layouts = {}
    for name, kinds in checked.kinds.items():
        lattice = checked.lattices.get(name)
        dependent = lattice.column if lattice is not None else None
        first = [i for i in range(len(kinds)) if i != dependent][:1]
        key = votes[name].most_common(1)[0][0] if votes[name] else tuple(first)
        how = None if lattice is None else f"user:{lattice.user}" if lattice.user else lattice.func
        layouts[name] = Layout(name, len(kinds), key, dependent=dependent, lattice=how)
    for name, kinds in plan.kinds.items():
        if name not in checked.kinds and name.endswith(CONTRIBUTIONS):
            width = len(checked.kinds[name[:-len(CONTRIBUTIONS)]]) - 1  # the total's key
            layouts[name] = Layout(name, len(kinds), (0,) if width else (),
                                   dependent=len(kinds) - 1, lattice="contribution",
                                   detail=tuple(range(width, len(kinds) - 1)))
    return replace(plan, layouts=layouts)


def _weight(kernel: Kernel, scan: Scan) -> int:
    """What placing ``scan``'s join columns as its relation's bucket saves: the rows it
    would otherwise shuffle each round, guessed from the plan alone. A loop kernel's
    stored side (``full``, ``old``) holds at least its delta's rows and is read every
    round: 4; its delta: 1; a preamble's scans (read once): 1 each. A scan that a filter
    over its own variables alone narrows (Smart's ``l1`` a power of two) moves fewer
    rows: half."""
    if kernel.delta is None:
        return 1
    weight = 1 if scan is kernel.steps[kernel.delta] else 4
    own = {a.name for a in scan.args if isinstance(a, n.Var)}
    if any(isinstance(s, Filter) and (v := variables(*_literal_terms(s.literal)))
           and v <= own for s in kernel.steps):
        weight = max(1, weight // 2)
    return weight


def _literal_terms(literal) -> tuple:
    if isinstance(literal, n.Comparison):
        return (literal.left, literal.right)
    if isinstance(literal, n.Constraint):
        return literal.args
    return ()


def _positions(scan: Scan, variables: list[str]) -> tuple[int, ...]:
    names = [a.name if isinstance(a, n.Var) else None for a in scan.args]
    return tuple(names.index(v) for v in variables)
