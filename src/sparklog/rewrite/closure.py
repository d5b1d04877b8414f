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
linear partitions, 1 + ceil(log2 n) for Smart and Balance, about log_{3/2} n for Thirds,
those of the user's P for ``split`` (``.pragma p(strategy=split, first="(l + 1) / 2")``:
P(l)[0] as a term over l, checked by :func:`split_first`).

Any column besides the path's two ends that every atom of both rules carries as the same
variable (``p(x, c, y) :- p(x, c, z), e(z, c, y).``) is a parameter: the stratum is a
closure per value, and every strategy keeps the column where it is (``Closure.ends``).

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

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sparklog.errors import SparklogError, UsageError
from sparklog.options import STRATEGIES
from sparklog.semantics.checks import Checked
from sparklog.syntax import nodes as n
from sparklog.syntax.fold import fold
from sparklog.syntax.walk import subterms

LENGTHS = ("smart", "balance", "thirds", "split")  # the ones that keep lengths (p@len)
# A user's length partition (`.pragma p(strategy=split, first="(l + 1) / 2")`) is checked to
# give every path length from 2 to this one a first part between 1 and l - 1
SPLIT_CHECKED = 1 << 14
LENGTH = "@len"  # suffix of the relation holding each path's shortest length


@dataclass(frozen=True)
class Closure:
    """A stratum recognized as the transitive closure of ``edge``, as written."""

    relation: str
    edge: str
    written: str  # "left", "right" or "nonlinear"
    clauses: tuple[n.Clause, ...]  # the base rule, then the recursive one
    pragma: str | None = None  # the strategy a `.pragma p(strategy=...)` asks for
    first: n.Term | None = None  # a split pragma's first part, a term over ``l``
    ends: tuple[int, int] = (0, 1)  # the columns of a path's source and target; any
    # other column is a parameter, the same variable in every atom: a closure per value

    @property
    def parameters(self) -> int:
        return len(self.clauses[0].head.args) - 2


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
    if len(checked.kinds[p]) < 2 or p in checked.lattices:
        return None
    if any(d.relation == p and d.kind == "input" for d in program.directives):
        return None
    clauses = [c for c in program.clauses if c.head.relation == p]
    if len(clauses) != 2 or any(c.is_fact or not _plain(c) for c in clauses):
        return None
    base = next((c for c in clauses if all(a.relation != p for a in c.body)), None)
    if base is None or len(base.body) != 1:
        return None
    edge = base.body[0]
    if edge.args != base.head.args or edge.relation == p:
        return None
    step = next(c for c in clauses if c is not base)
    if len(step.body) != 2:
        return None
    shape = _shape(step, p, edge.relation)
    if shape is None:
        return None
    written, ends = shape
    directive = next((d for d in program.directives
                      if d.kind == "pragma" and d.relation == p), None)
    if directive is None:
        return Closure(p, edge.relation, written, (base, step), ends=ends)
    first = directive.param("first")
    return Closure(p, edge.relation, written, (base, step), directive.param("strategy"),
                   None if first is None else split_first(first)[0], ends)


def _plain(clause: n.Clause) -> bool:
    """Only atoms over variables, the head's distinct."""
    head = clause.head.args
    return all(isinstance(a, n.Var) for a in head) and len(set(head)) == len(head) and all(
        isinstance(lit, n.Atom) and all(isinstance(a, n.Var) for a in lit.args)
        for lit in clause.body)


def _shape(step: n.Clause, p: str, e: str) -> tuple[str, tuple[int, int]] | None:
    """``left``, ``right`` or ``nonlinear`` if the rule composes x -> z -> y, and the
    columns of x and y (the ends); else None. Every other column must be the head's
    variable in both atoms: a parameter the path carries unchanged."""
    head = step.head.args
    if any(len(atom.args) != len(head) for atom in step.body):
        return None
    # a path from column j to column i with the atoms swapped is one from i to j, so the
    # ends are taken in column order
    for i, j in ((i, j) for i in range(len(head)) for j in range(i + 1, len(head))):
        for first, second in (step.body, step.body[::-1]):
            a, b = first.args, second.args
            z = a[j]
            if z in head or a != _at(head, j, z) or b != _at(head, i, z):
                continue
            kinds = (first.relation, second.relation)
            written = {(p, e): "left", (e, p): "right", (p, p): "nonlinear"}.get(kinds)
            if written is not None:
                return written, (i, j)
    return None


def _at(args: tuple[n.Term, ...], position: int, term: n.Term) -> tuple[n.Term, ...]:
    return args[:position] + (term,) + args[position + 1:]


