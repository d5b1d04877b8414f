"""Values as Soufflé has them: string functors with variable arguments, symbol order, unsigned,
``^``, to_number, bytes, float division and printing, and facts files read like Soufflé's
ReadStreamCSV. Oracles: answers worked out from Soufflé's sources (Engine.cpp, StringUtil.h,
ReadStreamCSV.h, WriteStreamCSV.h) and the reference evaluator."""

from __future__ import annotations

import random
import struct
from decimal import Decimal

import pytest

import sparklog
from sparklog.errors import DataError
from sparklog.io.facts import as_text_lines, field_value, parse_field
from sparklog.syntax.parser import parse
from tests import reference
from tests.spark.helpers import rows, run

INT_MIN = -(1 << 63)


def agree(engine, text: str) -> dict[str, set]:
    """Run ``text`` on Spark and in the reference evaluator; they must agree on every relation."""
    ast = parse(text, "values.dl")
    expected = reference.evaluate(ast)
    result = engine.run(sparklog.Program(ast))
    out = {}
    for decl in ast.decls:
        got = rows(result[decl.name])
        assert got == expected[decl.name], decl.name
        out[decl.name] = got
    return out


def test_string_functors_take_variable_numbers(engine):
    """Numeric variables of substr (index, length), to_string, cat are not joined against the
    symbol table (they used to drop every tuple)."""
    got = agree(engine, """
.decl si(a: symbol, i: number, n: number)
si("hello", 1, 2). si("abc", 0, 2). si("abc", 1, -1). si("xy", -1, 1). si("xy", 2, 1).
si("xy", 3, 1).
.decl r(a: symbol, i: number, y: symbol)
r(a, i, y) :- si(a, i, 2), y = substr(a, i, 2).
.decl sub(a: symbol, i: number, n: number, y: symbol)
sub(a, i, n, substr(a, i, n)) :- si(a, i, n).
.decl c(y: symbol, l: number)
c(y, strlen(y)) :- si(a, i, n), y = cat(a, to_string(i), to_string(n)).
.decl has(a: symbol, i: number)
has(a, i) :- si(a, i, _), contains(substr(a, 0, 1), a), match(cat(substr(a, 0, 1), ".*"), a).
""")
    assert got["r"] == {("hello", 1, "el"), ("abc", 0, "ab")}
    assert got["sub"] >= {("abc", 1, -1, "bc"), ("xy", -1, 1, ""), ("xy", 2, 1, ""),
                          ("xy", 3, 1, "")}
    assert ("hello12", 7) in got["c"] and ("xy-11", 5) in got["c"]
    assert len(got["has"]) == 6


def test_conversions_nested_in_conversions(engine):
    """An argument written several times is bound once (expressions._shared): the text of
    a float (which reads its exact digits through a nondeterministic ``reflect``) nested in
    to_number, substr and a division, unsigned division of computed values, powers of
    computed values; each as Soufflé computes it, by the reference evaluator."""
    got = agree(engine, """
.decl f(x: float, i: number)
f(3.14, 2). f(-0.5, 0). f(1234.5678, 5).
.decl o(s: symbol, n: number, p: number, g: float, u: unsigned)
o(substr(to_string(x * 2.0), to_number(to_string(i - 1)), i + 1),
  to_number(substr(to_string(x), 0, to_number(to_string(i)) + 1)),
  (to_number(to_string(i + 1)) + 1) ^ (i - 1),
  (x * 3.0) / (to_float(i) - 2.0),
  (to_unsigned(i + 7) * 3u) / (to_unsigned(to_number(to_string(i))) + 2u)) :- f(x, i).
.decl t(s: symbol)
t("pi:" + to_string(3.14)).
""")
    # x = -0.5 stops at to_number("-"), which has no digits (Soufflé aborts there)
    assert got["t"] == {("pi:3.140000",)} and len(got["o"]) == 2


def test_symbol_ordering_compares_strings(engine):
    got = agree(engine, """
.decl s(x: symbol)
s("a"). s("b"). s("c"). s("B"). s("ab"). s("é").
.decl lt(x: symbol)
lt(x) :- s(x), x < "b".
.decl pair(x: symbol, y: symbol)
pair(x, y) :- s(x), s(y), x >= y, cat(x, "") <= cat(y, "z").
""")
    # byte order, as std::string's compare: upper case first, "é" (0xC3 0xA9) last
    assert got["lt"] == {("a",), ("B",), ("ab",)}
    assert ("é", "é") in got["pair"] and ("c", "é") not in got["pair"]
    assert ("ab", "a") in got["pair"] and ("b", "a") not in got["pair"]


