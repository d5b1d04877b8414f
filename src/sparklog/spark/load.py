"""Loading a run's inputs: files, DataFrames and the program's own facts, symbols interned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sparklog.errors import DataError, Reporter, UsageError
from sparklog.io.facts import (SPARK_TYPES, Source, first_bad_line, given_source,
                               input_source, missing_inputs, read)
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import clause_terms


def load_inputs(db, program, inputs: dict[str, Any], facts_dir: Path) -> None:
    """Store every input relation as iteration 0, after checking all of them exist.

    With deferred versions (the default) nothing runs here: each input is stored by the
    first job that reads it, and its malformed-line check is reported right after that job.
    """
    from sparklog.spark import jvm
    from sparklog.spark.storage import Metrics, _checkpoint

    for name in inputs:
        if program.ast.decl(name) is None:
            raise UsageError(f"input for undeclared relation {name}")
    rep = Reporter(missing_inputs(program.checked, inputs, facts_dir))
    rep.raise_if_any(DataError, program.sources)
    expected, unestimated = _expected_rows(program, inputs, facts_dir, db.options.codegen_rows)
    db.expected.update(expected)
    db.use_codegen(sum(db.expected.values()))
    data: dict[str, list[DataFrame]] = {}
    checks: dict[str, list[tuple[Source, Metrics]]] = {}
    for d in program.checked.inputs():
        kinds = db.kinds(d.relation)
        given = inputs.get(d.relation)
        if given is None or isinstance(given, str | Path):
            source = input_source(d, facts_dir)
            if given is not None:
                source = given_source(source, given)
            df = read(db.spark, source, kinds, _records(program, d.relation))
            bad = Metrics(db.spark, f"bad_{db.prefix}_{d.relation}_{len(checks)}")
            checks.setdefault(d.relation, []).append((source, bad))
            df = DataFrame(bad.on(df._jdf, F.count(F.when(F.col("_bad"), 1)).alias("bad"),
                                  jvm.seq(db.spark, [])), db.spark)
            data.setdefault(d.relation, []).append(df.filter(~F.col("_bad")).drop("_bad"))
    for name, given in inputs.items():
        if not isinstance(given, str | Path):
            data.setdefault(name, []).append(from_dataframe(given, name, db.kinds(name)))
    for name, rows in _program_facts(program).items():
        data.setdefault(name, []).append(_facts_frame(db, rows, db.kinds(name)))
        db.expected[name] = db.expected.get(name, 0) + len(rows)
    _register_constants(db, program)
    problems: list[Any] = []
    for name, parts in data.items():
        df = parts[0]
        for p in parts[1:]:
            df = df.unionByName(p)
        encoded = _intern(db, df, db.kinds(name))
        full, new = db.insert(name, encoded, 0)
        for _, bad in checks.get(name, []):
            bad.source = new.source  # the same plan observes both

        stored = _checkpoint(full, db.options, eager=not db.options.defers)

        def settle(name: str = name, new: Any = new, stored: DataFrame = stored) -> list[Any]:
            db.add_new(name, new, stored, loaded=True)
            return [first_bad_line(source, db.kinds(name), _records(program, name))
                    for source, bad in checks.get(name, []) if bad.get.get("bad", 0)]

        db.replace(name, stored)
        if db.options.defers:
            db.defer(stored, settle)
        else:
            problems += settle()
    Reporter(problems).raise_if_any(DataError, program.sources)
    if db.options.defers and unestimated:
        # DataFrames whose plans estimate no size are stored now, in one job, so that
        # what reads them is planned from their rows (code generation or not, the join
        # planning's sizes), not from a guess that takes every one as large
        db.store_now([db.stored[name] for name in sorted(unestimated)])


def _expected_rows(program, inputs: dict[str, Any], facts_dir: Path,
                   unknown: int | None) -> tuple[dict[str, int], set[str]]:
    """A guess at each input's rows, to load (and first join) them with code generation or
    without (see Database.use_codegen): a facts file's bytes over 8 (a line of two small
    numbers takes about that), a DataFrame's as its plan estimates them
    (jvm.estimated_rows), else ``unknown`` (the code-generation threshold: a caller's
    DataFrame is as likely large as not). Interpreting the parsing of a large file costs
    far more than generating its code. Also the inputs given as DataFrames whose plans
    estimate nothing."""
    from sparklog.spark import jvm

    rows: dict[str, int] = {}
    unestimated: set[str] = set()

    def frame(name: str, df: DataFrame) -> None:
        estimate = jvm.estimated_rows(df)
        if estimate is None:
            unestimated.add(name)
        rows[name] = rows.get(name, 0) + ((unknown or 0) if estimate is None else estimate)

    for d in program.checked.inputs():
        given = inputs.get(d.relation)
        if given is not None and not isinstance(given, str | Path):
            frame(d.relation, given)
            continue
        path = Path(given) if given is not None else input_source(d, facts_dir).path
        files = [path] if path.is_file() else path.rglob("*") if path.is_dir() else []
        try:
            size = sum(f.stat().st_size for f in files if f.is_file())
        except OSError:  # reported when it is read
            size = 0
        rows[d.relation] = rows.get(d.relation, 0) + size // 8
    for name, given in inputs.items():  # DataFrames for relations without .input
        if name not in rows and not isinstance(given, str | Path):
            frame(name, given)
    return rows, unestimated


def _records(program, relation: str) -> tuple:
    """The relation's declared columns when some hold records (Decl.records), else ()."""
    decl = program.ast.decl(relation)
    return decl.records if decl is not None else ()