# ``auto`` takes a length strategy for a graph of at most this many arcs per node ...
AUTO_DEGREE = 2.0
# ... whose deepest path may be this many arcs long or longer: below it, the rounds Smart
# saves do not repay its heavier ones (benchmarks/results/closure-set-*.md: trees of 17
# levels, 16 arcs deep, and paired trees H = 9 to 10, 18 to 20 deep, run 1.1-1.5x faster
# linear; chain(200) 3.7x faster with Smart, closure-auto.md). A Smart round costs about
# 4.5 linear ones there, so it pays once n / (1 + log2 n) exceeds that: from about 30 arcs.
AUTO_DEPTH = 32
# ... and a graph whose measured arcs per tail is at most this one is a chain: two
# estimates, each off by about 5% (spark/load.SHAPE_RSD) and independently (arcs are
# counted by their hash), so their ratio is off by up to about 12% (chains of 3,000 to a
# million arcs measure 1.10-1.12)
CHAIN_BRANCHING = 1.15
# ... and from this one up it is a tree's (paired trees, 1.33 exactly, measure 1.24)
TREE_BRANCHING = 1.2


def deepest(arcs: int, nodes: int, tails: int) -> float:
    """About the longest shortest path, in arcs, of a graph of ``arcs`` arcs over ``nodes``
    nodes of which ``tails`` have out-arcs, were it one tree (or chain) from a single root
    branching ``arcs / tails`` ways at every node: more roots make paths shorter. Uses only
    counts that HyperLogLog estimates well (not the roots: a difference of two estimates).
    Each is off by about 5% (spark/load.SHAPE_RSD), so a branching up to CHAIN_BRANCHING
    is taken for a chain's 1, and one between it and TREE_BRANCHING climbs from 1 to that
    (quadratically): the depth falls off continuously, never from a chain's n to a tree's
    log n at one estimate's error. In that window a chain and a sparse tree can measure
    alike; read as the deeper, a tree may take Smart, 1.1-1.7x linear's time, where a chain
    read as a tree would run its n rounds linearly, 10x Smart's."""
    branching = arcs / max(tails, 1)
    if branching <= CHAIN_BRANCHING:  # a chain (or a cycle): as deep as it has nodes
        return float(max(nodes - 1, 0))
    if branching < TREE_BRANCHING:
        window = (branching - CHAIN_BRANCHING) / (TREE_BRANCHING - CHAIN_BRANCHING)
        branching = 1 + (TREE_BRANCHING - 1) * window ** 2
    return math.log(1 + nodes * (branching - 1)) / math.log(branching) - 1


def choose(closure: Closure, strategy: str, shape: tuple[int, ...] | None = None) -> Choice:
    """The strategy a closure runs with: its pragma's, else the run's; ``auto`` decides
    from ``shape``, the (arcs, nodes, tails, heads) of its edge relation when they were
    measured (spark/load.shapes: tails and heads are the nodes with out- and in-arcs)."""
    asked = closure.pragma or strategy
    if asked not in STRATEGIES and not (asked == "split" and closure.first is not None):
        raise UsageError(f"strategy must be one of {', '.join(STRATEGIES)}, not {asked!r}")
    source = "its .pragma" if closure.pragma else "--strategy"
    if asked == "asis":
        return Choice(closure, closure.written, f"as written ({source})")
    if asked == "linear":
        linear = closure.written if closure.written != "nonlinear" else "left"
        return Choice(closure, linear, f"{source} linear: {linear}-linear")
    if asked == "doubling" and closure.parameters:
        return Choice(closure, closure.written, f"asked by {source} for doubling, but its "
                      f"{closure.parameters} parameter column(s) make it no chain program "
                      "(Definition 3.1: binary predicates), so as written")
    if asked == "doubling":  # a linear closure is a chain program: rewrite/doubling.py
        return Choice(closure, "doubling" if closure.written != "nonlinear" else "nonlinear",
                      f"asked by {source}; a nonlinear closure doubles as written")
    if asked == "split":
        from sparklog.syntax.printer import print_term

        return Choice(closure, "split", f"asked by {source}: a path of length l is a path of "
                      f"length {print_term(closure.first)} followed by the rest")
    if asked != "auto":
        return Choice(closure, asked, f"asked by {source}")
    linear = closure.written if closure.written != "nonlinear" else "left"
    if shape is None and closure.parameters:
        return Choice(closure, linear, f"auto: {closure.edge} carries {closure.parameters} "
                      "parameter column(s), a graph per value, which the measurement does not "
                      f"tell apart, so {linear}-linear, which derives no path by two "
                      "decompositions")
    if shape is None:
        return Choice(closure, linear, f"auto: {closure.edge} was not measured (it is "
                      f"computed by the program, or no data was given), so {linear}-linear, "
                      "which derives no path by two decompositions")
    arcs, nodes, tails, heads = shape
    degree = arcs / max(nodes, 1)
    measured = f"{closure.edge} has {arcs} arcs over about {nodes} nodes ({degree:.2f} a node)"
    if degree > AUTO_DEGREE:
        return Choice(closure, linear, f"auto: {measured}: dense, so many paths join a pair, "
                      "each a decomposition Smart would derive, and the longest shortest path "
                      f"is short; {linear}-linear")
    # the graph and its reverse have the same path lengths: either bound holds
    depth = min(deepest(arcs, nodes, tails), deepest(arcs, nodes, heads))
    shaped = (f"{measured}, branching {arcs / max(tails, 1):.2f} out and "
              f"{arcs / max(heads, 1):.2f} in, so its paths are at most about {depth:.0f} "
              "arcs long")
    if depth >= AUTO_DEPTH:
        return Choice(closure, "smart", f"auto: {shaped}: sparse and deep, so few paths join "
                      "a pair; Smart takes 1 + ceil(log2 n) rounds for paths of length n, "
                      "linear n")
    return Choice(closure, linear, f"auto: {shaped}: sparse but shallow, so the rounds Smart "
                  f"would save (under {AUTO_DEPTH} arcs deep) do not repay its heavier ones; "
                  f"{linear}-linear")


