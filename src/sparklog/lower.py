"""Checked AST -> relational-algebra plan: kernels per clause and their semi-naive variants.

Where each relation is stored is chosen after, by the plan passes of rewrite/."""

from __future__ import annotations

import itertools
from collections import Counter

from sparklog.ir.nodes import (DELTA, FULL, OLD, AggregateJoin, AntiJoin, Bind, Filter, Kernel,
                               Plan, Scan, Step, StratumPlan, Total)
from sparklog.semantics.checks import Checked, injected, term_kind
from sparklog.semantics.lattices import contribution
from sparklog.semantics.strata import Stratum
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import aggregates, body_variables, literal_terms, variables

_CONSTANTS = n.Number | n.Float | n.String
_AGGREGATE = "@a"  # prefix of the fresh variable an aggregate hoisted out of a term binds


def lower(checked: Checked) -> Plan:
    """Build the plan: kernels for every stratum, then a layout for every relation."""
    fresh = itertools.count()
    strata, contributions = [], {}
    rules: dict[str, list[n.Clause]] = {}  # by head relation, in the program's order
    order = {id(c): i for i, c in enumerate(checked.program.clauses)}
    for clause in checked.program.clauses:
        if not clause.is_fact:
            rules.setdefault(clause.head.relation, []).append(clause)
    for stratum in checked.strata:
        preamble, loop = [], []
        clauses = sorted((c for r in stratum.relations for c in rules.get(r, ())),
                         key=lambda c: order[id(c)])
        totals = [r for r in stratum.relations
                  if r in checked.lattices and checked.lattices[r].accumulates]
        for relation in totals:  # (1) a $SUM/$COUNT relation's rules derive contributions
            rewritten, kinds = _contributions(checked, stratum, relation)
            contributions[relation + CONTRIBUTIONS] = kinds
            clauses = [c for c in clauses if c.head.relation != relation] + rewritten
        if totals:  # a total is summed one round after its contributions are stored
            stratum = Stratum(stratum.index, stratum.relations + tuple(
                r + CONTRIBUTIONS for r in totals), True)
        for clause in clauses:
            body = _normalize(clause.body, fresh)
            recursive = [i for i, lit in enumerate(body)
                         if isinstance(lit, n.Atom) and lit.relation in stratum.relations]
            if not recursive:
                preamble.append(_kernel(clause, body, {}, None))
            for j, pos in enumerate(recursive):
                versions = {p: (OLD if k < j else FULL) for k, p in enumerate(recursive)}
                versions[pos] = DELTA
                loop.append(_kernel(clause, body, versions, pos))
        loop += [_total(checked, r, len(contributions[r + CONTRIBUTIONS])) for r in totals]
        strata.append(StratumPlan(stratum, tuple(preamble), tuple(loop)))
    # placed by the layouts pass (rewrite/layouts.py)
    return Plan(tuple(strata), {}, {**checked.kinds, **contributions},
                {lat.name: lat for lat in checked.program.lattices})


CONTRIBUTIONS = "@c"  # suffix of the relation holding a $SUM/$COUNT relation's contributions


def _contributions(checked: Checked, stratum: Stratum, relation: str
                   ) -> tuple[list[n.Clause], tuple[str, ...]]:
    """A $SUM/$COUNT relation's clauses, rewritten to derive its contributions.

    ``h(k, $SUM(e)) :- body.``, the j-th clause of ``h``, becomes
    ``h@c(k, j, <ids of clause j>, e) :- body.``: the key, the clause, what identifies the
    contribution (semantics/lattices.contribution) and its value, 1 for $COUNT. The
    clauses share the identifying columns (:func:`_slots`; a clause with fewer ids of a
    kind holds 0 in the rest), so a contribution is as wide as its widest clause needs,
    not as all of them together. A fact or a rule without a head aggregate seeds a
    contribution the same way.
    """
    lattice = checked.lattices[relation]
    kinds = checked.kinds[relation]
    clauses = [c for c in checked.program.clauses if c.head.relation == relation]
    clauses = [_with_aggregate(c, lattice.column, lattice.func) for c in clauses]
    identified = [contribution(c, checked.lattices, stratum) for c in clauses]
    clauses, ids = [c for c, _ in identified], [terms for _, terms in identified]
    id_kinds = [[term_kind(c, checked.kinds, t) for t in terms] for c, terms in zip(clauses, ids)]
    key = [i for i in range(len(kinds)) if i != lattice.column]
    slots = _slots(id_kinds)
    out = []
    for j, clause in enumerate(clauses):
        span = clause.head.span
        agg = clause.head.args[lattice.column]
        assert isinstance(agg, n.HeadAggregate)
        details: list[n.Term] = [_zero(kind, span) for kind in slots]
        free = {kind: [i for i, k in enumerate(slots) if k == kind] for kind in set(slots)}
        for term, kind in zip(ids[j], id_kinds[j]):
            details[free[kind].pop(0)] = term
        value = n.Number(1, span=span) if lattice.func == "count" else agg.arg
        head = [clause.head.args[i] for i in key] + [n.Number(j, span=span), *details, value]
        out.append(n.Clause(n.Atom(relation + CONTRIBUTIONS, tuple(head), span), clause.body,
                            clause.span))
    column_kinds = tuple(kinds[i] for i in key) + ("number",) + tuple(slots) + \
        (kinds[lattice.column],)
    return out, column_kinds


