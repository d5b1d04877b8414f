"""Checked AST -> relational-algebra plan: kernels per clause, semi-naive variants, layouts."""

from __future__ import annotations

import itertools
from collections import Counter

from sparklog.ir.nodes import (DELTA, FULL, OLD, AggregateJoin, AntiJoin, Bind, Filter, Kernel,
                               Layout, Plan, Scan, Step, StratumPlan)
from sparklog.semantics.checks import Checked, bound_variables
from sparklog.semantics.strata import walk_term
from sparklog.syntax import nodes as n

_CONSTANTS = n.Number | n.Float | n.String


def lower(checked: Checked) -> Plan:
    """Build the plan: kernels for every stratum, then a layout for every relation."""
    fresh = itertools.count()
    strata = []
    for stratum in checked.strata:
        preamble, loop = [], []
        for clause in checked.program.clauses:
            if clause.head.relation not in stratum.relations or clause.is_fact:
                continue
            body = _normalize(clause.body, fresh)
            recursive = [i for i, lit in enumerate(body)
                         if isinstance(lit, n.Atom) and lit.relation in stratum.relations]
            if not recursive:
                preamble.append(_kernel(clause, body, {}, None))
            for j, pos in enumerate(recursive):
                versions = {p: (OLD if k < j else FULL) for k, p in enumerate(recursive)}
                versions[pos] = DELTA
                loop.append(_kernel(clause, body, versions, pos))
        strata.append(StratumPlan(stratum, tuple(preamble), tuple(loop)))
    layouts = _layouts(checked, strata)
    return Plan(tuple(strata), layouts, checked.kinds)


def _normalize(body: tuple[n.Literal, ...], fresh: itertools.count) -> list[n.Literal]:
    """Give every expression argument of a positive atom a fresh variable and a filter."""
    out: list[n.Literal] = []
    extra: list[n.Literal] = []
    for lit in body:
        if isinstance(lit, n.Atom):
            args = []
            for arg in lit.args:
                if isinstance(arg, n.Var | n.Wildcard | _CONSTANTS):
                    args.append(arg)
                else:
                    var = n.Var(f"@e{next(fresh)}", arg.span)
                    args.append(var)
                    extra.append(n.Comparison("=", var, arg, arg.span))
            out.append(n.Atom(lit.relation, tuple(args), lit.span))
        else:
            out.append(lit)
    return out + extra


def _kernel(clause: n.Clause, body: list[n.Literal], versions: dict[int, str],
            delta: int | None) -> Kernel:
    steps = _order(body, versions, delta, set())
    delta_step = next((i for i, s in enumerate(steps) if isinstance(s, Scan) and s.version == DELTA),
                      None)
    return Kernel(clause.head.relation, clause.head.args, tuple(steps), clause, delta_step)


def _order(body: list[n.Literal], versions: dict[int, str], first: int | None,
           outer: set[str]) -> list[Step]:
    """Scans in join order (delta first, then the most connected), other steps when ready."""
    atoms = [i for i, lit in enumerate(body) if isinstance(lit, n.Atom)]
    pending = [lit for lit in body if not isinstance(lit, n.Atom)]
    all_bound = bound_variables(body, outer)
    bound, steps = set(outer), []
    while atoms:
        if not any(isinstance(s, Scan) for s in steps):
            pick = first if first is not None else atoms[0]
        else:
            pick = max(atoms, key=lambda i: (len(_atom_vars(body[i]) & bound), -atoms.index(i)))
        atoms.remove(pick)
        atom = body[pick]
        steps.append(Scan(atom.relation, versions.get(pick, FULL), atom.args))
        bound |= _atom_vars(atom)
        pending = _place(pending, bound, all_bound, steps)
    while pending:  # bindings that only depend on each other's results
        before = len(pending)
        pending = _place(pending, bound, all_bound, steps)
        assert len(pending) < before, pending  # checks guarantee groundedness
    return steps