def rewrite(checked: Checked, strategy: str, shapes: Mapping[str, tuple[int, ...]]
            ) -> tuple[n.Program, frozenset[str], list[Choice]]:
    """The program with every recognized closure rewritten for its strategy, the
    relations the rewrite made (checked as trusted), and the choices made; ``shapes``:
    the (arcs, nodes, tails, heads) measured of edge relations, for ``auto``."""
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
        clauses, decls = splice(clauses, decls, c.clauses, (c.relation,), new_clauses, new_decls)
        trusted |= {d.name for d in new_decls}
    return replace(program, clauses=tuple(clauses), decls=tuple(decls)), frozenset(trusted), \
        choices


def splice(clauses: list[n.Clause], decls: list[n.Decl], old: tuple[n.Clause, ...],
           relations: tuple[str, ...], new_clauses: list[n.Clause], new_decls: list[n.Decl]
           ) -> tuple[list[n.Clause], list[n.Decl]]:
    """The program's clauses with ``old`` replaced by ``new_clauses`` where the first of them
    stood, and its declarations with ``new_decls`` before the first of ``relations``'."""
    at = clauses.index(old[0])
    clauses = [k for k in clauses if k not in old]
    clauses[at:at] = new_clauses
    decl_at = min(i for i, d in enumerate(decls) if d.name in relations)
    return clauses, decls[:decl_at] + list(new_decls) + decls[decl_at:]


def _rules(checked: Checked, c: Closure, strategy: str
           ) -> tuple[list[n.Clause], list[n.Decl]]:
    base, step = c.clauses
    head = base.head.args
    i, j = c.ends
    z = _fresh("z", {v.name for v in head})
    into, out_of = _at(head, j, z), _at(head, i, z)  # x -> z and z -> y, parameters kept

    def atom(relation: str, *args: n.Term) -> n.Atom:
        return n.Atom(relation, args, step.span)

    def rule(head: n.Atom, *body: n.Literal, like: n.Clause = step) -> n.Clause:
        return n.Clause(head, tuple(body), like.span)

    if strategy in ("right", "left"):
        body = (atom(c.edge, *into), atom(c.relation, *out_of)) if strategy == "right" else \
            (atom(c.relation, *into), atom(c.edge, *out_of))
        return [base, rule(atom(c.relation, *head), *body)], []
    lengths = c.relation + LENGTH
    decl = checked.decl(c.relation)
    names = {v.name for v in head} | {z.name}
    l1, l2 = _fresh("l1", names), _fresh("l2", names)
    ell = n.Attribute(_fresh("l", {a.name for a in decl.attributes}).name, "number")
    seed = rule(atom(lengths, *head, n.Number(1)), atom(c.edge, *head), like=base)
    combine = rule(atom(lengths, *head, n.HeadAggregate("min", n.BinOp("+", l1, l2))),
                   atom(lengths, *into, l1), atom(lengths, *out_of, l2),
                   *_partition(strategy, l1, l2, c.first))
    project = rule(atom(c.relation, *head), atom(lengths, *head, n.Wildcard()))
    return [seed, combine, project], [n.Decl(lengths, decl.attributes + (ell,), decl.span)]


