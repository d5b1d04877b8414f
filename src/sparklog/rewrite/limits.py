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
            doubled = any(d.kind == "pragma" and d.relation == r and
                          d.param("strategy") == "doubling" for d in checked.program.directives)
            out.append(
                f"{r}: same-generation, a binary linear recursion: log rounds need a ternary "
                "predicate at least (Afrati & Ullman §4.2; §3.1's implies(W, X, Y, Z) has "
                f"arity 4), up to n^3 facts for n nodes against at most n^2 {r} facts; " +
                ("doubled at arity 4 as its .pragma asks (Theorem 3.2)" if doubled else
                 f"evaluated as written (.pragma {r}(strategy=doubling) doubles it at "
                 "arity 4, Theorem 3.2)"))
    return out


def _steps(clauses: list[n.Clause], r: str, arity: int, width: int
           ) -> list[tuple[n.Clause, n.Atom, list[n.Atom]]] | None:
    """The rules that read ``r``, each with its ``r`` atom and its other atoms, if every
    rule has ``arity`` head columns and atoms over variables only, and every rule that
    reads ``r`` reads it once beside ``width`` other atoms; else None."""
    steps = []
    for c in clauses:
        if len(c.head.args) != arity or not all(
                isinstance(lit, n.Atom) and all(isinstance(a, n.Var) for a in lit.args)
                for lit in c.body):
            return None
        inner = [a for a in c.body if a.relation == r]
        if not inner:
            continue
        if len(inner) != 1 or len(c.body) != width + 1:
            return None
        steps.append((c, inner[0], [a for a in c.body if a.relation != r]))
    return steps


def _reachability(clauses: list[n.Clause], r: str) -> bool:
    """``r(x) :- s(x).`` and ``r(y) :- r(x), e(x, y).`` (e in either direction, any order)."""
    steps = _steps(clauses, r, 1, 1)
    return bool(steps) and len(steps) < len(clauses) and all(
        len(e.args) == 2 and {inner.args[0], c.head.args[0]} == set(e.args) and
        inner.args[0] != c.head.args[0] for c, inner, (e,) in steps)


def _edge(clauses: list[n.Clause], r: str) -> str:
    return next(a.relation for c in clauses for a in c.body
                if isinstance(a, n.Atom) and a.relation != r and len(a.args) == 2)


def _same_generation(clauses: list[n.Clause], r: str) -> bool:
    """``sg(x, y) :- p(x, xp), p(y, yp), sg(xp, yp).`` with a non-recursive base."""
    steps = _steps(clauses, r, 2, 2)
    if not steps or len(steps) == len(clauses):
        return False
    for c, inner, outer in steps:
        (x, y), (xp, yp) = c.head.args, inner.args
        parents = sorted((tuple(a.args) for a in outer), key=str)
        if outer[0].relation != outer[1].relation or \
                sorted([(x, xp), (y, yp)], key=str) != parents and \
                sorted([(xp, x), (yp, y)], key=str) != parents:
            return False
    return True
