"""Semantic checks: every check reports, all run, then one error lists them all.

The result of :func:`check` is a :class:`Checked` program: the AST plus the facts later
stages need (column kinds per relation, strata in order).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from sparklog.errors import CheckError, Note, Reporter, Span
from sparklog.semantics import literals
from sparklog.semantics.lattices import Lattice, lattices
from sparklog.semantics.strata import Stratum, stratify
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import (aggregates, body_variables, literal_terms, map_terms,
                                  nested_literals, subterms, variables)

NUMERIC = ("number", "unsigned", "float")


@dataclass(frozen=True)
class Checked:
    """A program that passed every check, with its column kinds and strata."""

    program: n.Program
    kinds: dict[str, tuple[str, ...]]  # relation -> primitive kind per column
    strata: tuple[Stratum, ...]
    lattices: dict[str, Lattice] = field(default_factory=dict)  # relations with $MIN/$MAX

    def decl(self, name: str) -> n.Decl:
        decl = self.program.decl(name)
        assert decl is not None, name
        return decl

    def inputs(self) -> list[n.Directive]:
        return [d for d in self.program.directives if d.kind == "input"]

    def outputs(self) -> list[n.Directive]:
        return [d for d in self.program.directives if d.kind in ("output", "printsize")]


def check(program: n.Program, trusted: frozenset[str] = frozenset()) -> Checked:
    """Run every check; raise one :class:`CheckError` listing all problems.

    ``trusted``: relations a rewrite made (rewrite/closure.py) whose rules are not checked
    for monotonicity: the rewrite proves what the check could not."""
    rep = Reporter()
    kinds = _resolve_declarations(program, rep)
    program = replace(program, clauses=tuple(_ground_witnesses(c) for c in program.clauses))
    for clause in program.clauses:
        _check_clause(clause, kinds, rep)
    printsize: dict[str, n.Directive] = {}
    for d in program.directives:
        if d.relation not in kinds:
            rep.error(d.span, f"undeclared relation {d.relation} in .{d.kind}")
        elif d.kind == "printsize" and d.relation in printsize:  # as Soufflé: other
            rep.error(d.span, f"redefinition of .printsize for {d.relation}",  # directives
                      Note(printsize[d.relation].span, "previous definition"))  # may repeat
        elif d.kind == "printsize":
            printsize[d.relation] = d
        elif d.kind == "pragma":
            _check_pragma(d, rep)
    strata, bad = stratify(program)
    seen = set()
    for dep in bad:
        if (dep.head, dep.body) in seen:
            continue
        seen.add((dep.head, dep.body))
        cycle = next(s.relations for s in strata if dep.head in s.relations)
        how = "negation" if isinstance(dep.literal, n.Negation) else "aggregation"
        rep.error(dep.literal.span, f"cannot stratify: {how} of {dep.body} in a rule for "
                  f"{dep.head}, which {dep.body} depends on (cycle {{{', '.join(cycle)}}})",
                  Note(dep.clause.span, "in this rule"))
    found = lattices(program, kinds, strata, rep, trusted)
    rep.raise_if_any(CheckError, program.source_map())
    return Checked(literals.typed(_concatenated(program, kinds), kinds), kinds, tuple(strata),
                   found)


def typed_literals(program: n.Program) -> n.Program:
    """``program`` with its numeric constants typed from their contexts and its facts
    folded (semantics/literals.py), as :func:`check` leaves it, without checking it."""
    return literals.typed(program, _resolve_declarations(program, Reporter()))


def _concatenated(program: n.Program, kinds: dict[str, tuple[str, ...]]) -> n.Program:
    """The program with Soufflé's ``a + b`` over two symbols (their concatenation) written
    as ``cat(a, b)``, which every later stage knows."""
    def clause(c: n.Clause) -> n.Clause:
        types = _variable_kinds(c, kinds, Reporter())

        def cat(term: n.Term) -> n.Term:
            if isinstance(term, n.BinOp) and term.op == "+" and "symbol" in (
                    types.infer(term.left), types.infer(term.right)):
                return n.Call("cat", (term.left, term.right), term.span)
            return term
        return map_terms(c, cat)
    clauses = tuple(clause(c) for c in program.clauses)
    return program if clauses == program.clauses else replace(program, clauses=clauses)


def _check_pragma(d: n.Directive, rep: Reporter) -> None:
    from sparklog.options import STRATEGIES
    from sparklog.rewrite.closure import split_first

    if not d.params:
        rep.error(d.span, f".pragma {d.relation} says nothing: write "
                  f".pragma {d.relation}(strategy=smart)")
    strategy = d.param("strategy")
    for key, value in d.params:
        if key not in ("strategy", "first"):
            rep.error(d.span, f"unknown .pragma key {key!r} for {d.relation}: the keys are "
                      "strategy and, with strategy=split, first")
        elif key == "strategy" and value not in STRATEGIES + ("split",):
            rep.error(d.span, f".pragma {d.relation}(strategy={value}): the strategy must be "
                      f"one of {', '.join(STRATEGIES + ('split',))}")
        elif key == "first" and strategy != "split":
            rep.error(d.span, f".pragma {d.relation}(first=...): first is the first part's "
                      f"length of strategy=split, which the pragma does not ask for")
        elif key == "first":
            problem = split_first(value)[1]
            if problem:
                rep.error(d.span, f".pragma {d.relation}: {problem}")
    if strategy == "split" and d.param("first") is None:
        rep.error(d.span, f".pragma {d.relation}(strategy=split) needs the first part's length "
                  f"as a term over the path's length l: .pragma {d.relation}(strategy=split, "
                  'first="(l + 1) / 2")')


def _primitive_types(program: n.Program, rep: Reporter) -> dict[str, str]:
    """Each type's primitive type. Types may be declared in any order, as in Soufflé; a
    union's members must all have the same one."""
    declared: dict[str, n.TypeDecl] = {}
    for t in program.types:
        if t.name in declared or t.name in n.PRIMITIVE_TYPES:
            rep.error(t.span, f"type {t.name} is declared twice")
        else:
            declared[t.name] = t
    types: dict[str, str] = {t: t for t in n.PRIMITIVE_TYPES}
    failed: set[str] = set()  # reported once, not again from each type built on it

    def resolve(name: str, path: tuple[str, ...]) -> str | None:
        if name in types or name in failed:
            return types.get(name)
        t = declared[name]
        if name in path:
            rep.error(t.span, f"type {name} is defined in terms of itself")
            failed.add(name)
            return None
        found = []
        for member in t.members or (t.base,):
            if member not in types and member not in declared:
                rep.error(t.span, f"unknown type {member}")
                found.append(None)
            else:
                found.append(resolve(member, (*path, name)))
        if None in found:
            failed.add(name)
            return None
        if len(set(found)) > 1:
            mixed = ", ".join(f"{m} is {p}" for m, p in zip(t.members, found))
            rep.error(t.span, f"union type {name} mixes primitive types ({mixed})")
            failed.add(name)
            return None
        types[name] = found[0]
        return found[0]

    for name in declared:
        resolve(name, ())
    return types


