"""Text -> AST: parse with the lark grammar, build nodes.py values, desugar to Horn clauses."""

from __future__ import annotations

import hashlib
import io
import itertools
import sys
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import lark
from lark import Token, Transformer, v_args

from sparklog import cache
from sparklog.errors import Diagnostic, ParseError, Span
from sparklog.syntax import components as comp
from sparklog.syntax import nodes as n
from sparklog.syntax import records, subsumption
from sparklog.syntax.diagnose import diagnose
from sparklog.syntax.fold import fact
from sparklog.syntax.preprocess import has_directives, preprocess
from sparklog.syntax.walk import too_deep

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "'": "'", "0": "\0"}
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1
# qualifiers of a .decl that tell Soufflé how to store or optimize a relation, not what
# it holds: accepted and ignored
_HINTS = frozenset({"btree", "btree_delete", "brie", "inline", "no_inline", "magic",
                    "no_magic", "overridable", "nullary"})


# LALR(1): linear time (benchmarks/results/parse.md: against the Earley parser it
# replaced). The contextual lexer offers only the terminals the parser can take next, so a
# word after a .decl is a qualifier where one may stand and a name elsewhere.
_OPTIONS = {"parser": "lalr", "lexer": "contextual", "propagate_positions": True}


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    """The grammar's parser. Building its LALR tables takes 0.2-0.4 s of a cold
    ``sparklog run``; they are kept in sparklog's cache (cache.py) under a name that hashes
    the grammar, the options and the lark and Python versions, and loaded in about 0.015 s."""
    grammar = files("sparklog.syntax").joinpath("grammar.lark").read_text()
    key = hashlib.sha256(repr((grammar, sorted(_OPTIONS.items()), lark.__version__,
                               sys.version_info[:2])).encode()).hexdigest()[:16]
    name = f"grammar-{key}.lark"
    kept = cache.read(name)
    if kept is not None:
        try:
            return lark.Lark.load(io.BytesIO(kept))
        except Exception:  # noqa: BLE001 (damaged: built again, and replaced below)
            pass
    parser = lark.Lark(grammar, **_OPTIONS)
    tables = io.BytesIO()
    parser.save(tables)
    cache.write(name, tables.getvalue())
    return parser


@lru_cache(maxsize=1)
def _terminals() -> dict[str, str]:
    """Terminal name -> its literal text, for those that have one (``__ANON_1`` -> ``.decl``)."""
    return {t.name: t.pattern.value for t in _parser().terminals
            if isinstance(t.pattern, lark.lexer.PatternStr)}


def parse(text: str, file: str = "<program>", include_dirs: Sequence[str | Path] = (),
          macros: Sequence[str] = ()) -> n.Program:
    """Parse program text into a :class:`~sparklog.syntax.nodes.Program`, through the C
    preprocessor if it has a directive (syntax/preprocess.py), as Soufflé does.

    >>> parse('.decl e(x:number, y:number)\\ne(1, 2).').clauses[0].head.args[0].value
    1
    """
    if not has_directives(text) and not macros:
        return _parse(text, file)
    pre = preprocess(text, file, include_dirs, macros)
    try:
        program = _parse(pre.text, file)
    except ParseError as exc:
        raise ParseError(pre.placed(tuple(exc.diagnostics)), pre.sources) from None
    return replace(pre.placed(program), sources=tuple(pre.sources.items()))


# Operators and calls inside one another in one term, at most: Spark's SQL parser refuses
# an expression a few hundred levels deep (FAILED_TO_PARSE_TOO_COMPLEX), and Python's
# stack ends near a thousand.
MAX_NESTING = 100


def _parse(text: str, file: str) -> n.Program:
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        raise ParseError(diagnose(exc, text, file, _terminals()), {file: text}) from None
    try:
        program = _assemble(_Builder(file, text).transform(tree), file, text)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, ParseError):
            raise exc.orig_exc from None
        if not isinstance(exc.orig_exc, RecursionError):
            raise
        program = None
    except RecursionError:
        program = None
    if program is None:  # nested past Python's stack: say where
        line, column = _deepest(tree)
        raise ParseError(Diagnostic(Span(file, line, column), _TOO_DEEP),
                         {file: text}) from None
    _check_nesting(program, {file: text})
    return program


