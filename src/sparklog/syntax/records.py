"""Soufflé's records, stored as their fields.

``.type Pair = [a: number, b: symbol]`` declares a record type; ``[x, y]`` is a value of
it. Soufflé packs a record into one number, an index into a record table; two records are
equal when their fields are. A record type that does not contain itself has a fixed set of
fields, so sparklog stores such a column as those fields, one column each (nested records
too), and rewrites every rule to match: ``p([x, y])`` reads ``p(x, y)``, a variable ``v``
of type ``Pair`` becomes ``v.a`` and ``v.b``, ``v = [x, y]`` equates the fields and
``v != w`` holds when some field differs (one clause per field, as a disjunction). Every
later stage, Spark and the reference evaluator see a program without records, and a
relation's declaration keeps its declared columns (``Decl.records``) so that outputs print
records as Soufflé does: ``[1, b]``, nested ``[[1, 2], 3]``.

An algebraic data type (``.type Shape = Circle {r: number} | Dot {}``) that does not
contain itself is stored the same way: a column for the branch (its place among
the branches in the order of their names, as Soufflé numbers them) and then every branch's
fields, those of the other branches 0, 0.0 or the
empty symbol, so that two values are equal exactly when their columns are. ``$Circle(r)``
in a body matches the branch's number and reads its fields; outputs print ``$Circle(2)``
and ``$Dot``.

Not supported, each with an error at its place: a type that contains itself (a list:
Soufflé's ``nil``-terminated chains have no fixed set of fields), ``nil``, reading a
record column from a Parquet or RFC 4180 file (io/facts.py reads it from a facts file) or
an algebraic data type from any file,
and a record used as a number (in arithmetic, a functor,
an ordering comparison or an aggregate's value).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from sparklog.errors import CheckError, Diagnostic, Span
from sparklog.syntax import nodes as n
from sparklog.syntax.fold import fact
from sparklog.syntax.walk import literal_terms, nested_literals, subterms

RECORD = "record"  # TypeDecl.base of a record type


class _Error(Exception):
    def __init__(self, span: Span, message: str) -> None:
        super().__init__(message)
        self.diagnostic = Diagnostic(span, message)


def flatten(program: n.Program) -> n.Program:
    """``program`` with every record column, term and variable replaced by its fields."""
    records = {t.name: t for t in program.types
               if t.fields is not None or t.branches is not None}
    uses = any(isinstance(t, n.Record | n.Branch) for c in program.clauses
               for lit in nested_literals(c) for term in literal_terms(lit)
               for t in subterms(term))
    if not records and not uses:
        return program
    try:
        return _Flattener(program, records).program()
    except _Error as exc:
        raise CheckError(exc.diagnostic, program.source_map()) from None


class _Flattener:
    def __init__(self, program: n.Program, records: dict[str, n.TypeDecl]) -> None:
        self.p = program
        self.types = {t.name: t for t in program.types}
        self.records = records
        for name in records:
            self._check_finite(name, ())
        self.decls = {d.name: d for d in program.decls}

    # -- types -------------------------------------------------------------------------
    def record_of(self, type_name: str) -> n.TypeDecl | None:
        """The record or algebraic data type a type name stands for (through aliases), or
        None."""
        seen: set[str] = set()
        while type_name not in seen:
            seen.add(type_name)
            t = self.types.get(type_name)
            if t is None:
                return None
            if t.fields is not None or t.branches is not None:
                return t
            if t.members:
                return None
            type_name = t.base
        return None

    def primitive(self, type_name: str) -> str:
        """The primitive type of a type that is no record (a union: its first member's)."""
        seen: set[str] = set()
        while type_name not in n.PRIMITIVE_TYPES and type_name not in seen:
            seen.add(type_name)
            t = self.types.get(type_name)
            if t is None:
                break
            type_name = t.members[0] if t.members else t.base
        return type_name

    def zeros(self, type_name: str, span: Span) -> list[n.Term]:
        """What the columns of a ``type_name`` value hold where no value is: the fields of
        an algebraic data type's other branches (0, 0.0 or the empty symbol)."""
        rec = self.record_of(type_name)
        if rec is not None:
            head: list[n.Term] = [n.Number(0, span=span)] if rec.branches is not None else []
            return head + [z for f in _fields(rec) for z in self.zeros(f.type, span)]
        kind = self.primitive(type_name)
        if kind == "float":
            return [n.Float(0.0, span)]
        if kind == "symbol":
            return [n.String("", span)]
        return [n.Number(0, kind == "unsigned", span)]

    def _check_finite(self, name: str, path: tuple[str, ...]) -> None:
        if name in path:
            t = self.records[path[0]]
            what = "record type" if t.branches is None else "algebraic data type"
            raise _Error(t.span, f"{what} {path[0]} contains itself "
                         f"({' -> '.join((*path, name))}): sparklog stores a record as its "
                         "fields, which a recursive type (a list) does not have a fixed set of")
        for f in _fields(self.records[name]):
            inner = self.record_of(f.type)
            if inner is not None:
                self._check_finite(inner.name, (*path, name))

    def leaves(self, type_name: str, prefix: str, span: Span) -> list[n.Attribute]:
        """The flattened attributes of a column ``prefix`` of type ``type_name``."""
        rec = self.record_of(type_name)
        if rec is None:
            return [n.Attribute(prefix, type_name, span)]
        if rec.branches is not None:  # the branch's number, then each branch's fields
            return [n.Attribute(f"{prefix}_tag", "number", span)] + [
                leaf for b, fields in rec.branches for f in fields
                for leaf in self.leaves(f.type, f"{prefix}_{b}_{f.name}", span)]
        return [leaf for f in rec.fields or ()
                for leaf in self.leaves(f.type, f"{prefix}_{f.name}", span)]

    def shape(self, name: str, type_name: str) -> n.Shape:
        rec = self.record_of(type_name)
        if rec is None:
            return (name, None)
        if rec.branches is not None:
            return (name, ("$", tuple((b, tuple(self.shape(f.name, f.type) for f in fields))
                                      for b, fields in rec.branches)))
        return (name, tuple(self.shape(f.name, f.type) for f in rec.fields or ()))

    def paths(self, type_name: str) -> list[str]:
        """The field paths of a record type's leaves: ``a``, ``b.c``, ..."""
        rec = self.record_of(type_name)
        if rec is None:
            return [""]
        if rec.branches is not None:
            return ["tag"] + [f"{b}.{f.name}.{p}" if p else f"{b}.{f.name}"
                              for b, fields in rec.branches for f in fields
                              for p in self.paths(f.type)]
        return [f"{f.name}.{p}" if p else f.name for f in rec.fields or ()
                for p in self.paths(f.type)]

    def column_types(self, relation: str) -> list[str] | None:
        d = self.decls.get(relation)
        return None if d is None else [a.type for a in d.attributes]

    # -- the program -------------------------------------------------------------------
    def program(self) -> n.Program:
        decls = tuple(self._decl(d) for d in self.p.decls)
        clauses = tuple(c for clause in self.p.clauses for c in self._clause(clause))
        types = tuple(t for t in self.p.types if t.fields is None and t.branches is None)
        return replace(self.p, types=types, decls=decls, clauses=clauses)

    def _decl(self, d: n.Decl) -> n.Decl:
        if not any(self.record_of(a.type) for a in d.attributes):
            return d
        for a in d.attributes:
            if a.lattice and self.record_of(a.type):
                raise _Error(a.span, f"{a.name}: a lattice column cannot be a record")
        taken = {a.name for a in d.attributes if not self.record_of(a.type)}
        attributes = []
        for a in d.attributes:
            if not self.record_of(a.type):
                attributes.append(a)
                continue
            for leaf in self.leaves(a.type, a.name, a.span):
                name = leaf.name  # x_a, unless a column of the relation is named so
                while name in taken:
                    name += "_"
                taken.add(name)
                attributes.append(replace(leaf, name=name))
        shapes = tuple(self.shape(a.name, a.type) for a in d.attributes)
        return replace(d, attributes=tuple(attributes), records=shapes)

    # -- clauses -----------------------------------------------------------------------
    def _clause(self, clause: n.Clause) -> list[n.Clause]:
        env: dict[str, str] = {}
        self._infer(clause, env)
        head = self._atom(clause.head, env)
        bodies = self._body(clause.body, env, inside_aggregate=False)
        out = []
        for body in bodies:
            if not body and not clause.body:
                out.append(fact(head, clause.span, folded=False))
            else:
                out.append(n.Clause(head, tuple(body), clause.span))
        return out

    def _infer(self, clause: n.Clause, env: dict[str, str]) -> None:
        """The record type of each variable of the clause that holds records: from the
        columns it stands in, then through equalities until nothing changes."""
        atoms: list[n.Atom] = []
        comparisons: list[n.Comparison] = []
        for lit in nested_literals(clause):
            match lit:
                case n.Atom():
                    atoms.append(lit)
                case n.Negation(atom=atom):
                    atoms.append(atom)
                case n.Comparison():
                    comparisons.append(lit)
        for atom in atoms:
            types = self.column_types(atom.relation)
            if types is None or len(types) != len(atom.args):
                continue  # the checks report it, with the original arity
            for arg, t in zip(atom.args, types):
                self._type_term(arg, t, env)
        changed = True
        while changed:
            changed = False
            for c in comparisons:
                if c.op not in ("=", "!="):
                    continue
                for a, b in ((c.left, c.right), (c.right, c.left)):
                    t = self._type_of(a, env)
                    if t is not None and self._type_term(b, t, env):
                        changed = True

    def _type_of(self, term: n.Term, env: dict[str, str]) -> str | None:
        if isinstance(term, n.Var):
            return env.get(term.name)
        return None

    def _type_term(self, term: n.Term, type_name: str, env: dict[str, str]) -> bool:
        """Record the record types ``term`` (standing for a ``type_name`` value) gives its
        variables; whether anything was new."""
        rec = self.record_of(type_name)
        if rec is None:
            return False
        match term:
            case n.Var(name=name):
                known = env.get(name)
                if known is None:
                    env[name] = rec.name
                    return True
                if known != rec.name:
                    raise _Error(term.span, f"variable {name} stands for a {known} record "
                                 f"elsewhere and for a {rec.name} record here")
                return False
            case n.Record(args=args) if len(args) == len(rec.fields or ()):
                return any([self._type_term(a, f.type, env)
                            for a, f in zip(args, rec.fields or ())])
            case n.Branch(name=name, args=args):
                fields = dict(rec.branches or ()).get(name)
                if fields is not None and len(fields) == len(args):
                    return any([self._type_term(a, f.type, env) for a, f in zip(args, fields)])
        return False

    def _atom(self, atom: n.Atom, env: dict[str, str]) -> n.Atom:
        types = self.column_types(atom.relation)
        if types is None or len(types) != len(atom.args):
            for arg in atom.args:
                self._no_records(arg, env)
            return atom
        args = [leaf for arg, t in zip(atom.args, types) for leaf in self._expand(arg, t, env)]
        return replace(atom, args=tuple(args))

    def _expand(self, term: n.Term, type_name: str, env: dict[str, str]) -> list[n.Term]:
        """The terms that stand for ``term``'s fields, where a ``type_name`` value goes."""
        rec = self.record_of(type_name)
        if rec is None:
            return [self._terms(term, env)]
        fields = rec.fields or ()
        match term:
            case n.Var(name="nil"):
                self._no_records(term, env)
            case n.Var(name=name):
                return [n.Var(f"{name}.{p}", term.span) for p in self.paths(rec.name)]
            case n.Wildcard():
                return [n.Wildcard(term.span) for _ in self.paths(rec.name)]
            case n.Record(args=args) if rec.branches is None and len(args) == len(fields):
                return [leaf for a, f in zip(args, fields)
                        for leaf in self._expand(a, f.type, env)]
            case n.Record(args=args) if rec.branches is None:
                raise _Error(term.span, f"a {rec.name} record has {len(fields)} fields, "
                             f"this one {len(args)}")
            case n.Branch(name=name, args=args) if rec.branches is not None:
                return self._branch(rec, term, env)
            case n.HeadAggregate():
                raise _Error(term.span, f"a lattice aggregate over {rec.name} records: "
                             "records have no order")
        if rec.branches is not None:
            raise _Error(term.span, f"a {rec.name} value goes here: write it as "
                         f"${rec.branches[0][0]}(...) or a variable")
        raise _Error(term.span, f"a {rec.name} record goes here: write it as [...] or a "
                     "variable")

    def _branch(self, rec: n.TypeDecl, term: n.Branch, env: dict[str, str]) -> list[n.Term]:
        """``$B(args)`` as the columns of its type: B's number, then every branch's fields,
        B's the arguments and the others' zeros."""
        names = [b for b, _ in rec.branches or ()]
        if term.name not in names:
            raise _Error(term.span, f"{rec.name} has no branch {term.name} (its branches: "
                         f"{', '.join(names)})")
        out: list[n.Term] = [n.Number(names.index(term.name), span=term.span)]
        for b, fields in rec.branches or ():
            if b != term.name:
                out += [z for f in fields for z in self.zeros(f.type, term.span)]
            elif len(fields) != len(term.args):
                raise _Error(term.span, f"branch {b} of {rec.name} has {len(fields)} fields, "
                             f"this value {len(term.args)}")
            else:
                out += [leaf for a, f in zip(term.args, fields)
                        for leaf in self._expand(a, f.type, env)]
        return out

    def _no_records(self, term: n.Term, env: dict[str, str]) -> None:
        """Refuse a record where a value of a primitive type is needed."""
        for sub in subterms(term):
            if isinstance(sub, n.Branch):
                raise _Error(sub.span, f"${sub.name}(...) where the column or operation takes "
                             "a number, float or symbol (the aggregates of a head are $MIN, "
                             "$MAX, $SUM and $COUNT)")
            if isinstance(sub, n.Record):
                raise _Error(sub.span, "a record where the column or operation takes a "
                             "number, float or symbol")
            if isinstance(sub, n.Var) and sub.name == "nil":
                raise _Error(sub.span, "nil (the empty record) is not supported: records "
                             "are stored as their fields")
            if isinstance(sub, n.Var) and sub.name in env:
                raise _Error(sub.span, f"{sub.name} is a {env[sub.name]} record: it cannot "
                             "be used as a number, float or symbol")

    def _body(self, body: tuple[n.Literal, ...], env: dict[str, str], inside_aggregate: bool
              ) -> list[list[n.Literal]]:
        """The flattened body; several when a record inequality splits it (one per field)."""
        options: list[list[list[n.Literal]]] = []
        for lit in body:
            options.append(self._literal(lit, env, inside_aggregate))
        return [sum(combo, []) for combo in itertools.product(*options)]

    def _literal(self, lit: n.Literal, env: dict[str, str], inside_aggregate: bool
                 ) -> list[list[n.Literal]]:
        """The alternatives a literal becomes, each a list of literals."""
        match lit:
            case n.Atom():
                return [[self._atom(lit, env)]]
            case n.Negation(atom=atom):
                return [[n.Negation(self._atom(atom, env), lit.span)]]
            case n.Comparison(op=op, left=left, right=right):
                t = self._record_side(left, right, env)
                if t is None:
                    return [[n.Comparison(op, self._terms(left, env), self._terms(right, env),
                                          lit.span)]]
                if op not in ("=", "!="):
                    raise _Error(lit.span, f"records have no order: {op} compares "
                                 f"{t} records")
                pairs = list(zip(self._expand(left, t, env), self._expand(right, t, env)))
                if op == "=":  # a wildcard field matches any value
                    return [[n.Comparison("=", a, b, lit.span) for a, b in pairs
                             if not isinstance(a, n.Wildcard) and not isinstance(b, n.Wildcard)]]
                if any(isinstance(x, n.Wildcard) for pair in pairs for x in pair):
                    raise _Error(lit.span, "_ in a record compared with !=: name the field")
                if inside_aggregate and len(pairs) > 1:
                    raise _Error(lit.span, "!= between records inside an aggregate: write "
                                 "it as a comparison of their fields")
                return [[n.Comparison("!=", a, b, lit.span)] for a, b in pairs]
            case n.Constraint(args=args):
                for a in args:
                    self._no_records(a, env)
                return [[replace(lit, args=tuple(self._terms(a, env) for a in args))]]
        return [[lit]]

    def _record_side(self, left: n.Term, right: n.Term, env: dict[str, str]) -> str | None:
        """The record type of a comparison's sides, if they are records."""
        for side in (left, right):
            if isinstance(side, n.Var) and side.name in env:
                return env[side.name]
        for side in (left, right):
            if isinstance(side, n.Record | n.Branch):
                raise _Error(side.span, "cannot tell this record's type: compare it with a "
                             "variable that a relation's column gives a record type")
        return None

    def _terms(self, term: n.Term, env: dict[str, str]) -> n.Term:
        """A term of a primitive type: no record in it, aggregates flattened inside."""
        match term:
            case n.Aggregate(func=func, target=target, body=body):
                if target is not None:
                    self._no_records(target, env)
                bodies = self._body(body, env, inside_aggregate=True)
                assert len(bodies) == 1
                return n.Aggregate(func, target, tuple(bodies[0]), term.span)
            case n.BinOp(op=op, left=left, right=right):
                return n.BinOp(op, self._terms(left, env), self._terms(right, env), term.span)
            case n.UnaryOp(op=op, arg=arg):
                return n.UnaryOp(op, self._terms(arg, env), term.span)
            case n.Call(name=name, args=args):
                return n.Call(name, tuple(self._terms(a, env) for a in args), term.span)
        self._no_records(term, env)
        return term


def _fields(t: n.TypeDecl) -> list[n.Attribute]:
    """A record type's fields, or every branch's of an algebraic data type."""
    if t.branches is not None:
        return [f for _, fields in t.branches for f in fields]
    return list(t.fields or ())
