"""The Python API: Program (text -> checked plan), Engine (runs it on Spark), Result."""

from __future__ import annotations

import re

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sparklog.errors import CheckError, EngineError, Reporter, UsageError
from sparklog.ir.nodes import Plan
from sparklog.ir.presum import PresumRefuted
from sparklog.rewrite import PASSES, planned
from sparklog.rewrite.arity import linears
from sparklog.rewrite.closure import LENGTH, Choice, closures
from sparklog.rewrite.doubling import chains
from sparklog.rewrite.indexes import add_indexes
from sparklog.rewrite.replicate import replicate_static, sendable
from sparklog.rewrite.totals import inline_totals
from sparklog.options import DEFAULTS, NAMES, Options
from sparklog.semantics.checks import Checked, check
from sparklog.syntax import nodes as n
from sparklog.syntax import subsumption
from sparklog.syntax.parser import parse, parse_file


def _changed(program: n.Program, before: n.Program) -> bool:
    """Whether a rewrite pass changed a clause or a declaration (it rebuilds the tuples
    around the same nodes when it rewrote nothing)."""
    return any(len(a) != len(b) or any(x is not y for x, y in zip(a, b))
               for a, b in ((program.clauses, before.clauses), (program.decls, before.decls))
               ) or program.directives != before.directives or program.types != before.types


class Program:
    """A parsed, checked and planned Datalog program.

    >>> Program.from_text('.decl e(x:number)\\ne(1).').plan.layouts['e'].key
    (0,)
    """

    def __init__(self, ast: n.Program) -> None:
        self.ast = ast
        self.checked: Checked = check(ast)
        # the strata that compute a transitive closure (rewrite/closure.py)
        self.closures = closures(self.checked)
        _check_pragmas(self)
        self._plans: dict[tuple, Plan] = {}
        self._rewritten: dict[tuple, tuple[n.Program, list[Choice]]] = {}

    def rewritten(self, strategy: str = DEFAULTS.strategy,
                  shapes: Mapping[str, tuple[int, ...]] | None = None
                  ) -> tuple[n.Program, list[Choice]]:
        """The program with each transitive closure rewritten for its strategy, and the
        strategy chosen for each (rewrite/closure.py); ``shapes``: the (arcs, nodes, tails,
        heads) of edge relations, measured for ``auto``."""
        key = (strategy, tuple(sorted((shapes or {}).items())))
        if key not in self._rewritten:
            checked, trusted, choices = self.checked, frozenset(), []
            for rewrite in PASSES:
                program, made, chosen = rewrite(checked, strategy, shapes or {})
                trusted |= made
                choices += chosen
                if not _changed(program, checked.program):
                    continue  # nothing rewritten: it is checked already
                checked = check(program, trusted)
            self._rewritten[key] = (checked.program, choices)
            self._plans[key + (False,)] = planned(checked, with_indexes=False)
        return self._rewritten[key]

    def plan_for(self, strategy: str = DEFAULTS.strategy, indexes: bool = True,
                 shapes: Mapping[str, tuple[int, ...]] | None = None,
                 totals: bool = DEFAULTS.inline_totals,
                 replicate: bool | frozenset[str] = False) -> Plan:
        """The plan a run with these options executes: closures rewritten for
        ``strategy``, totals read where they are summed if ``totals``
        (rewrite/totals.py), small sides sent to a linear recursion's delta if
        ``replicate``, or those of the relations in it (rewrite/replicate.py), with
        secondary indexes (rewrite/indexes.py) or without."""
        key = (strategy, tuple(sorted((shapes or {}).items())))
        if key + (indexes, totals, replicate) not in self._plans:
            self.rewritten(strategy, shapes)
            plan = self._plans[key + (False,)]
            plan = inline_totals(plan) if totals else plan
            if replicate:
                plan = replicate_static(plan, None if replicate is True else replicate)
            self._plans[key + (indexes, totals, replicate)] = \
                add_indexes(plan) if indexes else plan
        return self._plans[key + (indexes, totals, replicate)]

    @property
    def plan(self) -> Plan:
        return self.plan_for()

    @property
    def unindexed(self) -> Plan:
        return self.plan_for(indexes=False)

    @classmethod
    def from_text(cls, text: str, file: str = "<program>") -> Program:
        return cls(parse(text, file))

    @classmethod
    def from_file(cls, path: str | Path, include_dirs: Sequence[str | Path] = (),
                  macros: Sequence[str] = ()) -> Program:
        """The program of a file; ``include_dirs`` and ``macros`` (``NAME`` or
        ``NAME=VALUE``) are for the C preprocessor, as Soufflé's -I and -M."""
        return cls(parse_file(path, include_dirs, macros))

    @property
    def sources(self) -> dict[str, str]:
        return self.ast.source_map()


