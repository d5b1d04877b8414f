"""Errors and diagnostics: one root exception, one subclass per stage.

Every user-facing problem is a :class:`Diagnostic` with a :class:`Span`; it renders as
``file:line:col: error: message``, the source line and a caret, in the style of Soufflé
and compilers generally. Internal bugs are ``assert`` statements, never these classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """A place in a source file; lines and columns count from 1."""

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Span("<unknown>", 0, 0)


@dataclass(frozen=True)
class Note:
    """A secondary place that explains a diagnostic ("negated here")."""

    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One reported problem, with its place and optional notes at other places."""

    span: Span
    message: str
    severity: str = "error"
    notes: tuple[Note, ...] = ()

    def render(self, sources: dict[str, str] | None = None) -> str:
        lines = [f"{self.span}: {self.severity}: {self.message}"]
        lines += _excerpt(self.span, sources)
        for note in self.notes:
            lines.append(f"{note.span}: note: {note.message}")
            lines += _excerpt(note.span, sources)
        return "\n".join(lines)


def _excerpt(span: Span, sources: dict[str, str] | None) -> list[str]:
    """The source line of ``span`` and a caret under its column, if the text is known."""
    text = (sources or {}).get(span.file)
    if text is None or span.line < 1:
        return []
    source_lines = text.splitlines()
    if span.line > len(source_lines):
        return []
    line = source_lines[span.line - 1].replace("\t", " ")
    width = 1
    if span.end_line == span.line and span.end_col and span.end_col > span.col:
        width = span.end_col - span.col
    return [f"  {line}", "  " + " " * (span.col - 1) + "^" + "~" * (width - 1)]


class SparklogError(Exception):
    """Root of every error sparklog reports to a user (exit code 1, or 2 for usage)."""

    exit_code = 1

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic | str,
                 sources: dict[str, str] | None = None) -> None:
        if isinstance(diagnostics, str):
            diagnostics = Diagnostic(NOWHERE, diagnostics)
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        self.sources = sources or {}
        super().__init__(self.render())

    def render(self) -> str:
        parts = [d.render(self.sources) if d.span is not NOWHERE else f"error: {d.message}"
                 for d in self.diagnostics]
        if len(self.diagnostics) > 1:
            parts.append(f"{len(self.diagnostics)} errors generated")
        return "\n".join(parts)


class ParseError(SparklogError):
    """The program text is not well formed."""


class CheckError(SparklogError):
    """The program parses but is not a valid Datalog program (types, safety, strata)."""


class DataError(SparklogError):
    """An input file is missing or does not match its relation's declaration."""


class OutputError(SparklogError):
    """An output file, directory or stats file cannot be written where it was asked for."""


class UsageError(SparklogError):
    """The command line or the API was called wrongly."""

    exit_code = 2


class EngineError(SparklogError):
    """Spark failed while evaluating; the message is Spark's, without the Java stack."""


@dataclass
class Reporter:
    """Collects diagnostics so that every check runs before any is reported."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, span: Span, message: str, *notes: Note) -> None:
        self.diagnostics.append(Diagnostic(span, message, notes=tuple(notes)))

    def raise_if_any(self, kind: type[SparklogError], sources: dict[str, str]) -> None:
        if self.diagnostics:
            ordered = sorted(self.diagnostics, key=lambda d: (d.span.file, d.span.line, d.span.col))
            raise kind(ordered, sources)