def _resolve_declarations(program: n.Program, rep: Reporter) -> dict[str, tuple[str, ...]]:
    types = _primitive_types(program, rep)
    declared = {t.name for t in program.types}  # a type whose definition failed: said there
    lattices = _lattice_types(program, types, rep)
    kinds: dict[str, tuple[str, ...]] = {}
    for d in program.decls:
        if d.name in kinds:
            rep.error(d.span, f"relation {d.name} is declared twice")
            continue
        names = [a.name for a in d.attributes]
        for a in d.attributes:
            if a.lattice and a.type not in lattices:
                rep.error(a.span, f"{a.type}<> of attribute {a.name} is not a lattice: declare "
                          f".lattice {a.type}<> {{ Bottom -> .., Lub(x, y) -> .. }}")
            elif a.type not in types and a.type not in declared and not a.lattice:
                rep.error(a.span, f"unknown type {a.type} of attribute {a.name}")
            if names.count(a.name) > 1:
                rep.error(a.span, f"attribute {a.name} appears twice in {d.name}")
        kinds[d.name] = tuple(lattices.get(a.type, "number") if a.lattice
                              else types.get(a.type, "number") for a in d.attributes)
    return kinds


LATTICE_OPS = ("Bottom", "Top", "Lub", "Glb")


def _lattice_types(program: n.Program, types: dict[str, str], rep: Reporter) -> dict[str, str]:
    """The kind of each ``.lattice T<>``: T's if T is a type, else its Bottom's; and the checks
    of its operations (Bottom a constant; Lub, Glb over their two arguments)."""
    out: dict[str, str] = {}
    for lat in program.lattices:
        if lat.name in out:
            rep.error(lat.span, f"lattice {lat.name} is declared twice")
            continue
        for op in lat.ops:
            if op.name not in LATTICE_OPS:
                rep.error(op.span, f"unknown lattice operation {op.name}: expected "
                          f"{', '.join(LATTICE_OPS)}")
            elif [o.name for o in lat.ops].count(op.name) > 1:
                rep.error(op.span, f"{op.name} is defined twice in lattice {lat.name}")
            elif op.name in ("Lub", "Glb"):
                _check_lattice_function(lat, op, rep)
            elif op.params:
                rep.error(op.span, f"{op.name} of lattice {lat.name} takes no arguments")
        bottom, lub = lat.op("Bottom"), lat.op("Lub")
        if lub is None or bottom is None:
            rep.error(lat.span, f"lattice {lat.name} needs Bottom and Lub")
            continue
        if not isinstance(bottom.expr, n.Number | n.Float | n.UnaryOp):
            rep.error(bottom.expr.span, f"Bottom of lattice {lat.name} must be a number")
            continue
        kind = types.get(lat.name) or ("float" if isinstance(bottom.expr, n.Float) or
                                       isinstance(getattr(bottom.expr, "arg", None), n.Float)
                                       else "unsigned" if getattr(bottom.expr, "unsigned", False)
                                       else "number")
        if kind == "symbol":
            rep.error(lat.span, f"lattice {lat.name} over symbols: a lattice's values must be "
                      "number, unsigned or float")
            continue
        out[lat.name] = kind
    return out


