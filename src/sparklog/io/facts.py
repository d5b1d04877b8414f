"""Facts in, results out: Soufflé's file conventions on Spark's readers and writers.

``.input r`` reads ``FACTS_DIR/r.facts`` (tab-separated); ``.output r`` writes
``OUT_DIR/r.csv`` (tab-separated). ``IO=file`` takes ``filename``, ``delimiter``,
``headers``, ``rfc4180`` and, for outputs, ``compress``; ``IO=parquet`` reads or writes
Parquet. As in Soufflé, a symbol's text is read and written as it is (no escapes), and
numbers are read strictly (see ``parse_field``). With ``rfc4180=true`` the delimiter
defaults to a comma and fields may be quoted as RFC 4180 says (a quoted field may hold the
delimiter, line breaks and ``""`` for a quote); such an output quotes every symbol.
``compress=true`` gzips an output file.
"""

from __future__ import annotations

import csv
import gzip
import math
import os
import re
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparklog.errors import DataError, Diagnostic, Reporter, Span
from sparklog.semantics.checks import Checked
from sparklog.spark import expressions as X
from sparklog.syntax import nodes as n

SPARK_TYPES = {"number": "bigint", "unsigned": "bigint", "float": "double", "symbol": "string"}


@dataclass(frozen=True)
class Source:
    """Where one input relation comes from."""

    relation: str
    kind: str  # "file" or "parquet"
    path: Path
    delimiter: str = "\t"
    headers: bool = False
    rfc4180: bool = False  # quoted fields, as RFC 4180 writes them
    columns: tuple[int, ...] | None = None  # columns="1:0": attribute i is field columns[i]


def input_source(directive: n.Directive, facts_dir: Path) -> Source:
    io = (directive.param("IO") or "file").lower()
    name = directive.param("filename") or (
        f"{directive.relation}.facts" if io == "file" else f"{directive.relation}.parquet")
    path = Path(name) if os.path.isabs(name) else facts_dir / name
    rfc4180 = _flag(directive, "rfc4180")
    delimiter = _delimiter(directive, rfc4180)
    headers = _flag(directive, "headers")
    if io not in ("file", "parquet"):
        raise DataError(Diagnostic(directive.span, f"unsupported IO={io} (use file or parquet)"))
    return Source(directive.relation, io, path, delimiter, headers, rfc4180,
                  _columns(directive, io, rfc4180))


def _columns(directive: n.Directive, io: str, rfc4180: bool) -> tuple[int, ...] | None:
    """Soufflé's ``columns="2:0"``: the fields of a line that fill the attributes, in the
    attributes' order (ReadStreamCSV's input map); other fields are skipped."""
    text = directive.param("columns")
    if text is None or text == "":
        return None
    parts = text.split(":")
    if not all(p.strip().isdigit() for p in parts) or len(set(map(int, parts))) < len(parts):
        raise DataError(Diagnostic(directive.span, f"columns={text!r}: give distinct field "
                                   "numbers from 0, one for each attribute, as columns=\"1:0\""))
    if io != "file" or rfc4180:
        raise DataError(Diagnostic(directive.span, "columns= is read for tab- or "
                                   "delimiter-separated facts files only, not for "
                                   f"{'rfc4180=true' if rfc4180 else 'IO=' + io}"))
    return tuple(int(p) for p in parts)


def given_source(source: Source, given: str | Path) -> Source:
    """``source`` read from a path given in place of its directive's file (``inputs``):
    Parquet by the name's ending, else a facts file in the directive's format."""
    kind = "parquet" if str(given).endswith(".parquet") else "file"
    return replace(source, kind=kind, path=Path(given))


def directive_problems(checked: Checked) -> list[Diagnostic]:
    """What is wrong with the I/O directives' parameters (an unknown IO, a quote in an
    rfc4180 delimiter), found without reading or writing anything: ``sparklog check``."""
    problems: list[Diagnostic] = []
    reads = [(input_source, d) for d in checked.inputs()]
    writes = [(output_target, d) for d in checked.outputs() if d.kind != "printsize"]
    for target, d in reads + writes:
        try:
            target(d, Path("."))
        except DataError as exc:
            problems += exc.diagnostics
    return problems


def _flag(directive: n.Directive, name: str) -> bool:
    return (directive.param(name) or "false").lower() == "true"