_TOO_DEEP = (f"this term nests operators and calls more than {MAX_NESTING} deep, more than "
             "Spark's SQL parser takes; split it with intermediate variables")


def _deepest(tree: lark.Tree) -> tuple[int, int]:
    """(line, column) of the deepest node of the parse tree that has a place."""
    best, where = -1, (1, 1)
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        meta = node.meta
        if depth > best and not meta.empty:
            best, where = depth, (meta.line, meta.column)
        stack.extend((child, depth + 1) for child in node.children)
    return where


def _check_nesting(program: n.Program, sources: dict[str, str]) -> None:
    """An error at the first term whose operators and calls nest past MAX_NESTING."""
    deep = too_deep(program.clauses, MAX_NESTING)
    if deep is not None:
        raise ParseError(Diagnostic(deep.span, _TOO_DEEP), sources)


def parse_file(path: str | Path, include_dirs: Sequence[str | Path] = (),
               macros: Sequence[str] = ()) -> n.Program:
    """Parse a program file; diagnostics name the path as given."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(f"cannot read program {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a binary or Latin-1 file: name the first bad byte
        at = exc.start
        line = data.count(b"\n", 0, at) + 1
        col = len(data[data.rfind(b"\n", 0, at) + 1:at].decode("utf-8", "replace")) + 1
        raise ParseError(Diagnostic(Span(str(path), line, col), f"byte 0x{data[at]:02x} is not "
                                    "UTF-8 text (programs are read as UTF-8)")) from None
    return parse(text.replace("\r\n", "\n").replace("\r", "\n"), str(path),  # as read_text
                 include_dirs, macros)


def _unescape(raw: str, span: Span) -> str:
    body, out, i = raw[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            nxt = body[i + 1]
            if nxt not in _ESCAPES:
                raise ParseError(Diagnostic(span, f"unknown escape sequence '\\{nxt}'"))
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


class _Builder(Transformer):
    """Turns the lark tree into nodes; literal groups stay nested until desugaring."""

    def __init__(self, file: str, text: str) -> None:
        super().__init__()
        self.file, self.text = file, text

    def _span(self, meta_or_token) -> Span:
        m = meta_or_token
        if isinstance(m, Token):
            return Span(self.file, m.line, m.column, m.end_line, m.end_column)
        if getattr(m, "empty", False):
            return Span(self.file, 1, 1)
        return Span(self.file, m.line, m.column, m.end_line, m.end_column)

    # -- declarations ------------------------------------------------------------------
    @v_args(meta=True)
    def subtype(self, meta, items):
        return n.TypeDecl(str(items[0]), str(items[2]), True, self._span(meta))

    @v_args(meta=True)
    def symbol_type(self, meta, items):
        return n.TypeDecl(str(items[0]), "symbol", True, self._span(meta))

    @v_args(meta=True)
    def number_type(self, meta, items):
        return n.TypeDecl(str(items[0]), "number", True, self._span(meta))

    @v_args(meta=True)
    def alias(self, meta, items):
        return n.TypeDecl(str(items[0]), str(items[2]), False, self._span(meta))

    @v_args(meta=True)
    def union(self, meta, items):
        members = tuple(str(i) for i in items[2:])
        return n.TypeDecl(str(items[0]), members[0], False, self._span(meta), members)

    @v_args(meta=True)
    def record_type(self, meta, items):
        fields = tuple(a for a in items[2:] if a is not None)
        return n.TypeDecl(str(items[0]), "record", False, self._span(meta), fields=fields)

    @v_args(meta=True)
    def adt_type(self, meta, items):
        # in the order of their names, as Soufflé numbers them (AlgebraicDataType::
        # setBranches): a value's branch number, and so the order rows print in, is Soufflé's
        branches = tuple(sorted((b for b in items[2:] if isinstance(b, tuple)),
                                key=lambda b: b[0]))
        return n.TypeDecl(str(items[0]), "adt", False, self._span(meta), branches=branches)

    def adt_branch(self, items):
        return (str(items[0]), tuple(a for a in items[1:] if a is not None))

    @v_args(meta=True)
    def adt_value(self, meta, items):
        return n.Branch(str(items[0])[1:], tuple(a for a in items[1:] if a is not None),
                        self._span(meta))

    @v_args(meta=True)
    def record(self, meta, items):
        return n.Record(tuple(a for a in items if a is not None), self._span(meta))

    @v_args(meta=True)
    def opaque_type(self, meta, items):
        return n.TypeDecl(str(items[0]), "symbol", True, self._span(meta))

    @v_args(meta=True)
    def attribute(self, meta, items):
        return n.Attribute(str(items[0]), str(items[1]), self._span(meta), items[2] is not None)

    @v_args(meta=True)
    def lattice_decl(self, meta, items):
        ops = tuple(o for o in items[2:] if o is not None)
        return n.LatticeDecl(str(items[0]), ops, self._span(meta))

    @v_args(meta=True)
    def lattice_op(self, meta, items):
        params = tuple(str(p) for p in items[1:3] if p is not None)
        return n.LatticeOp(str(items[0]), params, items[-1], self._span(meta))

    def qualifier(self, items):
        return ("qualifier", items[0])

    def decl(self, items):  # .decl A, B(x: number) declares A and B alike
        attrs = tuple(a for a in items if isinstance(a, n.Attribute))
        names = [t for t in items if isinstance(t, Token)]
        out: list = [n.Decl(str(t), attrs, self._span(t)) for t in names]
        for _, token in (q for q in items if isinstance(q, tuple)):
            out += self._qualified(str(token), self._span(token), names, attrs)
        return out

    def _qualified(self, word: str, span: Span, names: list[Token],
                   attrs: tuple[n.Attribute, ...]) -> list:
        """What a qualifier after ``.decl r(...)`` adds: Soufflé's ``eqrel`` the rules
        of an equivalence relation; its older ``input``, ``output`` and ``printsize`` the
        directive; its storage and optimizer hints nothing, as they change no result."""
        if word in ("input", "output", "printsize"):
            return [n.Directive(word, str(t), (), span) for t in names]
        if word == "eqrel":
            if len(attrs) != 2 or attrs[0].type != attrs[1].type:
                raise ParseError(Diagnostic(span, "an eqrel relation has two attributes of "
                                            "the same type"), {self.file: self.text})
            x, y, z = (n.Var(v, span) for v in ("x", "y", "z"))
            rules = []
            for t in names:  # symmetric and transitive; reflexive on what it relates
                r = str(t)
                rules.append(n.Clause(n.Atom(r, (y, x), span), (n.Atom(r, (x, y), span),), span))
                rules.append(n.Clause(n.Atom(r, (x, z), span),
                                      (n.Atom(r, (x, y), span), n.Atom(r, (y, z), span)), span))
            return rules
        if word in _HINTS:
            return []
        raise ParseError(Diagnostic(span, f"unknown qualifier '{word}' (Soufflé's are "
                                    f"{', '.join(sorted(_HINTS | {'eqrel'}))})"),
                         {self.file: self.text})

    def param(self, items):
        key, value = str(items[0]), items[2]
        text = _unescape(str(value), self._span(value)) if value.type == "STRING" else str(value)
        return (key, text)

    def plan(self, items):
        return []

    # -- components (syntax/components.py) ------------------------------------------------
    @v_args(meta=True)
    def comp_type(self, meta, items):
        name, *rest = items
        if rest and rest[0] is not None:
            marks = (str(rest[0]), str(rest[-1]))
            if marks != ("<", ">"):
                raise ParseError(Diagnostic(self._span(rest[0]), "expected Name<T, ...>"),
                                 {self.file: self.text})
            rest = rest[1:-1]
        args = tuple(str(t) for t in rest if t is not None)
        return comp.CompType(str(name), args, self._span(meta))

    @v_args(meta=True)
    def component(self, meta, items):
        types = [i for i in items if isinstance(i, comp.CompType)]
        body = tuple(i for i in items if i is not None and not isinstance(i, comp.CompType))
        return comp.Component(types[0], tuple(types[1:]), body, self._span(meta))

    @v_args(meta=True)
    def init(self, meta, items):
        name = str(items[0])
        if "." in name:
            raise ParseError(Diagnostic(self._span(items[0]), f"instance name {name} is not "
                                        "a plain name"), {self.file: self.text})
        return comp.Init(name, items[2], self._span(meta))

    @v_args(meta=True)
    def override(self, meta, items):
        return comp.Override(str(items[0]), self._span(meta))

    def souffle_pragma(self, items):
        """Soufflé's ``.pragma "key" "value"`` sets one of its command-line options
        (``magic-transform``, ``jobs``, ...): how Soufflé evaluates, not what a program
        derives. Accepted and ignored; sparklog's own pragmas name a relation."""
        if str(items[0]) != ".pragma":
            raise ParseError(Diagnostic(self._span(items[1]), f"{items[0]} takes a relation "
                                        "name, not a string"), {self.file: self.text})
        return []

    def directive(self, items):
        kind = str(items[0])[1:]
        if kind == "limitsize":
            raise ParseError(Diagnostic(self._span(items[0]), ".limitsize is not supported"),
                             {self.file: self.text})
        names = [t for t in items[1:] if isinstance(t, Token)]
        params = tuple(p for p in items[1:] if isinstance(p, tuple))
        return [n.Directive(kind, str(t), params, self._span(t)) for t in names]

    # -- clauses -----------------------------------------------------------------------
    def heads(self, items):
        return list(items)

    @v_args(meta=True)
    def fact_clause(self, meta, items):
        return ("clause", items[0], [[]], self._span(meta))

    @v_args(meta=True)
    def rule_clause(self, meta, items):
        return ("clause", items[0], items[1], self._span(meta))

    @v_args(meta=True)
    def subsumption_clause(self, meta, items):
        dominated, dominating = (i for i in items if isinstance(i, n.Atom))
        op = next(i for i in items if getattr(i, "type", None) == "COMPARE")
        bodies = next(i for i in items if isinstance(i, list))
        if str(op) != "<=":
            raise ParseError(Diagnostic(self._span(meta), f"'{op}' between two atoms: a "
                                        "subsumption is written a(x) <= a(y) :- ..."))
        return ("subsume", dominated, dominating, bodies, self._span(meta))

    def disjunction(self, items):
        return [alt for conj in items for alt in conj]  # a list of alternative bodies

    def conjunction(self, items):
        # each literal is a list of alternatives (a plain literal has one)
        alternatives = [lit if isinstance(lit, list) else [[lit]] for lit in items]
        return [sum(combo, []) for combo in itertools.product(*alternatives)]

    def group(self, items):
        return items[0]

    @v_args(meta=True)
    def atom(self, meta, items):
        return self.atom_of(str(items[0]), tuple(a for a in items[1:] if a is not None),
                            self._span(meta))

    def lone(self, items):
        """An expression where a literal stands: an atom, read as a call (grammar.lark)."""
        term = items[0]
        if isinstance(term, n.Call) and not term.name.startswith("@") \
                and term.name not in ("min", "max"):
            return self.atom_of(term.name, term.args, term.span)
        raise ParseError(Diagnostic(term.span, "expected a literal (an atom, a comparison, "
                                    "a negation or a group), found an expression"),
                         {self.file: self.text})

    def atom_of(self, name: str, args: tuple, span: Span) -> n.Literal:
        if name in n.CONSTRAINT_FUNCTORS:
            return n.Constraint(name, args, False, span)
        return n.Atom(name, args, span)

    @v_args(meta=True)
    def negation(self, meta, items):
        # As Soufflé's RuleBody::negated: `!(A, B ; C)` is the disjunctive normal form of
        # `(!A ; !B), !C`, each literal negated (a comparison by its complement).
        inner = items[0]
        if not isinstance(inner, list):
            return [[_negated(inner, self._span(meta))]]
        either = [[[_negated(lit, lit.span)] for lit in alt] for alt in inner]
        return [sum(combo, []) for combo in itertools.product(*either)]

    @v_args(meta=True)
    def comparison(self, meta, items):
        return n.Comparison(str(items[1]), items[0], items[2], self._span(meta))

    @v_args(meta=True)
    def true_lit(self, meta, items):
        return n.BoolLit(True, self._span(meta))

    @v_args(meta=True)
    def false_lit(self, meta, items):
        return n.BoolLit(False, self._span(meta))

    # -- terms -------------------------------------------------------------------------
    @v_args(meta=True)
    def binop(self, meta, items):
        return n.BinOp(str(items[1]), items[0], items[2], self._span(meta))

    @v_args(meta=True)
    def neg(self, meta, items):
        arg = items[1]
        if isinstance(arg, n.Number) and not arg.unsigned:
            return n.Number(-arg.value, False, self._span(meta))
        if isinstance(arg, n.Float):
            return n.Float(-arg.value, self._span(meta))
        return n.UnaryOp("neg", arg, self._span(meta))

    @v_args(meta=True)
    def bnot(self, meta, items):
        return n.UnaryOp("bnot", items[1], self._span(meta))

    @v_args(meta=True)
    def lnot(self, meta, items):
        return n.UnaryOp("lnot", items[1], self._span(meta))

    @v_args(meta=True)
    def wildcard(self, meta, items):
        return n.Wildcard(self._span(meta))

    def var(self, items):
        if "." in items[0]:
            raise ParseError(Diagnostic(self._span(items[0]), f"'{items[0]}' is not a "
                                        "variable name (a qualified name names a relation)"),
                             {self.file: self.text})
        return n.Var(str(items[0]), self._span(items[0]))

    def int_lit(self, items):
        tok = items[0]
        text, unsigned = str(tok), str(tok).endswith("u")
        value = int(text.rstrip("u"), 0)
        if value > (_UINT64_MAX if unsigned else 2**63):
            raise ParseError(Diagnostic(self._span(tok), f"number {text} does not fit in 64 bits"),
                             {self.file: self.text})
        return n.Number(value, unsigned, self._span(tok))

    def float_lit(self, items):
        return n.Float(float(items[0]), self._span(items[0]))

    def string_lit(self, items):
        span = self._span(items[0])
        try:
            return n.String(_unescape(str(items[0]), span), span)
        except ParseError as exc:
            raise ParseError(exc.diagnostics, {self.file: self.text}) from None

    @v_args(meta=True)
    def call(self, meta, items):
        name, args, span = str(items[0]), tuple(a for a in items[1:] if a is not None), \
            self._span(meta)
        if name == "as" and len(args) == 2 and isinstance(args[1], n.Var):
            # Soufflé's type cast: a statement about the type, the value is unchanged (the
            # checks then see the value's own primitive type)
            return args[0]
        if name in _CONVERSIONS and len(args) == 1:  # Soufflé's older names
            return n.Call(_CONVERSIONS[name], args, span)
        if name in ("min", "max") and len(args) > 2:  # variadic in Soufflé: folded
            folded = n.Call(name, args[:2], span)
            for arg in args[2:]:
                folded = n.Call(name, (folded, arg), span)
            return folded
        return n.Call(name, args, span)

    def aggregate_body(self, items):
        body = items[0]
        if isinstance(body, n.Atom):
            return (body,)
        if len(body) != 1:
            raise ParseError(Diagnostic(_first_span(body), "disjunction inside an aggregate"),
                             {self.file: self.text})
        return tuple(body[0])

    @v_args(meta=True)
    def aggregate(self, meta, items):
        func = str(items[0])
        target = items[1] if func != "count" else None
        return n.Aggregate(func, target, items[-1], self._span(meta))

    @v_args(meta=True)
    def head_aggregate(self, meta, items):
        return n.HeadAggregate(str(items[0])[1:].lower(), items[1], self._span(meta))