def _check_lattice_function(lat: n.LatticeDecl, op: n.LatticeOp, rep: Reporter) -> None:
    """``Lub(x, y) -> expr`` over x and y, or ``Lub -> @f(_, _)`` (Soufflé's form)."""
    if not op.params:
        call = op.expr
        if not (isinstance(call, n.Call) and len(call.args) == 2 and
                all(isinstance(a, n.Wildcard) for a in call.args)):
            rep.error(op.span, f"{op.name} of lattice {lat.name}: write {op.name}(x, y) -> expr "
                      f"or {op.name} -> f(_, _)")
        return
    if len(set(op.params)) != 2:
        rep.error(op.span, f"{op.name} of lattice {lat.name} needs two different arguments")
    for sub in subterms(op.expr):
        if isinstance(sub, n.Var) and sub.name not in op.params:
            rep.error(sub.span, f"{sub.name} is not an argument of {op.name} "
                      f"({', '.join(op.params)})")
        elif isinstance(sub, n.Wildcard | n.Aggregate | n.HeadAggregate):
            rep.error(sub.span, f"{op.name} of lattice {lat.name} must be an expression over "
                      f"{' and '.join(op.params)}")


def lattice_function(op: n.LatticeOp) -> tuple[tuple[str, str], n.Term]:
    """``(params, expr)`` of a Lub or Glb, the ``f(_, _)`` form as ``f(x, y)``."""
    if op.params:
        return (op.params[0], op.params[1]), op.expr
    assert isinstance(op.expr, n.Call)
    x, y = n.Var("x", op.span), n.Var("y", op.span)
    return ("x", "y"), n.Call(op.expr.name, (x, y), op.expr.span)


