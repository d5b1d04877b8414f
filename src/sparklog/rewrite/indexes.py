"""Secondary indexes: one stored copy of a relation per access pattern, so a round never
reshuffles a stored side.

A relation is stored placed by its bucket columns (rewrite/layouts.py). A kernel that reads it
as an inner side keyed on other columns would make Spark shuffle every stored row of it,
every round: nonlinear transitive closure reads ``tc`` both by its first column and by its
second. As in the paper's engine and in Soufflé, the relation then gets a second stored copy
placed by the columns that join reads, and the scan reads that copy; only the outer rows
move (translate._homes), or nothing at all when the outer side is placed alike.

Two kinds, both set relations (a lattice relation's stored value changes in place):

- a *static* index (``r@k1``) of a relation of a lower stratum, complete before the stratum
  that reads it starts: built once from it, when a kernel first reads it
  (storage.Database.view), one shuffle of its rows;
- a *lagging* index (``r@o1``) of a relation of the reading stratum itself, for the scans of
  its ``old`` version (full without the last round's delta). It is one more relation of the
  stratum, whose only kernel copies the relation's delta each round (``r@o1(..) :- Δr(..)``,
  spark/combine.AppendCombine: no deduplication, the delta's tuples are new): it therefore
  holds, at every round, ``full`` as it was one round earlier, which is exactly ``old``. Each
  new tuple crosses one more shuffle, to the index's placement; no stored row moves. Scans of
  the ``full`` version of a relation of the same stratum are left alone: the layout vote
  (rewrite/layouts.py) gives the relation's own placement to those.

The pass runs on the plan lower() makes; ``Options.indexes`` (``--indexes on|off``) chooses
the plan with or without it.
"""

from __future__ import annotations

from dataclasses import replace

from sparklog.ir.nodes import (DELTA, FULL, OLD, AggregateJoin, Bind, Kernel, Layout, Plan, Scan,
                               StratumPlan)
from sparklog.syntax import nodes as n

STATIC, LAGGING = "@k", "@o"  # an index's name: relation, kind, its bucket columns


def add_indexes(plan: Plan) -> Plan:
    """The plan with every inner scan that its relation's placement does not serve reading
    an index placed for it, and the indexes' layouts (and, for lagging ones, kernels)."""
    stratum_of = {r: i for i, sp in enumerate(plan.strata) for r in sp.relations}
    layouts, kinds = dict(plan.layouts), dict(plan.kinds)
    strata = []
    for si, sp in enumerate(plan.strata):
        lagging: dict[str, Kernel] = {}

        def index_for(scan: Scan, bound: set[str], first: Scan | None) -> Scan:
            layout = layouts.get(scan.relation)
            if layout is None or layout.lattice is not None or layout.index_of is not None:
                return scan
            if not layout.key or all(_bound(scan.args[i], bound) for i in layout.key):
                return scan  # its own placement serves it: the outer rows go to it
            key = _key(scan, bound, first, layouts)
            if not key:
                return scan
            home = stratum_of.get(scan.relation, -1)
            if home < si:
                kind = STATIC
            elif home == si and scan.version == OLD:
                kind = LAGGING
            else:
                return scan
            name = f"{scan.relation}{kind}{'_'.join(map(str, key))}"
            if name not in layouts:
                layouts[name] = Layout(name, layout.arity, key, index_of=scan.relation,
                                       lagging=kind == LAGGING)
                kinds[name] = kinds[scan.relation]
            if kind == LAGGING and name not in lagging:
                lagging[name] = _copy_kernel(name, scan.relation, layout.arity)
            return Scan(name, FULL, scan.args, scan.exists)

        preamble = tuple(_rewrite(k, index_for) for k in sp.preamble)
        loop = tuple(_rewrite(k, index_for) for k in sp.loop)
        strata.append(StratumPlan(sp.stratum, preamble, loop + tuple(lagging.values()),
                                  tuple(lagging)))
    return replace(plan, strata=tuple(strata), layouts=layouts, kinds=kinds)


def _bound(arg: n.Term, bound: set[str]) -> bool:
    return arg.name in bound if isinstance(arg, n.Var) else not isinstance(arg, n.Wildcard)


def _key(scan: Scan, bound: set[str], first: Scan | None, layouts: dict[str, Layout]
         ) -> tuple[int, ...]:
    """The index's bucket columns: the scan's columns holding variables bound before it
    (each variable's first column), in the order of the first scan's bucket columns when
    those hold the same variables (the join is then partition-local), else in column order."""
    positions: dict[str, int] = {}
    for i, arg in enumerate(scan.args):
        if isinstance(arg, n.Var) and arg.name in bound and arg.name not in positions:
            positions[arg.name] = i
    if first is not None and first.relation in layouts:
        names = [first.args[i].name if isinstance(first.args[i], n.Var) else None
                 for i in layouts[first.relation].key]
        if set(names) == set(positions) and len(names) == len(positions):
            return tuple(positions[v] for v in names)
    return tuple(sorted(positions.values()))


def _rewrite(kernel: Kernel, index_for) -> Kernel:
    """The kernel with its inner scans (each after the first) reading the index that
    ``index_for`` gives them. Scans inside aggregate bodies are left as they are."""
    bound: set[str] = set()
    first: Scan | None = None
    steps = []
    for step in kernel.steps:
        if isinstance(step, Scan):
            if first is None and not step.exists:
                first = step
            elif bound:
                step = index_for(step, bound, first)
            bound |= {a.name for a in step.args if isinstance(a, n.Var)}
        elif isinstance(step, Bind):
            bound.add(step.var)
        elif isinstance(step, AggregateJoin):
            bound.add(step.var)
        steps.append(step)
    return replace(kernel, steps=tuple(steps))


def _copy_kernel(name: str, relation: str, arity: int) -> Kernel:
    """``name(x0, ..) :- Δrelation(x0, ..)``: a lagging index's kernel."""
    args = tuple(n.Var(f"@x{i}") for i in range(arity))
    clause = n.Clause(n.Atom(name, args), (n.Atom(relation, args),))
    return Kernel(name, args, (Scan(relation, DELTA, args),), clause, 0)
