"""Print an AST back as Soufflé text: deterministic, and parsing it gives an equal AST.

Every compound term is fully parenthesised, so the printer never needs precedences:
``(x + 1)``, ``(x band 3)``, ``-(x)``, ``(bnot x)``. Floats are written positionally
(Soufflé's lexer has no exponent form), unsigned constants with their ``u`` suffix.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from sparklog.syntax.nodes import (
    Aggregate, Atom, BinOp, BoolLit, Call, Clause, Comparison, Constraint, Decl, Directive,
    HeadAggregate,
    LatticeDecl,
    Float, Literal, Negation, Number, Program, String, Term, TypeDecl, UnaryOp, Var, Wildcard,
)

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}
_IDENT = re.compile(r"[A-Za-z_?][A-Za-z0-9_?]*")


def print_string(value: str) -> str:
    """A double-quoted Soufflé string literal with backslash escapes."""
    return '"' + "".join(_ESCAPES.get(ch, ch) for ch in value) + '"'


def print_float(value: float) -> str:
    """A float literal that always has a ``.`` and never an exponent."""
    if not math.isfinite(value):
        raise ValueError(f"no Soufflé literal for the float {value!r}")
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else text + ".0"


def print_term(term: Term) -> str:
    """The Soufflé text of a term."""
    match term:
        case Var(name):
            return name
        case Wildcard():
            return "_"
        case Number(value, unsigned):
            return f"{value}u" if unsigned else str(value)
        case Float(value):
            return print_float(value)
        case String(value):
            return print_string(value)
        case BinOp(op, Number(value, False) | Float(value) as left, right) if value < 0:
            return f"(({print_term(left)}) {op} {print_term(right)})"  # -1 ^ 2 is -(1 ^ 2)
        case BinOp(op, left, right):
            return f"({print_term(left)} {op} {print_term(right)})"
        case UnaryOp("neg", arg):
            return f"-({print_term(arg)})"
        case UnaryOp(op, arg):
            return f"({op} {print_term(arg)})"
        case Call(name, args):
            return f"{name}({_print_args(args)})"
        case Aggregate():
            return _print_aggregate(term)
        case HeadAggregate(func, arg):
            return f"${func.upper()}({print_term(arg)})"
    raise TypeError(f"not a term: {term!r}")


def _print_args(args: tuple[Term, ...]) -> str:
    """Comma-separated terms."""
    return ", ".join(print_term(arg) for arg in args)


def _print_aggregate(agg: Aggregate) -> str:
    """``count : { body }`` or ``sum t : { body }``."""
    target = "" if agg.target is None else " " + print_term(agg.target)
    return f"{agg.func}{target} : {{ {_print_body(agg.body)} }}"


def _print_body(body: tuple[Literal, ...]) -> str:
    """Comma-separated literals."""
    return ", ".join(print_literal(literal) for literal in body)


def _print_atom(atom: Atom) -> str:
    """``r(t1, ..., tn)``; a nullary atom is ``r()``."""
    return f"{atom.relation}({_print_args(atom.args)})"


def print_literal(literal: Literal) -> str:
    """The Soufflé text of a body literal (no trailing period)."""
    match literal:
        case Atom():
            return _print_atom(literal)
        case Negation(atom):
            return "!" + _print_atom(atom)
        case Comparison(op, left, right):
            return f"{print_term(left)} {op} {print_term(right)}"
        case Constraint(name, args, negated):
            return ("!" if negated else "") + f"{name}({_print_args(args)})"
        case BoolLit(value):
            return "true" if value else "false"
    raise TypeError(f"not a literal: {literal!r}")


def print_clause(clause: Clause) -> str:
    """A fact ``r(1, "a").`` or a rule ``h(x) :- body.``."""
    head = _print_atom(clause.head)
    if clause.is_fact:
        return head + "."
    return f"{head} :- {_print_body(clause.body)}."


def print_type(decl: TypeDecl) -> str:
    """``.type T <: number``, ``.type T = symbol`` or ``.type T = A | B``."""
    base = " | ".join(decl.members) if decl.members else decl.base
    return f".type {decl.name} {'<:' if decl.subtype else '='} {base}"


def print_decl(decl: Decl) -> str:
    """``.decl r(a:number, b:symbol)``."""
    attributes = ", ".join(f"{a.name}:{a.type}{'<>' if a.lattice else ''}"
                           for a in decl.attributes)
    return f".decl {decl.name}({attributes})"


def print_lattice(decl: LatticeDecl) -> str:
    """``.lattice T<> { Bottom -> 0, Lub(x, y) -> (x bor y) }``."""
    ops = ", ".join(f"{o.name}{'(' + ', '.join(o.params) + ')' if o.params else ''} -> "
                    f"{print_term(o.expr)}" for o in decl.ops)
    return f".lattice {decl.name}<> {{ {ops} }}"


def _print_param(key: str, value: str) -> str:
    """``IO=file`` (bare identifier for IO) or ``key="value"``."""
    if key == "IO" and _IDENT.fullmatch(value):
        return f"{key}={value}"
    return f"{key}={print_string(value)}"


def print_directive(directive: Directive) -> str:
    """``.input r(IO=file, filename="x.csv")``, ``.output r`` or ``.printsize r``."""
    text = f".{directive.kind} {directive.relation}"
    if directive.params:
        text += "(" + ", ".join(_print_param(k, v) for k, v in directive.params) + ")"
    return text


def print_program(program: Program) -> str:
    """The whole program: types, declarations, directives, then clauses, one a line."""
    lines = [print_type(t) for t in program.types]
    lines += [print_lattice(lat) for lat in program.lattices]
    lines += [print_decl(d) for d in program.decls]
    lines += [print_directive(d) for d in program.directives]
    lines += [print_clause(c) for c in program.clauses]
    return "\n".join(lines) + "\n"