# ---------------------------------------------------------------------------------------
# Clauses: declarations, arities, types, groundedness


def _check_clause(clause: n.Clause, kinds: dict[str, tuple[str, ...]], rep: Reporter) -> None:
    atoms = [clause.head, *_atoms(clause.body)]
    if not all(_check_atom(a, kinds, rep) for a in atoms):
        return  # types and bindings mean nothing against a wrong declaration
    if clause.is_fact:
        for arg in clause.head.args:
            if not isinstance(arg, n.Number | n.Float | n.String):  # the parser folded
                rep.error(arg.span, "a fact's arguments must be constants")  # the others
    for arg in clause.head.args:
        for sub in subterms(arg):
            if isinstance(sub, n.Wildcard):
                rep.error(sub.span, "underscore in the head of a clause")
    if not _check_counter(clause, rep):
        return
    _check_types(clause, kinds, rep)
    _check_generators(clause, rep)
    _check_grounded(clause, rep)
    _check_aggregate_cycles(clause, rep)


ITERATION = "__ITERATION__"  # Soufflé's counter of a recursion's fixpoint iterations


def _check_counter(clause: n.Clause, rep: Reporter) -> bool:
    """Refuse Soufflé's ``__ITERATION__``: its value is the number of the semi-naive
    iteration that evaluates the rule, which sparklog's rounds do not keep as Soufflé's do
    (a lagging index, a closure's strategy, a total one round behind its contributions
    move a derivation to another round). Read as an ordinary variable it would bind to
    anything, a silent wrong answer. False if the clause has one."""
    found = [t for lit in nested_literals(clause) for term in literal_terms(lit)
             for t in subterms(term) if isinstance(t, n.Var) and t.name == ITERATION]
    for var in found:
        rep.error(var.span, f"{ITERATION} (Soufflé's count of a recursion's iterations) is "
                  "not supported: sparklog's rounds are not numbered as Soufflé's iterations")
    return not found


def _check_generators(clause: n.Clause, rep: Reporter) -> None:
    """``range(..)`` generates values: it stands alone on one side of ``=``, the other
    side a variable (``x = range(0, n)``, which binds x to each value, or tests it)."""
    allowed: set[int] = set()
    for lit in _literals(clause.body):
        if isinstance(lit, n.Comparison) and lit.op == "=":
            for one, other in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(one, n.Call) and one.name == "range" and isinstance(other, n.Var):
                    allowed.add(id(one))
    terms = [*clause.head.args, *(t for lit in _literals(clause.body) for t in literal_terms(lit))]
    for term in terms:
        for sub in subterms(term):
            if isinstance(sub, n.Call) and sub.name == "range" and id(sub) not in allowed:
                rep.error(sub.span, "range generates values: bind them to a variable "
                          "(x = range(a, b)) in a body")


def _atoms(body: Iterable[n.Literal]) -> list[n.Atom]:
    out = []
    for lit in body:
        match lit:
            case n.Atom():
                out.append(lit)
                terms = lit.args
            case n.Negation():
                out.append(lit.atom)
                terms = lit.atom.args
            case n.Comparison():
                terms = (lit.left, lit.right)
            case n.Constraint():
                terms = lit.args
            case _:
                terms = ()
        for term in terms:
            for sub in subterms(term):
                if isinstance(sub, n.Aggregate):
                    out += _atoms(sub.body)
    return out


def _check_atom(atom: n.Atom, kinds: dict[str, tuple[str, ...]], rep: Reporter) -> bool:
    if atom.relation not in kinds:
        rep.error(atom.span, f"undeclared relation {atom.relation}")
        return False
    arity = len(kinds[atom.relation])
    if len(atom.args) != arity:
        rep.error(atom.span, f"relation {atom.relation} has arity {arity}, "
                  f"used here with {len(atom.args)} arguments")
        return False
    return True


