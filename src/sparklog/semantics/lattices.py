"""Lattice relations: head aggregates (``$MIN``, ``$MAX``, ``$SUM``, ``$COUNT``) and the checks
that keep them monotone.

A relation with ``$MIN(expr)`` in a head column is a lattice relation (PARALAGG §III): its
other columns are independent and functionally determine that dependent column, whose
value is the lattice join (least for ``$MIN``, greatest for ``$MAX``) of every value
derived for the key. Lifted semi-naive evaluation then keeps one tuple per key and propagates
only improved keys, which is sound when every rule of the recursive stratum is monotone in
the dependent values it reads: a better input value can only give a better (or the same)
output value. :func:`lattices` finds the lattice relations and refuses, before anything runs,
the uses that break that: a dependent value as a join key, under negation, in a comparison
or a constraint, inside a body aggregate, in an independent head column, or under a
function that is not monotone. Where monotonicity depends on data (``$MIN(l + n)`` with an
``n`` that may be negative), the program runs; a run that does not converge stops at
``--max-iterations`` with an error (spark/rounds.py).

``$SUM(expr)`` and ``$COUNT(expr)`` are monotone aggregates over distinct contributions, as
DeALS' msum and mcount: a key's value is the sum of ``expr`` over the distinct contributing
tuples of its rules (each rule's body binding, :func:`contribution`), or the number of
distinct values of ``expr``. A contribution whose value comes from a lattice value of the
same stratum is one contribution whose value is replaced when that value improves, never a
second one: ``np(y, $SUM(c)) :- np(x, c), e(x, y).`` counts paths, each edge (x, y)
contributing the current ``np(x)``. Such a relation grows (``$MAX``'s direction) while its
contributions are non-negative; a negative one is the data's business, as above.

A column typed ``T<>`` of a Soufflé ``.lattice T<> { Bottom -> .., Lub(x, y) -> .. }`` makes a
lattice relation too, its values joined by the user's Lub. Its order is the user's, so the
structural refusals apply but the operator checks do not.
"""

from __future__ import annotations

from dataclasses import dataclass

from sparklog.errors import Note, Reporter, Span
from sparklog.semantics.strata import Stratum
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import literal_terms, subterms, variables

# Operators through which a larger (smaller) input gives a larger (smaller) output, when
# the dependent value is the side named: "+" either side, "-" and "/" the left one only.
# "*" and "/" are monotone only for a non-negative other side; like "+" with a negative
# addend, that is the data's business, caught at run time by --max-iterations.
_MONOTONE_OPS = {"+": "both", "*": "both", "-": "left", "/": "left"}
_MONOTONE_CALLS = ("min", "max", "to_float")


@dataclass(frozen=True)
class Lattice:
    """A lattice relation: its dependent column and the lattice's join (``min`` or ``max``)."""

    relation: str
    column: int
    func: str  # "min", "max", "sum", "count"; "user" for a column typed T<>
    span: Span  # the first head aggregate (or the T<> attribute) that declared it
    user: str | None = None  # the .lattice T<> of a column typed T<>

    @property
    def notation(self) -> str:
        return f"{self.user}<>" if self.user else f"${self.func.upper()}"

    @property
    def direction(self) -> str:
        """Which way the value moves as the fixed point is approached: "min" or "max", or
        up a user lattice ("user:T")."""
        if self.user:
            return f"user:{self.user}"
        return "min" if self.func == "min" else "max"

    @property
    def accumulates(self) -> bool:
        """True for $SUM and $COUNT: the value is computed from stored contributions."""
        return self.func in ("sum", "count")


def lattices(program: n.Program, kinds: dict[str, tuple[str, ...]],
             strata: list[Stratum], rep: Reporter,
             trusted: frozenset[str] = frozenset()) -> dict[str, Lattice]:
    """The program's lattice relations; reports every misuse of a head aggregate (but
    the monotonicity of rules for ``trusted`` relations, which a rewrite made)."""
    found = _declared(program, kinds, rep)
    for d in program.directives:
        if d.kind == "input" and d.relation in found and found[d.relation].accumulates:
            rep.error(d.span, f".input of {d.relation}, a {found[d.relation].notation} relation: "
                      "its values are totals of its rules' contributions; read the input "
                      "into another relation and add a rule that contributes it")
    stratum_of = {r: s for s in strata for r in s.relations}
    for clause in program.clauses:
        stratum = stratum_of.get(clause.head.relation)
        if stratum is not None and stratum.recursive and \
                clause.head.relation not in trusted and \
                any(r in found for r in stratum.relations):
            _Monotone(clause, stratum, found, rep).check()
    return found


