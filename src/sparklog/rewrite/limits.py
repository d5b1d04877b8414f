"""What log rounds would cost where no rewrite keeps the arity (Afrati & Ullman §4).

Two recursions are recognized only to explain them: reachability from a set of sources
(a unary predicate) and same-generation (a binary one). Theorem 4.1: any program for
reachability with unary IDB predicates takes a number of rounds linear in the distance to
the farthest node; §4.2: same-generation needs a ternary predicate for fewer. `sparklog
explain` prints the note; nothing is rewritten.
"""

from __future__ import annotations

from sparklog.semantics.checks import Checked
from sparklog.syntax import nodes as n


def notes(checked: Checked) -> list[str]:
    out = []
    for stratum in checked.strata:
        if not stratum.recursive or len(stratum.relations) != 1:
            continue
        r = stratum.relations[0]
        clauses = [c for c in checked.program.clauses if c.head.relation == r]
        if _reachability(clauses, r):
            edge = _edge(clauses, r)
            out.append(
                f"{r}: reachability, a unary recursion: Theorem 4.1 (Afrati & Ullman §4.1) "
                "says any program with unary predicates takes rounds linear in the distance "
                "to the farthest node reached; log rounds need the binary closure of "
                f"{edge}, up to n^2 pairs for n nodes against at most n {r} facts (write "
                f"tc(x, y) :- {edge}(x, y). tc(x, y) :- tc(x, z), tc(z, y). and derive {r} "
                "from it, when the graph is sparse and long)")
        elif _same_generation(clauses, r):
            out.append(
                f"{r}: same-generation, a binary linear recursion: log rounds need a ternary "
                "predicate at least (Afrati & Ullman §4.2; §3.1's implies(W, X, Y, Z) has "
                f"arity 4), up to n^3 facts for n nodes against at most n^2 {r} facts; "
                "evaluated as written")
    return out


def _atoms(clause: n.Clause) -> list[n.Atom] | None:
    if not all(isinstance(lit, n.Atom) and all(isinstance(a, n.Var) for a in lit.args)
               for lit in clause.body):
        return None
    return list(clause.body)


def _reachability(clauses: list[n.Clause], r: str) -> bool:
    """``r(x) :- s(x).`` and ``r(y) :- r(x), e(x, y).`` (e in either direction, any order)."""
    if len(clauses) < 2 or any(len(c.head.args) != 1 for c in clauses):
        return False
    steps = 0
    for c in clauses:
        atoms = _atoms(c)
        if atoms is None:
            return False
        inner = [a for a in atoms if a.relation == r]
        if not inner:
            continue
        if len(atoms) != 2 or len(inner) != 1:
            return False
        (edge,) = [a for a in atoms if a.relation != r]
        if len(edge.args) != 2 or {inner[0].args[0], c.head.args[0]} != set(edge.args) or \
                inner[0].args[0] == c.head.args[0]:
            return False
        steps += 1
    return steps > 0


def _edge(clauses: list[n.Clause], r: str) -> str:
    return next(a.relation for c in clauses for a in c.body
                if isinstance(a, n.Atom) and a.relation != r and len(a.args) == 2)


def _same_generation(clauses: list[n.Clause], r: str) -> bool:
    """``sg(x, y) :- p(x, xp), p(y, yp), sg(xp, yp).`` with a non-recursive base."""
    if any(len(c.head.args) != 2 for c in clauses):
        return False
    steps = 0
    for c in clauses:
        atoms = _atoms(c)
        if atoms is None:
            return False
        inner = [a for a in atoms if a.relation == r]
        if not inner:
            continue
        if len(atoms) != 3 or len(inner) != 1:
            return False
        x, y = c.head.args
        xp, yp = inner[0].args
        outer = [a for a in atoms if a.relation != r]
        parents = sorted((tuple(a.args) for a in outer), key=str)
        if outer[0].relation != outer[1].relation or \
                sorted([(x, xp), (y, yp)], key=str) != parents and \
                sorted([(xp, x), (yp, y)], key=str) != parents:
            return False
        steps += 1
    return steps > 0