def _check_pragmas(program: Program) -> None:
    """A `.pragma r(strategy=...)` names a transitive closure sparklog recognizes."""
    rep = Reporter()
    recognized = {c.relation for c in program.closures}
    chained = {r for c in chains(program.checked) for r in c.relations}
    chained |= {r for c in linears(program.checked) for r in c.relations}
    for d in program.checked.program.directives:
        if d.kind == "pragma" and d.param("strategy") == "doubling" and d.relation not in chained:
            rep.error(d.span, f".pragma {d.relation}(strategy=doubling): {d.relation} is not "
                      "in a chain program (Afrati & Ullman, Definition 3.1): every rule "
                      f"p(x, y) :- e(x, y), p(x, y) :- e(x, z), q(z, y) or p(x, y) :- "
                      "q(x, z), e(z, y), with e outside the recursion; nor in a linear "
                      "recursion Theorem 3.2 doubles: every rule reads at most one relation "
                      "of the recursion, whose arguments and the head's are distinct "
                      "variables bound by the rule's other atoms")
        elif d.kind == "pragma" and d.param("strategy") != "doubling" and \
                d.relation not in recognized:
            r = d.relation
            rep.error(d.span, f".pragma {r}(strategy=...): {r} is not a transitive closure "
                      f"sparklog can rewrite: a base rule {r}(x, y) :- e(x, y) and one rule, "
                      f"{r}(x, y) :- {r}(x, z), e(z, y) or {r}(x, y) :- e(x, z), {r}(z, y) or "
                      f"{r}(x, y) :- {r}(x, z), {r}(z, y)")
    rep.raise_if_any(CheckError, program.ast.source_map())


class Result:
    """The relations of a run as Spark DataFrames with the declared names and types."""

    def __init__(self, db, program: Program, stats: list[dict[str, Any]]) -> None:
        self._db, self._program, self.stats = db, program, stats
        # how each transitive closure was evaluated, and why (rewrite/closure.py)
        self.strategies: list[Choice] = []
        # what the run did beside the program's rounds (a presum refuted: ir/presum.py)
        self.notes: list[str] = []

    def __getitem__(self, name: str):
        from sparklog.spark.decode import decode

        if self._program.ast.decl(name) is None:
            raise KeyError(name)
        return decode(self._db, self._program.checked.decl(name), name)

    def size(self, name: str) -> int:
        return self._db.sizes.get(name, 0)

    @property
    def relations(self) -> list[str]:
        return [d.name for d in self._program.ast.decls]

    @property
    def lineage(self) -> list[dict[str, int]] | None:
        """Per loop round, what its job carried of the past (Engine(trace_lineage=True))."""
        return self._db.lineage

    def iterations(self, relation: str) -> int:
        """The rounds of a relation's stratum; of a closure a strategy rewrote, those of
        the relation that kept its paths' lengths (rewrite/closure.py)."""
        lengths = relation + LENGTH
        if any(r["relation"] == lengths for r in self.stats):
            relation = lengths
        return max((r["iteration"] for r in self.stats if r["relation"] == relation), default=0)


