"""Datalog terms -> Spark SQL expression text, evaluated in the JVM.

Symbols are interned: a symbol column holds ``xxhash64`` of the string. Functors that look
inside a symbol read a ``<column>__s`` companion column with the string (joined from the
symbol table by the translator) and hash their symbol results back.
"""

from __future__ import annotations

import re
import zlib

from collections.abc import Callable
from dataclasses import dataclass, field

from sparklog.syntax import nodes as n

NUMERIC = ("number", "unsigned", "float")
# Which arguments of a functor or constraint are read as text (None: all of them).
TEXT_ARGS: dict[str, tuple[int, ...] | None] = {
    "cat": None, "contains": None, "match": None, "strlen": (0,), "substr": (0,), "to_number": (0,),
    "min": None, "max": None}  # min and max of symbols
STRING_FUNCTORS = set(TEXT_ARGS)
ORDERING = ("<", "<=", ">", ">=")

# Unsigned values are stored as the same 64 bits in a signed BIGINT; flipping the sign bit
# maps unsigned order onto signed order.
SIGN_BIT = "CAST('-9223372036854775808' AS BIGINT)"
TWO_64 = "18446744073709551616BD"
TWO_63_D = "9.223372036854775808E18D"


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
    named: int = 0  # columns named so far: a dropped variable's name is never reused

    def bind(self, var: str, kind: str) -> str:
        col = self.columns.get(var)
        if col is None:
            col = self.columns[var] = f"v{self.named}"
            self.named += 1
            self.kinds[var] = kind
        return col

    def drop(self, var: str) -> str:
        """Forget a variable no later step reads; its column's name."""
        del self.kinds[var]
        return self.columns.pop(var)


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
    """Variables whose text a term or constraint may need.

    Only variables in a text position: the symbol argument of ``substr``, not its index.
    Ordering comparisons name both sides; the translator joins only symbol-kinded ones.
    """
    out: set[str] = set()
    match term:
        case n.Call(name=name, args=args) | n.Constraint(name=name, args=args):
            positions = TEXT_ARGS.get(name, ())
            for i, a in enumerate(args):
                if isinstance(a, n.Var) and (positions is None or i in positions):
                    out.add(a.name)
                out |= string_vars(a)
        case n.Comparison(op=op, left=left, right=right):
            if op in ORDERING:
                out |= {t.name for t in (left, right) if isinstance(t, n.Var)}
            out |= string_vars(left) | string_vars(right)
        case n.BinOp(left=left, right=right):
            out |= string_vars(left) | string_vars(right)
        case n.UnaryOp(arg=arg):
            out |= string_vars(arg)
    return out


def unsigned_decimal(sql: str) -> str:
    """The unsigned value (DECIMAL(20,0)) of 64 bits stored in a BIGINT."""
    return _once(sql, lambda x: f"(CAST({x} AS DECIMAL(20,0)) + CASE WHEN {x} < 0 THEN "
                                f"{TWO_64} ELSE 0BD END)")


def unsigned_bits(decimal_sql: str) -> str:
    """The BIGINT holding the 64 bits of an unsigned value in [0, 2^64)."""
    return _once(decimal_sql, lambda d: f"CAST(CASE WHEN {d} >= 9223372036854775808BD THEN "
                                        f"{d} - {TWO_64} ELSE {d} END AS BIGINT)")


def double_to_signed(sql: str) -> str:
    """C++ ``static_cast<int64_t>(double)`` as x86-64 does it: out of range (or NaN) gives
    the 'integer indefinite' value -2^63."""
    return _once(sql, lambda x: f"CASE WHEN NOT isnan({x}) AND {x} >= -{TWO_63_D} AND "
                                f"{x} < {TWO_63_D} THEN CAST({x} AS BIGINT) ELSE {SIGN_BIT} END")


