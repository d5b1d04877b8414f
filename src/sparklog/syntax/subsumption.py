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
read it, directly or through others, is refused: Soufflé deletes dominated tuples inside
the recursion, round by round, which a rewrite into strata does not do (where a domination
is a minimum or a maximum of one column, ``$MIN``/``$MAX`` say it in sparklog).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sparklog.errors import CheckError, Diagnostic, Span
from sparklog.semantics.strata import sccs
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import nested_literals

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
    problems = list(_problems(program, subsumptions))
    if problems:
        raise CheckError(problems, program.source_map())
    subsumed = {s.dominated.relation for s in subsumptions}

    def rename(node, relation: str):
        """``node`` with every atom of ``relation`` reading ``relation@all``."""
        if isinstance(node, (list, tuple)):
            return type(node)(rename(x, relation) for x in node)
        if not dataclasses.is_dataclass(node) or isinstance(node, Span):
            return node
        changes = {f.name: rename(getattr(node, f.name), relation)
                   for f in dataclasses.fields(node) if f.name != "span"}
        if isinstance(node, n.Atom) and node.relation == relation:
            changes["relation"] = relation + ALL
        return dataclasses.replace(node, **changes)

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


def _problems(program: n.Program, subsumptions: list[Subsumption]):
    """What stops the rewrite: atoms of two relations, an undeclared relation, a width
    that is not the relation's, or a relation that depends on itself."""
    reads: dict[str, set[str]] = {}
    for clause in program.clauses:
        for lit in nested_literals(clause):
            atom = lit.atom if isinstance(lit, n.Negation) else lit
            if isinstance(atom, n.Atom) and lit is not clause.head:
                reads.setdefault(clause.head.relation, set()).add(atom.relation)
    recursive = set()
    nodes = set(reads).union(*reads.values(), (d.name for d in program.decls))
    for component in sccs(sorted(nodes), reads):
        if len(component) > 1 or component[0] in reads.get(component[0], ()):
            recursive |= set(component)
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