def _partition(strategy: str, l1: n.Var, l2: n.Var, first: n.Term | None = None
               ) -> tuple[n.Literal, ...]:
    """P(l1 + l2) = (l1, l2) as comparisons (Definition 2.1, Example 2.1, §2 items 1-2);
    ``split``: l1 is the user's ``first`` of l = l1 + l2."""
    one = n.Number(1)
    if strategy == "split":
        assert first is not None
        return (n.Comparison("=", l1, _substitute(first, n.BinOp("+", l1, l2))),)
    if strategy == "smart":  # l1 the largest power of 2 below l1 + l2: a power of 2, l2 <= l1
        power = n.BinOp("band", l1, n.BinOp("-", l1, one))
        return (n.Comparison("=", power, n.Number(0)), n.Comparison("<=", l2, l1))
    if strategy == "balance":  # (ceil(l / 2), floor(l / 2))
        return (n.Comparison("<=", l2, l1), n.Comparison("<=", l1, n.BinOp("+", l2, one)))
    if strategy == "thirds":  # l2 = max(1, floor(l / 3))
        third = n.BinOp("/", n.BinOp("+", l1, l2), n.Number(3))
        return (n.Comparison("=", l2, n.Call("max", (one, third))),)
    raise AssertionError(strategy)


@functools.lru_cache(maxsize=64)  # the check and the rewrite both ask
def split_first(text: str) -> tuple[n.Term | None, str | None]:
    """A split pragma's ``first``: the length of a path's first part as a term over ``l``,
    the path's length, built from integers, ``l``, arithmetic and bitwise operators, ``min``
    and ``max``; with the reason it is refused, if it is. It must give every l from 2 to
    SPLIT_CHECKED a first part between 1 and l - 1: a length it gives none would never be
    derived."""
    from sparklog.syntax.parser import parse

    try:
        program = parse(f".decl split_(l: number)\nsplit_({text}) :- split_(l).\n")
        (clause,) = program.clauses
        (term,) = clause.head.args
    except (SparklogError, ValueError):  # a parse error, or not one term
        return None, f"first={text!r} is not a term over l"
    for sub in subterms(term):
        if isinstance(sub, n.Var) and sub.name != "l":
            return None, f"first={text!r} uses {sub.name}: its only variable is l, the length"
        if not isinstance(sub, n.Var | n.Number | n.BinOp | n.UnaryOp | n.Call) or \
                isinstance(sub, n.Number) and sub.unsigned or \
                isinstance(sub, n.Call) and sub.name not in ("min", "max"):
            return None, (f"first={text!r}: only integers, l, arithmetic and bitwise "
                          "operators, min and max")
    for length in range(2, SPLIT_CHECKED + 1):
        part = _first(term, length)
        if part is None or not 1 <= part <= length - 1:
            got = "nothing" if part is None else part
            return None, (f"first={text!r} gives {got} for l = {length}: a path of length l "
                          "needs a first part between 1 and l - 1, else it is never derived")
    return term, None


def _first(term: n.Term, length: int) -> int | None:
    """``term`` at l = ``length``, with Soufflé's integer semantics (syntax/fold.py)."""
    match term:
        case n.Var():
            return length
        case n.Number(value=value):
            return value
        case n.Call(name=name, args=args):
            values = [_first(a, length) for a in args]
            if None in values or not values:
                return None
            return min(values) if name == "min" else max(values)
        case n.BinOp(op=op, left=left, right=right):
            a, b = _first(left, length), _first(right, length)
            if a is None or b is None:
                return None
            folded = fold(n.BinOp(op, n.Number(a), n.Number(b)))
        case n.UnaryOp(op=op, arg=arg):
            a = _first(arg, length)
            if a is None:
                return None
            folded = fold(n.UnaryOp(op, n.Number(a)))
        case _:
            return None
    return folded.value if isinstance(folded, n.Number) else None


def _substitute(term: n.Term, length: n.Term) -> n.Term:
    """``term`` with ``l`` replaced by ``length``."""
    match term:
        case n.Var():
            return length
        case n.BinOp(op=op, left=left, right=right):
            return n.BinOp(op, _substitute(left, length), _substitute(right, length))
        case n.UnaryOp(op=op, arg=arg):
            return n.UnaryOp(op, _substitute(arg, length))
        case n.Call(name=name, args=args):
            return n.Call(name, tuple(_substitute(a, length) for a in args))
    return term


def _fresh(stem: str, taken: set[str]) -> n.Var:
    name, i = stem, 0
    while name in taken:
        i += 1
        name = f"{stem}_{i}"
    taken.add(name)
    return n.Var(name)