def _slots(id_kinds: list[list[str]]) -> list[str]:
    """The identifying columns of a relation's contributions, by kind: as many of each
    kind as the clause that needs the most, shared by every clause (the clause column tells
    the clauses' contributions apart), kinds in the order they first appear."""
    need: dict[str, int] = {}
    for kinds in id_kinds:
        for kind in dict.fromkeys(kinds):
            need[kind] = max(need.get(kind, 0), kinds.count(kind))
    return [kind for kind, count in need.items() for _ in range(count)]


def _with_aggregate(clause: n.Clause, column: int, func: str) -> n.Clause:
    arg = clause.head.args[column]
    if isinstance(arg, n.HeadAggregate):
        return clause
    args = list(clause.head.args)
    args[column] = n.HeadAggregate(func, arg, arg.span)
    return n.Clause(n.Atom(clause.head.relation, tuple(args), clause.head.span), clause.body,
                    clause.span)


def _zero(kind: str, span) -> n.Term:
    return n.Float(0.0, span=span) if kind == "float" else n.Number(0, span=span)


def _total(checked: Checked, relation: str, columns: int) -> Kernel:
    """The kernel that sums a $SUM/$COUNT relation's contributions, for the keys of their
    delta: ``h(k, total) :- h@c(k, ...)Δ, total = Σ h@c(k, ...)``."""
    lattice = checked.lattices[relation]
    arity = len(checked.kinds[relation])
    contributions = relation + CONTRIBUTIONS
    width = arity - 1
    keys = tuple(n.Var(f"@k{i}") for i in range(width))
    total = n.Var("@t")
    scan_args = keys + tuple(n.Wildcard() for _ in range(columns - width))
    head = list(keys)
    head.insert(lattice.column, total)
    clause_head = list(keys)
    clause_head.insert(lattice.column, n.HeadAggregate(lattice.func, total, lattice.span))
    clause = n.Clause(n.Atom(relation, tuple(clause_head), lattice.span),
                      (n.Atom(contributions, scan_args, lattice.span),), lattice.span)
    steps = (Scan(contributions, DELTA, scan_args),
             Total(contributions, keys, tuple(range(width)), len(scan_args) - 1, total.name))
    return Kernel(relation, tuple(head), steps, clause, 0)


def _normalize(body: tuple[n.Literal, ...], fresh: itertools.count) -> list[n.Literal]:
    """Rewrite a body so that every literal is one step: atoms over variables and constants,
    aggregates only as ``v = aggregate``.

    (1) An expression argument of a positive atom becomes a fresh variable the scan binds,
        checked by ``@e = expr``; (2) one of a negated atom becomes a fresh variable bound by
        ``@e = expr`` before the anti-join; (3) an aggregate anywhere else (``x = sum ...``
        with ``x`` bound by other literals, ``y = 1 + count ...``) becomes ``@a = aggregate``
        and ``@a`` takes its place. Aggregate bodies are normalized the same way.
    """
    out: list[n.Literal] = []
    extra: list[n.Literal] = []
    for lit in body:
        match lit:
            case n.Atom():
                out.append(_plain_atom(lit, fresh, extra))
            case n.Negation(atom=atom):
                out.append(n.Negation(_plain_atom(atom, fresh, extra), lit.span))
            case _:
                out.append(lit)
    out += extra
    atom_vars = set().union(*(_atom_vars(a) for a in out if isinstance(a, n.Atom)))
    equations = Counter(side.name for lit in out if isinstance(lit, n.Comparison) and lit.op == "="
                        for side in (lit.left, lit.right) if isinstance(side, n.Var))
    hoisted: list[n.Literal] = []
    for i, lit in enumerate(out):
        match lit:
            case n.Comparison(op="=", left=n.Var(name=v), right=n.Aggregate() as agg) | \
                    n.Comparison(op="=", left=n.Aggregate() as agg, right=n.Var(name=v)) \
                    if v not in atom_vars and equations[v] == 1:  # the aggregate binds v
                out[i] = n.Comparison("=", n.Var(v, lit.span), _inner(agg, fresh), lit.span)
            case n.Comparison(left=left, right=right):
                out[i] = n.Comparison(lit.op, _hoist(left, fresh, hoisted),
                                      _hoist(right, fresh, hoisted), lit.span)
            case n.Constraint(args=args):
                out[i] = n.Constraint(lit.name, tuple(_hoist(a, fresh, hoisted) for a in args),
                                      lit.negated, lit.span)
    return hoisted + out


