"""The precedence graph of a program and its strata (SCCs in dependency order)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from sparklog.syntax import nodes as n
from sparklog.syntax.walk import aggregates


@dataclass(frozen=True)
class Dependency:
    """``head`` depends on ``body`` through one literal of ``clause``."""

    head: str
    body: str
    negative: bool  # through a negation or an aggregate: needs a lower stratum
    clause: n.Clause
    literal: n.Literal | n.Aggregate


@dataclass(frozen=True)
class Stratum:
    """Relations computed together; ``recursive`` when a clause of it reads one of them."""

    index: int
    relations: tuple[str, ...]
    recursive: bool


def dependencies(program: n.Program) -> list[Dependency]:
    """Every (head, body relation) edge of the precedence graph, with its literal."""
    deps = []
    for clause in program.clauses:
        for lit, negative in _body_relations(clause.body, False):
            deps.append(Dependency(clause.head.relation, lit.relation if isinstance(lit, n.Atom)
                                   else lit.atom.relation, negative, clause, lit))
    return deps


def _body_relations(body: Iterable[n.Literal], inside_aggregate: bool
                    ) -> Iterator[tuple[n.Atom | n.Negation, bool]]:
    for lit in body:
        if isinstance(lit, n.Atom):
            yield lit, inside_aggregate
        elif isinstance(lit, n.Negation):
            yield lit, True
        for agg in aggregates(lit):
            yield from _body_relations(agg.body, True)


def sccs(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, dependencies before dependents.

    ``edges[a]`` are the nodes ``a`` depends on; the result lists each SCC after every SCC
    it depends on. Iterative, so a chain of thousands of relations needs no deep stack.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    order = {v: i for i, v in enumerate(nodes)}

    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(edges.get(root, ()))))]
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:  # every successor of v done
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp, key=order.__getitem__))
    return out


def stratify(program: n.Program) -> tuple[list[Stratum], list[Dependency]]:
    """Strata in evaluation order and the dependencies that cross a cycle negatively."""
    names = [d.name for d in program.decls]
    declared = set(names)
    deps = [d for d in dependencies(program) if d.head in declared and d.body in declared]
    edges: dict[str, set[str]] = {}
    by_head: dict[str, list[tuple[int, Dependency]]] = {}
    for i, d in enumerate(deps):
        edges.setdefault(d.head, set()).add(d.body)
        by_head.setdefault(d.head, []).append((i, d))
    strata, bad = [], []
    for comp in sccs(names, edges):
        members = set(comp)
        inside = sorted((i, d) for head in comp for i, d in by_head.get(head, ())
                        if d.body in members)  # in the program's order
        bad += [d for _, d in inside if d.negative]
        strata.append(Stratum(len(strata), tuple(comp), bool(inside)))
    return strata, bad
