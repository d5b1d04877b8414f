"""Inputs given as DataFrames: columns by position, cast to the declared types."""

from __future__ import annotations

from decimal import Decimal

from tests.spark.helpers import rows, run

UNSIGNED = """
.decl u(x:unsigned)
.input u
.decl big(x:unsigned)
.output big
big(x) :- u(x), x > 9223372036854775807u.
"""


def test_unsigned_input_beyond_the_signed_range(engine, spark):
    """An unsigned column given as DECIMAL(20,0), the type results give it back in."""
    values = [Decimal(2**64 - 1), Decimal(2**63), Decimal(5)]
    df = spark.createDataFrame([(v,) for v in values], "x decimal(20,0)")
    result = run(engine, UNSIGNED, inputs={"u": df})
    assert rows(result["big"]) == {(2**64 - 1,), (2**63,)}
    again = run(engine, UNSIGNED, inputs={"u": result["big"]})  # a result as an input
    assert rows(again["big"]) == {(2**64 - 1,), (2**63,)}


def test_min_and_max_of_unsigned_order_unsigned(engine, spark):
    program = """
.decl u(x:unsigned)
.input u
.decl lo(x:unsigned)
.decl hi(x:unsigned)
lo(m) :- m = min x : { u(x) }.
hi(m) :- m = max x : { u(x) }.
"""
    df = spark.createDataFrame([(Decimal(2**64 - 1),), (Decimal(3),)], "x decimal(20,0)")
    result = run(engine, program, inputs={"u": df})
    assert rows(result["lo"]) == {(3,)} and rows(result["hi"]) == {(2**64 - 1,)}