def _delimiter(directive: n.Directive, rfc4180: bool) -> str:
    """The directive's delimiter: a tab, or a comma with ``rfc4180`` (as in Soufflé),
    which must not contain the quote character."""
    delimiter = _unescape_delimiter(directive.param("delimiter") or ("," if rfc4180 else "\t"))
    if rfc4180 and '"' in delimiter:
        raise DataError(Diagnostic(directive.span, "with rfc4180=true the delimiter cannot "
                                   "contain a double quote"))
    return delimiter


def missing_inputs(checked: Checked, inputs: Mapping[str, Any], facts_dir: Path
                   ) -> list[Diagnostic]:
    """Input files that do not exist or cannot be read, reported before Spark starts.

    A facts file must be a readable file; a parquet input may be a file or a directory.
    """
    rep = Reporter()
    for d in checked.inputs():
        if d.relation in inputs:
            continue
        try:
            source = input_source(d, facts_dir)
        except DataError as exc:
            rep.diagnostics += exc.diagnostics
            continue
        path, what = source.path, f"input file {source.path} for relation {d.relation}"
        if not path.exists():
            rep.error(d.span, f"{what} not found")
        elif source.kind == "file" and path.is_dir():
            rep.error(d.span, f"{what} is a directory")
        elif not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
            rep.error(d.span, f"{what} is not readable")
    return rep.diagnostics


def _unescape_delimiter(text: str) -> str:
    return text.replace("\\t", "\t")


def read(spark: SparkSession, source: Source, kinds: tuple[str, ...],
         records: tuple[n.Shape, ...] = ()) -> DataFrame:
    """The typed columns c0..ck of an input and ``_bad``, true for a malformed line.

    ``records``: the declared columns when some hold records (Decl.records), written in
    the file as Soufflé writes them (``[1, x]``, ``[[1, x], 3]``; a field of a record
    holds no comma or bracket); each becomes the columns of its fields."""
    if any(_has_branches(shape) for shape in records):
        raise DataError(f"{source.path}: relation {source.relation} has a column of an "
                        "algebraic data type, which sparklog does not read from files")
    if records and (source.kind == "parquet" or source.rfc4180):
        raise DataError(f"{source.path}: relation {source.relation} has record columns, "
                        "which sparklog reads from tab- or delimiter-separated facts files only")
    if source.kind == "parquet":
        df = spark.read.parquet(str(source.path))
        if len(df.columns) != len(kinds):
            raise DataError(f"{source.path}: {len(df.columns)} columns, but relation "
                            f"{source.relation} has {len(kinds)}")
        cols = [_parquet_value(f"`{c}`", k).alias(f"c{i}")
                for i, (c, k) in enumerate(zip(df.columns, kinds))]
        return df.select(*cols, F.lit(False).alias("_bad"))
    if source.rfc4180:
        return _typed(_quoted_fields(spark, source, len(kinds)), kinds)
    columns = source.columns
    if columns is not None and records:
        raise DataError(f"{source.path}: columns= with record columns of {source.relation} "
                        "is not supported")
    if columns is not None and len(columns) != len(kinds):
        raise DataError(f"{source.path}: columns= names {len(columns)} fields, but relation "
                        f"{source.relation} has {len(kinds)} attributes")
    # Soufflé's ReadStreamCSV: lines end at \n only, one trailing \r is dropped, a blank line
    # is a line like any other, columns past the arity are ignored
    lines = spark.read.text(str(source.path), lineSep="\n")
    if source.headers:
        lines = lines.filter(F.monotonically_increasing_id() > 0)
    line = "regexp_replace(value, " + X.sql_string(r"\r\z") + ", '')"
    parts = f"split({line}, {X.sql_string(_regex_quote(source.delimiter))}, -1)"
    # each field once, in a projection of its own: every reference to `parts` in the typed
    # expressions would split the line again (Spark keeps apart projections whose merging
    # would repeat a costly expression)
    count, picked = "size(_f)", range(len(records or kinds))
    if columns is not None:  # a line must reach the last field named: then all are filled
        count = f"CASE WHEN size(_f) > {max(columns)} THEN {len(kinds)} ELSE 0 END"
        picked = columns
    fields = lines.selectExpr(f"{parts} AS _f").selectExpr(
        f"{count} AS _n", *[f"_f[{f}] AS _s{i}" for i, f in enumerate(picked)])
    if records:
        fields = _record_fields(fields, records)
    return _typed(fields, kinds)


