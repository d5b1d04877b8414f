"""Recursive doubling of any linear recursion, at twice the arity (Afrati & Ullman §3,
Theorem 3.2), only on request: `.pragma p(strategy=doubling)` on a relation of a linear
recursive stratum that is not a chain program (those take Theorem 3.1's binary rewrite,
rewrite/doubling.py).

A stratum is linear when each of its rules reads at most one of its relations::

    p(X1..Xk) :- E, q(Y1..Ym).       a step: E atoms and conditions outside the stratum
    p(X1..Xk) :- E.                  a basis rule

and it is rewritten (Theorem 3.2's construction) with ``t@p@q(X1..Xk, Y1..Ym)``, "q(Y)
implies p(X)", of arity k + m::

1. ``t@p@q(X, Y) :- t@p@r(X, Z), t@r@q(Z, Y).`` for all p, q, r of the stratum,
2. ``t@p@q(X, Y) :- E.`` for each step,
3. the basis rules, as written,
4. ``p(X) :- t@p@q(X, Y), q(Y).`` for all p, q.

The t predicates form a nonlinear stratum of their own over E alone, which doubles the
derivation spine it covers each round; the stratum's own relations then take two rounds.
The price is the arity: ``t@p@q`` may hold up to n^(k+m) facts where p holds n^k, which
is why it is never chosen by itself, and `explain` and `sparklog run` warn about it.
A step qualifies when its head and its stratum atom have distinct variables as arguments
and E binds every one of them in a positive atom (rule 2 must be safe); else the stratum
runs as written and the pragma is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from sparklog.rewrite.closure import Choice, splice
from sparklog.rewrite.doubling import chains, compose, transfer
from sparklog.semantics.checks import Checked
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import variables


@dataclass(frozen=True)
class Linear:
    """A recursive stratum of linear rules that Theorem 3.2 rewrites."""

    relations: tuple[str, ...]
    clauses: tuple[n.Clause, ...]


def linears(checked: Checked) -> list[Linear]:
    """The recursive strata Theorem 3.2 can rewrite that are not chain programs."""
    chained = {r for c in chains(checked) for r in c.relations}
    found = []
    for stratum in checked.strata:
        members = stratum.relations
        if stratum.recursive and not chained & set(members):
            linear = _recognize(checked, members)
            if linear is not None:
                found.append(linear)
    return found


def _recognize(checked: Checked, members: tuple[str, ...]) -> Linear | None:
    program = checked.program
    if any(r in checked.lattices for r in members):
        return None
    if any(d.kind == "input" and d.relation in members for d in program.directives):
        return None
    clauses = tuple(c for c in program.clauses if c.head.relation in members)
    for clause in clauses:
        if clause.is_fact:
            continue
        inner = [lit for lit in clause.body if isinstance(lit, n.Atom)
                 and lit.relation in members]
        if len(inner) > 1 or not all(isinstance(lit, n.Atom | n.Comparison | n.Negation)
                                     for lit in clause.body):
            return None
        if inner and not _safe_step(clause, inner[0]):
            return None
    return Linear(members, clauses)


def _safe_step(clause: n.Clause, inner: n.Atom) -> bool:
    """Head and stratum atom over distinct variables, each bound by a positive atom of E."""
    for atom in (clause.head, inner):
        if not all(isinstance(a, n.Var) for a in atom.args) or \
                len(set(atom.args)) != len(atom.args):
            return False
    bound = set().union(*(variables(*lit.args) for lit in clause.body
                          if isinstance(lit, n.Atom) and lit is not inner))
    return variables(*clause.head.args, *inner.args) <= bound


def double(checked: Checked, linear: Linear) -> tuple[list[n.Clause], list[n.Decl]]:
    """Theorem 3.2's rules for the stratum, and the declarations of its t predicates."""
    members = linear.relations
    span = linear.clauses[0].span
    arity = {r: len(checked.decl(r).attributes) for r in members}

    def vars_(stem: str, relation: str) -> tuple[n.Var, ...]:
        return tuple(n.Var(f"{stem}{i}") for i in range(arity[relation]))

    def atom(relation: str, *args: n.Term) -> n.Atom:
        return n.Atom(relation, args, span)

    out = compose(members, span, vars_)  # group 1
    for clause in linear.clauses:  # groups 2 and 3
        inner = [lit for lit in clause.body if isinstance(lit, n.Atom)
                 and lit.relation in members]
        if not inner:
            out.append(clause)
            continue
        (q,) = inner
        head = atom(transfer(clause.head.relation, q.relation), *clause.head.args, *q.args)
        out.append(n.Clause(head, tuple(lit for lit in clause.body if lit is not q),
                            clause.span))
    for p in members:  # group 4
        for q in members:
            x, y = vars_("X", p), vars_("Y", q)
            out.append(n.Clause(atom(p, *x), (atom(transfer(p, q), *x, *y), atom(q, *y)),
                                span))
    decls = []
    for p in members:
        for q in members:
            attrs = tuple(replace(a, name=f"a{i}")
                          for i, a in enumerate(checked.decl(p).attributes)) + \
                tuple(replace(a, name=f"b{i}") for i, a in enumerate(checked.decl(q).attributes))
            decls.append(n.Decl(transfer(p, q), attrs, span))
    return out, decls


def warning(checked: Checked, linear: Linear) -> str:
    widest = max(len(checked.decl(p).attributes) for p in linear.relations)
    return (f"Theorem 3.2 doubles the arity: its t predicates have up to {2 * widest} "
            f"columns where the widest of {', '.join(linear.relations)} has {widest}, so up "
            f"to n^{2 * widest} facts for n values against n^{widest}")


def rewrite(checked: Checked, strategy: str, shapes: Mapping[str, tuple[int, ...]]
            ) -> tuple[n.Program, frozenset[str], list[Choice]]:
    """Every linear stratum one of whose relations has `.pragma r(strategy=doubling)`,
    rewritten by Theorem 3.2 (never for --strategy alone: the arity is the user's call)."""
    program = checked.program
    asked = {d.relation for d in program.directives
             if d.kind == "pragma" and d.param("strategy") == "doubling"}
    clauses, decls, choices = list(program.clauses), list(program.decls), []
    for linear in linears(checked):
        if not asked & set(linear.relations):
            continue
        clauses, decls = splice(clauses, decls, linear.clauses, linear.relations,
                                *double(checked, linear))
        choices.append(Choice(linear, "doubling-arity", "asked by its .pragma; warning: "
                              f"{warning(checked, linear)}"))
    return replace(program, clauses=tuple(clauses), decls=tuple(decls)), frozenset(), choices
