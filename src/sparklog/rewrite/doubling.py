"""Recursive doubling of chain programs (Afrati & Ullman §3, Theorem 3.1).

A recursive stratum whose rules are all of the forms (Definition 3.1)::

    p(X, Y) :- e(X, Z), q(Z, Y).     right-linear: e outside the stratum, q in it
    p(X, Y) :- e(X, Y).              basis

is a right-linear chain program. It is rewritten into one whose IDB predicates are still
binary and that needs O(log n) rounds: ``t@p@q(a, b)`` holds when, for every c,
``q(b, c)`` implies ``p(a, c)``, and the rewritten rules are

1. ``t@p@q(X, Y) :- t@p@r(X, Z), t@r@q(Z, Y).`` for all p, q, r of the stratum,
2. ``t@p@q(X, Z) :- e(X, Z).`` for each rule ``p(X, Y) :- e(X, Z), q(Z, Y)``,
3. the basis rules, as written,
4. ``p(X, Y) :- t@p@q(X, Z), q(Z, Y).`` for all p, q.

The t predicates (groups 1-2) form a nonlinear stratum of their own, which doubles the
length of the spines it covers each round; p and q (groups 3-4) then take a few rounds.
A left-linear chain program (``p(X, Y) :- q(X, Z), e(Z, Y)``) is the mirror image:
every atom's arguments reversed, rewritten, and reversed back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from sparklog.rewrite.closure import Choice, splice
from sparklog.semantics.checks import Checked
from sparklog.syntax import nodes as n

TRANSFER = "t@"  # prefix of the predicates t@p@q


@dataclass(frozen=True)
class Chain:
    """A recursive stratum recognized as a chain program (Definition 3.1)."""

    relations: tuple[str, ...]
    side: str  # "right" or "left"
    clauses: tuple[n.Clause, ...]


def chains(checked: Checked) -> list[Chain]:
    found = []
    for stratum in checked.strata:
        if stratum.recursive:
            chain = _recognize(checked, stratum.relations)
            if chain is not None:
                found.append(chain)
    return found


def _recognize(checked: Checked, members: tuple[str, ...]) -> Chain | None:
    program = checked.program
    if any(len(checked.kinds[r]) != 2 or r in checked.lattices for r in members):
        return None
    if any(d.kind == "input" and d.relation in members for d in program.directives):
        return None
    clauses = tuple(c for c in program.clauses if c.head.relation in members)
    sides = set()
    for clause in clauses:
        side = _form(clause, members)
        if side is None:
            return None
        sides.add(side)
    sides.discard("basis")
    if len(sides) != 1:
        return None
    return Chain(members, sides.pop(), clauses)


def _form(clause: n.Clause, members: tuple[str, ...]) -> str | None:
    """``basis``, ``right`` or ``left`` if the clause has a chain rule's form, else None."""
    head = clause.head.args
    atoms = clause.body
    if clause.is_fact or not all(isinstance(a, n.Var) for a in head) or head[0] == head[1]:
        return None
    if not all(isinstance(lit, n.Atom) and all(isinstance(a, n.Var) for a in lit.args)
               for lit in atoms):
        return None
    x, y = head
    if len(atoms) == 1:
        (e,) = atoms
        return "basis" if e.relation not in members and e.args == (x, y) else None
    if len(atoms) != 2:
        return None
    if any(len(a.args) != 2 for a in atoms):
        return None
    for first, second in (atoms, atoms[::-1]):
        z = first.args[1]
        if first.args[0] != x or second.args != (z, y) or z in (x, y):
            continue
        inside = (first.relation in members, second.relation in members)
        if inside == (False, True):
            return "right"
        if inside == (True, False):
            return "left"
    return None


def transfer(p: str, q: str) -> str:
    return f"{TRANSFER}{p}@{q}"


def double(checked: Checked, chain: Chain) -> tuple[list[n.Clause], list[n.Decl]]:
    """Theorem 3.1's rules for the chain (mirrored for a left-linear one), and the
    declarations of its t predicates."""
    left = chain.side == "left"
    clauses = [_mirror(c) if left else c for c in chain.clauses]
    members = chain.relations
    span = chain.clauses[0].span
    x, y, z = n.Var("X"), n.Var("Y"), n.Var("Z")

    def atom(relation: str, *args: n.Term) -> n.Atom:
        return n.Atom(relation, args, span)

    out = compose(members, span, lambda stem, _: (n.Var(stem),))  # group 1
    for clause in clauses:  # groups 2 and 3
        if len(clause.body) == 1:
            out.append(clause)
            continue
        e, q = sorted(clause.body, key=lambda a: a.relation in members)
        out.append(n.Clause(atom(transfer(clause.head.relation, q.relation), *e.args),
                            (e,), clause.span))
    for p in members:  # group 4
        for q in members:
            out.append(n.Clause(atom(p, x, y), (atom(transfer(p, q), x, z), atom(q, z, y)),
                                span))
    if left:
        out = [_mirror(c) for c in out]
    decls = []
    for p in members:
        for q in members:
            first = checked.decl(p).attributes[1 if left else 0]
            second = checked.decl(q).attributes[1 if left else 0]
            attrs = (replace(first, name="a"), replace(second, name="b"))
            decls.append(n.Decl(transfer(p, q), attrs[::-1] if left else attrs, span))
    return out, decls


def compose(members: tuple[str, ...], span, args) -> list[n.Clause]:
    """Group 1 of Theorems 3.1 and 3.2: ``t@p@q(X, Y) :- t@p@r(X, Z), t@r@q(Z, Y).`` for all
    p, q, r of the stratum; ``args(stem, r)``: the variables standing for r's side."""
    out = []
    for p in members:
        for q in members:
            for r in members:
                x, y, z = args("X", p), args("Y", q), args("Z", r)
                out.append(n.Clause(n.Atom(transfer(p, q), (*x, *y), span),
                                    (n.Atom(transfer(p, r), (*x, *z), span),
                                     n.Atom(transfer(r, q), (*z, *y), span)), span))
    return out


def _mirror(clause: n.Clause) -> n.Clause:
    def flip(a: n.Atom) -> n.Atom:
        return replace(a, args=a.args[::-1])
    return replace(clause, head=flip(clause.head), body=tuple(flip(a) for a in clause.body))


def rewrite(checked: Checked, strategy: str, shapes: Mapping[str, tuple[int, ...]]
            ) -> tuple[n.Program, frozenset[str], list[Choice]]:
    """With strategy ``doubling``: every chain program rewritten by Theorem 3.1."""
    program = checked.program
    pragmas = {d.relation: d.param("strategy") for d in program.directives
               if d.kind == "pragma"}
    clauses, decls, choices = list(program.clauses), list(program.decls), []
    for chain in chains(checked):
        asked = {pragmas.get(r) for r in chain.relations} - {None}
        if (asked or {strategy}) != {"doubling"}:
            continue
        clauses, decls = splice(clauses, decls, chain.clauses, chain.relations,
                                *double(checked, chain))
        source = "its .pragma" if asked else "--strategy"
        choices.append(Choice(chain, "doubling", f"asked by {source}: Theorem 3.1's binary "
                              "t predicates double the derivation spine they cover each "
                              "round"))
    return replace(program, clauses=tuple(clauses), decls=tuple(decls)), frozenset(), choices