def record_pattern(shape: n.Shape) -> str:
    """A regex (Java's and Python's alike) of a record column's text, one group a field."""
    if shape[1] is None:
        return r"\s*([^,\[\]]*?)\s*"
    return r"\s*\[" + ",".join(record_pattern(s) for s in shape[1]) + r"\]\s*"


def _record_fields(fields: DataFrame, records: tuple[n.Shape, ...]) -> DataFrame:
    """``_n`` and ``_s0``.. of the flattened columns from the declared columns' fields: a
    record's text split into its fields; a line whose record does not match its type's
    shape counts as short (``_n`` 0), so it is reported as malformed."""
    out, matches = [], []
    for j, shape in enumerate(records):
        if shape[1] is None:
            out.append(f"_s{j}")
            continue
        regex = X.sql_string(f"^{record_pattern(shape)}\\z")
        matches.append(f"_s{j} RLIKE {regex}")
        out += [f"regexp_extract(_s{j}, {regex}, {g})" for g in range(1, _leaves(shape) + 1)]
    ok = " AND ".join([f"_n >= {len(records)}", *matches])
    return fields.selectExpr(f"CASE WHEN {ok} THEN {len(out)} ELSE 0 END AS _n",
                             *[f"{e} AS _s{i}" for i, e in enumerate(out)])


def _has_branches(shape: n.Shape) -> bool:
    sub = shape[1]
    if sub is None:
        return False
    if sub[0] == "$":
        return True
    return any(_has_branches(s) for s in sub)


def _leaves(shape: n.Shape) -> int:
    return 1 if shape[1] is None else sum(_leaves(s) for s in shape[1])


# a field Spark's CSV reader reports as missing: no text of a facts file is NUL
_MISSING = "\u0000"


def _quoted_fields(spark: SparkSession, source: Source, arity: int) -> DataFrame:
    """``_n`` and the fields ``_s0``.. of an RFC 4180 file, by Spark's CSV reader: quoted
    fields with ``""`` for a quote, the delimiter and line breaks inside them; a record
    ends at a line break outside quotes. An empty field is an empty symbol."""
    from pyspark.sql.types import StringType, StructField, StructType

    schema = StructType([StructField(f"_s{i}", StringType()) for i in range(max(arity, 1))])
    df = (spark.read.schema(schema)
          .options(sep=source.delimiter, quote='"', escape='"', multiLine="true",
                   header="true" if source.headers else "false", mode="PERMISSIVE",
                   nullValue=_MISSING, emptyValue="", ignoreLeadingWhiteSpace="false",
                   ignoreTrailingWhiteSpace="false", enforceSchema="true")
          .csv(str(source.path)))
    present = " + ".join(f"CASE WHEN _s{i} IS NULL THEN 0 ELSE 1 END" for i in range(arity))
    return df.selectExpr(f"{present or '0'} AS _n", *[f"_s{i}" for i in range(arity)])


def _typed(fields: DataFrame, kinds: tuple[str, ...]) -> DataFrame:
    """The typed columns c0..ck and ``_bad`` of fields ``_n`` (how many) and ``_s0``..."""
    cols, bad = [], [f"_n < {len(kinds)}"] if kinds else ["FALSE"]
    for i, kind in enumerate(kinds):
        typed = field_value(f"_s{i}", kind)
        cols.append(f"{typed} AS c{i}")
        if kind != "symbol":
            bad.append(f"c{i} IS NULL")
    typed = fields.selectExpr("_n", *cols)
    return typed.selectExpr(*[f"c{i}" for i in range(len(kinds))],
                            f"({' OR '.join(bad)}) AS _bad")


def _parquet_value(col: str, kind: str) -> Column:
    if kind == "unsigned":  # written by sparklog as DECIMAL(20,0): back to the stored bits
        return F.expr(X.unsigned_bits(f"CAST({col} AS DECIMAL(20,0))"))
    return F.col(col).cast(SPARK_TYPES[kind])


_SPACE = "[ \\t\\n\\x0B\\f\\r]"  # C's isspace, which std::stoll skips
_NUMBER = re.compile(f"{_SPACE}*([+-]?)([0-9]+)")
_UNSIGNED_DEC = re.compile(f"{_SPACE}*\\+?([0-9]+)")
_FLOAT = re.compile(f"(?i){_SPACE}*[+-]?(([0-9]+\\.?[0-9]*|\\.[0-9]+)(e[+-]?[0-9]+)?|inf|infinity|nan)")