def double_to_unsigned(sql: str) -> str:
    """C++ ``static_cast<uint64_t>(double)`` as gcc compiles it for x86-64 (values from
    2^63 go through ``x - 2^63`` and a flipped top bit; 2^64 and beyond give 0)."""
    def build(x: str) -> str:
        high = f"({x} - {TWO_63_D})"
        return (f"CASE WHEN isnan({x}) THEN {SIGN_BIT} WHEN {x} >= {TWO_63_D} THEN "
                f"(CASE WHEN {high} < {TWO_63_D} THEN CAST({high} AS BIGINT) ^ {SIGN_BIT} "
                f"ELSE 0L END) ELSE {double_to_signed(x)} END")
    return _once(sql, build)


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
            return _substr(text(s, scope), value(start, scope), value(length, scope))
        case n.Call(name="to_string", args=(x,)):
            return _to_string(value(x, scope), kind_of(x, scope))
        case n.Call(name="min" | "max" as name, args=args):  # C++ string order: by bytes
            return f"{'least' if name == 'min' else 'greatest'}({', '.join(text(a, scope) for a in args)})"
        case _:
            raise AssertionError(f"no text for {term!r}")


def _substr(s: str, i: str, length: str) -> str:
    """C++ ``s.substr(i, length)`` on the UTF-8 bytes (Soufflé's substr): an index below 0
    or past the end gives "", a negative length takes the rest."""
    def build(s: str, i: str, length: str) -> str:
        size = f"CAST(octet_length({s}) AS BIGINT)"
        take = f"CASE WHEN {length} < 0 OR {length} > {size} THEN {size} ELSE {length} END"
        return (f"(CASE WHEN {i} < 0 OR {i} > {size} THEN '' ELSE CAST(substring("
                f"encode({s}, 'UTF-8'), CAST({i} AS INT) + 1, CAST({take} AS INT)) AS STRING) END)")
    return _shared([s, i, length], build)


def _to_string(x: str, kind: str) -> str:
    """C++ ``std::to_string``: decimal integers, floats as ``%f``."""
    if kind == "unsigned":
        return f"CAST({unsigned_decimal(x)} AS STRING)"
    if kind == "float":
        return float_fixed6(x)
    return f"CAST({x} AS STRING)"


def exact_decimal(x: str) -> str:
    """The exact decimal expansion of a finite double (JVM BigDecimal, no rounding)."""
    return f"reflect('scala.math.BigDecimal', 'exact', {x})"


def float_fixed6(x: str) -> str:
    """C's ``%f`` of a double. Rounding the exact expansion half-up is C's rounding: a
    double is never exactly halfway between two multiples of 10^-6. Not through
    :func:`_once`: ``reflect`` is nondeterministic, and Spark does not initialize a
    nondeterministic expression inside a lambda's body."""
    mag = f"CAST(CAST({exact_decimal(f'abs({x})')} AS DECIMAL(38,6)) AS STRING)"
    big = f"concat({exact_decimal(f'abs({x})')}, '.000000')"
    negative = f"({x} < 0 OR CAST({x} AS STRING) = '-0.0')"
    return (f"CASE WHEN isnan({x}) THEN 'nan' WHEN {x} = double('inf') THEN 'inf' "
            f"WHEN {x} = double('-inf') THEN '-inf' ELSE concat(CASE WHEN {negative} THEN '-' "
            f"ELSE '' END, CASE WHEN abs({x}) < 1e31D THEN {mag} ELSE {big} END) END")


def _let(value: str, var: str, body: str) -> str:
    """``body`` with ``var`` bound to ``value``, evaluated once (a one-element transform)."""
    return f"element_at(transform(array({value}), {var} -> {body}), 1)"


_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|-?[0-9]+(\.[0-9]+)?[LD]?|'[^'\\]*'")