class _Types:
    """Kinds of variables in one clause, filled from atom columns, then expressions."""

    def __init__(self, rep: Reporter) -> None:
        self.rep = rep
        self.var: dict[str, tuple[str, Span]] = {}

    def expect(self, term: n.Term, kind: str, where: str) -> None:
        got = self.infer(term)
        if got is not None and not _compatible(got, kind):
            self.rep.error(term.span, f"type mismatch: {where} expects {kind}, got {got}")

    def bind(self, var: n.Var, kind: str) -> None:
        if var.name not in self.var:
            self.var[var.name] = (kind, var.span)
        elif not _compatible(self.var[var.name][0], kind):
            first_kind, first_span = self.var[var.name]
            self.rep.error(var.span, f"type mismatch: variable {var.name} is {kind} here",
                           Note(first_span, f"and {first_kind} here"))

    def infer(self, term: n.Term) -> str | None:
        match term:
            case n.Var(name=name):
                return self.var.get(name, (None,))[0]
            case n.Wildcard():
                return None
            case n.Number(unsigned=u):
                return "unsigned" if u else "number"
            case n.Float():
                return "float"
            case n.String():
                return "symbol"
            case n.BinOp(op=op, left=left, right=right):
                lk, rk = self.infer(left), self.infer(right)
                if op == "+" and lk == "symbol" and rk in ("symbol", None) or \
                        op == "+" and rk == "symbol" and lk is None:
                    return "symbol"  # Soufflé's concatenation (desugared to cat: _concatenated)
                for side, k in ((left, lk), (right, rk)):
                    if k == "symbol":
                        self.rep.error(side.span, f"type mismatch: operator {op} on a symbol")
                        return None
                return _join(lk, rk)
            case n.UnaryOp(arg=arg):
                k = self.infer(arg)
                if k == "symbol":
                    self.rep.error(arg.span, f"type mismatch: operator {term.op} on a symbol")
                return k
            case n.Call():
                return self._call(term)
            case n.Aggregate(func=func, target=target):
                if func == "count":
                    return "number"
                k = self.infer(target) if target is not None else None
                if k == "symbol":
                    self.rep.error(term.span, f"type mismatch: {func} over a symbol")
                return "float" if func == "mean" else k
            case n.HeadAggregate(func="count", arg=arg):
                self.infer(arg)  # checked, but a count is a number whatever it counts
                return "number"
            case n.HeadAggregate(arg=arg):
                return self.infer(arg)
            case _:
                raise AssertionError(term)

    def _call(self, call: n.Call) -> str | None:
        if call.name.startswith("@"):
            self.rep.error(call.span, f"user functor {call.name}: user functors are supported "
                           "as a .lattice's Lub or Glb only (Engine.functor)")
            return None
        if call.name == "autoinc":
            self.rep.error(call.span, "autoinc() numbers tuples in Soufflé's evaluation "
                           "order, which a distributed engine does not have: not supported")
            return None
        if call.name not in n.FUNCTORS:
            self.rep.error(call.span, f"unknown functor {call.name}")
            return None
        params, result = n.FUNCTORS[call.name]
        if call.name in ("cat", "min", "max"):  # variadic
            params = params[:1] * max(2, len(call.args))
        if call.name == "range":
            if len(call.args) not in (2, 3):
                self.rep.error(call.span, "functor range takes 2 or 3 arguments")
                return None
            params = params[:len(call.args)]
        if len(call.args) != len(params):
            self.rep.error(call.span, f"functor {call.name} takes {len(params)} arguments")
            return None
        kinds = []
        for arg, want in zip(call.args, params):
            got = self.infer(arg)
            kinds.append(got)
            if call.name in ("min", "max") and "symbol" in kinds:
                want = "symbol"  # of symbols: the first in lexicographic (byte) order
            if want == "num" and got == "symbol" or want == "symbol" and got in NUMERIC:
                self.rep.error(arg.span, f"type mismatch: {call.name} expects {want}, got {got}")
        return _join(*kinds) if result == "same" else result