def field_value(field: str, kind: str) -> str:
    """SQL for the stored value of one facts-file field (NULL when Soufflé rejects it).

    The same rules as ``parse_field`` (Soufflé's RamSignedFromString / readRamUnsigned /
    RamFloatFromString, each of which must consume the whole field).
    """
    if kind == "symbol":  # Soufflé takes a symbol's text as it is: no unescaping
        return field
    if kind == "number":  # the common case first: at most 18 digits always fit a BIGINT
        return (f"CASE WHEN {field} RLIKE '^[+-]?[0-9]{{1,18}}\\\\z' THEN CAST({field} AS BIGINT) "
                f"WHEN {field} RLIKE {_sql_regex(_NUMBER)} THEN " + X.integer_from_digits(
                    _extract(field, _NUMBER, 1), _extract(field, _NUMBER, 2), 10) + " END")
    if kind == "unsigned":
        dec = X.integer_from_digits("''", _extract(field, _UNSIGNED_DEC, 1), 10, unsigned=True)
        prefixed = {p: X.integer_from_digits("''", f"substring({field}, 3)", b, unsigned=True)
                    for p, b in (("0b", 2), ("0x", 16))}
        return (f"CASE WHEN {field} RLIKE '^0b[01]+\\\\z' THEN {prefixed['0b']} "
                f"WHEN {field} RLIKE '^0x[0-9a-fA-F]+\\\\z' THEN {prefixed['0x']} "
                f"WHEN {field} RLIKE {_sql_regex(_UNSIGNED_DEC)} THEN {dec} END")
    assert kind == "float", kind
    value = f"CAST({field} AS DOUBLE)"  # out of range (1e999) is an error, as with std::stod
    return (f"CASE WHEN {field} RLIKE {_sql_regex(_FLOAT)} AND (abs({value}) != double('inf') OR "
            f"lower({field}) LIKE '%inf%') THEN {value} END")


def _sql_regex(pattern: re.Pattern) -> str:
    """A whole-field Java regex as a SQL literal."""
    return X.sql_string(f"^(?:{pattern.pattern})\\z")


def _extract(field: str, pattern: re.Pattern, group: int) -> str:
    return f"regexp_extract({field}, {_sql_regex(pattern)}, {group})"


def parse_field(text: str, kind: str) -> object:
    """The value Soufflé's facts reader makes of one field; ValueError says why it cannot.

    Numbers in base 10 with leading white space and a sign allowed (``std::stoll``), unsigned
    also with a ``0x`` or ``0b`` prefix, floats as ``std::stod`` (decimal, inf, nan); the
    whole field must be read and the value be in range.
    """
    if kind == "symbol":
        return text
    if kind == "number":
        m = _NUMBER.fullmatch(text)
        if not m:
            raise ValueError("not an integer")
        value = int(m[1] + m[2])
        if not -2**63 <= value < 2**63:
            raise ValueError("out of the 64-bit range")
        return value
    if kind == "unsigned":
        if text.startswith("-"):
            raise ValueError("an unsigned value cannot be negative")
        if re.fullmatch("0b[01]+|0x[0-9a-fA-F]+", text):
            value = int(text[2:], 2 if text[1] == "b" else 16)
        elif m := _UNSIGNED_DEC.fullmatch(text):
            value = int(m[1])
        else:
            raise ValueError("not an unsigned integer")
        if value >= 2**64:
            raise ValueError("out of the unsigned 64-bit range")
        return value
    assert kind == "float", kind
    if not _FLOAT.fullmatch(text):
        raise ValueError("not a float")
    value = float(text.strip(" \t\n\x0b\f\r"))
    if math.isinf(value) and "inf" not in text.lower():
        raise ValueError("out of the range of a double")
    return value


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _regex_quote(text: str) -> str:
    return "".join("\\" + c if not c.isalnum() else c for c in text)


def _records(source: Source):
    """(line number, fields) of each record of a facts file, header included."""
    with open(source.path, "rb") as f:
        if source.rfc4180 and len(source.delimiter) == 1:
            text = (raw.decode("utf-8", errors="replace") for raw in f)
            reader = csv.reader(text, delimiter=source.delimiter, quotechar='"',
                                doublequote=True, strict=False)
            start = 1
            for fields in reader:
                yield start, fields
                start = reader.line_num + 1
            return
        for lineno, raw in enumerate(f, start=1):
            line = raw.decode("utf-8", errors="replace").removesuffix("\n").removesuffix("\r")
            yield lineno, line.split(source.delimiter)