def _once(sql: str, build: Callable[[str], str]) -> str:
    """``build(x)``, where the SQL ``build`` writes names ``x`` several times, with ``x``
    standing for ``sql`` evaluated once: a column or a literal as it is, anything else
    bound to a lambda variable (:func:`_let`). Otherwise every call nested in the argument
    would multiply the text, exponentially in the nesting. The variable's name is a hash
    of ``sql``, so the same term always gives the same text (Spark compiles a plan's
    expressions by their text)."""
    return _shared([sql], build)


def _shared(sqls: list[str], build: Callable[..., str]) -> str:
    """:func:`_once` for several arguments, bound together (a struct in one lambda
    variable): a value bound inside another binding's lambda would sit in that lambda's
    body, where Spark does not initialize a nondeterministic expression (``reflect``, in
    the text of a float). ``build`` itself must not write one."""
    bound = [i for i, sql in enumerate(sqls) if not _SIMPLE.fullmatch(sql)]
    if not bound:
        return build(*sqls)
    var = f"l{zlib.crc32('|'.join(sqls).encode()):08x}"
    if len(sqls) == 1:
        return _let(sqls[0], var, build(var))
    fields = ", ".join(f"'p{i}', {sqls[i]}" for i in bound)
    args = [f"{var}.p{i}" if i in bound else sql for i, sql in enumerate(sqls)]
    return _let(f"named_struct({fields})", var, build(*args))


def float_g17(x: str) -> str:
    """C++ ``ostream << setprecision(17) << x`` (``%.17g``), as Soufflé writes floats: the
    exact binary value rounded half-even to 17 significant digits, trailing zeros dropped,
    scientific notation below 1e-4 and from 1e17 (``1``, ``0.10000000000000001``, ``1e+20``).
    """
    # (1) significant digits and decimal exponent of the exact expansion of |x|
    digits = "replace(regexp_extract(e, '^([0-9.]+)', 1), '.', '')"
    exp10 = "CAST(coalesce(nullif(regexp_extract(e, 'E([+-]?[0-9]+)$', 1), ''), '0') AS INT)"
    point = f"length(split(regexp_extract(e, '^([0-9.]+)', 1), '[.]')[0]) + {exp10}"
    sig = f"TRIM(LEADING '0' FROM {digits})"
    located = (f"named_struct('sig', {sig}, 'x', {point} - 1 - (length({digits}) - "
               f"length({sig})))")
    # (2) round to 17 digits, half to even on the exact rest
    pad, rest = "rpad(t.sig, 18, '0')", "substr(t.sig, 19)"
    up = (f"(substr({pad}, 18, 1) > '5' OR (substr({pad}, 18, 1) = '5' AND ({rest} RLIKE '[1-9]' "
          f"OR CAST(substr({pad}, 17, 1) AS INT) % 2 = 1)))")
    m = f"(CAST(substr({pad}, 1, 17) AS DECIMAL(18,0)) + CASE WHEN {up} THEN 1 ELSE 0 END)"
    carry = f"{m} = 100000000000000000BD"
    rounded = (f"named_struct('d', CASE WHEN {carry} THEN '10000000000000000' "
               f"ELSE CAST({m} AS STRING) END, 'x', t.x + CASE WHEN {carry} THEN 1 ELSE 0 END)")
    # (3) %g layout
    strip = lambda s: f"regexp_replace(regexp_replace({s}, '0+$', ''), '[.]$', '')"
    fixed = ("CASE WHEN u.x >= 0 THEN concat(substr(u.d, 1, u.x + 1), '.', substr(u.d, u.x + 2)) "
             "ELSE concat('0.', repeat('0', -u.x - 1), u.d) END")
    mantissa = strip("concat(substr(u.d, 1, 1), '.', substr(u.d, 2))")
    sci = (f"concat({mantissa}, 'e', "
           f"CASE WHEN u.x < 0 THEN '-' ELSE '+' END, CASE WHEN abs(u.x) < 10 THEN '0' ELSE '' END, CAST(abs(u.x) AS STRING))")
    layout = f"CASE WHEN u.x >= -4 AND u.x < 17 THEN {strip(fixed)} ELSE {sci} END"
    body = _let(located, "t", _let(rounded, "u", layout))
    magnitude = _let(exact_decimal(f"abs({x})"), "e", body)
    return (f"CASE WHEN {x} IS NULL THEN NULL WHEN isnan({x}) THEN 'nan' "
            f"WHEN {x} = double('inf') THEN 'inf' WHEN {x} = double('-inf') THEN '-inf' "
            f"WHEN {x} = 0 THEN CASE WHEN CAST({x} AS STRING) LIKE '-%' THEN '-0' ELSE '0' END "
            f"ELSE concat(CASE WHEN {x} < 0 THEN '-' ELSE '' END, {magnitude}) END")


