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
    it depends on.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the number of relations
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp, key=nodes.index))
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def stratify(program: n.Program) -> tuple[list[Stratum], list[Dependency]]:
    """Strata in evaluation order and the dependencies that cross a cycle negatively."""
    names = [d.name for d in program.decls]
    deps = [d for d in dependencies(program) if d.head in names and d.body in names]
    edges: dict[str, set[str]] = {}
    for d in deps:
        edges.setdefault(d.head, set()).add(d.body)
    strata, bad = [], []
    for comp in sccs(names, edges):
        members = set(comp)
        recursive = any(d.head in members and d.body in members for d in deps)
        bad += [d for d in deps if d.negative and d.head in members and d.body in members]
        strata.append(Stratum(len(strata), tuple(comp), recursive))
    return strata, bad