def first_bad_line(source: Source, kinds: tuple[str, ...], records: tuple[n.Shape, ...] = ()
                   ) -> Diagnostic:
    """Find and describe the first bad line of a facts file (only on the error path)."""
    declared = len(records) if records else len(kinds)
    for lineno, fields in _records(source):
        if (source.headers and lineno == 1) or not kinds:
            continue
        if source.columns is not None:  # attribute j is field columns[j]
            if len(fields) <= max(source.columns):
                return Diagnostic(Span(str(source.path), lineno, 1),
                                  f"{len(fields)} columns, but columns= reads column "
                                  f"{max(source.columns) + 1} for {source.relation}")
            starts = [1]
            for field in fields:
                starts.append(starts[-1] + len(field) + len(source.delimiter))
            for j, (f, kind) in enumerate(zip(source.columns, kinds), start=1):
                try:
                    parse_field(fields[f], kind)
                except ValueError as exc:
                    return Diagnostic(Span(str(source.path), lineno, starts[f]),
                                      f"{fields[f]!r} is not {_article(kind)} {kind} "
                                      f"(column {j} of {source.relation}: {exc})")
            continue
        if len(fields) < declared:
            return Diagnostic(Span(str(source.path), lineno, 1),
                              f"{len(fields)} columns, but relation {source.relation} has "
                              f"{declared}")
        col, flat = 1, []
        for j, (field, shape) in enumerate(zip(fields, records), start=1):
            m = re.fullmatch(record_pattern(shape), field) if shape[1] is not None else None
            if shape[1] is not None and m is None:
                return Diagnostic(Span(str(source.path), lineno, col),
                                  f"{field!r} is not a record of {_leaves(shape)} fields "
                                  f"[a, b, ...] (column {j} of {source.relation})")
            flat += list(m.groups()) if m is not None else [field]
            col += len(field) + len(source.delimiter)
        if records:  # the fields' own values, placed at their record
            fields, col = flat, 1
        for j, (field, kind) in enumerate(zip(fields, kinds), start=1):
            try:
                parse_field(field, kind)
            except ValueError as exc:
                return Diagnostic(Span(str(source.path), lineno, col),
                                  f"{field!r} is not {_article(kind)} {kind} (column {j} "
                                  f"of {source.relation}: {exc})")
            col += len(field) + len(source.delimiter)
    return Diagnostic(Span(str(source.path), 1, 1), f"malformed input for {source.relation}")


# ---------------------------------------------------------------------------------------
# Output


@dataclass(frozen=True)
class Target:
    """Where and how one output relation is written."""

    kind: str  # "file", "parquet" or "stdout"
    path: Path
    delimiter: str = "\t"
    rfc4180: bool = False  # every symbol quoted, as RFC 4180 writes a field
    compress: bool = False  # the file gzipped


def output_target(directive: n.Directive, out_dir: Path) -> Target:
    """How an output directive is written; an IO sparklog cannot write is an error at
    the directive (not a text file under that name)."""
    io = (directive.param("IO") or "file").lower()
    rfc4180 = _flag(directive, "rfc4180")
    delimiter = _delimiter(directive, rfc4180)
    if io == "stdout":
        return Target("stdout", Path("-"), delimiter, rfc4180)
    if io not in ("file", "parquet"):
        raise DataError(Diagnostic(directive.span,
                                   f"unsupported IO={io} (use file, parquet or stdout)"))
    compress = io == "file" and _flag(directive, "compress")
    name = directive.param("filename") or (
        f"{directive.relation}.csv{'.gz' if compress else ''}" if io == "file"
        else f"{directive.relation}.parquet")
    path = Path(name) if os.path.isabs(name) else out_dir / name
    return Target(io, path, delimiter, rfc4180, compress)


