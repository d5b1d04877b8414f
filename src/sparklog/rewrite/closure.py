"""Transitive closure in a logarithmic number of rounds (Afrati & Ullman §2).

A stratum whose one relation is the transitive closure of a binary relation ``e``::

    p(x, y) :- e(x, y).
    p(x, y) :- p(x, z), e(z, y).     left-linear, or
    p(x, y) :- e(x, z), p(z, y).     right-linear, or
    p(x, y) :- p(x, z), p(z, y).     nonlinear

is evaluated with a chosen *length partition* P: the TC algorithm that derives a path of
length l only by joining a path of length P(l)[0] with a following path of length
P(l)[1], both shortest paths (Definition 2.1). Each path is then derived once (unique
decomposition), and the rounds needed for paths of length n are those of P: n for the
linear partitions, 1 + ceil(log2 n) for Smart and Balance, about log_{3/2} n for Thirds.

The linear strategies are the closure's linear rules. The others keep each path's
shortest length in a $MIN lattice relation ``p@len``, so a path found again by a longer
decomposition improves nothing and never reaches a delta, and ``p`` is its projection::

    p@len(x, y, 1) :- e(x, y).
    p@len(x, y, $MIN(l1 + l2)) :- p@len(x, z, l1), p@len(z, y, l2), <P(l1 + l2) = (l1, l2)>.
    p(x, y) :- p@len(x, y, _).

The condition reads lengths in a comparison, which the monotonicity check refuses in
user programs; here it is sound: a round derives only lengths above every length known
before it (Example 2.2's m_i), so a stored length is never improved, and ``p@len`` is
checked as *trusted*.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sparklog.errors import UsageError
from sparklog.options import STRATEGIES
from sparklog.semantics.checks import Checked
from sparklog.syntax import nodes as n

LENGTHS = ("smart", "balance", "thirds")  # the ones that keep lengths (p@len)
LENGTH = "@len"  # suffix of the relation holding each path's shortest length


@dataclass(frozen=True)
class Closure:
    """A stratum recognized as the transitive closure of ``edge``, as written."""

    relation: str
    edge: str
    written: str  # "left", "right" or "nonlinear"
    clauses: tuple[n.Clause, ...]  # the base rule, then the recursive one
    pragma: str | None = None  # the strategy a `.pragma p(strategy=...)` asks for


@dataclass(frozen=True)
class Choice:
    """What a closure (or a chain program, rewrite/doubling.py) is evaluated with, and why
    (printed by `sparklog explain`)."""

    closure: Any  # Closure, or doubling.Chain
    strategy: str
    why: str


def closures(checked: Checked) -> list[Closure]:
    """The program's TC-shaped strata, in stratum order."""
    found = []
    for stratum in checked.strata:
        if not stratum.recursive or len(stratum.relations) != 1:
            continue
        closure = _recognize(checked, stratum.relations[0])
        if closure is not None:
            found.append(closure)
    return found


def _recognize(checked: Checked, p: str) -> Closure | None:
    program = checked.program
    if len(checked.kinds[p]) != 2 or p in checked.lattices:
        return None
    if any(d.relation == p and d.kind == "input" for d in program.directives):
        return None
    clauses = [c for c in program.clauses if c.head.relation == p]
    if len(clauses) != 2 or any(c.is_fact or not _plain(c) for c in clauses):
        return None
    base = next((c for c in clauses if all(a.relation != p for a in c.body)), None)
    if base is None or len(base.body) != 1:
        return None
    x, y = base.head.args
    edge = base.body[0]
    if edge.args != (x, y) or x == y or len(checked.kinds[edge.relation]) != 2:
        return None
    step = next(c for c in clauses if c is not base)
    if len(step.body) != 2:
        return None
    written = _shape(step, p, edge.relation)
    if written is None:
        return None
    pragma = next((d.param("strategy") for d in program.directives
                   if d.kind == "pragma" and d.relation == p), None)
    return Closure(p, edge.relation, written, (base, step), pragma)


def _plain(clause: n.Clause) -> bool:
    """Only atoms over variables, the head's two distinct."""
    head = clause.head.args
    return all(isinstance(a, n.Var) for a in head) and head[0] != head[1] and all(
        isinstance(lit, n.Atom) and all(isinstance(a, n.Var) for a in lit.args)
        for lit in clause.body)


def _shape(step: n.Clause, p: str, e: str) -> str | None:
    """``left``, ``right`` or ``nonlinear`` if the rule composes x -> z -> y, else None."""
    x, y = step.head.args
    for first, second in (step.body, step.body[::-1]):
        a, b = first.args, second.args
        if len(a) != 2 or len(b) != 2:
            return None
        z = a[1]
        if a[0] != x or b != (z, y) or z in (x, y):
            continue
        kinds = (first.relation, second.relation)
        if kinds == (p, e):
            return "left"
        if kinds == (e, p):
            return "right"
        if kinds == (p, p):
            return "nonlinear"
    return None


# ``auto`` takes a length strategy for a graph of at most this many arcs per node
AUTO_DEGREE = 2.0


