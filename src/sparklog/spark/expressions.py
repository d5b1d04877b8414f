"""Datalog terms -> Spark SQL expression text, evaluated in the JVM.

Symbols are interned: a symbol column holds ``xxhash64`` of the string. Functors that look
inside a symbol read a ``<column>__s`` companion column with the string (joined from the
symbol table by the translator) and hash their symbol results back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sparklog.syntax import nodes as n

NUMERIC = ("number", "unsigned", "float")
STRING_FUNCTORS = {"cat", "strlen", "substr", "to_number", "contains", "match"}


def sql_string(text: str) -> str:
    """A Spark SQL string literal for ``text``."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    escaped = "".join(c if c.isprintable() or c == " " else f"\\u{ord(c):04x}"
                      if ord(c) < 0x10000 else c for c in escaped)
    return f"'{escaped}'"


def symbol_id(text_sql: str) -> str:
    """The interned id of a string expression."""
    return f"xxhash64({text_sql})"


def sql_number(value: int) -> str:
    if value >= 2**63:  # unsigned beyond the signed range: the same 64 bits
        value -= 2**64
    return f"CAST('{value}' AS BIGINT)"


def sql_float(value: float) -> str:
    return f"CAST('{value!r}' AS DOUBLE)"


@dataclass
class Scope:
    """Column name and kind of every bound variable of a kernel."""

    columns: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    fresh: Callable[[], str] | None = None

    def bind(self, var: str, kind: str) -> str:
        col = self.columns.get(var)
        if col is None:
            col = self.columns[var] = f"v{len(self.columns)}"
            self.kinds[var] = kind
        return col


def kind_of(term: n.Term, scope: Scope) -> str:
    """The primitive kind of a term (checks guarantee consistency)."""
    match term:
        case n.Var(name=name):
            return scope.kinds[name]
        case n.Number(unsigned=u):
            return "unsigned" if u else "number"
        case n.Float():
            return "float"
        case n.String():
            return "symbol"
        case n.BinOp(left=left, right=right):
            kinds = {kind_of(left, scope), kind_of(right, scope)}
            return "float" if "float" in kinds else ("unsigned" if "unsigned" in kinds else "number")
        case n.UnaryOp(arg=arg):
            return kind_of(arg, scope)
        case n.Call(name=name, args=args):
            result = n.FUNCTORS[name][1]
            if result == "same":
                kinds = {kind_of(a, scope) for a in args}
                return "float" if "float" in kinds else kinds.pop()
            return result
        case _:
            raise AssertionError(f"no kind for {term!r}")


def string_vars(term: n.Term | n.Literal) -> set[str]:
    """Symbol variables whose text a term or constraint needs."""
    out: set[str] = set()
    match term:
        case n.Call(name=name, args=args) | n.Constraint(name=name, args=args):
            for a in args:
                if name in STRING_FUNCTORS and isinstance(a, n.Var):
                    out.add(a.name)
                out |= string_vars(a)
        case n.BinOp(left=left, right=right) | n.Comparison(left=left, right=right):
            out |= string_vars(left) | string_vars(right)
        case n.UnaryOp(arg=arg):
            out |= string_vars(arg)
    return out


def value(term: n.Term, scope: Scope) -> str:
    """SQL for the value of a term as stored (symbols as ids)."""
    match term:
        case n.Var(name=name):
            return scope.columns[name]
        case n.Number(value=v):
            return sql_number(v)
        case n.Float(value=v):
            return sql_float(v)
        case n.String(value=v):
            return symbol_id(sql_string(v))
        case n.BinOp():
            return _binop(term, scope)
        case n.UnaryOp(op=op, arg=arg):
            inner = value(arg, scope)
            return {"neg": f"(- {inner})", "bnot": f"(~ {inner})",
                    "lnot": f"(CASE WHEN {inner} = 0 THEN 1L ELSE 0L END)"}[op]
        case n.Call():
            return _call(term, scope)
        case _:
            raise AssertionError(f"cannot translate {term!r}")