_ARITH = {"+": "+", "-": "-", "*": "*", "band": "&", "bor": "|", "bxor": "^"}
_SHIFTS = {"bshl": "shiftleft", "bshr": "shiftright", "bshru": "shiftrightunsigned"}


def _binop(term: n.BinOp, scope: Scope) -> str:
    a, b, op = value(term.left, scope), value(term.right, scope), term.op
    kind = kind_of(term, scope)
    if op in _ARITH:  # the same 64 bits for number and unsigned (wrapping)
        return f"({a} {_ARITH[op]} {b})"
    if kind == "float":
        return _float_binop(op, a, b)
    if kind == "unsigned" and op in ("/", "%"):
        def exact(ua: str, ub: str) -> str:
            return f"(({ua} - {ua} % {ub}) / {ub})" if op == "/" else f"({ua} % {ub})"
        quotient = _shared([unsigned_decimal(a), unsigned_decimal(b)], exact)
        return unsigned_bits(f"CAST({quotient} AS DECIMAL(20,0))")
    if op == "/":
        return f"({a} div {b})"
    if op == "%":
        return f"({a} % {b})"
    if op == "^":  # Soufflé: static_cast<RamSigned/RamUnsigned>(std::pow(double, double))
        if kind == "unsigned":
            return double_to_unsigned(
                f"pow(CAST({unsigned_decimal(a)} AS DOUBLE), CAST({unsigned_decimal(b)} AS DOUBLE))")
        return double_to_signed(f"pow(CAST({a} AS DOUBLE), CAST({b} AS DOUBLE))")
    if op in _SHIFTS:
        fn = "shiftrightunsigned" if kind == "unsigned" and op == "bshr" else _SHIFTS[op]
        return f"{fn}({a}, CAST(pmod({b}, 64) AS INT))"
    logic = {"land": f"({a} != 0 AND {b} != 0)", "lor": f"({a} != 0 OR {b} != 0)",
             "lxor": f"(({a} != 0) != ({b} != 0))"}[op]
    return f"(CASE WHEN {logic} THEN 1L ELSE 0L END)"


def _float_binop(op: str, a: str, b: str) -> str:
    """IEEE division (x / 0.0 is +-inf or nan, as in C++), pow."""
    if op == "^":
        return f"pow({a}, {b})"
    assert op == "/", op

    def build(a: str, b: str) -> str:
        negative_zero = f"CAST({b} AS STRING) LIKE '-%'"
        return (f"(CASE WHEN {b} != 0 THEN {a} / {b} WHEN isnan({a}) OR {a} = 0 THEN "
                f"double('NaN') WHEN ({a} > 0) != ({negative_zero}) THEN double('inf') "
                "ELSE double('-inf') END)")
    return _shared([a, b], build)