def choose(closure: Closure, strategy: str, shape: tuple[int, int] | None = None) -> Choice:
    """The strategy a closure runs with: its pragma's, else the run's; ``auto`` decides
    from ``shape``, the (arcs, nodes) of its edge relation when they were measured."""
    asked = closure.pragma or strategy
    if asked not in STRATEGIES:
        raise UsageError(f"strategy must be one of {', '.join(STRATEGIES)}, not {asked!r}")
    source = "its .pragma" if closure.pragma else "--strategy"
    if asked == "asis":
        return Choice(closure, closure.written, f"as written ({source})")
    if asked == "linear":
        linear = closure.written if closure.written != "nonlinear" else "left"
        return Choice(closure, linear, f"{source} linear: {linear}-linear")
    if asked == "doubling":  # a linear closure is a chain program: rewrite/doubling.py
        return Choice(closure, "doubling" if closure.written != "nonlinear" else "nonlinear",
                      f"asked by {source}; a nonlinear closure doubles as written")
    if asked != "auto":
        return Choice(closure, asked, f"asked by {source}")
    linear = closure.written if closure.written != "nonlinear" else "left"
    if shape is None:
        return Choice(closure, linear, f"auto: {closure.edge} was not measured (it is "
                      f"computed by the program, or no data was given), so {linear}-linear, "
                      "which derives no path by two decompositions")
    arcs, nodes = shape
    degree = arcs / max(nodes, 1)
    measured = f"{closure.edge} has {arcs} arcs over about {nodes} nodes ({degree:.2f} a node)"
    if degree <= AUTO_DEGREE:
        return Choice(closure, "smart", f"auto: {measured}: sparse, so paths are long and "
                      "few join a pair; Smart takes 1 + ceil(log2 n) rounds for paths of "
                      "length n, linear n")
    return Choice(closure, linear, f"auto: {measured}: dense, so many paths join a pair, "
                  "each a decomposition Smart would derive, and the longest shortest path is "
                  f"short; {linear}-linear")


def rewrite(checked: Checked, strategy: str, shapes: Mapping[str, tuple[int, int]]
            ) -> tuple[n.Program, frozenset[str], list[Choice]]:
    """The program with every recognized closure rewritten for its strategy, the
    relations the rewrite made (checked as trusted), and the choices made; ``shapes``:
    the (arcs, nodes) measured of edge relations, for ``auto``."""
    program = checked.program
    choices = [choose(c, strategy, shapes.get(c.edge)) for c in closures(checked)]
    # a linear closure to double is the chain pass's (rewrite/doubling.py), and its choice
    choices = [c for c in choices if c.strategy != "doubling"]
    clauses = list(program.clauses)
    decls = list(program.decls)
    trusted = set()
    for choice in choices:
        c = choice.closure
        if choice.strategy == c.written:  # as written
            continue
        new_clauses, new_decls = _rules(checked, c, choice.strategy)
        at = clauses.index(c.clauses[0])
        clauses = [k for k in clauses if k not in c.clauses]
        clauses[at:at] = new_clauses
        decl_at = next(i for i, d in enumerate(decls) if d.name == c.relation)
        decls[decl_at:decl_at] = new_decls
        trusted |= {d.name for d in new_decls}
    return replace(program, clauses=tuple(clauses), decls=tuple(decls)), frozenset(trusted), \
        choices


def _rules(checked: Checked, c: Closure, strategy: str
           ) -> tuple[list[n.Clause], list[n.Decl]]:
    base, step = c.clauses
    x, y = base.head.args
    z = _fresh("z", {x.name, y.name})

    def atom(relation: str, *args: n.Term) -> n.Atom:
        return n.Atom(relation, args, step.span)

    def rule(head: n.Atom, *body: n.Literal, like: n.Clause = step) -> n.Clause:
        return n.Clause(head, tuple(body), like.span)

    if strategy in ("right", "left"):
        body = (atom(c.edge, x, z), atom(c.relation, z, y)) if strategy == "right" else \
            (atom(c.relation, x, z), atom(c.edge, z, y))
        return [base, rule(atom(c.relation, x, y), *body)], []
    lengths = c.relation + LENGTH
    decl = checked.decl(c.relation)
    names = {x.name, y.name, z.name}
    l1, l2 = _fresh("l1", names), _fresh("l2", names)
    ell = n.Attribute(_fresh("l", {a.name for a in decl.attributes}).name, "number")
    seed = rule(atom(lengths, x, y, n.Number(1)), atom(c.edge, x, y), like=base)
    combine = rule(atom(lengths, x, y, n.HeadAggregate("min", n.BinOp("+", l1, l2))),
                   atom(lengths, x, z, l1), atom(lengths, z, y, l2), *_partition(strategy, l1, l2))
    project = rule(atom(c.relation, x, y), atom(lengths, x, y, n.Wildcard()))
    return [seed, combine, project], [n.Decl(lengths, decl.attributes + (ell,), decl.span)]


def _partition(strategy: str, l1: n.Var, l2: n.Var) -> tuple[n.Literal, ...]:
    """P(l1 + l2) = (l1, l2) as comparisons (Definition 2.1, Example 2.1, §2 items 1-2)."""
    one = n.Number(1)
    if strategy == "smart":  # l1 the largest power of 2 below l1 + l2: a power of 2, l2 <= l1
        power = n.BinOp("band", l1, n.BinOp("-", l1, one))
        return (n.Comparison("=", power, n.Number(0)), n.Comparison("<=", l2, l1))
    if strategy == "balance":  # (ceil(l / 2), floor(l / 2))
        return (n.Comparison("<=", l2, l1), n.Comparison("<=", l1, n.BinOp("+", l2, one)))
    if strategy == "thirds":  # l2 = max(1, floor(l / 3))
        third = n.BinOp("/", n.BinOp("+", l1, l2), n.Number(3))
        return (n.Comparison("=", l2, n.Call("max", (one, third))),)
    raise AssertionError(strategy)


def _fresh(stem: str, taken: set[str]) -> n.Var:
    name, i = stem, 0
    while name in taken:
        i += 1
        name = f"{stem}_{i}"
    taken.add(name)
    return n.Var(name)