def _plain_atom(atom: n.Atom, fresh: itertools.count, extra: list[n.Literal]) -> n.Atom:
    """``atom`` with each expression argument replaced by a fresh variable ``@e = expr``."""
    args = []
    for arg in atom.args:
        if isinstance(arg, n.Var | n.Wildcard | _CONSTANTS):
            args.append(arg)
        else:
            var = n.Var(f"@e{next(fresh)}", arg.span)
            args.append(var)
            extra.append(n.Comparison("=", var, arg, arg.span))
    return n.Atom(atom.relation, tuple(args), atom.span)


def _inner(agg: n.Aggregate, fresh: itertools.count) -> n.Aggregate:
    return n.Aggregate(agg.func, agg.target, tuple(_normalize(agg.body, fresh)), agg.span)


def _hoist(term: n.Term, fresh: itertools.count, hoisted: list[n.Literal]) -> n.Term:
    """``term`` with every aggregate in it replaced by a fresh variable ``@a = aggregate``."""
    match term:
        case n.Aggregate():
            var = n.Var(f"{_AGGREGATE}{next(fresh)}", term.span)
            hoisted.append(n.Comparison("=", var, _inner(term, fresh), term.span))
            return var
        case n.BinOp(op=op, left=left, right=right):
            return n.BinOp(op, _hoist(left, fresh, hoisted), _hoist(right, fresh, hoisted),
                           term.span)
        case n.UnaryOp(op=op, arg=arg):
            return n.UnaryOp(op, _hoist(arg, fresh, hoisted), term.span)
        case n.Call(name=name, args=args):
            return n.Call(name, tuple(_hoist(a, fresh, hoisted) for a in args), term.span)
    return term


def _kernel(clause: n.Clause, body: list[n.Literal], versions: dict[int, str],
            delta: int | None) -> Kernel:
    steps = _order(body, versions, delta, set(), _existence_tests(clause.head, body))
    delta_step = next((i for i, s in enumerate(steps) if isinstance(s, Scan) and s.version == DELTA),
                      None)
    head = tuple(a.arg if isinstance(a, n.HeadAggregate) else a for a in clause.head.args)
    assert not any(isinstance(a, n.HeadAggregate) and a.func in ("sum", "count")
                   for a in clause.head.args), clause  # rewritten by _contributions
    return Kernel(clause.head.relation, head, tuple(steps), clause, delta_step)


def _existence_tests(head: n.Atom, body: list[n.Literal]) -> dict[int, set[str]]:
    """The positive atoms of a body that only test existence, by position, with the
    variables each shares with the rest of the clause (where its semi-join joins).

    An atom tests existence when it has a column nothing else reads (``_``, or a variable
    that appears nowhere else in the clause: ``f(x, z)`` with ``z`` unused, ``c(_, y, y)``)
    and each of its other variables is also bound by another atom that is not itself a
    test. Joined, such an atom multiplies the rows by its matches and changes nothing else:
    the head's tuples are the same, deduplicated later. As a semi-join it filters instead:
    a query rule over eight tiny relations (``a(), b(), c(_, _, _), d(_), ...``) would
    otherwise build their cross product. An atom whose every column is read elsewhere
    matches at most one tuple per row (relations are sets) and stays a join: the linear
    ``reach(y) :- reach(x), e(x, y)`` keeps its delta as the driving scan. Chosen in body
    order, so two atoms never rely on each other to bind a variable. Not inside aggregate
    bodies: ``count : { f(x, _) }`` counts the matching tuples.
    """
    atoms = [i for i, lit in enumerate(body) if isinstance(lit, n.Atom)]
    tests: dict[int, set[str]] = {}
    for i in atoms:
        others = [lit for j, lit in enumerate(body) if j != i]
        own = _atom_vars(body[i])
        shared = own & (variables(*head.args) | body_variables(others))
        unread = shared != own or any(isinstance(a, n.Wildcard) for a in body[i].args)
        binders = set().union(*(_atom_vars(body[j]) for j in atoms if j != i and j not in tests))
        if unread and shared <= binders:
            tests[i] = shared
    return tests


