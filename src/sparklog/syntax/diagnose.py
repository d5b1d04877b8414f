"""Parse errors in words: what was found, what could come there, and where the mistake is.

lark names its terminals (``__ANON_0``, ``BSHRU``, ``LPAR``); users wrote ``.decl``, ``bshru``
and ``(``. A rule without its final ``.`` is reported where that rule ends, not at the
next line that lark stumbles on; an unterminated comment or string is reported as such.
"""

from __future__ import annotations

import re

import lark

from sparklog.errors import Diagnostic, Span

# expected terminals that say more as one phrase
_EXPRESSION = {"IDENT", "INT", "FLOAT", "STRING", "LPAR", "MINUS", "BNOT", "LNOT", "COUNT",
               "SUM", "MIN", "MAX", "MEAN", "UNDERSCORE", "HEAD_AGGREGATE", "FUNCTOR",
               "MIN_CALL", "MAX_CALL", "LSQB", "ADT_BRANCH"}
_OPERATORS = {"PLUS", "MINUS", "MULOP", "POW", "BAND", "BOR", "BXOR", "BSHL", "BSHR", "BSHRU",
              "LAND", "LOR", "LXOR"}
_WORDS = {"IDENT": "a name", "QUALIFIER": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string",
          "DIRECTIVE": "a directive", "COMPARE": "a comparison", "MULOP": "'*', '/' or '%'",
          "$END": "the end of the input"}
_SHOWN = 6
# what sparklog reads but suggests to no one writing a program: Soufflé 1.x declarations,
# Soufflé's join-order hints, the component directives but .comp
_UNSUGGESTED = {".symbol_type", ".number_type", ".plan", ".init", ".override"}


def diagnose(exc: lark.exceptions.UnexpectedInput, text: str, file: str,
             terminals: dict[str, str]) -> Diagnostic:
    """The diagnostic of a failed parse; ``terminals`` maps lark names to literal text."""
    pos = getattr(exc, "pos_in_stream", None)
    pos = len(text) if pos is None or isinstance(exc, lark.exceptions.UnexpectedEOF) else pos
    unterminated = _unterminated(text)
    if unterminated is not None and unterminated[0] <= pos:
        return Diagnostic(_span(file, text, unterminated[0]), unterminated[1])
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        if text[pos] == "$" and text[:pos].rstrip()[-1:] in tuple("(,=<>+-*/%^!"):
            # a term, not $MIN(...) and the like: Soufflé 1.x's autoinc()
            return Diagnostic(_span(file, text, pos), "$ (autoinc() in Soufflé 1.x) numbers "
                              "tuples in Soufflé's evaluation order, which a distributed "
                              "engine does not have: not supported")
        unsupported = _unsupported(text, pos)  # ".functor" is no token at all
        return Diagnostic(_span(file, text, pos),
                          unsupported or f"unexpected character {text[pos]!r}")
    # what the parser accepts there (lark simulates each terminal), not what its state
    # table lists, which LALR's merged states widen
    expected = set(getattr(exc, "accepts", None) or getattr(exc, "expected", None) or ())
    token = getattr(exc, "token", None)
    end = token is None or token.type == "$END" or not str(token)
    pos = len(text) if end else pos
    if len(expected) > 1:  # the end of a program is no hint where something else can come
        expected.discard("$END")
    if "DOT" in expected and (end or _line_break_before(text, pos)):
        rule_end = len(text[:pos].rstrip())  # the rule ends on an earlier line
        return Diagnostic(_span(file, text, rule_end), "missing '.' at the end of this rule")
    if text[max(0, pos - 6):pos + 7] == "choice-domain":
        return Diagnostic(_span(file, text, pos - 6), "choice domains (choice-domain): a "
                          "Soufflé feature sparklog does not support")
    unsupported = _unsupported(text, pos)
    if unsupported is not None:
        return Diagnostic(_span(file, text, pos), unsupported)
    found = "end of input" if end else repr(str(token))
    message = f"unexpected {found}"
    if expected:
        message += f"; expected {_phrase(expected, terminals)}"
    return Diagnostic(_span(file, text, pos), message)



# Soufflé's directives that sparklog does not read, and what they are
_SOUFFLE_ONLY = {"functor": "user-defined functors (.functor)",
                 "debug_delta": "each iteration's new tuples written out (.debug_delta)"}


_DIRECTIVES = {"decl", "type", "lattice", "input", "output", "printsize", "limitsize", "pragma",
               "plan", "symbol_type", "number_type", "comp", "init", "override"}


def _unsupported(text: str, pos: int) -> str | None:
    """What to say of a Soufflé directive sparklog does not know, found at ``pos``."""
    if pos >= len(text) or text[pos] != ".":
        return None
    word = re.match(r"[A-Za-z_]+", text[pos + 1:])
    if word is None:
        return None
    what = _SOUFFLE_ONLY.get(word.group())
    if word.group() in _DIRECTIVES:
        return None
    if what is None:
        return f"unknown directive .{word.group()}"
    return f"{what}: a Soufflé feature sparklog does not support"


def _phrase(expected: set[str], terminals: dict[str, str]) -> str:
    """``a name, '(' or an operator``: expected terminals in words."""
    words: list[str] = []
    expected = {e for e in expected if terminals.get(e) not in _UNSUGGESTED}
    if {"IDENT", "INT", "STRING", "LPAR"} <= expected:
        words.append("an expression")
        expected = expected - _EXPRESSION
    if len(expected & _OPERATORS) >= 3:
        words.append("an operator")
        expected = expected - _OPERATORS
    for name in sorted(expected):
        word = _WORDS.get(name) or (f"'{terminals[name]}'" if name in terminals
                                    else name.lower())
        if word not in words:
            words.append(word)
    if len(words) > _SHOWN:
        words = words[:_SHOWN] + ["..."]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _line_break_before(text: str, pos: int) -> bool:
    """Whether only blank space (with a line break) separates ``pos`` from the text before."""
    before = text[:pos]
    gap = before[len(before.rstrip()):]
    return "\n" in gap


def _unterminated(text: str) -> tuple[int, str] | None:
    """The offset of the first comment or string that never ends, and what it is."""
    i = 0
    while i < len(text):
        if text[i] == '"':
            j = i + 1
            while j < len(text) and text[j] not in '"\n':
                j += 2 if text[j] == "\\" and text[j + 1:j + 2] not in ("", "\n") else 1
            if j >= len(text) or text[j] != '"':
                return i, "unterminated string"
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                return i, "unterminated comment"
            i = j + 2
        else:
            i += 1
    return None


def _span(file: str, text: str, pos: int) -> Span:
    line = text.count("\n", 0, pos) + 1
    return Span(file, line, pos - (text.rfind("\n", 0, pos) + 1) + 1)
