"""Value semantics without Spark: Soufflé's facts-file field rules, the first bad line of a
facts file, which variables need their text, and the reference evaluator's value functions
(each worked out from Soufflé's sources: StringUtil.h, ReadStreamCSV.h, Engine.cpp)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sparklog.io.facts import Source, first_bad_line, parse_field
from sparklog.spark import expressions as X
from sparklog.syntax import nodes as n
from tests import reference as R

INT_MIN, INT_MAX, UINT_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1


@pytest.mark.parametrize("text, kind, value", [
    ("5", "number", 5), (" \t5", "number", 5), ("+5", "number", 5), ("-0", "number", 0),
    ("0009", "number", 9), (str(INT_MAX), "number", INT_MAX), (str(INT_MIN), "number", INT_MIN),
    ("0x1F", "unsigned", 31), ("0b101", "unsigned", 5), (str(UINT_MAX), "unsigned", UINT_MAX),
    ("0xffffffffffffffff", "unsigned", UINT_MAX), ("+3", "unsigned", 3),
    ("1.5", "float", 1.5), ("-.5e1", "float", -5.0), ("INF", "float", math.inf),
    ("a\\tb \"c\"", "symbol", "a\\tb \"c\""), ("", "symbol", ""),
])
def test_fields_soufflé_reads(text, kind, value):
    assert parse_field(text, kind) == value


@pytest.mark.parametrize("text, kind, why", [
    ("3.7", "number", "not an integer"), ("5 ", "number", "not an integer"),
    ("", "number", "not an integer"), ("0x10", "number", "not an integer"),
    (str(INT_MAX + 1), "number", "64-bit range"), (str(INT_MIN - 1), "number", "64-bit range"),
    ("-1", "unsigned", "negative"), (str(UINT_MAX + 1), "unsigned", "range"),
    ("0b", "unsigned", "not an unsigned"), ("0x", "unsigned", "not an unsigned"),
    ("1e999", "float", "range of a double"), ("1.5f", "float", "not a float"),
])
def test_fields_soufflé_rejects(text, kind, why):
    with pytest.raises(ValueError, match=why):
        parse_field(text, kind)


def _source(tmp_path: Path, content: bytes) -> Source:
    path = tmp_path / "r.facts"
    path.write_bytes(content)
    return Source("r", "file", path)


def test_first_bad_line_names_line_column_and_reason(tmp_path):
    kinds = ("symbol", "number")
    bad = first_bad_line(_source(tmp_path, b"a\t1\r\nbb\t99999999999999999999\n"), kinds)
    assert (bad.span.line, bad.span.col) == (2, 4)
    assert "'99999999999999999999' is not a number (column 2 of r: out of the 64-bit range)" \
        in bad.message


def test_first_bad_line_ignores_extra_columns_and_stops_at_a_blank_line(tmp_path):
    bad = first_bad_line(_source(tmp_path, b"a\t1\textra\n\nb\t2\n"), ("symbol", "number"))
    assert bad.span.line == 2 and "1 columns, but relation r has 2" in bad.message


def test_string_vars_are_only_text_positions():
    i, a, b = n.Var("i"), n.Var("a"), n.Var("b")
    assert X.string_vars(n.Call("substr", (a, i, n.Var("len")))) == {"a"}
    assert X.string_vars(n.Call("to_string", (i,))) == set()
    assert X.string_vars(n.Call("cat", (a, n.Call("to_string", (i,))))) == {"a"}
    assert X.string_vars(n.Comparison("<", a, b)) == {"a", "b"}
    assert X.string_vars(n.Comparison("=", a, b)) == set()


# ---------------------------------------------------------------------------------------
# The reference evaluator's value functions


@pytest.mark.parametrize("a, b, expected", [
    (3, 39, 4052555153018976256),  # through a double, as Soufflé: not 3**39
    (2, 62, 1 << 62), (2, 63, INT_MIN), (2, 64, INT_MIN), (2, -1, 0), (-1, -3, -1),
    (0, -1, INT_MIN), (-3, 3, -27), (0, 0, 1),
])
def test_power_is_a_cast_double(a, b, expected):
    assert R.binop("^", a, b) == expected


def test_unsigned_arithmetic_wraps_and_orders_unsigned():
    top = R.binop("-", R.Unsigned(0), R.Unsigned(1))
    assert top == UINT_MAX and isinstance(top, R.Unsigned)
    assert top > R.Unsigned(5)
    assert R.binop("/", top, R.Unsigned(2)) == INT_MAX
    assert R.binop("%", top, R.Unsigned(10)) == 5
    assert R.binop("bshr", top, R.Unsigned(60)) == 15
    assert R.binop("^", R.Unsigned(1 << 32), R.Unsigned(2)) == 0  # 2^64 as uint64: 0
    assert R.FUNCTIONS["max"](top, R.Unsigned(1)) == UINT_MAX
    assert R.FUNCTIONS["to_string"](top) == str(UINT_MAX)
    assert R.FUNCTIONS["to_unsigned"](-1) == UINT_MAX
    assert R.unop("neg", R.Unsigned(1)) == UINT_MAX


def test_float_division_by_zero():
    assert R.binop("/", 1.5, 0.0) == math.inf
    assert R.binop("/", 1.5, -0.0) == -math.inf
    assert R.binop("/", -1.5, 0.0) == -math.inf
    assert math.isnan(R.binop("/", 0.0, 0.0))


@pytest.mark.parametrize("s, value", [
    ("-0xcafe", -51966), ("0x1F", 31), ("0x", 0), ("0b101", 5), ("-0b11", -3),
    (" 42abc", 42), ("+7", 7), ("7.9", 7), (str(INT_MIN), INT_MIN),
])
def test_to_number(s, value):
    assert R.FUNCTIONS["to_number"](s) == value


@pytest.mark.parametrize("s", ["abc", "", "0b", "0b2", str(INT_MAX + 1), "x1"])
def test_to_number_fails(s):
    with pytest.raises(R.Fail):
        R.FUNCTIONS["to_number"](s)


def test_strings_are_bytes():
    assert R.FUNCTIONS["strlen"]("héllo") == 6
    assert R.FUNCTIONS["substr"]("héllo", 1, 2) == "é"
    assert R.FUNCTIONS["substr"]("abc", 1, -1) == "bc"
    assert R.FUNCTIONS["substr"]("abc", 3, 1) == ""
    assert R.FUNCTIONS["substr"]("abc", -1, 1) == ""
    assert R.FUNCTIONS["to_string"](1.5) == "1.500000"


@pytest.mark.parametrize("template", [
    "to_number(to_string({}))", "strlen(substr(to_string({}), 1, 2))", "({}) ^ 2",
    "to_unsigned(to_float({}) / 3.0)", "to_number(to_string(to_unsigned({}) / 3u))",
])
def test_nested_conversions_translate_to_sql_linear_in_the_nesting(template):
    """A translation that writes an argument's SQL several times multiplies the text at
    every level of nesting (three nested to_number(to_string(..)) made 2 MB): each such
    argument is evaluated once instead, bound to a lambda variable (expressions._once)."""
    from sparklog.syntax.parser import parse

    def size(depth: int) -> int:
        term = "x"
        for _ in range(depth):
            term = template.format(term)
        clause = parse(f".decl a(x:number)\n.decl b(y:number)\nb(y) :- a(x), y = {term}.\n"
                       ).clauses[0]
        return len(X.value(clause.body[1].right, X.Scope({"x": "v0"}, {"x": "number"})))

    one, three = size(1), size(3)
    assert three < 5 * one, (one, three)  # written thrice, it would be 20-750 times