def text(term: n.Term, scope: Scope) -> str:
    """SQL for the string of a symbol-valued term."""
    match term:
        case n.String(value=v):
            return sql_string(v)
        case n.Var(name=name):
            return f"{scope.columns[name]}__s"
        case n.Call(name="cat", args=args):
            return "concat(" + ", ".join(text(a, scope) for a in args) + ")"
        case n.Call(name="substr", args=(s, start, length)):
            return (f"substring({text(s, scope)}, CAST({value(start, scope)} AS INT) + 1, "
                    f"CAST({value(length, scope)} AS INT))")
        case n.Call(name="to_string", args=(x,)):
            return f"CAST({value(x, scope)} AS STRING)"
        case _:
            raise AssertionError(f"no text for {term!r}")


_ARITH = {"+": "+", "-": "-", "*": "*", "band": "&", "bor": "|", "bxor": "^"}
_SHIFTS = {"bshl": "shiftleft", "bshr": "shiftright", "bshru": "shiftrightunsigned"}


def _binop(term: n.BinOp, scope: Scope) -> str:
    a, b, op = value(term.left, scope), value(term.right, scope), term.op
    is_float = kind_of(term, scope) == "float"
    if op in _ARITH:
        return f"({a} {_ARITH[op]} {b})"
    if op == "/":
        return f"({a} / {b})" if is_float else f"({a} div {b})"
    if op == "%":
        return f"({a} % {b})"
    if op == "^":
        return f"pow({a}, {b})" if is_float else f"CAST(pow({a}, {b}) AS BIGINT)"
    if op in _SHIFTS:
        return f"{_SHIFTS[op]}({a}, CAST(pmod({b}, 64) AS INT))"
    logic = {"land": f"({a} != 0 AND {b} != 0)", "lor": f"({a} != 0 OR {b} != 0)",
             "lxor": f"(({a} != 0) != ({b} != 0))"}[op]
    return f"(CASE WHEN {logic} THEN 1L ELSE 0L END)"


def _call(term: n.Call, scope: Scope) -> str:
    args = term.args
    match term.name:
        case "cat" | "substr" | "to_string":
            return symbol_id(text(term, scope))
        case "strlen":
            return f"CAST(char_length({text(args[0], scope)}) AS BIGINT)"
        case "to_number":
            return f"CAST({text(args[0], scope)} AS BIGINT)"
        case "to_float":
            return f"CAST({value(args[0], scope)} AS DOUBLE)"
        case "to_unsigned":
            return f"CAST({value(args[0], scope)} AS BIGINT)"
        case "ord":
            return value(args[0], scope)
        case "min" | "max":
            fn = "least" if term.name == "min" else "greatest"
            return f"{fn}({value(args[0], scope)}, {value(args[1], scope)})"
        case _:
            raise AssertionError(term.name)


def condition(lit: n.Comparison | n.Constraint | n.BoolLit, scope: Scope) -> str:
    """SQL for a body constraint."""
    match lit:
        case n.BoolLit(value=v):
            return "TRUE" if v else "FALSE"
        case n.Comparison(op=op, left=left, right=right):
            sql_op = "=" if op == "=" else op
            if op in ("<", "<=", ">", ">=") and kind_of(left, scope) == "symbol":
                return f"({text(left, scope)} {sql_op} {text(right, scope)})"
            return f"({value(left, scope)} {sql_op} {value(right, scope)})"
        case n.Constraint(name="contains", args=(sub, s), negated=neg):
            expr = f"(instr({text(s, scope)}, {text(sub, scope)}) > 0)"
            return f"(NOT {expr})" if neg else expr
        case n.Constraint(name="match", args=(pattern, s), negated=neg):
            expr = f"regexp_like({text(s, scope)}, concat('^(?:', {text(pattern, scope)}, ')$'))"
            return f"(NOT {expr})" if neg else expr
        case _:
            raise AssertionError(lit)


def produced_symbols(term: n.Term) -> list[n.Call]:
    """Functor calls in a term that create symbols (their strings go to the symbol table)."""
    out = []
    match term:
        case n.Call(name=name, args=args):
            if name in ("cat", "substr", "to_string"):
                out.append(term)
            for a in args:
                out += produced_symbols(a)
        case n.BinOp(left=left, right=right):
            out += produced_symbols(left) + produced_symbols(right)
        case n.UnaryOp(arg=arg):
            out += produced_symbols(arg)
    return out