def test_unsigned_values_are_unsigned(engine, tmp_path):
    text = """
.decl u(x: unsigned)
u(9223372036854775808). u(1). u(18446744073709551615u).
.decl neg(x: unsigned)
neg(x) :- x = 0u - 1u.
.decl ops(x: unsigned, q: unsigned, m: unsigned, sh: unsigned, mx: unsigned, f: float)
ops(x, x / 3u, x % 7u, x bshr 1u, max(x, 1u), to_float(x)) :- u(x).
.decl big(x: unsigned)
big(x) :- u(x), x > 5u.
.decl txt(s: symbol)
txt(to_string(x)) :- u(x).
"""
    result = run(engine, text)
    top, half = (1 << 64) - 1, 1 << 63
    assert rows(result["u"]) == {(half,), (1,), (top,)}
    assert rows(result["neg"]) == {(top,)}
    assert rows(result["big"]) == {(half,), (top,)}
    assert rows(result["ops"]) == {
        (half, half // 3, half % 7, half >> 1, half, 9.223372036854775808e18),
        (1, 0, 1, 0, 1, 1.0),
        (top, top // 3, top % 7, top >> 1, top, 1.8446744073709552e19)}
    assert rows(result["txt"]) == {(str(half),), ("1",), (str(top),)}
    assert isinstance(next(iter(rows(result["u"])))[0], Decimal)
    lines = as_text_lines(result["neg"], ("unsigned",), "\t").collect()
    assert [r[0] for r in lines] == ["18446744073709551615"]


def test_power_is_soufflés_cast_of_a_double(engine):
    """Engine.cpp: ``static_cast<RamSigned>(std::pow(first, second))``; x86-64 turns an
    out-of-range double into -2^63."""
    got = agree(engine, """
.decl pa(a: number, b: number)
pa(3, 39). pa(2, 64). pa(2, 62). pa(2, -1). pa(-1, -3). pa(0, -1). pa(-3, 3). pa(10, 18).
.decl p(a: number, b: number, c: number)
p(a, b, a ^ b) :- pa(a, b).
.decl up(a: unsigned, c: unsigned)
up(a, a ^ 2u) :- pa(x, _), x > 0, a = to_unsigned(x) * 4294967296u.
""")
    assert got["p"] == {(3, 39, 4052555153018976256), (2, 64, INT_MIN), (2, 62, 1 << 62),
                        (2, -1, 0), (-1, -3, -1), (0, -1, INT_MIN), (-3, 3, -27),
                        (10, 18, 10**18)}
    assert (2 * 2**32, 0) in got["up"] and (3 * 2**32, 0) in got["up"]


def test_to_number_strlen_and_substr_work_on_bytes(engine):
    got = agree(engine, """
.decl s(x: symbol)
s("-0xcafe"). s("0x1F"). s("0b101"). s("-0b11"). s(" 42abc"). s("+7"). s("héllo"). s("0x").
s("9223372036854775808"). s("0b").
.decl num(x: symbol, n: number)
num(x, to_number(x)) :- s(x).
.decl len(x: symbol, n: number, sub: symbol)
len(x, strlen(x), substr(x, 1, 2)) :- s(x).
""")
    assert got["num"] == {("-0xcafe", -51966), ("0x1F", 31), ("0b101", 5), ("-0b11", -3),
                          (" 42abc", 42), ("+7", 7), ("0x", 0)}
    assert ("héllo", 6, "é") in got["len"]


def test_float_division_by_zero_is_ieee(engine):
    got = agree(engine, """
.decl fz(x: float)
fz(1.5). fz(-2.0). fz(0.0).
.decl f(x: float, p: float, n: float)
f(x, x / 0.0, x / -0.0) :- fz(x), x != 0.0.
""")
    inf = float("inf")
    assert got["f"] == {(1.5, inf, -inf), (-2.0, -inf, inf)}


def test_floats_are_printed_like_cpp_precision_17(spark):
    rnd = random.Random(9)
    values = [1.0, 1e20, 0.1, 1e-300, 5e-324, 1.7976931348623157e308, 1e16, 1e17, 1e-4, 1e-5,
              123456789.125, -3.75, 1 / 3, 100.0, 2.0**60, float("inf"), float("-inf")]
    values += [struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0] for _ in range(200)]
    values = [v for v in values if v == v]
    df = spark.createDataFrame([(v,) for v in values], "c0 double")
    got = [r[0] for r in as_text_lines(df, ("float",), "\t").collect()]
    assert got == ["%.17g" % v for v in values]
    assert got[:3] == ["1", "1e+20", "0.10000000000000001"]


def test_to_string_of_a_float_is_cpp_to_string(engine):
    got = agree(engine, """
.decl f(x: float)
f(1.5). f(0.1). f(-2.25). f(1e40). f(123456.0000005).
.decl t(s: symbol)
t(to_string(x)) :- f(x).
""")
    assert {("1.500000",), ("0.100000",), ("-2.250000",)} <= got["t"]


# ---------------------------------------------------------------------------------------
# Facts files


FIELDS = [
    ("5", "number"), (" 5", "number"), ("5 ", "number"), ("+5", "number"), ("-5", "number"),
    ("3.7", "number"), ("9223372036854775807", "number"), ("9223372036854775808", "number"),
    ("-9223372036854775808", "number"), ("-9223372036854775809", "number"), ("", "number"),
    ("0x10", "number"), ("00012", "number"), ("1e3", "number"), ("- 5", "number"),
    ("0x10", "unsigned"), ("0xFFFFFFFFFFFFFFFF", "unsigned"), ("0x10000000000000000", "unsigned"),
    ("0b101", "unsigned"), ("0b", "unsigned"), ("0x", "unsigned"), (" 7", "unsigned"),
    ("18446744073709551615", "unsigned"), ("18446744073709551616", "unsigned"),
    ("-1", "unsigned"), ("+3", "unsigned"), ("0b12", "unsigned"),
    ("1.5", "float"), ("1e400", "float"), (" inf", "float"), ("-Infinity", "float"),
    ("nan", "float"), ("1.5d", "float"), (".5", "float"), ("5.", "float"), ("1e-3", "float"),
    ("1.5 ", "float"), ("", "float"), ("0x1p3", "float"),
]


def test_fields_read_in_the_jvm_as_parse_field_says(spark):
    """The Spark SQL reader and the Python description of Soufflé's reader agree."""
    df = spark.createDataFrame([(t,) for t, _ in FIELDS], "f string")
    got = df.selectExpr(*[f"{field_value('f', k)} AS v{i}" for i, (_, k) in enumerate(FIELDS)])
    for i, row in enumerate(got.collect()):
        text, kind = FIELDS[i]
        try:
            want = parse_field(text, kind)
        except ValueError:
            want = None
        have = row[i]
        if kind == "unsigned" and have is not None:
            have &= (1 << 64) - 1
        if kind == "float" and want is not None and want != want:
            assert have != have, (text, kind)
        else:
            assert have == want, (text, kind, have, want)


FACTS = ".decl r(a: symbol, n: number, u: unsigned, f: float)\n.input r\n.output r\n"


def _run_facts(engine, tmp_path, content: bytes, program: str = FACTS):
    (tmp_path / "r.facts").write_bytes(content)
    return run(engine, program, facts_dir=tmp_path)


def test_facts_file_conventions(engine, tmp_path):
    """CRLF ends, leading spaces and '+' in numbers, 0x in unsigned, columns past the arity
    ignored, symbols taken as they are (quotes, backslashes, unicode), 64-bit limits."""
    content = ('a\t+5\t0x10\t1.5\r\n'
               'q"uo\\te\\\\\t -9223372036854775808\t18446744073709551615\t1e-3\textra\tmore\n'
               'ünï ∀\t9223372036854775807\t0b11\tinf\n'
               '\t0\t0\t0\n').encode()
    result = _run_facts(engine, tmp_path, content)
    assert rows(result["r"]) == {
        ("a", 5, 16, 1.5),
        ('q"uo\\te\\\\', INT_MIN, (1 << 64) - 1, 0.001),
        ("ünï ∀", (1 << 63) - 1, 3, float("inf")),
        ("", 0, 0, 0.0)}


def test_empty_facts_file(engine, tmp_path):
    assert rows(_run_facts(engine, tmp_path, b"")["r"]) == set()


def test_single_symbol_column_reads_a_blank_line_as_the_empty_symbol(engine, tmp_path):
    program = ".decl s(a: symbol)\n.input s\n"
    (tmp_path / "s.facts").write_bytes(b"x\n\ny\n")
    assert rows(run(engine, program, facts_dir=tmp_path)["s"]) == {("x",), ("",), ("y",)}


@pytest.mark.parametrize("content, where, what", [
    (b"a\t1\t2\t3.7\nb\t3.7\t1\t1\n", ":2:3", "'3.7' is not a number"),
    (b"a\t1\t2\t3\n\nb\t1\t1\t1\n", ":2:1", "1 columns, but relation r has 4"),
    (b"a\t1\t1\t1\nb\t99999999999999999999\t1\t1\n", ":2:3", "out of the 64-bit range"),
    (b"a\t1\t-1\t1\n", ":1:5", "cannot be negative"),
    (b"a\t5 \t1\t1\n", ":1:3", "'5 ' is not a number"),
    (b"a\t1\t1\t1e999\n", ":1:7", "out of the range of a double"),
    (b"a\t1\t1\n", ":1:1", "3 columns, but relation r has 4"),
])
def test_bad_facts_are_reported_with_file_line_and_column(engine, tmp_path, content, where,
                                                          what):
    with pytest.raises(DataError) as err:
        _run_facts(engine, tmp_path, content)
    message = str(err.value)
    assert f"r.facts{where}" in message and what in message, message


def test_cli_writes_values_as_soufflé_does(spark, tmp_path):
    """WriteStreamCSV: floats with precision 17 (``1``, ``1e+20``), unsigned as unsigned,
    symbols as they are; the output read back as facts gives the same relation."""
    from sparklog.cli import main

    facts = ('w(1.0, 1u, "a\\\\tb\\"c\\"").\nw(1e20, 0u - 1u, "ünï").\n'
             'w(0.1, 9223372036854775808, "x y").\n')
    decl = ".decl w(f: float, u: unsigned, s: symbol)\n"
    write, check = tmp_path / "write.dl", tmp_path / "check.dl"
    write.write_text(decl + ".output w\n" + facts)
    check.write_text(decl + facts + '.decl back(f: float, u: unsigned, s: symbol)\n'
                     '.input back(filename="w.csv")\n'
                     '.decl same(f: float, u: unsigned, s: symbol)\n.output same\n'
                     'same(f, u, s) :- back(f, u, s), w(f, u, s).\n')
    args = ["--master", "local[2]", "--partitions", "2", "-q"]
    assert main(["run", str(write), "-D", str(tmp_path), *args]) == 0
    written = (tmp_path / "w.csv").read_text().splitlines()
    assert sorted(written) == sorted(['1\t1\ta\\tb"c"', '1e+20\t18446744073709551615\tünï',
                                      '0.10000000000000001\t9223372036854775808\tx y'])
    assert main(["run", str(check), "-F", str(tmp_path), "-D", str(tmp_path / "o"), *args]) == 0
    assert len((tmp_path / "o" / "same.csv").read_text().splitlines()) == 3


class _Symbols:
    """The part of a Database check_symbol_table reads."""

    def __init__(self, df) -> None:
        self.symbol_parts = [df] if df is not None else []
        self._df = df

    def symbols(self):
        return self._df


def test_two_symbols_interned_to_one_id_are_an_error(spark):
    from sparklog.errors import EngineError
    from sparklog.spark.decode import check_symbol_table

    fine = spark.createDataFrame([(1, "a"), (2, "b"), (2, "b")], "id long, symbol string")
    check_symbol_table(_Symbols(fine))
    check_symbol_table(_Symbols(None))  # no symbols: nothing to check, no job
    clash = spark.createDataFrame([(1, "a"), (1, "b")], "id long, symbol string")
    with pytest.raises(EngineError, match="share the interned id 1"):
        check_symbol_table(_Symbols(clash))


def test_untyped_constants_take_the_type_their_context_gives(engine):
    """Soufflé types a constant written without a type from where it is used: next to a
    float, ``1 / 2`` is 0.5; in an unsigned column ``0 - 1`` is 2^64 - 1; a variable bound
    only to a constant takes the type of the column it reaches (``half``). Answers worked
    out by hand from that rule; bottom-up typing gave {0.3, 0.7}, 3, 0, {0} and {0.75}."""
    got = agree(engine, """
.decl p(x: float)
p(0.3). p(0.7).
.decl above_half(x: float)
above_half(x) :- p(x), x > 1 / 2.
.decl pi(x: float)
pi(22 / 7).
.decl half(x: float)
half(x / 2) :- x = 1.
.decl big(x: unsigned)
big((0 - 1) / 2).
big(x) :- x = 0 - 1, x > 5.
.decl u(y: unsigned)
u(1u). u(5u).
.decl below_max(y: unsigned)
below_max(y) :- u(y), y < 0 - 1.
.decl g(x: float)
g(x) :- p(x), x * 2 > 3 / 2.
g(x) :- p(x), x * 2 > 1.
.decl s(t: symbol)
s(to_string(1 / 2 + 0.0)).
.decl n(x: number)
n(7 / 2). n(x / 2) :- x = 7.
""")
    assert got["above_half"] == {(0.7,)}
    assert got["pi"] == {(22 / 7,)}
    assert got["half"] == {(0.5,)}
    assert got["big"] == {(2**63 - 1,), (2**64 - 1,)}
    assert got["below_max"] == {(1,), (5,)}
    assert got["g"] == {(0.7,)}
    assert got["s"] == {("0.500000",)}
    assert got["n"] == {(3,)}  # nothing asks for another type: a number


def test_integer_power_in_a_fact_is_the_rules_power(engine):
    """Soufflé's integer ``^`` is ``static_cast<int64_t>(std::pow(double, double))`` in facts
    as in rules; the parser once folded facts exactly (3^39 = ...267, 3^40 wrapped)."""
    got = agree(engine, """
.decl r(k: symbol, v: number)
r("fact", 3 ^ 39). r("rule", x ^ 39) :- x = 3.
r("fact_big", 3 ^ 40). r("rule_big", x ^ 40) :- x = 3.
""")
    assert got["r"] == {("fact", 4052555153018976256), ("rule", 4052555153018976256),
                        ("fact_big", INT_MIN), ("rule_big", INT_MIN)}


def test_match_reads_bytes_as_std_regex_does(engine):
    """std::regex_match over a std::string matches bytes: ``.`` is one byte, so ``h.llo``
    does not match ``héllo`` (é is two bytes in UTF-8) and ``h..llo`` does; strlen counts
    the same bytes. Also with a pattern read from data."""
    got = agree(engine, """
.decl w(s: symbol)
w("hello"). w("héllo").
.decl pat(p: symbol)
pat("h.llo"). pat("h..llo").
.decl one(s: symbol)
one(s) :- w(s), match("h.llo", s).
.decl two(s: symbol)
two(s) :- w(s), match("h..llo", s).
.decl by(p: symbol, s: symbol)
by(p, s) :- pat(p), w(s), match(p, s).
.decl len(s: symbol, n: number)
len(s, strlen(s)) :- w(s).
""")
    assert got["one"] == {("hello",)}
    assert got["two"] == {("héllo",)}
    assert got["by"] == {("h.llo", "hello"), ("h..llo", "héllo")}
    assert got["len"] == {("hello", 5), ("héllo", 6)}


COLUMNS = """
.decl e(a: number, b: symbol)
.input e(columns="2:0")
.output e
"""


def test_input_columns_pick_and_order_the_fields_as_soufflés_reader(engine, tmp_path):
    """``columns="2:0"``: attribute 0 is the line's field 2, attribute 1 its field 0, and
    field 1 is skipped (ReadStreamCSV's input map); it was ignored, so the fields came in
    the file's order. A line too short for field 2, or a bad number there, is reported at
    its place."""
    (tmp_path / "e.facts").write_text("x\tskip\t1\ny\t-\t2\textra\n")
    assert rows(run(engine, COLUMNS, facts_dir=tmp_path)["e"]) == {(1, "x"), (2, "y")}
    for content, where, what in [("x\t1\n", ":1:1", "2 columns, but columns= reads column 3"),
                                 ("x\t1\t2\nx\t1\tz\n", ":2:5", "'z' is not a number")]:
        (tmp_path / "e.facts").write_text(content)
        with pytest.raises(DataError) as err:
            run(engine, COLUMNS, facts_dir=tmp_path)
        assert f"e.facts{where}" in str(err.value) and what in str(err.value), str(err.value)


@pytest.mark.parametrize("spec, what", [
    ('columns="1"', "columns= names 1 fields, but relation e has 2 attributes"),
    ('columns="0:0"', "give distinct field numbers"),
    ('columns="a:b"', "give distinct field numbers"),
    ('columns="1:0", rfc4180=true', "not for rfc4180=true"),
])
def test_bad_input_columns_are_errors(engine, tmp_path, spec, what):
    (tmp_path / "e.facts").write_text("1\t2\n")
    with pytest.raises(DataError) as err:
        run(engine, COLUMNS.replace('columns="2:0"', spec), facts_dir=tmp_path)
    assert what in str(err.value), str(err.value)