class Engine:
    """Runs programs on a SparkSession: the caller's, or a local one sparklog starts.

    ``options`` are the fields of :class:`sparklog.options.Options` (partitions, checkpoint,
    checkpoint_dir, max_iterations, deferred, pipelined, codegen_rows, stall_seconds,
    trace_lineage, reuse_plans, tiny_rows, join_planning, broadcast_rows), validated there.
    """

    def __init__(self, spark=None, *, master: str = "local[*]",
                 conf: Mapping[str, str] | None = None,
                 on_record: Callable[[dict[str, Any]], None] | None = None,
                 **options: Any) -> None:
        from sparklog.spark import session

        unknown = sorted(set(options) - set(NAMES))
        if unknown:
            raise UsageError(f"unknown Engine option {unknown[0]!r}; the options are "
                             f"{', '.join(NAMES)}")
        checked = Options(**options)  # validated before a JVM starts
        self.spark = spark or session.start(master, checked.partitions, dict(conf or {}))
        if spark is not None:
            session.quiet(spark)
            session.advise(spark)
        if checked.checkpoint_dir:
            self.spark.sparkContext.setCheckpointDir(checked.checkpoint_dir)
        parts = checked.partitions or max(2, self.spark.sparkContext.defaultParallelism)
        self.options = replace(checked, partitions=parts)
        self.on_record = on_record
        self.functors: dict[str, Callable[[Any, Any], Any]] = {}

    def functor(self, name: str, function: Callable[[Any, Any], Any]) -> None:
        """Register ``@name`` for a ``.lattice``'s Lub or Glb: ``function`` takes two Spark
        Columns and returns a Column, so the lattice runs inside the JVM, e.g.
        ``engine.functor("lub", lambda a, b: F.greatest(a, b))`` for ``Lub -> @lub(_, _)``."""
        self.functors[name] = function

    def run(self, program: Program | str, inputs: Mapping[str, Any] | None = None,
            facts_dir: str | Path | None = None) -> Result:
        """Evaluate ``program``; ``inputs`` maps relation names to DataFrames or paths."""
        from sparklog.spark import session
        from sparklog.spark.rounds import Stats, evaluate
        from sparklog.spark.storage import Database
        from sparklog.spark.load import load_inputs

        if isinstance(program, str):
            program = Program.from_text(program)
        inputs = subsumption.inputs_of(program.ast, dict(inputs or {}))
        previous = session.apply_required(self.spark, self.options.partitions)
        try:  # auto's measurement reads the inputs with the settings a run needs
            shapes = self.shapes(program, inputs, Path(facts_dir or "."))
            plan = program.plan_for(self.options.strategy, self.options.indexes, shapes,
                                    self.options.inline_totals, self.replicable(shapes))
        except BaseException:  # e.g. a DataFrame of the wrong arity
            session.restore(self.spark, previous)
            raise
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException

        options, notes = self.options, []
        try:
            while True:
                db = Database(self.spark, plan, options, sources=program.sources,
                              whole_stage=previous[session.WHOLE_STAGE] or "true",
                              factory_mode=previous[session.FACTORY_MODE] or "FALLBACK")
                db.functors = dict(self.functors)
                stats = Stats(on_record=self.on_record)
                try:
                    try:
                        load_inputs(db, program, inputs, Path(facts_dir or "."))
                        evaluate(db, stats)
                    except (PySparkException, Py4JError) as exc:  # without Java's trace
                        raise EngineError(spark_message(exc)) from None
                except PresumRefuted as refuted:  # ir/presum.py: again, every contribution
                    db.discard()                  # stored as it is
                    notes.append(f"presumming refuted ({refuted}); evaluated again with "
                                 "every contribution stored (--no-presum)")
                    options = replace(options, presum=False)
                    continue
                except BaseException:
                    db.discard()  # a later run in the same session gets the memory back
                    raise
                finally:
                    db.drop_views()  # results are read from the stored DataFrames
                break
        finally:
            session.restore(self.spark, previous)
        result = Result(db, program, stats.records)
        result.strategies = program.rewritten(self.options.strategy, shapes)[1]
        result.notes = notes
        return result

    def shapes(self, program: Program, inputs: dict[str, Any], facts_dir: Path
                ) -> dict[str, tuple[int, ...]]:
        """What ``auto`` measures before a run: the (arcs, nodes, tails, heads) of each input edge
        relation of a closure that it chooses a strategy for, or, under replicate_static
        "auto", that is evaluated linearly (rewrite/replicate.py sends its edges by them)."""
        from sparklog.spark.load import shapes

        def measured(c) -> bool:
            strategy = c.pragma or self.options.strategy
            return strategy == "auto" or self.options.replicate_static == "auto" and (
                strategy in ("linear", "left", "right")
                or strategy == "asis" and c.written != "nonlinear")

        edges = {c.edge for c in program.closures  # a graph per parameter value is not
                 if measured(c) and not c.parameters}
        if not edges:
            return {}
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException

        try:
            return shapes(self.spark, program, edges, inputs, facts_dir)
        except (PySparkException, Py4JError):  # unreadable: the load reports it
            return {}

    def replicable(self, shapes: Mapping[str, tuple[int, ...]]) -> bool | frozenset[str]:
        """What rewrite/replicate.py may send to a linear recursion's delta, from what
        auto measured (rewrite.replicate.sendable)."""
        return sendable(self.options.replicate_static, shapes, self.options.partitions)


def spark_message(exc: BaseException) -> str:
    """Spark's message without the Java stack trace: for a failed job, its root cause
    (e.g. ``java.util.regex.PatternSyntaxException: Unclosed group near index 7``)."""
    cause = getattr(exc, "java_exception", None)
    if cause is not None:
        while cause.getCause() is not None:
            cause = cause.getCause()
        message = cause.toString()
    else:
        text = getattr(exc, "getMessage", None)
        message = text() if callable(text) else str(exc)
    first = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    # Spark's own exceptions name their error class ([USER_RAISED_EXCEPTION] ...): their
    # Java class says nothing more
    first = re.sub(r"^org\.apache\.spark\.[A-Za-z.]*Exception: (?=\[)", "", first)
    return f"Spark failed: {first}"