def _call(term: n.Call, scope: Scope) -> str:
    args = term.args
    match term.name:
        case "cat" | "substr" | "to_string":
            return symbol_id(text(term, scope))
        case "strlen":  # Soufflé counts bytes
            return f"CAST(octet_length({text(args[0], scope)}) AS BIGINT)"
        case "to_number":
            kind = kind_of(args[0], scope)
            if kind == "symbol":
                return to_number(text(args[0], scope))
            x = value(args[0], scope)  # static_cast<int64_t>: an unsigned keeps its bits
            return double_to_signed(x) if kind == "float" else x
        case "to_float":
            x = value(args[0], scope)
            if kind_of(args[0], scope) == "unsigned":
                x = unsigned_decimal(x)
            return f"CAST({x} AS DOUBLE)"
        case "to_unsigned":
            x = value(args[0], scope)
            return double_to_unsigned(x) if kind_of(args[0], scope) == "float" else x
        case "ord":
            return value(args[0], scope)
        case "range":  # the values it generates, as an array (translate explodes it)
            return range_values(kind_of(term, scope), *(value(a, scope) for a in args))
        case "min" | "max" if kind_of(term, scope) == "symbol":
            return symbol_id(text(term, scope))
        case "min" | "max":
            fn = "least" if term.name == "min" else "greatest"
            values = [value(a, scope) for a in args]
            if kind_of(term, scope) == "unsigned":
                flipped = ", ".join(f"{v} ^ {SIGN_BIT}" for v in values)
                return f"({fn}({flipped}) ^ {SIGN_BIT})"
            return f"{fn}({', '.join(values)})"
        case _:
            raise AssertionError(term.name)


def range_values(kind: str, start: str, end: str, step: str | None = None) -> str:
    """SQL for the array of what Soufflé's ``range(start, end[, step])`` generates: from
    start towards end, end excluded, by step (by default 1 upwards, -1 downwards); a step
    of 0 gives start alone, unless start = end. Over ``unsigned`` values in unsigned order
    (an unsigned step is never negative), over ``float`` values each one the one before
    plus step, rounded as Soufflé's loop rounds it (``x += step``)."""
    if kind == "float":
        return _float_range(start, end, step)
    if kind != "unsigned":
        return _integer_range(start, end, step)
    # x ^ SIGN_BIT is x + 2^63 (mod 2^64): it maps unsigned order onto signed order and
    # commutes with adding a step, so the signed range of the flipped ends, flipped back
    flip = lambda x: f"({x} ^ {SIGN_BIT})"  # noqa: E731
    values = f"transform({_integer_range(flip(start), flip(end), step)}, _r -> _r ^ {SIGN_BIT})"
    if step is None:
        return values
    # a step of 2^63 or more (negative as bits) passes ``end`` at once: start alone
    return (f"(CASE WHEN {step} < 0 THEN (CASE WHEN {flip(start)} < {flip(end)} THEN "
            f"array({start}) ELSE CAST(array() AS ARRAY<BIGINT>) END) ELSE {values} END)")


def _integer_range(start: str, end: str, step: str | None) -> str:
    step = step or f"(CASE WHEN {start} <= {end} THEN 1L ELSE -1L END)"
    last = lambda toward: f"{start} + (({end} - {start} {toward}) div {step}) * {step}"  # noqa: E731
    return (f"(CASE WHEN {step} > 0 AND {start} < {end} THEN sequence({start}, {last('- 1')}, "
            f"{step}) WHEN {step} < 0 AND {start} > {end} THEN sequence({start}, "
            f"{last('+ 1')}, {step}) WHEN {step} = 0 AND {start} != {end} THEN array({start}) "
            "ELSE CAST(array() AS ARRAY<BIGINT>) END)")


