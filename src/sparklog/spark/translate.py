"""IR kernels -> DataFrames: one small function per step, dispatched on the step's type.

A kernel becomes one Spark plan: scans of stored versions, partition-local joins on the
bucket columns, filters, bindings, anti-joins and aggregates, and a projection into the
head's columns. No tuple passes through Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import singledispatch
from typing import Protocol

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparklog.ir.nodes import AggregateJoin, AntiJoin, Bind, Filter, Kernel, Layout, Scan
from sparklog.spark import expressions as X
from sparklog.syntax import nodes as n

SB, IT = "_sb", "_it"


class Store(Protocol):
    """What a kernel reads: stored versions, layouts, kinds, the symbol table."""

    spark: SparkSession

    def version(self, relation: str, version: str) -> DataFrame: ...
    def layout(self, relation: str) -> Layout: ...
    def kinds(self, relation: str) -> tuple[str, ...]: ...
    def symbols(self) -> DataFrame: ...


@dataclass
class Frame:
    """The DataFrame built so far and what its columns mean."""

    df: DataFrame | None
    scope: X.Scope
    partitioned_as: Scan | None = None  # the stored scan whose partitioning df still has
    text_columns: set[str] = field(default_factory=set)


def kernel_frame(kernel: Kernel, store: Store) -> DataFrame:
    """The head tuples a kernel derives (columns c0..ck, before deduplication)."""
    frame = run_steps(kernel.steps, store)
    _ensure_text(frame, _head_text_vars(kernel.head), store)
    cols = [F.expr(X.value(t, frame.scope)).alias(f"c{i}") for i, t in enumerate(kernel.head)]
    out = frame.df.select(*cols)
    if kernel.head:
        out = out.filter(" AND ".join(f"c{i} IS NOT NULL" for i in range(len(kernel.head))))
    return out


def kernel_symbols(kernel: Kernel, store: Store) -> DataFrame | None:
    """(id, symbol) pairs of the symbols a kernel's head creates, or None if it creates none."""
    calls = [c for t in kernel.head for c in X.produced_symbols(t)]
    binds = [s.var for s in kernel.steps if isinstance(s, Bind) and X.produced_symbols(s.expr)]
    if not calls and not binds:
        return None
    frame = run_steps(kernel.steps, store)
    _ensure_text(frame, _head_text_vars(kernel.head), store)
    parts = [frame.df.select(F.expr(X.value(c, frame.scope)).alias("id"),
                             F.expr(X.text(c, frame.scope)).alias("symbol")) for c in calls]
    parts += [frame.df.select(F.col(frame.scope.columns[v]).alias("id"),
                              F.col(frame.scope.columns[v] + "__s").alias("symbol")) for v in binds]
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out.filter("symbol IS NOT NULL").distinct()


def _head_text_vars(head: tuple[n.Term, ...]) -> set[str]:
    out: set[str] = set()
    for t in head:
        out |= X.string_vars(t)
    return out


def run_steps(steps, store: Store, scope: X.Scope | None = None) -> Frame:
    frame = Frame(None, scope or X.Scope())
    if not steps or not isinstance(steps[0], Scan):
        frame.df = store.spark.range(1).select()  # one empty row: a body without atoms
    for step in steps:
        frame = translate(step, frame, store)
    return frame


@singledispatch
def translate(step, frame: Frame, store: Store) -> Frame:
    raise NotImplementedError(f"no Spark translation for IR step {type(step).__name__}")


@translate.register
def _scan(step: Scan, frame: Frame, store: Store) -> Frame:
    layout, kinds = store.layout(step.relation), store.kinds(step.relation)
    df = store.version(step.relation, step.version)
    conds, cols, new_vars, seen = [], [], {}, {}
    for i, arg in enumerate(step.args):
        match arg:
            case n.Var(name=name) if name in seen:
                conds.append(F.col(f"c{i}") == F.col(f"c{seen[name]}"))
            case n.Var(name=name):
                seen[name] = i
                new_vars[name] = (i, kinds[i])
            case n.Wildcard():
                pass
            case _:
                conds.append(F.expr(f"c{i} = {X.value(arg, X.Scope())}"))
    for c in conds:
        df = df.filter(c)
    scope = frame.scope
    shared = [v for v in new_vars if v in scope.columns]
    # (1) rename columns to the kernel's variable columns; keep _sb for a co-partitioned join
    for v, (i, kind) in new_vars.items():
        col = scope.columns.get(v) if v in shared else None
        cols.append(F.col(f"c{i}").alias(col or f"_tmp_{v}"))
    if frame.df is None:  # the first scan: its partitioning is the stored layout
        for v, (i, kind) in new_vars.items():
            scope.bind(v, kind)
        df = df.select(*[F.col(f"c{i}").alias(scope.columns[v]) for v, (i, _) in new_vars.items()],
                       F.col(SB))
        return Frame(df, scope, step, frame.text_columns)
    # (2) join on the shared variables; add the sub-bucket when both sides are co-partitioned
    on = [scope.columns[v] for v in shared]
    right_cols = [F.col(f"c{i}").alias(scope.columns[v] if v in shared else f"_tmp_{v}")
                  for v, (i, _) in new_vars.items()]
    left = frame.df
    if _co_partitioned(frame.partitioned_as, step, store, shared):
        right_cols.append(F.col(SB))
        on = on + [SB]
    elif SB in left.columns:
        left = left.drop(SB)
    right = df.select(*right_cols)
    joined = left.join(right, on=on, how="inner") if on else left.crossJoin(right)
    if SB in joined.columns:
        joined = joined.drop(SB)
    for v, (i, kind) in new_vars.items():
        if v not in shared:
            joined = joined.withColumnRenamed(f"_tmp_{v}", scope.bind(v, kind))
    return Frame(joined, scope, None, frame.text_columns)


