"""Numeric literals typed from where they are used, as Soufflé types them.

Soufflé gives a numeric constant written without a type (``2``, not ``2u`` or ``2.0``) the
type its context asks for, and resolves the arithmetic around it to match: next to a float
``1 / 2`` is a float division (0.5), in an unsigned column ``0 - 1`` is 2^64 - 1, and in
``half(x / 2) :- x = 1.`` the head's float column makes ``x``, and so the ``1``, a float.
Only where nothing asks for a type is a constant a (signed) number.

:func:`typed` writes each such constant with the type it resolves to (a :class:`Float`,
or a :class:`Number` marked unsigned), so every later stage, which types a term from its
leaves up, computes what Soufflé computes; then it folds the facts' constant arithmetic,
which the parser leaves alone because the types are not known there.

Per clause, in two steps: variables take the kinds of the columns they fill, then, until
nothing changes, a context with a known kind (a column, the other side of a comparison)
gives it to the variables inside an expression that has no kind of its own. Then every
context rewrites its term: an expression without a kind of its own takes the context's.
"""

from __future__ import annotations

from dataclasses import replace

from sparklog.syntax import fold
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import aggregates

# Operators defined on number, unsigned and float, and those on the integers alone.
POLYMORPHIC = ("+", "-", "*", "/", "^", "neg")
INTEGRAL = ("%", "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor",
            "bnot", "lnot")
NUMERIC = ("number", "unsigned", "float")
_MASK = (1 << 64) - 1


def typed(program: n.Program, kinds: dict[str, tuple[str, ...]]) -> n.Program:
    """``program`` with every untyped numeric constant written as the type its context
    gives it, and facts folded (``kinds``: each relation's primitive column kinds)."""
    clauses = tuple(c if _plain_fact(c, kinds) else _Clause(c, kinds).typed()
                    for c in program.clauses)
    return program if clauses == program.clauses else replace(program, clauses=clauses)


def _plain_fact(clause: n.Clause, kinds: dict[str, tuple[str, ...]]) -> bool:
    """A fact of constants that need no other type (most of a program's facts): kept as it
    is, without the walk of a clause."""
    columns = kinds.get(clause.head.relation, ())
    return not clause.body and all(
        isinstance(a, n.Float | n.String) or isinstance(a, n.Number) and (
            a.unsigned or k not in ("float", "unsigned"))
        for a, k in zip(clause.head.args, columns)) and len(columns) == len(clause.head.args)


def _join(*found: str | None) -> str | None:
    known = [k for k in found if k is not None]
    if "float" in known:
        return "float"
    return "unsigned" if "unsigned" in known else (known[0] if known else None)


