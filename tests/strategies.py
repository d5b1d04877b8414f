"""Hypothesis strategies for random valid programs, to compare the engine with the reference.

``programs()`` draws ``(program, facts)``: input relations ``e0..`` (``.input``, facts over
0..5 given separately) and derived relations ``r0..`` (``.output``), all columns of type
number. Derived relations come in groups ordered by level; a group may be recursive
(linear or nonlinear, mutual when it has two members). Rules are safe, negation and
``count`` only look at strictly lower levels, aggregates only occur in non-recursive
groups, and arithmetic (``+``/``-``) only in non-recursive rules or as ``x + c`` filtered
by ``(x + c) < 10``, so every program terminates with small values.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from sparklog.syntax.nodes import (
    Aggregate, Atom, Attribute, BinOp, Clause, Comparison, Decl, Directive, Literal, Negation,
    Number, Program, Term, Var, Wildcard,
)

DOMAIN = (0, 5)
VARS = ("x", "y", "z", "w")
COUNT_VAR = "n"
LOCAL_VAR = "a"
LIMIT = 10


@dataclass(frozen=True)
class Rel:
    """A relation being generated: its name, arity and level (0 for inputs)."""

    name: str
    arity: int
    level: int


@dataclass(frozen=True)
class Group:
    """Derived relations of one level; ``recursive`` lets their rules use each other."""

    rels: tuple[Rel, ...]
    recursive: bool


def constants() -> st.SearchStrategy[Number]:
    """A small number constant."""
    return st.integers(*DOMAIN).map(Number)


def term_of(names: list[str] | tuple[str, ...], wildcards: bool = True) -> st.SearchStrategy[Term]:
    """Mostly a variable of ``names``, sometimes a constant or (if allowed) a wildcard."""
    kinds = ["var"] * 6 * bool(names) + ["const"] + ["_"] * wildcards
    return st.sampled_from(kinds).flatmap(
        lambda k: st.sampled_from(names).map(Var) if k == "var"
        else constants() if k == "const" else st.just(Wildcard()))


def atom_args(arity: int, names: list[str] | tuple[str, ...]) -> st.SearchStrategy[tuple]:
    """Arguments for an atom: mostly variables of ``names``, some constants and wildcards."""
    return st.tuples(*[term_of(names)] * arity)


def variables(literals: list[Literal]) -> list[str]:
    """Names of the variables of positive atoms, sorted."""
    return sorted({a.name for lit in literals if isinstance(lit, Atom)
                   for a in lit.args if isinstance(a, Var)})


@st.composite
def comparison(draw, bound: list[str]) -> Comparison:
    """``x op y`` or ``x op c`` over bound variables."""
    op = draw(st.sampled_from(("=", "!=", "<", "<=", ">", ">=")))
    left = draw(st.sampled_from(bound))
    others = [v for v in bound if v != left]
    return Comparison(op, Var(left), draw(term_of(others, wildcards=False)))


@st.composite
def count_literal(draw, lower: list[Rel], bound: list[str]) -> Comparison:
    """``n = count : { r(...) }`` over a lower relation, grouped by bound variables."""
    rel = draw(st.sampled_from(lower))
    args = draw(atom_args(rel.arity, [*bound, LOCAL_VAR]))
    return Comparison("=", Var(COUNT_VAR), Aggregate("count", None, (Atom(rel.name, args),)))


@st.composite
def head_term(draw, bound: list[str], arithmetic: bool) -> Term:
    """A head argument: a bound variable, a constant, or (if allowed) ``x + t`` / ``x - t``."""
    if not bound:
        return draw(constants())
    var = Var(draw(st.sampled_from(bound)))
    kind = draw(st.sampled_from(("var",) * 4 + ("const",) + ("arith",) * arithmetic))
    if kind == "var":
        return var
    if kind == "const":
        return draw(constants())
    other = draw(st.one_of(st.sampled_from(bound).map(Var), constants()))
    return BinOp(draw(st.sampled_from("+-")), var, other)


@st.composite
def rule(draw, head: Rel, lower: list[Rel], same: list[Rel], recursive: bool,
         aggregate: bool = False) -> Clause:
    """One safe rule for ``head``; ``recursive`` rules use 1 or 2 atoms of ``same``."""
    atoms: list[Literal] = []
    picks = [draw(st.sampled_from(same)) for _ in range(draw(st.integers(1, 2)) * recursive)]
    picks += [draw(st.sampled_from(lower + (same if recursive else [])))
              for _ in range(draw(st.integers(0 if picks else 1, 3 - len(picks))))]
    for rel in draw(st.permutations(picks)):
        atoms.append(Atom(rel.name, draw(atom_args(rel.arity, VARS))))
    bound = variables(atoms)
    body = list(atoms)
    if bound and draw(st.integers(0, 2)) == 0:
        body.append(draw(comparison(bound)))
    if draw(st.integers(0, 2)) == 0:
        rel = draw(st.sampled_from(lower))
        body.append(Negation(Atom(rel.name, draw(atom_args(rel.arity, bound)))))
    head_vars = list(bound)
    if aggregate and draw(st.integers(0, 2)) == 0:
        body.append(draw(count_literal(lower, bound)))
        head_vars.append(COUNT_VAR)
    args = tuple(draw(head_term(head_vars, not recursive)) for _ in range(head.arity))
    if recursive and bound and draw(st.integers(0, 3)) == 0:
        args, body = _bounded_increment(draw, args, body, bound)
    return Clause(Atom(head.name, args), tuple(draw(st.permutations(body))))


def _bounded_increment(draw, args: tuple[Term, ...], body: list[Literal],
                       bound: list[str]) -> tuple[tuple[Term, ...], list[Literal]]:
    """Replace one head argument by ``x + c`` and filter the body by ``(x + c) < 10``."""
    step = BinOp("+", Var(draw(st.sampled_from(bound))), Number(draw(st.integers(1, 2))))
    i = draw(st.integers(0, len(args) - 1))
    return args[:i] + (step,) + args[i + 1:], body + [Comparison("<", step, Number(LIMIT))]


@st.composite
def groups(draw, count: int) -> list[Group]:
    """Derived relations ``r0..`` in groups of one or two, each recursive or not."""
    out: list[Group] = []
    for i in range(count):
        rel = Rel(f"r{i}", draw(st.integers(1, 3)), len(out) + 1)
        last = out[-1] if out else None
        if last and last.recursive and len(last.rels) == 1 and draw(st.booleans()):
            out[-1] = Group((*last.rels, Rel(rel.name, rel.arity, rel.level - 1)), True)
        else:
            out.append(Group((rel,), draw(st.booleans())))
    return out


@st.composite
def group_clauses(draw, group: Group, lower: list[Rel]) -> list[Clause]:
    """A base rule per relation of the group, then some recursive ones (if recursive)."""
    clauses = []
    for rel in group.rels:
        clauses.append(draw(rule(rel, lower, [], False, not group.recursive)))
        if draw(st.integers(0, 4)) == 0:
            clauses.append(Clause(Atom(rel.name, draw(st.tuples(*[constants()] * rel.arity))), ()))
        extra = draw(st.integers(0, 2))
        for _ in range(extra):
            clauses.append(draw(rule(rel, lower, list(group.rels), group.recursive,
                                     not group.recursive)))
    return clauses


def decl(rel: Rel) -> Decl:
    """``.decl r(c0:number, ...)``."""
    return Decl(rel.name, tuple(Attribute(f"c{i}", "number") for i in range(rel.arity)))


def facts(rel: Rel) -> st.SearchStrategy[set[tuple]]:
    """A small set of tuples over the domain."""
    return st.sets(st.tuples(*[st.integers(*DOMAIN)] * rel.arity), min_size=1, max_size=15)


@st.composite
def programs(draw, max_inputs: int = 3,
             max_derived: int = 4) -> tuple[Program, dict[str, set[tuple]]]:
    """A random valid program and the facts of its input relations."""
    count = draw(st.integers(1, max_inputs))
    inputs = [Rel(f"e{i}", draw(st.integers(1, 3)), 0) for i in range(count)]
    plan = draw(groups(draw(st.integers(1, max_derived))))
    lower, clauses = list(inputs), []
    for group in plan:
        clauses += draw(group_clauses(group, lower))
        lower += list(group.rels)
    derived = [rel for group in plan for rel in group.rels]
    directives = [Directive("input", r.name) for r in inputs]
    directives += [Directive("output", r.name) for r in derived]
    program = Program(decls=tuple(decl(r) for r in inputs + derived), clauses=tuple(clauses),
                      directives=tuple(directives))
    return program, {r.name: draw(facts(r)) for r in inputs}
