"""The C preprocessor, as Soufflé runs it over every program: ``#include``, ``#define``
(with arguments too), ``#undef``, ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/
``#endif`` and ``#error``.

It runs only over a program that has a directive (a line starting with ``#``). pcpp, a C99
preprocessor in pure Python, does the work; this module maps the lines of its output back
to the files and lines they came from, so that every diagnostic names the place the user
wrote (a column can be off on a line where a macro was expanded).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

import pcpp

from sparklog.errors import Diagnostic, ParseError, Span

_DIRECTIVE = re.compile(r"^[ \t]*#", re.M)
_MARKER = re.compile(r'#line (\d+) "(.*)"')


def has_directives(text: str) -> bool:
    return _DIRECTIVE.search(text) is not None


@dataclass
class Preprocessed:
    """The preprocessed text (line markers blanked), where each of its lines came from,
    and the text of every file read."""

    text: str
    places: list[tuple[str, int] | None]
    sources: dict[str, str]

    def span(self, span: Span) -> Span:
        """A span of the preprocessed text as a span of the file it came from."""
        place = self.places[span.line - 1] if 0 < span.line <= len(self.places) else None
        if place is None:
            return span
        end = self.places[span.end_line - 1] if span.end_line and \
            0 < span.end_line <= len(self.places) else None
        if end is None or end[0] != place[0]:
            return Span(place[0], place[1], span.col)
        return Span(place[0], place[1], span.col, end[1], span.end_col)

    def placed(self, value: Any) -> Any:
        """``value`` (a node, a diagnostic, a tuple of them) with every span mapped."""
        if isinstance(value, Span):
            return self.span(value)
        if isinstance(value, tuple):
            return tuple(self.placed(v) for v in value)
        if is_dataclass(value) and not isinstance(value, type):
            changes = {f.name: self.placed(getattr(value, f.name)) for f in fields(value)}
            return replace(value, **changes)
        return value


class _Preprocessor(pcpp.Preprocessor):
    """pcpp with its errors collected as diagnostics instead of printed."""

    def __init__(self, name: Any) -> None:
        super().__init__()
        self.line_directive = "#line"
        self.name = name  # pcpp's file name -> the name diagnostics give
        self.errors: list[Diagnostic] = []
        self.read: dict[str, str] = {}

    def on_error(self, file: str, line: int, msg: str) -> None:
        if line < 1 and self.lastdirective is not None:  # pcpp knows only the directive's
            file, line = self.lastdirective.source, self.lastdirective.lineno
        self.errors.append(Diagnostic(Span(self.name(file), line, 1), msg))
        self.return_code += 1

    def on_file_open(self, is_system_include: bool, includepath: str) -> Any:
        with open(includepath, encoding="utf-8") as f:
            text = f.read().removeprefix("\ufeff")
        self.read[os.path.abspath(includepath)] = text
        return io.StringIO(text)

    def on_include_not_found(self, is_malformed: bool, is_system_include: bool,
                             curdir: str, includepath: str) -> None:
        where = self.lastdirective
        what = (f"malformed #include {includepath}" if is_malformed else
                f"cannot find the included file {includepath}")
        self.on_error(where.source, where.lineno, what)
        raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)

    def on_directive_unknown(self, directive: Any, toks: Any, ifpassthru: bool,
                             precedingtoks: Any) -> bool:
        said = "".join(t.value for t in toks).strip()
        if directive.value == "error":
            self.on_error(directive.source, directive.lineno, f"#error {said}")
        elif directive.value not in ("warning", "pragma"):
            self.on_error(directive.source, directive.lineno,
                          f"unknown preprocessor directive #{directive.value}")
        return True  # removed from the output


# the bits of a number, unsigned and float: sparklog's are 64-bit (Spark's BIGINT, DOUBLE)
RAM_DOMAIN_SIZE = 64


def preprocess(text: str, file: str, include_dirs: Sequence[str | os.PathLike] = (),
               macros: Sequence[str] = ()) -> Preprocessed:
    """Run the C preprocessor over a program's text; ``#include "f"`` is looked up next
    to the file that includes it, then in ``include_dirs``; ``macros`` are ``NAME`` or
    ``NAME=VALUE`` (Soufflé's -M). Raises ParseError for the preprocessor's errors."""
    given = os.path.abspath(file)
    name = lambda f: file if os.path.abspath(f) == given else f  # noqa: E731
    pre = _Preprocessor(name)
    for folder in include_dirs:
        pre.add_path(str(folder))
    # as Soufflé's 64-bit build: programs test it to pick their word size (#if ... == 64)
    pre.define(f"RAM_DOMAIN_SIZE {RAM_DOMAIN_SIZE}")
    for macro in macros:
        key, given, value = macro.partition("=")
        pre.define(f"{key} {value if given else '1'}")  # -M NAME is 1, as cpp's -D
    pre.parse(text, source=file)
    out = io.StringIO()
    pre.write(out)
    sources = {file: text}
    for marker in {m.group(2) for m in _MARKER.finditer(out.getvalue())}:
        if name(marker) != file and os.path.abspath(marker) in pre.read:
            sources[marker] = pre.read[os.path.abspath(marker)]
    if pre.errors:
        raise ParseError(pre.errors, sources)
    lines: list[str] = []
    places: list[tuple[str, int] | None] = []
    at: tuple[str, int] | None = (file, 1)
    for line in out.getvalue().split("\n"):
        marker = _MARKER.fullmatch(line)
        if marker is not None:
            at = (name(marker.group(2)), int(marker.group(1)))
            lines.append("")
            places.append(None)
            continue
        lines.append(line)
        places.append(at)
        if at is not None:
            at = (at[0], at[1] + 1)
    return Preprocessed("\n".join(lines), places, sources)

