"""Where each relation is stored: its bucket columns, voted by the joins that read it.

A relation is hash-partitioned by its bucket columns (ir.nodes.Layout), so a join on
those columns needs no shuffle of the stored side and the delta that meets it moves
once. The pass runs on the plan lower() makes, before the secondary indexes
(rewrite/indexes.py), which serve the scans this placement does not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from sparklog.ir.nodes import OLD, Layout, Plan, Scan
from sparklog.lower import CONTRIBUTIONS
from sparklog.semantics.checks import Checked
from sparklog.syntax import nodes as n


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
            weight = 2 if kernel.delta is not None else 1
            for scan in (a, b):
                if scan is b and scan.version == OLD and scan.relation in sp.relations \
                        and scan.relation not in checked.lattices:
                    continue  # a lagging index serves it (rewrite/indexes.py)
                key = _positions(scan, shared)
                lattice = checked.lattices.get(scan.relation)
                if lattice is None or lattice.column not in key:
                    votes.setdefault(scan.relation, Counter())[key] += weight
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


def _positions(scan: Scan, variables: list[str]) -> tuple[int, ...]:
    names = [a.name if isinstance(a, n.Var) else None for a in scan.args]
    return tuple(names.index(v) for v in variables)
