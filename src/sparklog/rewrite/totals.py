"""Totals read where they are summed: the rules of a stratum that read one of its
$SUM/$COUNT relations read the total of its contributions instead of its stored value.

lower.py stores a $SUM relation ``h`` in two steps: its rules derive contributions ``h@c``,
and a loop kernel sums the contributions of the keys a round changed into ``h``, one round
later. A rule reading ``h`` then fires a round after that: PageRank's ranks, then
contributions, then totals, then ranks, three rounds an iteration. Here each read of ``h``
in the stratum's loop reads ``h@c``:

- a delta read, the delta of ``h@c`` and the total of each of its keys (the Total step
  that ``h``'s own kernel runs);
- a full read, ``h@c`` summed per key (Scan.summed); an old read, the keys with no new
  contribution (their totals did not change in the last round).

Semi-naive evaluation stays exact: a key's total changes exactly when a contribution of
it is new. ``h`` is then summed once, after the stratum, in a stratum of its own, for the
outputs and later strata. PageRank takes two rounds an iteration. Options.inline_totals.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from sparklog.ir.nodes import (DELTA, FULL, AggregateJoin, AntiJoin, Kernel, Plan, Scan,
                               StratumPlan, Total)
from sparklog.semantics.strata import Stratum
from sparklog.syntax import nodes as n


class _Kept(Exception):
    """A read this pass does not rewrite: the stratum keeps its totals' kernels."""


def inline_totals(plan: Plan) -> Plan:
    """The plan with every stratum's totals read where they are summed (see the top)."""
    strata: list[StratumPlan] = []
    for sp in plan.strata:
        totals = {k.relation: k for k in sp.loop if _is_total(k)}
        if not totals:
            strata.append(sp)
            continue
        fresh = itertools.count()
        try:
            loop = tuple(_inlined(k, totals, fresh) for k in sp.loop if k.relation not in totals)
        except _Kept:
            strata.append(sp)
            continue
        kept = tuple(r for r in sp.stratum.relations if r not in totals)
        strata.append(replace(sp, stratum=Stratum(sp.stratum.index, kept, bool(loop)),
                              loop=loop))
        strata.append(StratumPlan(Stratum(sp.stratum.index, tuple(totals), False),
                                  tuple(_summed_once(k) for k in totals.values()), ()))
    numbered = [replace(sp, stratum=replace(sp.stratum, index=i)) for i, sp in enumerate(strata)]
    return replace(plan, strata=tuple(numbered))


def _is_total(kernel: Kernel) -> bool:
    """Whether the kernel is a total's (lower._total): delta of h@c, then its Total."""
    steps = kernel.steps
    return (len(steps) == 2 and isinstance(steps[0], Scan) and isinstance(steps[1], Total)
            and steps[0].version == DELTA and steps[1].relation == steps[0].relation)


def _columns(total: Kernel) -> list[tuple[str, int]]:
    """For each column of h, where it is in h@c: ("key", column) or ("value", column)."""
    scan, step = total.steps
    out = []
    for term in total.head:
        assert isinstance(term, n.Var), total
        if term.name == step.var:
            out.append(("value", step.value))
        else:
            out.append(("key", step.group[list(a.name for a in step.args).index(term.name)]))
    return out


def _inlined(kernel: Kernel, totals: dict[str, Kernel], fresh) -> Kernel:
    steps: list = []
    delta = kernel.delta
    for i, step in enumerate(kernel.steps):
        if isinstance(step, AntiJoin | AggregateJoin) and \
                replace(kernel, steps=(step,)).reads() & set(totals):
            raise _Kept  # stratification keeps a stratum's own relations out of these
        if not (isinstance(step, Scan) and step.relation in totals):
            steps.append(step)
            continue
        total = totals[step.relation]
        contributions = total.steps[0].relation
        width = len(total.steps[0].args)
        if step.version == DELTA:
            if i != 0 or delta != 0:
                raise _Kept
            steps += _delta_total(step, total, width, fresh)
            continue
        args: list[n.Term] = [n.Wildcard()] * width
        summed = None
        for term, (kind, column) in zip(step.args, _columns(total)):
            args[column] = term
            if kind == "value":
                summed = column
                if not isinstance(term, n.Var | n.Wildcard):
                    raise _Kept  # a total compared with a constant: read it stored
        steps.append(Scan(contributions, step.version, tuple(args), step.exists, summed))
    return replace(kernel, steps=tuple(steps))


def _delta_total(step: Scan, total: Kernel, width: int, fresh) -> list:
    """The delta of h@c and the total of each key it holds, read as ``step`` reads h."""
    scan_args: list[n.Term] = [n.Wildcard()] * width
    keys, group, value_var, seen = [], [], None, set()
    for term, (kind, column) in zip(step.args, _columns(total)):
        if isinstance(term, n.Wildcard):
            term = n.Var(f"@s{next(fresh)}")
        if not isinstance(term, n.Var) or term.name in seen:
            raise _Kept  # a constant or a repeated variable: read the stored totals
        seen.add(term.name)
        if kind == "value":
            value_var = term.name
            continue
        scan_args[column] = term
        keys.append(term)
        group.append(column)
    assert value_var is not None
    value = total.steps[1].value
    return [Scan(total.steps[0].relation, DELTA, tuple(scan_args)),
            Total(total.steps[0].relation, tuple(keys), tuple(group), value, value_var)]


def _summed_once(total: Kernel) -> Kernel:
    """``h(k.., t) <- h@c summed per key``: h's kernel in the stratum after."""
    scan, step = total.steps
    args = list(scan.args)
    args[step.value] = n.Var(step.var)
    return Kernel(total.relation, total.head,
                  (Scan(scan.relation, FULL, tuple(args), summed=step.value),), total.clause)