def _co_partitioned(left: Scan | None, right: Scan, store: Store, shared: list[str]) -> bool:
    """True when both scans are bucketed on exactly the join variables, in the same order."""
    if left is None or not shared:
        return False
    lk, rk = store.layout(left.relation), store.layout(right.relation)
    if lk.sub_buckets != 1 or rk.sub_buckets != 1:
        return False  # refined buckets need the outer side replicated over sub-buckets
    names = lambda scan, key: [scan.args[k].name if isinstance(scan.args[k], n.Var) else None
                               for k in key]
    return names(left, lk.key) == names(right, rk.key) and set(names(left, lk.key)) == set(shared)


@translate.register
def _bind(step: Bind, frame: Frame, store: Store) -> Frame:
    _ensure_text(frame, X.string_vars(step.expr), store)
    kind = X.kind_of(step.expr, frame.scope)
    expr = X.value(step.expr, frame.scope)
    col = frame.scope.bind(step.var, kind)
    df = frame.df.withColumn(col, F.expr(expr)).filter(F.col(col).isNotNull())
    if kind == "symbol" and X.produced_symbols(step.expr) or isinstance(step.expr, n.String):
        # a symbol made here is not in the symbol table yet: keep its text beside it
        df = df.withColumn(f"{col}__s", F.expr(X.text(step.expr, frame.scope)))
        frame.text_columns.add(col)
    return Frame(df, frame.scope, frame.partitioned_as, frame.text_columns)


@translate.register
def _filter(step: Filter, frame: Frame, store: Store) -> Frame:
    _ensure_text(frame, X.string_vars(step.literal), store)
    df = frame.df.filter(F.expr(X.condition(step.literal, frame.scope)))
    return Frame(df, frame.scope, frame.partitioned_as, frame.text_columns)


@translate.register
def _anti_join(step: AntiJoin, frame: Frame, store: Store) -> Frame:
    sub = X.Scope()
    inner = translate(Scan(step.atom.relation, "full", _wild(step.atom.args, frame.scope)),
                      Frame(None, sub), store)
    keys = [v for v in sub.columns]
    right = inner.df.select(*[F.col(sub.columns[v]).alias(frame.scope.columns[v]) for v in keys])
    on = [frame.scope.columns[v] for v in keys]
    df = frame.df.join(right, on=on, how="left_anti") if on else \
        frame.df.join(right.limit(1), how="left_anti")
    return Frame(df, frame.scope, frame.partitioned_as, frame.text_columns)


def _wild(args: tuple[n.Term, ...], scope: X.Scope) -> tuple[n.Term, ...]:
    """Negated atom arguments: bound variables stay, expressions are not allowed here."""
    out = []
    for a in args:
        assert isinstance(a, n.Var | n.Wildcard | n.Number | n.Float | n.String), a
        out.append(a)
    return tuple(out)


_AGG_SQL = {"sum": "sum", "min": "min", "max": "max", "mean": "avg"}


@translate.register
def _aggregate(step: AggregateJoin, frame: Frame, store: Store) -> Frame:
    inner = run_steps(step.body, store)
    agg = step.aggregate
    if agg.func == "count":
        result, kind = F.count(F.lit(1)), "number"
    else:
        _ensure_text(inner, X.string_vars(agg.target), store)
        kind = "float" if agg.func == "mean" else X.kind_of(agg.target, inner.scope)
        result = F.expr(f"{_AGG_SQL[agg.func]}({X.value(agg.target, inner.scope)})")
    col = frame.scope.bind(step.var, kind)
    group = [F.col(inner.scope.columns[g]).alias(frame.scope.columns[g]) for g in step.group]
    aggregated = inner.df.groupBy(*group).agg(result.alias(col))
    on = [frame.scope.columns[g] for g in step.group]
    zero = agg.func in ("count", "sum")
    if on:
        df = frame.df.join(aggregated, on=on, how="left" if zero else "inner")
    else:
        df = frame.df.crossJoin(aggregated)
    if zero:
        df = df.withColumn(col, F.coalesce(F.col(col), F.lit(0).cast(
            "double" if kind == "float" else "long")))
    df = df.filter(F.col(col).isNotNull())
    return Frame(df, frame.scope, None, frame.text_columns)


def _ensure_text(frame: Frame, variables: set[str], store: Store) -> None:
    """Join the symbol table for each symbol variable whose string a step needs."""
    for v in sorted(variables):
        col = frame.scope.columns[v]
        if col in frame.text_columns:
            continue
        symbols = store.symbols().select(F.col("id").alias(col), F.col("symbol").alias(f"{col}__s"))
        frame.df = frame.df.join(F.broadcast(symbols), on=col, how="inner")
        frame.text_columns.add(col)


def sub_bucket(layout: Layout) -> Column:
    """The sub-bucket of a tuple: a hash of its non-bucket columns mod k_b.

    A computed column, never a literal: Spark folds a literal into the partitioning
    expression, and the stored relation would then no longer be co-partitioned by name.
    """
    cols = [F.col(f"c{i}") for i in (layout.rest or layout.key)] or [F.lit(0)]
    return F.pmod(F.hash(*cols), F.lit(layout.sub_buckets)).cast("int")