def _compatible(a: str, b: str) -> bool:
    return a == b or (a in NUMERIC and b in NUMERIC and "float" not in (a, b)) or \
        ({a, b} <= set(NUMERIC))  # numeric literals adapt, as Soufflé's do


def _join(*kinds: str | None) -> str | None:
    known = [k for k in kinds if k is not None]
    if "float" in known:
        return "float"
    return known[0] if known else None


def _variable_kinds(clause: n.Clause, kinds: dict[str, tuple[str, ...]], rep: Reporter
                    ) -> _Types:
    types = _Types(rep)
    for atom in [clause.head, *_atoms(clause.body)]:  # (1) columns give variables their kinds
        for arg, kind in zip(atom.args, kinds[atom.relation]):
            if isinstance(arg, n.Var):
                types.bind(arg, kind)
    types.rep = Reporter()  # what infer finds wrong here, (4) of _check_types reports
    for _ in range(3):  # (2) x = expr gives x the kind of expr
        for lit in _literals(clause.body):
            if isinstance(lit, n.Comparison) and lit.op == "=":
                for var, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(var, n.Var) and var.name not in types.var:
                        k = types.infer(other)
                        if k is not None:
                            types.bind(var, k)
    types.rep = rep
    return types


def term_kind(clause: n.Clause, kinds: dict[str, tuple[str, ...]], term: n.Term) -> str:
    """The kind of ``term`` in a checked clause (number when nothing says otherwise)."""
    return _variable_kinds(clause, kinds, Reporter()).infer(term) or "number"


def _check_types(clause: n.Clause, kinds: dict[str, tuple[str, ...]], rep: Reporter) -> None:
    types = _variable_kinds(clause, kinds, rep)
    atoms = [clause.head, *_atoms(clause.body)]
    for atom in atoms:  # (3) expressions in columns
        for arg, kind in zip(atom.args, kinds[atom.relation]):
            if not isinstance(arg, n.Var | n.Wildcard):
                types.expect(arg, kind, f"column of {atom.relation}")
    for lit in _literals(clause.body):  # (4) comparisons and constraints
        if isinstance(lit, n.Comparison):
            lk, rk = types.infer(lit.left), types.infer(lit.right)
            if lk and rk and not _compatible(lk, rk):
                rep.error(lit.span, f"type mismatch: comparing {lk} with {rk}")
        elif isinstance(lit, n.Constraint):
            for arg in lit.args:
                types.expect(arg, "symbol", lit.name)


def _literals(body: Iterable[n.Literal]) -> list[n.Literal]:
    """A body's literals and those of the aggregate bodies inside them, nested ones too."""
    out = []
    for lit in body:
        out.append(lit)
        for agg in aggregates(lit):
            out += _literals(agg.body)
    return out


def _check_grounded(clause: n.Clause, rep: Reporter) -> None:
    bound = bound_variables(clause.body, set())
    def report(term: n.Term, what: str) -> None:
        for v in subterms(term, targets=False):  # an aggregate's own variables: checked below
            if isinstance(v, n.Var) and v.name not in bound:
                rep.error(v.span, f"ungrounded variable {v.name} ({what})")
    for arg in clause.head.args:
        report(arg, "in the head")
    for lit in clause.body:
        match lit:
            case n.Atom():
                for arg in lit.args:
                    if not isinstance(arg, n.Var):
                        report(arg, "in an expression")
            case n.Negation():
                for arg in lit.atom.args:
                    report(arg, "in a negation")
            case n.Comparison() | n.Constraint():
                for arg in (lit.left, lit.right) if isinstance(lit, n.Comparison) else lit.args:
                    report(arg, "in a constraint")
        for agg in aggregates(lit):
            inner = bound_variables(agg.body, injected(clause.body, agg, set()))
            if agg.target is not None:
                for v in subterms(agg.target):
                    if isinstance(v, n.Var) and v.name not in inner:
                        rep.error(v.span, f"ungrounded variable {v.name} (in an aggregate)")