def _float_range(start: str, end: str, step: str | None) -> str:
    """Soufflé adds the step to the value before (``for (x = from; x < to; x += step)``),
    so 0.1 + 0.1 + 0.1 and not 3 * 0.1. Where every value is exact (start and step
    multiples of 2^-32, the ends and step under 2^16, so every sum is a multiple of 2^-32
    under 2^18) that is ``start + i * step``, made in one pass; else each value is the one
    before plus step, which takes time quadratic in the number of values (Spark's arrays
    are immutable). Either way one value more than the quotient promises is made, and
    those that do not come before ``end`` are dropped."""
    step = step or f"(CASE WHEN {start} <= {end} THEN 1D ELSE -1D END)"
    count = f"CAST(ceil(({end} - {start}) / {step}) AS BIGINT)"
    scale = "4294967296D"
    exact = " AND ".join(f"{x} * {scale} = floor({x} * {scale})" for x in (start, step)) + \
        f" AND greatest(abs({start}), abs({end}), abs({step})) < 65536D"
    closed = f"transform(sequence(0L, {count}), _i -> {start} + _i * {step})"
    added = (f"aggregate(sequence(1L, {count}), array({start}), "
             f"(_a, _i) -> concat(_a, array(element_at(_a, -1) + {step})))")
    values = f"(CASE WHEN {exact} THEN {closed} ELSE {added} END)"
    return (f"(CASE WHEN {step} > 0 AND {start} < {end} THEN filter({values}, _x -> _x < {end}) "
            f"WHEN {step} < 0 AND {start} > {end} THEN filter({values}, _x -> _x > {end}) "
            f"WHEN {step} = 0 AND {start} != {end} THEN array({start}) "
            "ELSE CAST(array() AS ARRAY<DOUBLE>) END)")


def is_range(term: n.Term) -> bool:
    return isinstance(term, n.Call) and term.name == "range"


def integer_from_digits(sign: str, digits: str, base: int, unsigned: bool = False) -> str:
    """The BIGINT that a sign ('', '-' or '+') and digits in ``base`` spell; NULL when there
    are no digits or the value is out of range (signed or unsigned 64 bits)."""
    trimmed = f"TRIM(LEADING '0' FROM {digits})"
    longest = {2: 64, 10: 20, 16: 16}[base]
    decimal = trimmed if base == 10 else f"conv({trimmed}, {base}, 10)"
    d = (f"CAST(concat({sign}, CASE WHEN {trimmed} = '' THEN '0' ELSE {decimal} END) "
         f"AS DECIMAL(20,0))")
    if unsigned:
        in_range, result = f"{d} <= 18446744073709551615BD", unsigned_bits(d)
    else:
        in_range = f"{d} BETWEEN -9223372036854775808BD AND 9223372036854775807BD"
        result = f"CAST({d} AS BIGINT)"
    return (f"CASE WHEN {digits} = '' OR length({trimmed}) > {longest} THEN NULL "
            f"WHEN {in_range} THEN {result} END")


def to_number(s: str) -> str:
    """Soufflé's to_number (``RamSignedFromString(s, nullptr, 0)``): a ``0x``/``-0x`` or
    ``0b``/``-0b`` prefix picks base 16 or 2; otherwise base 10 after leading space. Like
    ``std::stoll`` it reads the longest valid prefix; no digits or overflow gives NULL
    (Soufflé aborts the program there)."""
    return _once(s, _to_number)


def _to_number(s: str) -> str:
    hexa = f"regexp_extract({s}, '^-?0x([0-9a-fA-F]*)', 1)"
    hexa_sign = f"regexp_extract({s}, '^(-?)', 1)"
    binary = f"regexp_extract({s}, '^-?0b([01]*)', 1)"
    dec = f"regexp_extract({s}, '^\\\\s*([+-]?)[0-9]', 1)"
    dec_digits = f"regexp_extract({s}, '^\\\\s*[+-]?([0-9]*)', 1)"
    hex_value = f"CASE WHEN {hexa} = '' THEN 0L ELSE {integer_from_digits(hexa_sign, hexa, 16)} END"
    return (f"(CASE WHEN {s} RLIKE '^-?0x' THEN {hex_value} "
            f"WHEN {s} RLIKE '^-?0b' THEN {integer_from_digits(hexa_sign, binary, 2)} "
            f"ELSE {integer_from_digits(dec, dec_digits, 10)} END)")


