"""Facts in, results out: Soufflé's file conventions on Spark's readers and writers.

``.input r`` reads ``FACTS_DIR/r.facts`` (tab-separated); ``.output r`` writes
``OUT_DIR/r.csv`` (tab-separated). ``IO=file`` takes ``filename`` and ``delimiter``;
``IO=parquet`` reads or writes Parquet. Symbols escape backslash, tab and newline with a
backslash so that every symbol round-trips through a facts file.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sparklog.errors import DataError, Diagnostic, Span
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


def input_source(directive: n.Directive, facts_dir: Path) -> Source:
    io = (directive.param("IO") or "file").lower()
    name = directive.param("filename") or (
        f"{directive.relation}.facts" if io == "file" else f"{directive.relation}.parquet")
    path = Path(name) if os.path.isabs(name) else facts_dir / name
    delimiter = _unescape_delimiter(directive.param("delimiter") or "\t")
    headers = (directive.param("headers") or "false").lower() == "true"
    if io not in ("file", "parquet"):
        raise DataError(Diagnostic(directive.span, f"unsupported IO={io} (use file or parquet)"))
    return Source(directive.relation, io, path, delimiter, headers)


def _unescape_delimiter(text: str) -> str:
    return text.replace("\\t", "\t")


def read(spark: SparkSession, source: Source, kinds: tuple[str, ...]) -> DataFrame:
    """The typed columns c0..ck of an input and ``_bad``, true for a malformed line."""
    if source.kind == "parquet":
        df = spark.read.parquet(str(source.path))
        if len(df.columns) != len(kinds):
            raise DataError(f"{source.path}: {len(df.columns)} columns, but relation "
                            f"{source.relation} has {len(kinds)}")
        cols = [F.col(f"`{c}`").cast(SPARK_TYPES[k]).alias(f"c{i}")
                for i, (c, k) in enumerate(zip(df.columns, kinds))]
        return df.select(*cols, F.lit(False).alias("_bad"))
    lines = spark.read.text(str(source.path))
    if source.headers:
        lines = lines.filter(F.monotonically_increasing_id() > 0)
    lines = lines.filter(F.length("value") > 0) if kinds else lines
    parts = F.split(F.col("value"), _regex_quote(source.delimiter), -1)
    cols, bad = [], F.size(parts) != len(kinds)
    for i, kind in enumerate(kinds):
        raw = parts.getItem(i)
        if kind == "symbol":
            cols.append(unescape(raw).alias(f"c{i}"))
        else:
            typed = F.trim(raw).cast(SPARK_TYPES[kind])
            cols.append(typed.alias(f"c{i}"))
            bad = bad | typed.isNull()
    return lines.select(*cols, bad.alias("_bad"))


def _regex_quote(text: str) -> str:
    return "".join("\\" + c if not c.isalnum() else c for c in text)


def unescape(col: Column) -> Column:
    """Undo the backslash escapes of a symbol field (JVM-side)."""
    placeholder = "\u0000"
    out = F.regexp_replace(col, r"\\\\", placeholder)
    out = F.regexp_replace(out, r"\\t", "\t")
    out = F.regexp_replace(out, r"\\n", "\n")
    out = F.regexp_replace(out, r"\\r", "\r")
    return F.regexp_replace(out, placeholder, "\\\\")


def escape(col: Column) -> Column:
    out = F.regexp_replace(col, r"\\", r"\\\\")
    out = F.regexp_replace(out, "\t", r"\\t")
    out = F.regexp_replace(out, "\n", r"\\n")
    return F.regexp_replace(out, "\r", r"\\r")


def first_bad_line(source: Source, kinds: tuple[str, ...]) -> Diagnostic:
    """Find and describe the first bad line of a facts file (only on the error path)."""
    number_types = {"number": int, "unsigned": int, "float": float}
    with open(source.path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, start=1):
            line = line.rstrip("\n").rstrip("\r") if kinds else line
            if (source.headers and lineno == 1) or (kinds and not line):
                continue
            fields = line.split(source.delimiter)
            span = Span(str(source.path), lineno, 1)
            if len(fields) != len(kinds):
                return Diagnostic(span, f"{len(fields)} columns, but relation {source.relation} "
                                  f"has {len(kinds)}")
            col = 1
            for field, kind in zip(fields, kinds):
                if kind in number_types:
                    try:
                        number_types[kind](field.strip())
                    except ValueError:
                        return Diagnostic(Span(str(source.path), lineno, col),
                                          f"{field!r} is not a {kind} (column of "
                                          f"{source.relation})")
                col += len(field) + len(source.delimiter)
    return Diagnostic(Span(str(source.path), 1, 1), f"malformed input for {source.relation}")


# ---------------------------------------------------------------------------------------
# Output


def output_target(directive: n.Directive, out_dir: Path) -> tuple[str, Path, str]:
    """(kind, final path, delimiter) of an output directive."""
    io = (directive.param("IO") or "file").lower()
    if io == "stdout":
        return "stdout", Path("-"), "\t"
    name = directive.param("filename") or (
        f"{directive.relation}.csv" if io == "file" else f"{directive.relation}.parquet")
    path = Path(name) if os.path.isabs(name) else out_dir / name
    return io, path, _unescape_delimiter(directive.param("delimiter") or "\t")


def as_text_lines(df: DataFrame, kinds: tuple[str, ...], delimiter: str) -> DataFrame:
    """One string column per tuple, fields joined by the delimiter, symbols escaped."""
    fields = [escape(F.col(c)) if k == "symbol" else F.col(c).cast("string")
              for c, k in zip(df.columns, kinds)]
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

    def write(self, kind: str, df: DataFrame, kinds: tuple[str, ...], path: Path,
              delimiter: str) -> None:
        from sparklog.errors import OutputError

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
        lines = as_text_lines(df.coalesce(1).sortWithinPartitions(*df.columns), kinds, delimiter)
        lines.write.text(str(stage / "data"))
        parts = sorted((stage / "data").glob("part-*"))
        target = stage / "file"
        if parts:
            os.replace(parts[0], target)
        else:
            target.write_text("")
        self.staged.append((target, path))

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