def from_dataframe(df: DataFrame, name: str, kinds: tuple[str, ...]) -> DataFrame:
    """A user's DataFrame as c0..ck with the declared types, columns taken by position."""
    if len(df.columns) != len(kinds):
        raise UsageError(f"DataFrame for {name} has {len(df.columns)} columns, "
                         f"but {name} has arity {len(kinds)}")
    from sparklog.spark import expressions as X

    def column(c: str, kind: str):
        if kind == "unsigned":  # values up to 2^64 - 1 (DECIMAL(20,0), as results give them)
            return F.expr(X.unsigned_bits(f"CAST(`{c}` AS DECIMAL(20,0))"))
        return F.col(f"`{c}`").cast(SPARK_TYPES[kind])
    return df.select(*[column(c, k).alias(f"c{i}")
                       for i, (c, k) in enumerate(zip(df.columns, kinds))])


def _program_facts(program) -> dict[str, list[tuple]]:
    """The program's facts, but those of a $SUM/$COUNT relation: contributions (lower.py)."""
    out: dict[str, list[tuple]] = {}
    lattices = program.checked.lattices
    for clause in program.checked.program.clauses:  # constants typed, facts folded
        lattice = lattices.get(clause.head.relation)
        if clause.is_fact and not (lattice is not None and lattice.accumulates):
            out.setdefault(clause.head.relation, []).append(
                tuple(_constant(a) for a in clause.head.args))
    return out


def _constant(term: n.Term):
    match term:
        case n.Number(value=v):
            return v - 2**64 if v >= 2**63 else v
        case n.Float(value=v) | n.String(value=v):
            return v
        case n.UnaryOp(op="neg", arg=arg):
            return -_constant(arg)
        case n.HeadAggregate(arg=arg):  # h(1, $MIN(5)). seeds h(1, 5)
            return _constant(arg)
        case _:
            from sparklog.errors import CheckError
            raise CheckError(f"fact argument {term!r} is not a constant")


_VALUES_CHUNK = 5_000  # rows per VALUES clause: keeps each SQL text small to parse


