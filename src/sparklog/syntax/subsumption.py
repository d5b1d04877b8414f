"""Soufflé's subsumption, ``r(x) <= r(y) :- body.``: a tuple of r is dropped when another
tuple of r dominates it (the body holds of the two).

Right after parsing, before records are flattened, a relation ``r`` with subsumption
clauses is rewritten into plain rules with negation:

    r@all(...) :- ...            every fact, rule and input of r, unchanged but renamed
    r@dominated(x) :- r@all(x), r@all(y), body, x != y.     (one clause per column: xi != yi)
    r(v) :- r@all(v), !r@dominated(v).

so that r holds the tuples no other tuple of r dominates, and every other rule reads that.
Two equal tuples never subsume each other (``r(x) <= r(y) :- x <= y`` would otherwise drop
every tuple), as Soufflé's own tests have it: its interval analysis (``leq``) keeps each
widest interval although the rule holds of an interval and itself. A relation whose rules
read it, directly or through others, is refused (Soufflé deletes dominated tuples inside
the recursion, round by round, which a rewrite into strata does not do), unless every
subsumption of it keeps one column's least or greatest value for the others, Soufflé's
shortest-path idiom ``dist(x, d1) <= dist(x, d2) :- d2 <= d1.``: that is a lattice, and
its rules become ``$MIN``/``$MAX`` on the column (semantics/lattices.py checks them), whose
combine step drops a dominated value where Soufflé's deletion does, inside the recursion.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sparklog.errors import CheckError, Diagnostic, Span
from sparklog.semantics.strata import dependencies, sccs
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import map_names

ALL, DOMINATED = "@all", "@dominated"  # suffixes of the relations the rewrite adds


@dataclass(frozen=True)
class Subsumption:
    """One ``dominated <= dominating :- body.`` (a disjunctive body gives one each)."""

    dominated: n.Atom
    dominating: n.Atom
    body: tuple[n.Literal, ...]
    span: Span


def rewrite(program: n.Program, subsumptions: list[Subsumption]) -> n.Program:
    """``program`` with each subsumed relation computed as above; itself if there are none."""
    if not subsumptions:
        return program
    recursive = _recursive(program)
    lattice = {}
    for relation in {s.dominated.relation for s in subsumptions} & recursive:
        # a recursive relation whose every subsumption is one extremum of one column
        found = {_extremum(s) for s in subsumptions if s.dominated.relation == relation}
        if len(found) == 1 and None not in found:
            lattice[relation] = found.pop()
    problems = list(_problems(program, subsumptions, recursive - set(lattice)))
    if problems:
        raise CheckError(problems, program.source_map())
    subsumptions = [s for s in subsumptions if s.dominated.relation not in lattice]
    program = _as_lattices(program, lattice)
    if not subsumptions:
        return program
    subsumed = {s.dominated.relation for s in subsumptions}

    def rename(node, relation: str):
        """``node`` with every atom of ``relation`` reading ``relation@all``."""
        return map_names(node, lambda r: r + ALL if r == relation else r)

    # r's facts and rules make r@all (their bodies do not read r: it is not recursive);
    # every other rule reads r, the tuples nothing dominates
    clauses = [dataclasses.replace(c, head=rename(c.head, c.head.relation))
               if c.head.relation in subsumed else c for c in program.clauses]
    decls = list(program.decls)
    for relation in sorted(subsumed):
        decl = program.decl(relation)
        decls += [dataclasses.replace(decl, name=relation + ALL),
                  dataclasses.replace(decl, name=relation + DOMINATED)]
        span = next(s.span for s in subsumptions if s.dominated.relation == relation)
        fresh = tuple(n.Var(f"@s{i}", span) for i in range(decl.arity))
        clauses.append(n.Clause(n.Atom(relation, fresh, span), (
            n.Atom(relation + ALL, fresh, span),
            n.Negation(n.Atom(relation + DOMINATED, fresh, span), span)), span))
    for s in subsumptions:
        # each tuple's columns as fresh variables, equated with what the atoms say (a
        # record's type then comes from its column), one clause per column that differs
        relation = s.dominated.relation
        xs = tuple(n.Var(f"@x{i}", s.span) for i in range(len(s.dominated.args)))
        ys = tuple(n.Var(f"@y{i}", s.span) for i in range(len(s.dominating.args)))
        given = tuple(n.Comparison("=", v, a, a.span)
                      for v, a in zip(xs + ys, s.dominated.args + s.dominating.args)
                      if not isinstance(a, n.Wildcard))
        body = (n.Atom(relation + ALL, xs, s.dominated.span),
                n.Atom(relation + ALL, ys, s.dominating.span), *given,
                *(rename(lit, relation) for lit in s.body))  # r in it: before dropping
        for x, y in zip(xs, ys):
            clauses.append(n.Clause(n.Atom(relation + DOMINATED, xs, s.span),
                                    body + (n.Comparison("!=", x, y, s.span),), s.span))
    directives = []
    for d in program.directives:
        if d.kind == "input" and d.relation in subsumed:  # the file of r fills r@all
            params = d.params
            if d.param("filename") is None:
                io = (d.param("IO") or "file").lower()
                suffix = ".facts" if io == "file" else ".parquet"
                params += (("filename", d.relation + suffix),)
            d = dataclasses.replace(d, relation=d.relation + ALL, params=params)
        directives.append(d)
    return dataclasses.replace(program, decls=tuple(decls), clauses=tuple(clauses),
                               directives=tuple(directives))


def inputs_of(program: n.Program, inputs: dict) -> dict:
    """Rows given for relations by name (``Engine.run``'s inputs), those for a subsumed
    relation ``r`` given to ``r@all``, which its input fills."""
    declared = {d.name for d in program.decls}
    return {(name + ALL if name + ALL in declared else name): rows
            for name, rows in inputs.items()}


def _extremum(s: Subsumption) -> tuple[int, str] | None:
    """(column, "max" or "min") if ``s`` says ``r(k.., v) <= r(k.., w) :- v < w`` (or
    ``<=``, or ``>``/``>=`` for min, either side written first): the same variables in
    every other column (one at least: a key), one comparison of the two values; else
    None."""
    a, b = s.dominated.args, s.dominating.args
    differ = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if (s.dominated.relation != s.dominating.relation or len(s.body) != 1 or len(differ) != 1 or len(a) != len(b) or len(a) < 2
            or not all(isinstance(t, n.Var) for t in a + b)
            or len({t.name for t in a}) != len(a) or len({t.name for t in b}) != len(b)):
        return None
    column, (cmp,) = differ[0], s.body
    v, w = a[column], b[column]
    if not isinstance(cmp, n.Comparison) or cmp.op not in ("<", "<=", ">", ">="):
        return None
    sides = (cmp.left, cmp.right)
    if sides == (v, w):
        grows = cmp.op in ("<", "<=")  # the dominated value is below: keep the greatest
    elif sides == (w, v):
        grows = cmp.op in (">", ">=")
    else:
        return None
    return column, "max" if grows else "min"


def _as_lattices(program: n.Program, lattice: dict[str, tuple[int, str]]) -> n.Program:
    """Every fact and rule of each relation in ``lattice`` with its column as ``$MAX`` or
    ``$MIN`` (rules that already aggregate it are left to the checker)."""
    if not lattice:
        return program
    clauses = []
    for c in program.clauses:
        if c.head.relation in lattice and not c.is_fact:
            column, func = lattice[c.head.relation]
            args = list(c.head.args)
            if not isinstance(args[column], n.HeadAggregate):
                args[column] = n.HeadAggregate(func, args[column], args[column].span)
            c = dataclasses.replace(c, head=dataclasses.replace(c.head, args=tuple(args)))
        clauses.append(c)
    return dataclasses.replace(program, clauses=tuple(clauses))


def _recursive(program: n.Program) -> set[str]:
    """The relations whose rules read them, directly or through others."""
    reads: dict[str, set[str]] = {}
    for d in dependencies(program):
        reads.setdefault(d.head, set()).add(d.body)
    recursive = set()
    nodes = set(reads).union(*reads.values(), (d.name for d in program.decls))
    for component in sccs(sorted(nodes), reads):
        if len(component) > 1 or component[0] in reads.get(component[0], ()):
            recursive |= set(component)
    return recursive


def _problems(program: n.Program, subsumptions: list[Subsumption], recursive: set[str]):
    """What stops the rewrite: atoms of two relations, an undeclared relation, a width
    that is not the relation's, or a relation that depends on itself."""
    for s in subsumptions:
        a, b = s.dominated, s.dominating
        decl = program.decl(a.relation)
        if a.relation != b.relation:
            yield Diagnostic(b.span, f"a subsumption relates two tuples of one relation: "
                             f"{a.relation} and {b.relation}")
        elif decl is None:
            yield Diagnostic(a.span, f"undeclared relation {a.relation}")
        elif len(a.args) != decl.arity or len(b.args) != decl.arity:
            yield Diagnostic(s.span, f"relation {a.relation} has arity {decl.arity}")
        elif a.relation in recursive:
            yield Diagnostic(s.span, f"subsumption of {a.relation}, whose rules read it "
                             "(directly or through others): Soufflé drops dominated tuples "
                             "inside the recursion, which sparklog does not; where one column's "
                             "minimum or maximum dominates, write it with $MIN or $MAX")