# Soufflé's older conversion functors (still in its grammar): from and to a number (i),
# an unsigned (u) and a float (f)
_CONVERSIONS = {"itof": "to_float", "utof": "to_float", "itou": "to_unsigned",
                "ftou": "to_unsigned", "utoi": "to_number", "ftoi": "to_number"}


_COMPLEMENT = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _negated(literal: n.Literal, span: Span) -> n.Literal:
    """The literal that holds exactly when ``literal`` does not."""
    match literal:
        case n.Atom():
            return n.Negation(literal, span)
        case n.Negation(atom=atom):
            return atom
        case n.Constraint():
            return n.Constraint(literal.name, literal.args, not literal.negated, span)
        case n.Comparison(op=op):
            return n.Comparison(_COMPLEMENT[op], literal.left, literal.right, span)
        case n.BoolLit(value=value):
            return n.BoolLit(not value, span)
    raise TypeError(literal)


def _first_span(alternatives) -> Span:
    return alternatives[0][0].span if alternatives and alternatives[0] else Span("<program>", 1, 1)


def _assemble(tree, file: str, text: str) -> n.Program:
    """Split the top-level items by kind and expand each rule into Horn clauses."""
    types, decls, clauses, directives, lattices, subsumptions = [], [], [], [], [], []
    for item in comp.expand(list(tree.children), {file: text}):
        match item:
            case n.TypeDecl():
                types.append(item)
            case n.LatticeDecl():
                lattices.append(item)
            case [n.Decl(), *_]:  # with what its qualifiers add
                decls.extend(d for d in item if isinstance(d, n.Decl))
                directives.extend(d for d in item if isinstance(d, n.Directive))
                clauses.extend(c for c in item if isinstance(c, n.Clause))
            case [n.Directive(), *_] | []:
                directives.extend(item)
            case ("clause", heads, [[]], span):
                clauses.extend(fact(h, span, folded=False) for h in heads)
            case ("clause", heads, bodies, span):
                clauses.extend(n.Clause(h, tuple(body), span) for body in bodies for h in heads)
            case ("subsume", dominated, dominating, bodies, span):
                subsumptions.extend(subsumption.Subsumption(dominated, dominating, tuple(body),
                                                            span) for body in bodies)
            case _:
                raise AssertionError(f"unexpected item {item!r}")
    clauses = [_head_aggregates(c) for c in clauses]
    program = n.Program(tuple(types), tuple(decls), tuple(clauses), tuple(directives),
                        ((file, text),), tuple(lattices))
    return records.flatten(subsumption.rewrite(program, subsumptions))


