"""Smart's last round, known before it runs (Afrati & Ullman §2, Example 2.2).

Smart (rewrite/closure.py) keeps each pair's shortest path length in a ``$MIN`` column:

    p@len(x, y, 1) :- e(x, y).
    p@len(x, y, $MIN(l1 + l2)) :- p@len(x, z, l1), p@len(z, y, l2),
                                  (l1 band (l1 - 1)) = 0, l2 <= l1.

Every seed is 1, and round k derives lengths in (2^(k-1), 2^k] only: by induction, the
stored lengths are at most 2^(k-1) and the delta's are in (2^(k-2), 2^(k-1)]; a delta tuple
read as ``l1`` must be a power of two, so 2^(k-1), and ``l1 + l2`` lands in the band; one
read as ``l2`` (over the stored tuples older than the delta, at most 2^(k-2)) needs an
``l1 >= l2`` among them, and there is none. So a value never improves once set, a round's
new tuples are new pairs, and round k+1 derives something only if round k found a path of
length exactly 2^k: a power of two. When it found none, round k was the last that derives
anything, and the semi-naive loop stops there rather than run a round to derive nothing:
the paper's 1 + ceil(log2 n) rounds for paths of length n, where the fixed-point test alone
takes one more whenever n is not a power of two.

:func:`smart_lengths` finds such relations on the plan's kernels, after every rewrite:
Smart's, parameter columns and extra filters allowed (they only drop derivations). Only
the rewrite writes this shape (semantics/checks.py refuses a user's rule that compares a
``$MIN`` value). spark/rounds.py stops on the round's observed count of new power-of-two
lengths (``Options.smart_end``).
"""

from __future__ import annotations

from sparklog.ir.nodes import Kernel, Plan, StratumPlan
from sparklog.syntax import nodes as n


def smart_lengths(sp: StratumPlan, plan: Plan) -> dict[str, int]:
    """{relation: its length column} if the stratum is a Smart recursion, else {}."""
    if not sp.stratum.recursive or sp.indexes or len(sp.stratum.relations) != 1 or not sp.loop:
        return {}
    (relation,) = sp.stratum.relations
    layout = plan.layouts[relation]
    column = layout.dependent
    if layout.lattice != "min" or column is None or plan.kinds[relation][column] != "number":
        return {}
    if not all(_seeds_one(k, column) for k in sp.preamble if k.relation == relation):
        return {}
    if not all(k.relation == relation and _doubles(k.clause, relation, column)
               for k in sp.loop):
        return {}
    return {relation: column}


def _seeds_one(kernel: Kernel, column: int) -> bool:
    """The kernel's head puts the constant 1 in the length column."""
    term = kernel.head[column] if len(kernel.head) > column else None
    return isinstance(term, n.Number) and term.value == 1 and not term.unsigned


def _doubles(clause: n.Clause, relation: str, column: int) -> bool:
    """``relation(.., $MIN(l1 + l2)) :- relation(.., l1), relation(.., l2), (l1 band (l1 - 1))
    = 0, l2 <= l1``, with any other literals (they only filter; spans do not compare)."""
    head = clause.head.args[column] if len(clause.head.args) > column else None
    if not (isinstance(head, n.HeadAggregate) and head.func == "min"):
        return False
    match head.arg:
        case n.BinOp(op="+", left=n.Var(name=l1), right=n.Var(name=l2)) if l1 != l2:
            pass
        case _:
            return False
    atoms = [lit for lit in clause.body if isinstance(lit, n.Atom) and lit.relation == relation]
    if len(atoms) != 2 or any(len(a.args) <= column for a in atoms):
        return False
    if [_name(a.args[column]) for a in atoms] not in ([l1, l2], [l2, l1]):
        return False
    one, zero = n.Number(1), n.Number(0)
    power = n.Comparison("=", n.BinOp("band", n.Var(l1), n.BinOp("-", n.Var(l1), one)), zero)
    below = n.Comparison("<=", n.Var(l2), n.Var(l1))
    comparisons = [lit for lit in clause.body if isinstance(lit, n.Comparison)]
    return power in comparisons and below in comparisons


def _name(term: n.Term) -> str | None:
    return term.name if isinstance(term, n.Var) else None