def _order(body: list[n.Literal], versions: dict[int, str], first: int | None,
           outer: set[str], tests: dict[int, set[str]] | None = None) -> list[Step]:
    """Scans in join order (delta first, then the most connected), other steps when ready.

    An existence test (``tests``, see _existence_tests) is no scan to join: it comes as
    soon as the variables it shares are bound, and the first scan is another atom's.
    """
    tests = tests or {}
    atoms = [i for i, lit in enumerate(body) if isinstance(lit, n.Atom) and i not in tests]
    waiting = [i for i in tests]
    pending = [lit for lit in body if not isinstance(lit, n.Atom)]
    # what the rest of the body binds, for each literal that holds an aggregate: the
    # variables of the aggregate that group it (checks.injected)
    outside = {id(agg): injected(body, agg, outer) for lit in body for agg in aggregates(lit)}
    bound, steps = set(outer), []

    def place_tests() -> None:
        for i in [i for i in waiting if tests[i] <= bound]:
            waiting.remove(i)
            atom = body[i]
            steps.append(Scan(atom.relation, versions.get(i, FULL), atom.args, exists=True))

    if not atoms:
        place_tests()  # a body of existence tests alone: each is a check
    while atoms:
        if not any(isinstance(s, Scan) and not s.exists for s in steps):
            pick = first if first in atoms else atoms[0]
        else:
            pick = max(atoms, key=lambda i: (len(_atom_vars(body[i]) & bound), -atoms.index(i)))
        atoms.remove(pick)
        atom = body[pick]
        steps.append(Scan(atom.relation, versions.get(pick, FULL), atom.args))
        bound |= _atom_vars(atom)
        place_tests()
        pending = _place(pending, bound, outside, steps)
    assert not waiting, waiting  # every test's shared variables are bound by scans
    while pending:  # bindings that only depend on each other's results
        before = len(pending)
        pending = _place(pending, bound, outside, steps)
        assert len(pending) < before, pending  # checks guarantee groundedness
    return steps


def _atom_vars(atom: n.Atom) -> set[str]:
    return {a.name for a in atom.args if isinstance(a, n.Var)}


def _place(pending: list[n.Literal], bound: set[str], outside: dict[int, set[str]],
           steps: list[Step]) -> list[n.Literal]:
    """Append every pending literal whose inputs are bound; return the rest."""
    progress = True
    while progress:
        progress, rest = False, []
        for lit in pending:
            step = _ready(lit, bound, outside)
            if step is None:
                rest.append(lit)
                continue
            steps.append(step)
            if isinstance(step, Bind | AggregateJoin):
                bound.add(step.var)
            progress = True
        pending = rest
    return pending


def _ready(lit: n.Literal, bound: set[str], outside: dict[int, set[str]]) -> Step | None:
    match lit:
        case n.Negation(atom=atom):
            return AntiJoin(atom) if variables(*atom.args) <= bound else None
        case n.Comparison(op="=", left=left, right=right):
            for var, other in ((left, right), (right, left)):
                if isinstance(var, n.Var) and var.name not in bound and \
                        not (var.name.startswith(_AGGREGATE) and not isinstance(other, n.Aggregate)):
                    # a hoisted aggregate's variable is bound by its aggregate only
                    if isinstance(other, n.Aggregate):
                        return _aggregate(var.name, other, bound, outside[id(other)])
                    return Bind(var.name, other) if variables(other) <= bound else None
            return Filter(lit) if variables(left, right) <= bound else None
        case n.Comparison() | n.Constraint():
            terms = (lit.left, lit.right) if isinstance(lit, n.Comparison) else lit.args
            return Filter(lit) if variables(*terms) <= bound else None
        case n.BoolLit():
            return Filter(lit)
        case _:
            raise AssertionError(lit)


def _aggregate(var: str, agg: n.Aggregate, bound: set[str], outside: set[str]
               ) -> AggregateJoin | None:
    """``var = agg``, grouped by the variables of ``agg`` in ``outside``, those the rest
    of the body binds outside its target (checks.injected); once they are ``bound``."""
    inner = set().union(*(_atom_vars(a) for a in agg.body if isinstance(a, n.Atom)))
    # what its other literals read, in the bodies of aggregates nested in them too: a
    # variable of the rule that only a nested aggregate reads still groups this one
    used = body_variables([lit for lit in agg.body if not isinstance(lit, n.Atom)])
    if agg.target is not None:
        used |= variables(agg.target)
    correlated = tuple(sorted((used - inner) & outside))
    group = tuple(sorted((inner & outside) | set(correlated)))
    if not set(group) <= bound:
        return None
    body = list(agg.body)
    steps = _order(body, {}, None, set(correlated))
    return AggregateJoin(var, agg, group, tuple(steps), correlated)