def _declared(program: n.Program, kinds: dict[str, tuple[str, ...]], rep: Reporter
              ) -> dict[str, Lattice]:
    """(1) Where head aggregates may stand, (2) which column and lattice each relation has."""
    found: dict[str, Lattice] = {}
    for decl in program.decls:  # (0) columns typed T<> of a user lattice
        columns = [i for i, a in enumerate(decl.attributes) if a.lattice]
        for extra in columns[1:]:
            rep.error(decl.attributes[extra].span, f"at most one lattice column per relation: "
                      f"{decl.name} has two")
        if columns:
            a = decl.attributes[columns[0]]
            found[decl.name] = Lattice(decl.name, columns[0], "user", a.span, a.type)
    for clause in program.clauses:
        for lit in clause.body:  # a head aggregate only makes sense in a head
            for term in literal_terms(lit):
                for sub in subterms(term):
                    if isinstance(sub, n.HeadAggregate):
                        rep.error(sub.span, f"{_name(sub)} is only allowed as an argument "
                                  "of a rule's head")
        head = clause.head
        positions = [i for i, a in enumerate(head.args) if isinstance(a, n.HeadAggregate)]
        for i, arg in enumerate(head.args):
            for sub in list(subterms(arg))[1 if i in positions else 0:]:
                if isinstance(sub, n.HeadAggregate):
                    rep.error(sub.span, f"{_name(sub)} must be a whole head argument, "
                              "not part of an expression")
        if len(positions) > 1:
            second = head.args[positions[1]]
            rep.error(second.span, f"at most one aggregated (dependent) column per relation: "
                      f"{head.relation} has two in this head")
        if not positions:
            continue
        agg = head.args[positions[0]]
        assert isinstance(agg, n.HeadAggregate)
        column_kinds = kinds.get(head.relation)
        kind = column_kinds[positions[0]] if column_kinds is not None and \
            positions[0] < len(column_kinds) else None
        if kind == "symbol":
            rep.error(agg.span, f"{_name(agg)} over a symbol column: the dependent column of a "
                      "lattice relation must be number, unsigned or float")
            continue
        if agg.func == "count" and kind == "float":
            rep.error(agg.span, "$COUNT into a float column: a count is a number or unsigned")
            continue
        known = found.get(head.relation)
        if known is not None and known.user:
            rep.error(agg.span, f"{_name(agg)} in a head of {head.relation}, whose column "
                      f"{known.column + 1} is typed {known.notation}: its lattice combines "
                      "the values already", Note(known.span, "declared here"))
        elif known is None:
            found[head.relation] = Lattice(head.relation, positions[0], agg.func, agg.span)
        elif (known.column, known.func) != (positions[0], agg.func):
            rep.error(agg.span, f"rules for {head.relation} disagree on its aggregated column: "
                      f"{_name(agg)} in column {positions[0] + 1} here",
                      Note(known.span, f"{known.notation} in column {known.column + 1} here"))
    return found


def _name(agg: n.HeadAggregate) -> str:
    return f"${agg.func.upper()}"