def _check_aggregate_cycles(clause: n.Clause, rep: Reporter) -> None:
    for var in cyclic_aggregate_variables(clause):
        rep.error(var.span, f"ungrounded variable {var.name} (only aggregates grouped by it "
                  "bind it)")


def cyclic_aggregate_variables(clause: n.Clause) -> list[n.Var]:
    """The variables that only aggregates grouped by them bind, each where first bound: in
    ``x = count : { a(x) }, x = count : { b(x) }`` each aggregate's value binds ``x``, so
    the other one is grouped by it (injected), and neither can be computed first. Soufflé
    reports such a variable as ungrounded; bound_variables counts ``x = aggregate`` as
    binding ``x`` whatever groups the aggregate, so _check_grounded does not see it."""
    body = list(clause.body)
    bound = {a.name for lit in body if isinstance(lit, n.Atom) for a in lit.args
             if isinstance(a, n.Var)}
    binders = [(var, other) for lit in body if isinstance(lit, n.Comparison) and lit.op == "="
               for var, other in ((lit.left, lit.right), (lit.right, lit.left))
               if isinstance(var, n.Var)]
    changed = True
    while changed:
        changed = False
        for var, other in binders:
            if var.name in bound or not _ground(other, bound, var.name):
                continue
            if all(_inside_variables(agg) & injected(body, agg, set()) <= bound
                   for agg in aggregates(n.Comparison("=", var, other))):
                bound.add(var.name)
                changed = True
    return [next(var for var, _ in binders if var.name == name)
            for name in sorted(bound_variables(body, set()) - bound)]


def _inside_variables(agg: n.Aggregate) -> set[str]:
    """The variables of an aggregate's body and target, nested aggregates' too."""
    target = variables(agg.target) if agg.target is not None else set()
    return body_variables(agg.body) | target


def bound_variables(body: Iterable[n.Literal], outer: set[str]) -> set[str]:
    """Variables a body grounds: positive atom columns, then ``x = expr`` chains."""
    body = list(body)
    bound = set(outer)
    for lit in body:
        if isinstance(lit, n.Atom):
            bound |= {a.name for a in lit.args if isinstance(a, n.Var)}
    changed = True
    while changed:
        changed = False
        for lit in body:
            if not (isinstance(lit, n.Comparison) and lit.op == "="):
                continue
            for var, other in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(var, n.Var) and var.name not in bound and \
                        _ground(other, bound, var.name):
                    bound.add(var.name)
                    changed = True
    return bound


def _ground_witnesses(clause: n.Clause) -> n.Clause:
    """The clause with the witnesses of its min and max aggregates grounded, as Soufflé's
    GroundWitnesses pass does: a variable the aggregate's body grounds, used outside it
    where nothing else grounds it (``Tallest(s, h) :- h = max x : { height(s, x) }``),
    takes the values of every tuple that reaches the extremum. The aggregate keeps its
    value (its witnesses renamed apart) and the rule gains a copy of its body with the
    target equated to that value: ``height(s, x'), x' = h``. Other aggregates have no
    witnesses (Soufflé refuses them; here they are ungrounded)."""
    added: list[n.Literal] = []
    body = list(clause.body)
    grounded = bound_variables(body, set())
    for i, lit in enumerate(body):
        for agg in aggregates(lit):
            if agg.func not in ("min", "max") or agg.target is None:
                continue
            grouping = injected(body, agg, set())
            own = bound_variables(agg.body, grouping)
            witnesses = (own & _variables_outside(clause)) - grounded
            if not witnesses:
                continue
            taken = variables(*clause.head.args) | body_variables(clause.body) | \
                body_variables(added)
            fresh = _fresh_names(own - grouping, taken)
            renamed = _renamed_term(agg, {w: fresh[w] for w in witnesses})
            body[i] = lit = _replaced(lit, agg, renamed)
            value: n.Term = renamed
            if isinstance(lit, n.Comparison) and lit.op == "=" and lit.right is renamed and \
                    isinstance(lit.left, n.Var):
                value = lit.left
            if isinstance(lit, n.Comparison) and lit.op == "=" and lit.right is renamed and \
                    isinstance(lit.left, n.Wildcard):
                body[i] = n.BoolLit(True, lit.span)  # ``_ = min ...``: the copy holds it
            locals_ = {v: fresh[v] for v in fresh if v not in witnesses}
            added += [_renamed_term(b, locals_) for b in agg.body]
            added.append(n.Comparison("=", _renamed_term(agg.target, locals_), value, agg.span))
    if not added:
        return clause
    return replace(clause, body=tuple(body) + tuple(added))