class _Clause:
    def __init__(self, clause: n.Clause, kinds: dict[str, tuple[str, ...]]) -> None:
        self.clause, self.kinds = clause, kinds
        self.var: dict[str, str] = {}
        for atom in self._atoms(clause.body, head=True):
            for arg, kind in zip(atom.args, self.columns(atom)):
                if isinstance(arg, n.Var) and kind is not None:
                    self.var.setdefault(arg.name, kind)
        for _ in range(1 + len(self._comparisons(clause.body))):
            before = dict(self.var)
            self._spread()
            if self.var == before:
                break

    def columns(self, atom: n.Atom) -> tuple[str | None, ...]:
        return self.kinds.get(atom.relation, (None,) * len(atom.args))

    # -- what a term's leaves say of its kind ----------------------------------------------
    def own(self, term: n.Term) -> str | None:
        """The kind a term has of itself: from its variables, typed constants and
        functors; None for arithmetic on untyped constants alone."""
        match term:
            case n.Var(name=name):
                return self.var.get(name)
            case n.Number(unsigned=u):
                return "unsigned" if u else None
            case n.Float():
                return "float"
            case n.String():
                return "symbol"
            case n.BinOp(op=op, left=left, right=right):
                sides = self.own(left), self.own(right)  # once each: linear in the term
                if op == "+" and "symbol" in sides:
                    return "symbol"
                found = _join(*sides)
                return "number" if found == "float" and op in INTEGRAL else found
            case n.UnaryOp(arg=arg):
                return self.own(arg)
            case n.Call(name=name, args=args) if name in n.FUNCTORS:
                result = n.FUNCTORS[name][1]
                return _join(*(self.own(a) for a in args)) if result == "same" else result
            case n.Aggregate(func="count") | n.HeadAggregate(func="count"):
                return "number"
            case n.Aggregate(func="mean"):
                return "float"
            case n.Aggregate(target=target):
                return self.own(target)
            case n.HeadAggregate(arg=arg):
                return self.own(arg)
        return None

    # -- step 1: contexts give kinds to variables ------------------------------------------
    def _spread(self) -> None:
        for atom in self._atoms(self.clause.body, head=True):
            for arg, kind in zip(atom.args, self.columns(atom)):
                if kind is not None and not isinstance(arg, n.Var):
                    self._give(arg, kind)
        for cmp in self._comparisons(self.clause.body):
            left, right = self.own(cmp.left), self.own(cmp.right)
            if left is not None and right is None:
                self._give(cmp.right, left)
            elif right is not None and left is None:
                self._give(cmp.left, right)

    def _give(self, term: n.Term, kind: str) -> None:
        if self.own(term) is not None and not isinstance(term, n.HeadAggregate):
            return
        match term:
            case n.Var(name=name):
                self.var.setdefault(name, kind)
            case n.BinOp(op=op, left=left, right=right) if op in POLYMORPHIC + INTEGRAL:
                if op in POLYMORPHIC or kind != "float":
                    self._give(left, kind)
                    self._give(right, kind)
            case n.UnaryOp(op=op, arg=arg) if op in POLYMORPHIC or kind != "float":
                self._give(arg, kind)
            case n.Call(name="min" | "max" | "range", args=args):
                for a in args:
                    self._give(a, kind)
            case n.HeadAggregate(func=func, arg=arg) if func != "count":
                self._give(arg, kind)
            case n.Aggregate(func="sum" | "min" | "max", target=target):
                self._give(target, kind)

    # -- step 2: contexts write their constants' kinds ------------------------------------
    def typed(self) -> n.Clause:
        head = self._atom(self.clause.head)
        body = tuple(self._literal(lit) for lit in self.clause.body)
        if body == self.clause.body and head == self.clause.head:
            typed = self.clause
        else:
            typed = n.Clause(head, body, self.clause.span)
        if typed.body in ((), (n.BoolLit(True),)):
            return fold.fact(typed.head, typed.span)
        return typed

    def _atom(self, atom: n.Atom) -> n.Atom:
        args = tuple(arg if isinstance(arg, n.Var) else self.term(arg, kind or "number")
                     for arg, kind in zip(atom.args, self.columns(atom)))
        return atom if args == atom.args else replace(atom, args=args)

    def _literal(self, lit: n.Literal) -> n.Literal:
        match lit:
            case n.Atom():
                return self._atom(lit)
            case n.Negation(atom=atom):
                typed = self._atom(atom)
                return lit if typed == atom else replace(lit, atom=typed)
            case n.Comparison(left=left, right=right):
                kind = _join(self.own(left), self.own(right)) or "number"
                sides = self.term(left, kind), self.term(right, kind)
                return lit if sides == (left, right) else replace(lit, left=sides[0],
                                                                   right=sides[1])
            case n.Constraint(args=args):
                typed = tuple(self.term(a, "symbol") for a in args)
                return lit if typed == args else replace(lit, args=typed)
        return lit

    def term(self, term: n.Term, want: str) -> n.Term:
        """``term`` in a context of kind ``want``, its untyped constants written."""
        kind = self.own(term) or want
        match term:
            case n.Number(value=value, unsigned=False, span=span) if want == "float":
                return n.Float(float(value), span)
            case n.Number(value=value, unsigned=False, span=span) if want == "unsigned":
                return n.Number(value & _MASK, True, span)
            case n.BinOp(op=op, left=left, right=right):
                if op in INTEGRAL and kind == "float":
                    kind = "number"
                sides = self.term(left, kind), self.term(right, kind)
                return term if sides == (left, right) else replace(term, left=sides[0],
                                                                   right=sides[1])
            case n.UnaryOp(op=op, arg=arg):
                typed = self.term(arg, "number" if op in INTEGRAL and kind == "float" else kind)
                return term if typed == arg else replace(term, arg=typed)
            case n.Call(name=name, args=args) if name in n.FUNCTORS:
                params, result = n.FUNCTORS[name]
                if result == "same":
                    wants = [kind] * len(args)
                else:
                    params = params[:1] * len(args) if name == "cat" else params
                    wants = [p if p in NUMERIC + ("symbol",) else self.own(a) or "number"
                             for p, a in zip(params, args)]
                typed = tuple(self.term(a, w) for a, w in zip(args, wants))
                return term if typed == args else replace(term, args=typed)
            case n.HeadAggregate(func=func, arg=arg) if arg is not None:
                typed = self.term(arg, self.own(arg) or ("number" if func == "count" else want))
                return term if typed == arg else replace(term, arg=typed)
            case n.Aggregate(target=target, body=body):
                typed = None if target is None else self.term(target, self.own(target) or want)
                inner = tuple(self._literal(lit) for lit in body)
                if typed == target and inner == body:
                    return term
                return replace(term, target=typed, body=inner)
        return term

    # -- where contexts are ----------------------------------------------------------------
    def _atoms(self, body, head: bool = False) -> list[n.Atom]:
        out = [self.clause.head] if head else []
        for lit in body:
            match lit:
                case n.Atom():
                    out.append(lit)
                case n.Negation(atom=atom):
                    out.append(atom)
            for agg in aggregates(lit):
                out += self._atoms(agg.body)
        return out

    def _comparisons(self, body) -> list[n.Comparison]:
        out = []
        for lit in body:
            if isinstance(lit, n.Comparison):
                out.append(lit)
            for agg in aggregates(lit):
                out += self._comparisons(agg.body)
        return out