def as_text_lines(df: DataFrame, kinds: tuple[str, ...], delimiter: str,
                  rfc4180: bool = False, records: tuple[n.Shape, ...] = ()) -> DataFrame:
    """One string column per tuple, fields joined by the delimiter, written as Soufflé's
    WriteStreamCSV writes them: symbols as they are (with ``rfc4180``: in double quotes,
    a quote doubled), floats as C++ ``%.17g``; with ``records`` (Decl.records), the
    columns that hold a record's fields as one field ``[a, b]`` (nested: ``[[a, b], c]``)."""
    def field(c: str, kind: str) -> Column:
        if kind == "float":
            return F.expr(X.float_g17(f"`{c}`"))
        if kind == "symbol" and rfc4180:
            return F.concat(F.lit('"'), F.replace(F.col(f"`{c}`"), F.lit('"'), F.lit('""')),
                            F.lit('"'))
        return F.col(f"`{c}`").cast("string")

    fields = [field(c, k) for c, k in zip(df.columns, kinds)]
    if records:
        leaves = iter(fields)

        def column(shape: n.Shape) -> Column:
            if shape[1] is None:
                return next(leaves)
            if shape[1][0] == "$":  # an algebraic data type: $B(fields) of the branch B
                tag, text = next(leaves), None
                for i, (branch, fields) in enumerate(shape[1][1]):
                    inner = [column(f) for f in fields]
                    value = F.concat(F.lit(f"${branch}("), F.concat_ws(", ", *inner),
                                     F.lit(")")) if inner else F.lit(f"${branch}")
                    text = (F.when(tag == F.lit(str(i)), value) if text is None
                            else text.when(tag == F.lit(str(i)), value))
                return text
            return F.concat(F.lit("["), F.concat_ws(", ", *map(column, shape[1])), F.lit("]"))

        fields = [column(shape) for shape in records]
    return df.select(F.concat_ws(delimiter, *fields).alias("value") if fields
                     else F.lit("()").alias("value"))


class AtomicWriter:
    """Writes every output to a staging directory, then moves them all into place.

    A failed run leaves no partial file and keeps an earlier complete output.
    """

    def __init__(self) -> None:
        self.staged: list[tuple[Path, Path]] = []
        self.dirs: list[Path] = []

    @staticmethod
    def problem(kind: str, path: Path) -> str | None:
        """Why an output of ``kind`` cannot be written to ``path`` (None if it can):
        checked before the run, so that a bad target fails in seconds, not after it."""
        if kind == "parquet" and path.exists() and not path.is_dir():
            return "it is a file (parquet output is a directory)"
        if kind != "parquet" and path.is_dir():
            return "it is a directory"
        parent = path.parent
        while not parent.exists() and not parent.is_symlink() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            return f"{parent} is not a directory"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"directory {parent} is not writable"
        return None

    def write(self, target: Target, df: DataFrame, kinds: tuple[str, ...],
              header: str | None = None, records: tuple[n.Shape, ...] = ()) -> None:
        """``header``: a first line (Soufflé's ``headers=true``: the attribute names);
        ``records``: the declared columns when some hold records (as_text_lines)."""
        from sparklog.errors import OutputError

        kind, path = target.kind, target.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        stage = path.parent / f".sparklog-{uuid.uuid4().hex[:12]}"
        self.dirs.append(stage)
        if kind == "parquet":
            df.write.parquet(str(stage / "data"))
            self.staged.append((stage / "data", path))
            return
        df = df.coalesce(1)
        if df.columns:  # a nullary relation has nothing to sort by
            df = df.sortWithinPartitions(*df.columns)
        lines = as_text_lines(df, kinds, target.delimiter, target.rfc4180, records)
        lines.write.text(str(stage / "data"))
        parts = sorted((stage / "data").glob("part-*"))
        staged = stage / "file"
        if header is not None or target.compress:
            opener = gzip.open if target.compress else open
            with opener(staged, "wb") as out:
                if header is not None:
                    out.write((header + "\n").encode("utf-8"))
                if parts:
                    with open(parts[0], "rb") as rows:
                        shutil.copyfileobj(rows, out)
        elif parts:
            os.replace(parts[0], staged)
        else:
            staged.write_text("")
        self.staged.append((staged, path))

    def commit(self) -> None:
        from sparklog.errors import OutputError

        for staged, final in self.staged:
            try:
                if final.is_dir() and staged.is_dir():
                    shutil.rmtree(final)
                os.replace(staged, final)
            except OSError as exc:
                raise OutputError(f"cannot write {final}: {exc.strerror or exc}") from None
        self.cleanup()

    def cleanup(self) -> None:
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.dirs, self.staged = [], []