_HEAD_AGGREGATE = "@h"  # prefix of the variable that an aggregate in a head becomes


def _head_aggregates(clause: n.Clause) -> n.Clause:
    """``b(s, count : { c(s, _) }) :- w(s).`` as Soufflé reads it: ``b(s, @h0) :- w(s),
    @h0 = count : { c(s, _) }.`` An aggregate in a head (a fact's too: ``n(count : r(_)).``)
    is evaluated in the scope of the body, where it groups by the variables it shares with
    it; as a body literal it is checked, stratified and planned like any other."""
    bound: list[n.Literal] = []

    def hoist(term: n.Term) -> n.Term:
        match term:
            case n.Aggregate():
                var = n.Var(f"{_HEAD_AGGREGATE}{len(bound)}", term.span)
                bound.append(n.Comparison("=", var, term, term.span))
                return var
            case n.BinOp(op=op, left=left, right=right):
                return n.BinOp(op, hoist(left), hoist(right), term.span)
            case n.UnaryOp(op=op, arg=arg):
                return n.UnaryOp(op, hoist(arg), term.span)
            case n.Call(name=name, args=args):
                return n.Call(name, tuple(hoist(a) for a in args), term.span)
            case n.HeadAggregate(func=func, arg=arg):
                return n.HeadAggregate(func, hoist(arg), term.span)
        return term

    args = tuple(hoist(a) for a in clause.head.args)
    if not bound:
        return clause
    return n.Clause(replace(clause.head, args=args), clause.body + tuple(bound), clause.span)


def merge(*programs: n.Program) -> n.Program:
    """Concatenate programs (e.g. several files) into one."""
    return n.Program(*(tuple(itertools.chain.from_iterable(getattr(p, f) for p in programs))
                       for f in ("types", "decls", "clauses", "directives", "sources",
                                 "lattices")))
