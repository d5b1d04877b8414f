"""The one walker over the AST: the sub-terms of a term, the terms of a literal or a
clause, and the variables and aggregates they hold. Every stage that asks "which
variables / aggregates / terms does this hold?" asks here."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator

from sparklog.errors import Span
from sparklog.syntax import nodes as n


def subterms(term: n.Term, targets: bool = True) -> Iterator[n.Term]:
    """The term and its sub-terms, pre-order: an aggregate's target if ``targets`` (whose
    variables are the aggregate's own unless bound outside it), never its body."""
    yield term
    match term:
        case n.BinOp(left=left, right=right):
            yield from subterms(left, targets)
            yield from subterms(right, targets)
        case n.UnaryOp(arg=arg):
            yield from subterms(arg, targets)
        case n.Call(args=args) | n.Record(args=args) | n.Branch(args=args):
            for a in args:
                yield from subterms(a, targets)
        case n.Aggregate(target=target) if target is not None and targets:
            yield from subterms(target, targets)
        case n.HeadAggregate(arg=arg):
            yield from subterms(arg, targets)


def literal_terms(lit: n.Literal) -> tuple[n.Term, ...]:
    """The terms a literal holds directly: arguments, or the sides of a comparison."""
    match lit:
        case n.Atom(args=args) | n.Constraint(args=args) | n.Negation(atom=n.Atom(args=args)):
            return args
        case n.Comparison(left=left, right=right):
            return (left, right)
    return ()


def clause_terms(clause: n.Clause) -> Iterator[n.Term]:
    """Every term of the head and the body's literals, and their sub-terms."""
    for lit in (clause.head, *clause.body):
        for term in literal_terms(lit):
            yield from subterms(term)


def nested_literals(clause: n.Clause) -> Iterator[n.Literal]:
    """The head and every body literal, those inside aggregate bodies (nested too)."""
    stack: list[n.Literal] = [clause.head, *clause.body]
    while stack:
        lit = stack.pop()
        yield lit
        for term in literal_terms(lit):
            stack.extend(x for sub in subterms(term) if isinstance(sub, n.Aggregate)
                         for x in sub.body)


def variables(*terms: n.Term) -> set[str]:
    """The variables of some terms (not inside aggregate bodies)."""
    return {t.name for term in terms for t in subterms(term) if isinstance(t, n.Var)}


def body_variables(body: Iterable[n.Literal]) -> set[str]:
    """Every variable of a body's literals, inside nested aggregate bodies too."""
    out: set[str] = set()
    for lit in body:
        for term in literal_terms(lit):
            for sub in subterms(term):
                if isinstance(sub, n.Var):
                    out.add(sub.name)
                elif isinstance(sub, n.Aggregate):
                    out |= body_variables(sub.body)
    return out


def aggregates(lit: n.Literal) -> list[n.Aggregate]:
    """The aggregates a literal holds (an atom's arguments, a comparison's sides...)."""
    return [t for term in literal_terms(lit) for t in subterms(term)
            if isinstance(t, n.Aggregate)]


def map_terms(node, fn: Callable[[n.Term], n.Term]):
    """``node`` (a clause, literal or term) with ``fn`` applied to every term inside it,
    the innermost first, inside aggregate bodies too."""
    if isinstance(node, tuple):  # the same tuple when nothing in it changed
        mapped = tuple(map_terms(x, fn) for x in node)
        return node if all(a is b for a, b in zip(mapped, node)) else mapped
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name != "span":
            value = getattr(node, f.name)
            mapped = map_terms(value, fn)
            if mapped is not value:
                changes[f.name] = mapped
    if changes:
        node = dataclasses.replace(node, **changes)
    return fn(node) if isinstance(node, n.TERMS) else node


def map_names(node, relation: Callable[[str], str],
              type_name: Callable[[str], str] = lambda t: t):
    """``node`` (an item, clause, literal or declaration) with relation names and type
    names mapped, wherever they occur: components qualify them, subsumption renames."""
    if isinstance(node, list):
        return [map_names(x, relation, type_name) for x in node]
    if isinstance(node, tuple):
        return tuple(map_names(x, relation, type_name) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, Span):
        return node
    changes = {f.name: map_names(getattr(node, f.name), relation, type_name)
               for f in dataclasses.fields(node) if f.name != "span"}
    match node:
        case n.Atom() | n.Directive():
            changes["relation"] = relation(node.relation)
        case n.Decl():
            changes["name"] = relation(node.name)
        case n.Attribute():
            changes["type"] = type_name(node.type)
        case n.TypeDecl():
            changes.update(name=type_name(node.name), base=type_name(node.base),
                           members=tuple(type_name(m) for m in node.members))
    return dataclasses.replace(node, **changes)


_NESTING = (n.BinOp, n.UnaryOp, n.Call, n.Aggregate, n.HeadAggregate)


def too_deep(node, limit: int):
    """The first term (pre-order, inside aggregate bodies too) whose operators, calls and
    aggregates nest more than ``limit`` deep, or None. Iterative, unlike the walks above:
    it guards them, and Python's stack ends near a thousand levels."""
    stack: list[tuple[object, int]] = [(node, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, tuple):
            stack.extend((x, depth) for x in reversed(node))
            continue
        if not dataclasses.is_dataclass(node) or isinstance(node, type):
            continue
        if isinstance(node, _NESTING):
            depth += 1
            if depth > limit:
                return node
        stack.extend((getattr(node, f.name), depth) for f in reversed(dataclasses.fields(node))
                     if f.name != "span")
    return None