class _Monotone:
    """The checks of one rule of a recursive stratum that holds lattice relations.

    ``dependent`` maps each variable carrying a dependent value of the stratum to the
    lattice it came from: a lattice atom's dependent column binds one, and ``v = expr``
    over one binds another, if ``expr`` is monotone in it.
    """

    def __init__(self, clause: n.Clause, stratum: Stratum, found: dict[str, Lattice],
                 rep: Reporter) -> None:
        self.clause, self.found, self.rep = clause, found, rep
        self.mine = {r: found[r] for r in stratum.relations if r in found}
        self.dependent: dict[str, Lattice] = {}

    def refuse(self, span: Span, var: str, why: str) -> None:
        lattice = self.dependent[var]
        self.rep.error(span, f"{var} is the dependent value of {lattice.relation} "
                       f"({lattice.notation}, column {lattice.column + 1}); {why}, so the rule is "
                       "not monotone: what an old value derived would outlive its improvement",
                       Note(self.clause.span, "in this rule of the recursive stratum"))

    def check(self) -> None:
        atoms = [lit for lit in self.clause.body if isinstance(lit, n.Atom)]
        for atom in atoms:  # (1) the dependent columns the body reads
            lattice = self.mine.get(atom.relation)
            if lattice is None:
                continue
            arg = atom.args[lattice.column]
            if isinstance(arg, n.Var):
                self.dependent.setdefault(arg.name, lattice)
            elif not isinstance(arg, n.Wildcard):
                self.rep.error(arg.span, f"the dependent column of {atom.relation} "
                               f"({lattice.notation}) is matched against a value in a rule of "
                               "its recursive stratum: write a variable or _",
                               Note(self.clause.span, "in this rule"))
        self._bindings()
        for atom in atoms:  # (2) joins on a dependent value
            for i, arg in enumerate(atom.args):
                lattice = self.mine.get(atom.relation)
                own = lattice is not None and i == lattice.column and \
                    isinstance(arg, n.Var) and self.dependent.get(arg.name) is lattice and \
                    self._first_read(atom, arg.name)
                for v in variables(arg):
                    if v in self.dependent and not own:
                        self.refuse(arg.span, v, f"it is used as a join key in {atom.relation}")
        for lit in self.clause.body:  # (3) negations, comparisons, constraints, aggregates
            self._literal(lit)
        self._head()

    def _first_read(self, atom: n.Atom, var: str) -> bool:
        """Whether ``atom`` is where ``var`` is read from (the first lattice atom with it)."""
        for other in self.clause.body:
            if isinstance(other, n.Atom) and other.relation in self.mine:
                column = self.mine[other.relation].column
                arg = other.args[column]
                if isinstance(arg, n.Var) and arg.name == var:
                    return other is atom and \
                        sum(1 for a in atom.args if isinstance(a, n.Var) and a.name == var) == 1
        return False

    def _bindings(self) -> None:
        """``w = expr`` over a dependent value makes ``w`` one, if ``expr`` is monotone."""
        changed = True
        while changed:
            changed = False
            for lit in self.clause.body:
                binding = _binding(lit, self.clause)
                if binding is None:
                    continue
                var, expr = binding
                sources = {v for v in variables(expr) if v in self.dependent}
                if var in self.dependent or not sources:
                    continue
                self.dependent[var] = self.dependent[min(sources)]
                changed = True

    def _literal(self, lit: n.Literal) -> None:
        match lit:
            case n.Negation(atom=atom):
                for v in sorted(variables(*atom.args) & set(self.dependent)):
                    self.refuse(lit.span, v, "it is used in a negation")
            case n.Comparison(left=left, right=right):
                binding = _binding(lit, self.clause)
                if binding is not None and binding[0] in self.dependent:
                    self._monotone(binding[1], lit.span)
                    return
                for v in sorted(variables(*(left, right)) & set(self.dependent)):
                    self.refuse(lit.span, v, "it is used in a comparison")
            case n.Constraint(args=args):
                for v in sorted(variables(*args) & set(self.dependent)):
                    self.refuse(lit.span, v, f"it is used in the constraint {lit.name}")
        for term in literal_terms(lit):
            for sub in subterms(term):
                if isinstance(sub, n.Aggregate):
                    inner = _aggregate_vars(sub) & set(self.dependent)
                    for v in sorted(inner):
                        self.refuse(sub.span, v, f"it is used inside a {sub.func} aggregate")

    def _head(self) -> None:
        head = self.clause.head
        target = self.found.get(head.relation)
        for i, arg in enumerate(head.args):
            used = variables(arg) & set(self.dependent)
            if not used:
                continue
            if target is None:
                for v in sorted(used):
                    self.refuse(arg.span, v, f"it flows into {head.relation}, a relation "
                                "without an aggregated column, in the same recursive stratum")
            elif i != target.column:
                for v in sorted(used):
                    self.refuse(arg.span, v, f"it is used in column {i + 1} of "
                                f"{head.relation}, an independent column")
            else:
                for v in sorted(used):
                    if isinstance(arg, n.HeadAggregate) and arg.func == "count":
                        self.refuse(arg.span, v, f"$COUNT of {head.relation} counts its distinct "
                                    "values, and every superseded value would stay counted")
                    elif self.dependent[v].direction != target.direction:
                        self.refuse(arg.span, v, f"it feeds {target.notation} of "
                                    f"{head.relation}, the opposite lattice")
                inner = arg.arg if isinstance(arg, n.HeadAggregate) else arg
                if not target.user:  # a user lattice's order is the user's: not checked
                    self._monotone(inner, arg.span)

    def _monotone(self, term: n.Term, span: Span) -> None:
        """Report the first sub-term where a dependent value meets a non-monotone operator."""
        match term:
            case n.Var() | n.Number() | n.Float() | n.String() | n.Wildcard():
                return
            case n.BinOp(op=op, left=left, right=right) if op in _MONOTONE_OPS:
                if _MONOTONE_OPS[op] == "left":
                    self._outside(right, f"it is on the right of {op}", span)
                self._monotone(left, span)
                self._monotone(right, span)
            case n.Call(name=name, args=args) if name in _MONOTONE_CALLS:
                for a in args:
                    self._monotone(a, span)
            case n.BinOp(op=op) | n.UnaryOp(op=op) | n.Call(name=op):
                self._outside(term, f"it is an argument of {op}, which is not monotone", span)
            case n.HeadAggregate(arg=arg):
                self._monotone(arg, span)
            case _:
                self._outside(term, "it is used in an expression that is not monotone", span)

    def _outside(self, term: n.Term, why: str, span: Span) -> None:
        for v in sorted(variables(term) & set(self.dependent)):
            self.refuse(term.span if term.span.line else span, v, why)


