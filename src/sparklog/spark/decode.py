"""Stored relations -> the user's view: declared column names and types, symbols as text."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sparklog.errors import EngineError
from sparklog.spark.expressions import unsigned_decimal
from sparklog.syntax import nodes as n

# unsigned values are stored as 64 bits in a BIGINT; users see them as DECIMAL(20,0)
_TYPES = {"number": "bigint", "unsigned": "decimal(20,0)", "float": "double", "symbol": "string"}


def decode(db, decl: n.Decl, name: str) -> DataFrame:
    """The relation ``name`` as a DataFrame named and typed as ``decl`` declares it."""
    kinds = db.kinds(name)
    if name not in db.stored:
        from sparklog.spark.storage import empty_frame

        return empty_frame(db.spark, [(a.name, _TYPES[k])
                                      for a, k in zip(decl.attributes, kinds)])
    columns = [f"c{i}" for i in range(len(kinds))]
    runs = db.runs(name)  # every stored run (storage.Database.merges)
    df = runs[0].select(*columns)
    for run in runs[1:]:
        df = df.union(run.select(*columns))
    for i, kind in enumerate(kinds):
        if kind == "symbol":
            symbols = db.symbols().select(F.col("id").alias(f"c{i}"),
                                          F.col("symbol").alias(f"s{i}"))
            df = df.join(symbols, on=f"c{i}", how="left")
    return df.select(*[_user_value(i, k).alias(a.name)
                       for i, (a, k) in enumerate(zip(decl.attributes, kinds))])


def _user_value(i: int, kind: str) -> Column:
    if kind == "symbol":
        return F.col(f"s{i}")
    if kind == "unsigned":
        return F.expr(unsigned_decimal(f"c{i}")).cast(_TYPES[kind])
    return F.col(f"c{i}").cast(_TYPES[kind])


def check_symbol_table(db) -> None:
    """Fail loudly if two different symbols were interned to the same 64-bit id."""
    if not db.symbol_parts:
        return  # no symbol was interned: nothing can clash (and no job runs)
    clash = (db.symbols().groupBy("id").agg(F.countDistinct("symbol").alias("n"))
             .filter("n > 1").limit(1).collect())
    if clash:
        raise EngineError(f"two symbols share the interned id {clash[0]['id']}: "
                          "a 64-bit hash collision; please report it")