def _atom_vars(atom: n.Atom) -> set[str]:
    return {a.name for a in atom.args if isinstance(a, n.Var)}


def _place(pending: list[n.Literal], bound: set[str], all_bound: set[str],
           steps: list[Step]) -> list[n.Literal]:
    """Append every pending literal whose inputs are bound; return the rest."""
    progress = True
    while progress:
        progress, rest = False, []
        for lit in pending:
            step = _ready(lit, bound, all_bound)
            if step is None:
                rest.append(lit)
                continue
            steps.append(step)
            if isinstance(step, Bind | AggregateJoin):
                bound.add(step.var)
            progress = True
        pending = rest
    return pending


def _ready(lit: n.Literal, bound: set[str], all_bound: set[str]) -> Step | None:
    match lit:
        case n.Negation(atom=atom):
            return AntiJoin(atom) if _vars(*atom.args) <= bound else None
        case n.Comparison(op="=", left=left, right=right):
            for var, other in ((left, right), (right, left)):
                if isinstance(var, n.Var) and var.name not in bound:
                    if isinstance(other, n.Aggregate):
                        return _aggregate(var.name, other, bound, all_bound)
                    return Bind(var.name, other) if _vars(other) <= bound else None
            return Filter(lit) if _vars(left, right) <= bound else None
        case n.Comparison() | n.Constraint():
            terms = (lit.left, lit.right) if isinstance(lit, n.Comparison) else lit.args
            return Filter(lit) if _vars(*terms) <= bound else None
        case n.BoolLit():
            return Filter(lit)
        case _:
            raise AssertionError(lit)


def _aggregate(var: str, agg: n.Aggregate, bound: set[str], all_bound: set[str]
               ) -> AggregateJoin | None:
    inner = set().union(*(_atom_vars(a) for a in agg.body if isinstance(a, n.Atom)))
    used = _vars(*(t for lit in agg.body if not isinstance(lit, n.Atom) for t in _terms(lit)))
    if agg.target is not None:
        used |= _vars(agg.target)
    correlated = tuple(sorted((used - inner) & all_bound))
    group = tuple(sorted((inner & all_bound) | set(correlated)))
    if not set(group) <= bound:
        return None
    body = list(agg.body)
    steps = _order(body, {}, None, set(correlated))
    return AggregateJoin(var, agg, group, tuple(steps), correlated)


def _terms(lit: n.Literal) -> tuple[n.Term, ...]:
    match lit:
        case n.Comparison(left=left, right=right):
            return (left, right)
        case n.Constraint(args=args):
            return args
        case n.Negation(atom=atom):
            return atom.args
    return ()


def _vars(*terms: n.Term) -> set[str]:
    out = set()
    for term in terms:
        out |= {t.name for t in walk_term(term) if isinstance(t, n.Var)}
    return out


def _layouts(checked: Checked, strata: list[StratumPlan]) -> dict[str, Layout]:
    """Bucket columns per relation, voted by the joins its stored versions take part in.

    A loop kernel joins its delta scan with the next scan on their shared variables; both
    relations want those columns as their bucket key, in the same variable order, so the
    join is partition-local and the delta needs no shuffle.
    """
    votes: dict[str, Counter] = {name: Counter() for name in checked.kinds}
    for sp in strata:
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
            votes[a.relation][_positions(a, shared)] += weight
            votes[b.relation][_positions(b, shared)] += weight
    layouts = {}
    for name, kinds in checked.kinds.items():
        key = votes[name].most_common(1)[0][0] if votes[name] else tuple(range(min(1, len(kinds))))
        layouts[name] = Layout(name, len(kinds), key)
    return layouts


def _positions(scan: Scan, variables: list[str]) -> tuple[int, ...]:
    names = [a.name if isinstance(a, n.Var) else None for a in scan.args]
    return tuple(names.index(v) for v in variables)