def contribution(clause: n.Clause, found: dict[str, Lattice], stratum: Stratum
                 ) -> tuple[n.Clause, tuple[n.Term, ...]]:
    """What identifies one contribution of a ``$SUM``/``$COUNT`` rule, beside its head key,
    and the rule with a variable for each ``_`` that is part of it.

    ``$COUNT(e)``: the value of ``e``. ``$SUM(e)``: the contributing body tuples, that is
    every column of its positive atoms (``_`` included: ``$SUM(x) :- e(x, _)`` adds x once
    per edge, as Soufflé's ``sum x : { e(x, _) }``), but the dependent column of a lattice
    relation of the same stratum: that value may improve, and its contribution is then
    replaced, not added.
    """
    agg = next(a for a in clause.head.args if isinstance(a, n.HeadAggregate))
    if agg.func == "count":
        return clause, (agg.arg,)
    mutable, body, fresh = set(), [], 0
    for lit in clause.body:
        if not isinstance(lit, n.Atom):
            body.append(lit)
            continue
        lattice = found.get(lit.relation) if lit.relation in stratum.relations else None
        args = list(lit.args)
        for i, arg in enumerate(args):
            if lattice is not None and i == lattice.column:
                if isinstance(arg, n.Var):
                    mutable.add(arg.name)
            elif isinstance(arg, n.Wildcard):
                args[i] = n.Var(f"@w{fresh}", arg.span)
                fresh += 1
        body.append(n.Atom(lit.relation, tuple(args), lit.span))
    head = {a.name for a in clause.head.args if isinstance(a, n.Var)}
    ids = {a.name: a for lit in body if isinstance(lit, n.Atom) for a in lit.args
           if isinstance(a, n.Var) and a.name not in mutable and a.name not in head}
    return n.Clause(clause.head, tuple(body), clause.span), tuple(ids.values())


def _binding(lit: n.Literal, clause: n.Clause) -> tuple[str, n.Term] | None:
    """``(w, expr)`` when ``lit`` is ``w = expr`` and no atom of the rule binds ``w``."""
    if not (isinstance(lit, n.Comparison) and lit.op == "="):
        return None
    atom_vars = variables(*(a for x in clause.body if isinstance(x, n.Atom) for a in x.args))
    for var, expr in ((lit.left, lit.right), (lit.right, lit.left)):
        if isinstance(var, n.Var) and var.name not in atom_vars and \
                not isinstance(expr, n.Aggregate) and var.name not in variables(expr):
            return var.name, expr
    return None


def _aggregate_vars(agg: n.Aggregate) -> set[str]:
    out = variables(agg.target) if agg.target is not None else set()
    for lit in agg.body:
        out |= variables(*literal_terms(lit))
    return out
