"""Constant folding of a fact's arguments, with Soufflé's 64-bit two's-complement semantics.

Soufflé evaluates constant expressions in facts (``n(1 + 2).``). The checks fold the
arithmetic here, once each constant has its type (semantics/literals.py), so that later
stages, and the facts loaded into Spark, see plain constants.
What folding cannot decide exactly (functors, division by zero, a float overflow, mixed
kinds, and integer ``^``, which Soufflé computes through doubles as the engine does) it
leaves alone, and that fact stays a rule with a ``true`` body, which
the engine evaluates as it evaluates any rule head.
"""

from __future__ import annotations

import math

from sparklog.errors import Span
from sparklog.syntax import nodes as n

_BITS = 64
_MASK = (1 << _BITS) - 1


def fact(head: n.Atom, span: Span, folded: bool = True) -> n.Clause:
    """A fact with its constant expressions folded; one that keeps an expression without
    variables (``n(strlen("ab")).``) becomes a rule with a ``true`` body.

    The parser passes ``folded=False``: an untyped constant takes its type from its column
    (``f(1 / 2).`` over a float is 0.5), which the checks resolve (semantics/literals.py)
    before they fold."""
    if folded:
        head = n.Atom(head.relation, tuple(fold(a) for a in head.args), head.span)
    evaluated = [a for a in head.args if not isinstance(a, n.Number | n.Float | n.String)]
    if evaluated and all(closed(a) for a in evaluated):
        return n.Clause(head, (n.BoolLit(True, span),), span)
    return n.Clause(head, (), span)


def fold(term: n.Term) -> n.Term:
    """``term`` as a constant when it is arithmetic on constants; else ``term`` itself.

    >>> fold(n.BinOp("-", n.Number(0, True), n.Number(1, True))).value
    18446744073709551615
    >>> fold(n.BinOp("/", n.Number(-7), n.Number(2))).value
    -3
    """
    match term:
        case n.BinOp(op=op, left=left, right=right):
            a, b = fold(left), fold(right)
            if isinstance(a, n.Number) and isinstance(b, n.Number):
                unsigned = a.unsigned or b.unsigned
                bits = _integer(op, a.value & _MASK, b.value & _MASK, unsigned)
                return term if bits is None else _number(bits, unsigned, term)
            if isinstance(a, n.Float) and isinstance(b, n.Float):
                value = _float(op, a.value, b.value)
                return term if value is None else n.Float(value, term.span)
        case n.UnaryOp(op=op, arg=arg):
            a = fold(arg)
            if isinstance(a, n.Number):
                bits = {"neg": -a.value, "bnot": ~a.value, "lnot": int(a.value == 0)}[op]
                return _number(bits & _MASK, a.unsigned, term)
            if isinstance(a, n.Float) and op == "neg":
                return n.Float(-a.value, term.span)
    return term


def closed(term: n.Term) -> bool:
    """Whether ``term`` is built from constants by operators and functors alone."""
    match term:
        case n.Number() | n.Float() | n.String():
            return True
        case n.BinOp(left=left, right=right):
            return closed(left) and closed(right)
        case n.UnaryOp(arg=arg):
            return closed(arg)
        case n.Call(args=args):
            return all(closed(a) for a in args)
    return False


def _number(bits: int, unsigned: bool, term: n.Term) -> n.Number:
    value = bits if unsigned or bits < 1 << (_BITS - 1) else bits - (1 << _BITS)
    return n.Number(value, unsigned, term.span)


def _signed(bits: int) -> int:
    return bits - (1 << _BITS) if bits >> (_BITS - 1) else bits


def _integer(op: str, a: int, b: int, unsigned: bool) -> int | None:
    """``a op b`` on 64-bit patterns, as unsigned or signed; None where it is undefined."""
    x, y = (a, b) if unsigned else (_signed(a), _signed(b))
    match op:
        case "+" | "-" | "*" | "band" | "bor" | "bxor":
            return {"+": x + y, "-": x - y, "*": x * y, "band": x & y, "bor": x | y,
                    "bxor": x ^ y}[op] & _MASK
        case "/" | "%" if y == 0:
            return None
        case "/":  # C: truncate toward zero
            q = abs(x) // abs(y)
            return (q if (x < 0) == (y < 0) else -q) & _MASK
        case "%":  # C: the sign of the dividend
            r = abs(x) % abs(y)
            return (-r if x < 0 else r) & _MASK
        case "bshl":
            return (x << (y % _BITS)) & _MASK
        case "bshr":
            return (x >> (y % _BITS)) & _MASK
        case "bshru":
            return a >> (y % _BITS)
        case "land" | "lor" | "lxor":
            p, q = x != 0, y != 0
            return int({"land": p and q, "lor": p or q, "lxor": p != q}[op])
    return None


def _float(op: str, a: float, b: float) -> float | None:
    """``a op b`` on doubles; None for what the engine must decide (inf, nan, errors)."""
    try:
        value = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                 "/": lambda: a / b, "^": lambda: math.pow(a, b)}[op]()
    except (KeyError, ZeroDivisionError, OverflowError, ValueError):
        return None
    return value if math.isfinite(value) else None