def _facts_frame(db, rows: list[tuple], kinds: tuple[str, ...]) -> DataFrame:
    """The program text's facts, as SQL VALUES: built in the JVM, no Python on executors
    (createDataFrame from Python rows needs Python workers to decode them)."""
    if not kinds:  # nullary facts: one row without columns each
        return db.spark.range(len(rows)).select()
    names = ", ".join(f"c{i}" for i in range(len(kinds)))
    parts = []
    for start in range(0, len(rows), _VALUES_CHUNK):
        values = ", ".join("(" + ", ".join(_sql_value(v, k) for v, k in zip(row, kinds)) + ")"
                           for row in rows[start:start + _VALUES_CHUNK])
        parts.append(db.spark.sql(f"SELECT * FROM VALUES {values} AS t({names})"))
    df = parts[0]
    for p in parts[1:]:
        df = df.unionAll(p)
    return df


def _sql_value(value, kind: str) -> str:
    from sparklog.spark import expressions as X

    if kind == "symbol":
        return X.sql_string(value)
    if kind == "float":
        return X.sql_float(float(value))
    return X.sql_number(value)


def _register_constants(db, program) -> None:
    strings = sorted({t.value for c in program.checked.program.clauses for t in clause_terms(c)
                      if isinstance(t, n.String)})
    if strings:
        df = _facts_frame(db, [(s,) for s in strings], ("symbol",))
        db.add_symbols(df.select(F.xxhash64("c0").alias("id"), F.col("c0").alias("symbol")))


def _intern(db, df: DataFrame, kinds: tuple[str, ...]) -> DataFrame:
    """Symbols -> xxhash64 ids; the (id, symbol) pairs go to the symbol table."""
    sym_cols = [f"c{i}" for i, k in enumerate(kinds) if k == "symbol"]
    if not sym_cols:
        return df
    for c in sym_cols:
        db.add_symbols(df.select(F.xxhash64(c).alias("id"), F.col(c).alias("symbol")).distinct())
    return df.select(*[F.xxhash64(c).alias(c) if c in sym_cols else F.col(c)
                       for c in df.columns])


# the relative standard deviation of auto's estimates (shapes)
SHAPE_RSD = 0.05


def shapes(spark, program, relations: set[str], inputs: dict[str, Any], facts_dir: Path
           ) -> dict[str, tuple[int, ...]]:
    """(arcs, nodes, tails, heads: the nodes with out-arcs, with in-arcs), approximately,
    of each of ``relations`` that is an input of two columns: one aggregation job each
    over the input as given, for the closure strategy ``auto`` (rewrite/closure.py). Its malformed lines are left to the load to report; a
    relation that is not an input is not measured."""
    out = {}
    frames = {}
    for name, given in inputs.items():  # DataFrames, with or without .input
        if name in relations and not isinstance(given, str | Path):
            frames[name] = from_dataframe(given, name, program.checked.kinds[name])
    for d in program.checked.inputs():
        name = d.relation
        if name not in relations or name in frames:
            continue
        given = inputs.get(name)
        source = input_source(d, facts_dir)
        if given is not None:
            source = given_source(source, given)
        if source.path.exists():  # else reported by load_inputs
            frames[name] = read(spark, source, program.checked.kinds[name],
                                _records(program, name)).filter(~F.col("_bad")).drop("_bad")
    # one pass, counted approximately (HyperLogLog++: arcs by their hash). Spark keeps an
    # estimate's registers as fields of its aggregation buffer, so the job's cost follows
    # the precision: 5% is 512 registers, 1% 16,384 (benchmarks/results/auto-shapes.md);
    # rewrite/closure.deepest allows for the error where it matters, in telling a chain
    for name, df in frames.items():
        ends = df.select(F.hash("c0", "c1").alias("arc"), "c0", "c1",
                         F.explode(F.array("c0", "c1")).alias("node"))
        counts = ends.agg(*[F.approx_count_distinct(c, rsd=SHAPE_RSD)
                            for c in ("arc", "node", "c0", "c1")]).first()
        out[name] = tuple(int(c) for c in counts)
    return out