def condition(lit: n.Comparison | n.Constraint | n.BoolLit, scope: Scope) -> str:
    """SQL for a body constraint."""
    match lit:
        case n.BoolLit(value=v):
            return "TRUE" if v else "FALSE"
        case n.Comparison(op="=", left=left, right=right) if is_range(left) or is_range(right):
            values, other = (left, right) if is_range(left) else (right, left)
            return f"array_contains({value(values, scope)}, {value(other, scope)})"
        case n.Comparison(op=op, left=left, right=right):
            kind = kind_of(left, scope)
            if op in ORDERING and kind == "symbol":  # Soufflé compares the strings
                return f"({text(left, scope)} {op} {text(right, scope)})"
            a, b = value(left, scope), value(right, scope)
            if op in ORDERING and "unsigned" in (kind, kind_of(right, scope)):
                return f"(({a} ^ {SIGN_BIT}) {op} ({b} ^ {SIGN_BIT}))"
            return f"({a} {op} {b})"
        case n.Constraint(name="contains", args=(sub, s), negated=neg):
            expr = f"(instr({text(s, scope)}, {text(sub, scope)}) > 0)"
            return f"(NOT {expr})" if neg else expr
        case n.Constraint(name="match", args=(pattern, s), negated=neg):
            expr = _match(pattern, s, scope)
            return f"(NOT {expr})" if neg else expr
        case _:
            raise AssertionError(lit)


# Soufflé's match is C++'s std::regex_match, whose ECMAScript grammar Java's regexes
# share but for the POSIX classes inside brackets (``[[:digit:]]``), which Java reads as
# the characters ':', 'd', 'i', ...: each is rewritten to Java's class of the same ASCII
# characters before the pattern is compiled.
_POSIX_CLASSES = {"alpha": r"\p{Alpha}", "digit": r"\p{Digit}", "alnum": r"\p{Alnum}",
                  "upper": r"\p{Upper}", "lower": r"\p{Lower}", "space": r"\p{Space}",
                  "blank": r"\p{Blank}", "punct": r"\p{Punct}", "xdigit": r"\p{XDigit}",
                  "cntrl": r"\p{Cntrl}", "graph": r"\p{Graph}", "print": r"\p{Print}",
                  "w": r"\w", "d": r"\p{Digit}", "s": r"\p{Space}"}


def _match(pattern: n.Term, s: n.Term, scope: Scope) -> str:
    """SQL for ``match(pattern, s)``: the whole of s matches. A pattern that is not a
    valid regex matches nothing, as in Soufflé (which warns): a constant one is known
    before the run; one read from data is compiled per row by ``Pattern.matches``
    through ``try_reflect``, which gives NULL where it does not compile, where Spark's
    own regex functions would fail the whole run."""
    java = _bytewise(text(pattern, scope))
    for name, cls in _POSIX_CLASSES.items():
        java = f"replace({java}, {sql_string(f'[:{name}:]')}, {sql_string(cls)})"
    subject = _bytewise(text(s, scope))
    if isinstance(pattern, n.String):
        if not _compiles(pattern.value):
            return "FALSE"
        return f"regexp_like({subject}, concat('^(?:', {java}, ')$'))"
    return (f"coalesce(try_reflect('java.util.regex.Pattern', 'matches', {java}, "
            f"{subject}) = 'true', FALSE)")


def _bytewise(s: str) -> str:
    """A string whose characters are the UTF-8 bytes of ``s``: std::regex matches bytes,
    so ``.`` is one byte of ``é`` (two bytes), as strlen and substr count them. Java's
    classes (``\\w``, ``\\p{Alpha}``) are ASCII, as C's are in the C locale."""
    return f"decode(encode({s}, 'UTF-8'), 'ISO-8859-1')"


def _compiles(pattern: str) -> bool:
    """Whether a constant pattern is a regex (checked by Python's, whose syntax is the
    common part of ECMAScript's and Java's; a POSIX class stands in as a range)."""
    for name in _POSIX_CLASSES:
        pattern = pattern.replace(f"[:{name}:]", "0-9")
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


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