def _variables_outside(clause: n.Clause) -> set[str]:
    """The variables of ``clause``'s head and body outside every aggregate (a variable
    inside another aggregate is that one's own, or grounded where the rule binds it)."""
    return {v.name for lit in (clause.head, *clause.body) for term in literal_terms(lit)
            for v in subterms(term, targets=False) if isinstance(v, n.Var)}


def _fresh_names(names: set[str], taken: set[str]) -> dict[str, str]:
    out = {}
    for name in sorted(names):
        k = 0
        while f"{name}_w{k}" in taken:
            k += 1
        out[name] = f"{name}_w{k}"
        taken.add(out[name])
    return out


def _renamed_term(node, names: dict[str, str]):
    """A term or literal with the variables of ``names`` renamed."""
    return map_terms(node, lambda t: n.Var(names[t.name], t.span)
                     if isinstance(t, n.Var) and t.name in names else t)


def _replaced(lit: n.Literal, old: n.Aggregate, new: n.Aggregate) -> n.Literal:
    return map_terms(lit, lambda t: new if t is old else t)


def injected(body: Iterable[n.Literal], agg: n.Aggregate, outer: set[str]) -> set[str]:
    """The variables that group ``agg``, as Soufflé injects them: those the rest of the
    body grounds (the literal that holds ``agg`` too, its value not counting) that are not
    in its target. Its other variables are its own: ``Y = min Z + Y : { a(A, Z), a(B, Y),
    A != B }`` takes the minimum over every ``Y`` of ``a``, as only the aggregate's value
    binds the ``Y`` outside, and ``s = sum x : { r(x) }`` sums every ``x`` of ``r`` even
    where the rule binds an ``x`` elsewhere."""
    rest = []
    for lit in body:
        if not any(a is agg or a is not agg and _inside(agg, a) for a in aggregates(lit)):
            rest.append(lit)
        elif isinstance(lit, n.Atom):  # B(x, max s : {...}) still grounds x
            rest.append(n.Atom(lit.relation, tuple(a if isinstance(a, n.Var) else n.Wildcard()
                                                   for a in lit.args), lit.span))
    own = variables(agg.target) if agg.target is not None else set()
    return bound_variables(rest, outer) - own


def _inside(agg: n.Aggregate, outer: n.Aggregate) -> bool:
    """Whether ``agg`` is in the body of ``outer``, at any depth."""
    return any(a is agg or _inside(agg, a) for lit in outer.body for a in aggregates(lit))


def _ground(term: n.Term, bound: set[str], var: str) -> bool:
    """Whether ``var = term`` binds ``var``: every variable outside the aggregates of
    ``term`` is bound (an aggregate's value is defined by its own body)."""
    return all(v.name in bound for v in subterms(term, targets=False) if isinstance(v, n.Var)) \
        and not any(isinstance(t, n.Wildcard) for t in subterms(term, targets=False))


