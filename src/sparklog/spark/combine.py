"""The combine step of a round's insert: how the shuffled candidates meet ``full``.

Every round's candidates cross one shuffle to their home partition (Database.insert). What
happens there depends on the relation:

- a set relation deduplicates them and anti-joins them against ``full``: the new tuples
  are those ``full`` lacks (:class:`SetCombine`);
- a lattice relation (a ``$MIN`` or ``$MAX`` column, semantics/lattices.py) aggregates
  them per independent key together with the stored value: the lattice's join of old and
  new, fused with deduplication (PARALAGG §IV-A). A key whose value improves is stamped
  NEWEST and forms the next delta; a candidate that does not improve never leaves its
  partition (:class:`LatticeCombine`). A ``$SUM``/``$COUNT`` total and its contributions
  (lower.py) combine the same way, but the value derived last replaces the stored one
  (presummed contributions, ir/presum.py: a round's sum per key adds to it).

Both return ``full'`` in the stored column order with the ``_it`` stamp, unsorted, and
observe on it the metrics Database.add_new reads: ``n`` (the new or improved tuples) and
per-partition counts. A new combine step (a user lattice, say) is one more class with
``merge``, chosen by :func:`combine_for` from the relation's Layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pyspark.sql import Column
from pyspark.sql import functions as F

from sparklog.ir.nodes import Layout
from sparklog.spark import expressions as X
from sparklog.spark import jvm
from sparklog.spark.translate import IT, NEWEST, OLDER, SB
from sparklog.syntax import nodes as n

if TYPE_CHECKING:
    from sparklog.spark.storage import Database, Metrics

_SIGN_BIT = -(1 << 63)  # flips unsigned order into signed order (and back)


class Combine(Protocol):
    def merge(self, db: Database, relation: str, new: Any, runs: list[Any], merged: list[Any],
              iteration: int, metrics: Metrics) -> Any:
        """The new newest run (a JVM Dataset) from the shuffled candidates ``new``, every
        stored run of ``full`` (``runs``) and the newest of them it replaces (``merged``)."""


def combine_for(layout: Layout) -> Combine:
    if layout.index_of is not None:
        return _APPEND
    return _SET if layout.lattice is None else LatticeCombine(layout)


class SetCombine:
    """merged ∪ (candidates − full): deduplicated, then anti-joined inside the partition
    with each run of full (each sorted as the anti-join needs: no run is sorted again)."""

    @staticmethod
    def distinct(new: Any) -> Any:
        return new.dropDuplicates()

    def merge(self, db: Database, relation: str, new: Any, runs: list[Any], merged: list[Any],
              iteration: int, metrics: Metrics) -> Any:
        cols = db.columns(relation)
        new = self.distinct(new)
        for run in runs:  # partition-local anti-joins against full
            new = new.join(run, cols.order, "left_anti")
        # the stamp is set after the anti-join, so it crosses no shuffle
        new = metrics.on(new.select(cols.fresh), *db.per_partition(relation))
        # in a loop round the stored rows age; the preamble (0) keeps their stamps, so a
        # recursive stratum's first delta holds its input facts as well
        for run in reversed(merged):
            new = run.select(cols.aged if iteration >= 1 else cols.stored).union(new)
        return new


_SET = SetCombine()


class AppendCombine(SetCombine):
    """merged ∪ candidates: a lagging index (rewrite/indexes.py) takes its relation's delta,
    tuples that are distinct and new to it by construction, with no deduplication."""

    def merge(self, db: Database, relation: str, new: Any, runs: list[Any], merged: list[Any],
              iteration: int, metrics: Metrics) -> Any:
        return super().merge(db, relation, new, [], merged, iteration, metrics)

    @staticmethod
    def distinct(new: Any) -> Any:
        return new


_APPEND = AppendCombine()


class LatticeCombine:
    """One row per independent key, its value the lattice join of full's and the candidates'.

    A lattice relation is stored as runs, as a set relation is (Database.merges): the new
    run holds the rows of the newest runs it replaces (``merged``) and the keys the
    candidates improve; the runs before them (sealed) are not rewritten. Each candidate
    (for ``$MIN``/``$MAX``, each candidate key with its best value) is outer-joined with the
    sealed runs for its key's stored value (``_old``), and ``merged ∪ candidates`` is
    grouped by the independent columns and the sub-bucket: every side is partitioned by a
    subset of those (the bucket columns and ``_sb``), so the joins and the aggregation run
    inside each partition with no second shuffle, and the candidates are derived once.
    Per key it computes the best value over every side and the stored one alone;
    the key is NEWEST when the best beats the stored value (or there was none), else OLDER
    (in the preamble, iteration 0, it keeps its stored stamp, as a set relation's rows
    do). A key that is only in a sealed run and does not improve stays there alone.

    A key improved while its value lies in a sealed run leaves a stale row there: the
    ``stale`` metric counts them, and Database.compact removes them before the next round
    reads the runs (rounds._loop), so every key has one row in ``full`` whenever a round
    starts.
    """

    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def merge(self, db: Database, relation: str, new: Any, runs: list[Any], merged: list[Any],
              iteration: int, metrics: Metrics) -> Any:
        sealed = runs[:len(runs) - len(merged)]
        accumulate = bool(db.presum_marks(relation))
        plan = _LatticePlan.of(db, self.layout, db.kinds(relation)[self.layout.dependent],
                               len(sealed), iteration >= 1, accumulate)
        candidates = new
        if plan.best is not None:
            # the candidates joined per key first (inside the partition, no shuffle): the
            # sealed runs are then probed once per key, not once per derivation (a round of
            # Smart over email-Eu-core derives 100 million candidates for 800,000 keys)
            candidates = candidates.groupBy(plan.keys).agg(plan.best, plan.none)
        candidates = candidates.select(plan.candidates)
        # each candidate carries its key's row of a sealed run, if any: a chain of
        # partition-local outer joins driven by the candidates, so the round's derivation
        # is planned once (a semi-join of each run with the candidates' keys would prune
        # the candidates' columns below their shuffle and derive them again per run);
        # after Database.compact a key has at most one row in all the runs
        for run, probe in zip(sealed, plan.probes):
            candidates = candidates.join(run.select(probe), plan.key_names, "left_outer")
        union = candidates.select(plan.with_old)
        for run in merged:  # (src 0) the runs the new one replaces
            union = run.select(plan.stored).unionByName(union)
        rows = union.groupBy(plan.keys).agg(plan.first, plan.aggregates).select(plan.rows)
        if sealed:  # a sealed key that did not improve stays in its run alone
            rows = rows.where(plan.kept)
        # (2) observed: n is the improved keys; the per-partition counts are of the new run
        observed = metrics.on(rows, *lattice_counts(db, relation))
        return observed.select(db.columns(relation).stored)


# The columns of a min/max/total relation's combine step, per JVM gateway and shape
_PLANS: dict[tuple[int, Layout, str, int, bool, bool], _LatticePlan] = {}


class _LatticePlan:
    """The columns LatticeCombine.merge passes to the JVM, as Java objects built once.

    They depend only on the relation's layout, its dependent column's kind, how many sealed
    runs a round probes, whether it is a loop round and whether its candidates add to the
    stored value (``accumulate``: a presummed $SUM's, ir/presum.py), so they are kept per
    such shape (a user lattice's, which call the functors registered on the run's engine,
    per round).
    Each PySpark operation on a Column is a call into the JVM: built every round, these
    columns took some 700 calls a round, two thirds of all the calls of a PageRank run.
    """

    def __init__(self, spark: Any, layout: Layout, kind: str, sealed: int, loop: bool,
                 lub: Column | None, accumulate: bool = False) -> None:
        seq = lambda items: jvm.seq(spark, items)  # noqa: E731
        unsigned = kind == "unsigned"
        value = f"c{layout.dependent}"
        names = stored_names(layout)
        key_names = [c for c in names if c != value]
        old_type = _spark_type(kind)
        order = ((lambda c: c.bitwiseXOR(F.lit(_SIGN_BIT))) if unsigned else (lambda c: c))
        columns, keys = [F.col(c) for c in names], [F.col(c) for c in key_names]
        self.keys, self.key_names, self.none = seq(keys), seq(key_names), seq([])
        self.best = None
        if sealed and layout.lattice in ("min", "max"):
            join = F.min if layout.lattice == "min" else F.max
            self.best = order(join(order(F.col(value)))).alias(value)._jc
        elif sealed and accumulate:
            self.best = F.sum(F.col(value)).alias(value)._jc
        self.candidates = seq(columns + [F.lit(NEWEST).alias(IT), F.lit(1).alias("_src")])
        self.probes = [seq(keys + [F.col(value).alias(f"_s{k}")]) for k in range(sealed)]
        old = (F.coalesce(*[F.col(f"_s{k}") for k in range(sealed)]) if sealed
               else F.lit(None)).cast(old_type).alias("_old")
        self.with_old = seq(columns + [F.col(IT), F.col("_src"), old])
        self.stored = seq(columns + [F.col(IT), F.lit(0).alias("_src"),
                                     F.lit(None).cast(old_type).alias("_old")])
        stored_only = lambda c: F.when(F.col("_src") != 1, c)  # noqa: E731
        if layout.lattice in ("min", "max"):
            # (1) in the lattice's order: unsigned values compared as unsigned
            ordered, old = order(F.col(value)), order(F.col("_old"))
            join = F.min if layout.lattice == "min" else F.max
            pair = F.least if layout.lattice == "min" else F.greatest  # both skip nulls
            better = (lambda a, b: a < b) if layout.lattice == "min" else (lambda a, b: a > b)
            aggregates = [pair(join(ordered), join(old)).alias("_best"),
                          pair(join(stored_only(ordered)), join(old)).alias("_was")]
            improved = F.col("_was").isNull() | better(F.col("_best"), F.col("_was"))
            best = F.col("_best").bitwiseXOR(F.lit(_SIGN_BIT)) if unsigned else F.col("_best")
        elif lub is not None:
            # (1'') a user lattice (.lattice T<>): its Lub folded over the key's values,
            # from Bottom, by Spark's aggregate(collect_list(..), ..) inside the partition
            # (a sealed value repeats on each candidate row of its key: Lub is idempotent)
            aggregates = [lub.alias("_best"), F.coalesce(F.max(stored_only(F.col(value))),
                                                         F.max("_old")).alias("_was")]
            improved = F.col("_was").isNull() | (F.col("_best") != F.col("_was"))
            best = F.col("_best")
        elif accumulate:
            # (1''') a presummed $SUM's contributions: a key's row holds the sum of every
            # round's, each derived once (ir/presum.py), so a round's add to the stored one
            aggregates = [F.sum(F.when(F.col("_src") == 1, F.col(value))).alias("_cand"),
                          F.coalesce(F.max(stored_only(F.col(value))), F.max("_old"))
                          .alias("_was")]
            best = F.coalesce(F.col("_was") + F.col("_cand"), F.col("_cand"), F.col("_was"))
            improved = F.col("_was").isNull() | (F.col("_cand").isNotNull() &
                                                 (best != F.col("_was")))
        else:
            # (1') a total, or one contribution to it: the value derived last replaces the
            # stored one (every kernel of a round reads the same versions, so a key's
            # candidates of one round agree)
            aggregates = [F.max(F.when(F.col("_src") == 1, F.col(value))).alias("_cand"),
                          F.coalesce(F.max(stored_only(F.col(value))), F.max("_old"))
                          .alias("_was")]
            improved = F.col("_was").isNull() | (F.col("_cand").isNotNull() &
                                                 (F.col("_cand") != F.col("_was")))
            best = F.coalesce(F.col("_cand"), F.col("_was"))
        aggregates += [F.max(F.when(F.col("_src") == 0, F.col(IT))).alias("_stamp"),
                       F.max(F.col("_src") == 0).alias("_merged"),
                       F.max(F.col("_old").isNotNull()).alias("_sealed")]
        self.first, self.aggregates = aggregates[0]._jc, seq(aggregates[1:])
        kept = F.lit(OLDER) if loop else F.col("_stamp")
        self.rows = seq(keys + [best.alias(value),
                                F.when(improved, F.lit(NEWEST)).otherwise(kept).alias(IT),
                                improved.alias("_new"), F.col("_merged"),
                                (improved & F.coalesce(F.col("_sealed"), F.lit(False)))
                                .alias("_stale")])
        self.kept = (F.col("_merged") | F.col("_new"))._jc

    @classmethod
    def of(cls, db: Database, layout: Layout, kind: str, sealed: int, loop: bool,
           accumulate: bool = False) -> _LatticePlan:
        if layout.lattice.startswith("user:"):
            lub = user_lub(db, layout.lattice[5:], f"c{layout.dependent}", kind, also="_old")
            return cls(db.spark, layout, kind, sealed, loop, lub)
        key = (id(db.spark.sparkContext._gateway), layout, kind, sealed, loop, accumulate)
        if key not in _PLANS:
            _PLANS[key] = cls(db.spark, layout, kind, sealed, loop, None, accumulate)
        return _PLANS[key]


def user_lub(db: Database, name: str, column: str, kind: str, also: str | None = None
             ) -> Column:
    """A user lattice's Lub folded over a group's values of ``column`` (and of ``also``, its
    non-null ones), from Bottom: Spark's ``aggregate(collect_list(..), ..)``, a JVM-side fold
    (a registered functor is a Column function, called once here to build the fold's
    lambda)."""
    from sparklog.errors import EngineError
    from sparklog.semantics.checks import lattice_function

    decl = db.plan.user_lattices[name]
    (x, y), expr = lattice_function(decl.op("Lub"))
    spark_type = {"number": "bigint", "unsigned": "bigint", "float": "double"}[kind]
    bottom = f"CAST({X.value(decl.op('Bottom').expr, X.Scope())} AS {spark_type})"
    values = (f"concat(collect_list({column}), collect_list({also}))" if also
              else f"collect_list({column})")
    if isinstance(expr, n.Call) and expr.name.startswith("@"):
        functor = db.functors.get(expr.name[1:])
        if functor is None:
            raise EngineError(f"lattice {name}: no functor {expr.name[1:]!r} is registered "
                              f"(Engine.functor({expr.name[1:]!r}, lambda a, b: ...))")
        return F.aggregate(F.expr(values), F.expr(bottom),
                           lambda a, b: functor(a, b).cast(spark_type))
    lub = X.value(expr, X.Scope({x: x, y: y}, {x: kind, y: kind}))
    return F.expr(f"aggregate({values}, {bottom}, "
                  f"({x}, {y}) -> CAST({lub} AS {spark_type}))")


def _spark_type(kind: str) -> str:
    from sparklog.spark.storage import _spark_type as stored_type
    return stored_type(kind)


def stored_names(layout: Layout) -> list[str]:
    """The stored columns in order: bucket columns, sub-bucket, the rest (dependent last)."""
    return [f"c{i}" for i in layout.key] + [SB] + [f"c{i}" for i in layout.rest]


def lattice_counts(db: Database, relation: str) -> tuple[Column, Any]:
    """``n``: the improved keys; ``stale``: those whose old row stays in a sealed run;
    ``rows`` and ``p0..``: the new run in all and per partition; in a staged recursion,
    the run's lowest and highest stage (``lo``, ``hi``) and its improved keys' lowest
    (``dlo``: Database.book_stages); in a Smart closure, the improved keys whose length is
    a power of two (``powers``: ir/smart.py); for a relation guarded for a presummed $SUM,
    the improved keys that held a value (``raised``: ir/presum.py)."""
    column, length = db.stage_columns.get(relation), db.smart.get(relation)
    raised = relation in db.guarded
    if (column, length, raised) not in db._lattice_counts:
        rest = [F.count(F.lit(1)).alias("rows"),
                F.sum(F.when(F.col("_stale"), 1).otherwise(0)).alias("stale"),
                *db.partition_counts()]
        if column is not None:
            stage = F.col(f"c{column}")
            rest += [F.min(stage).alias("lo"), F.max(stage).alias("hi"),
                     F.min(F.when(F.col("_new"), stage)).alias("dlo")]
        if length is not None:
            value = F.col(f"c{length}")
            rest.append(F.sum(F.when(F.col("_new") & (value.bitwiseAND(value - 1) == 0), 1)
                              .otherwise(0)).alias("powers"))
        if raised:
            rest.append(F.sum(F.when(F.col("_new") & (F.col("_merged") | F.col("_stale")), 1)
                              .otherwise(0)).alias("raised"))
        db._lattice_counts[column, length, raised] = (
            F.sum(F.when(F.col("_new"), 1).otherwise(0)).alias("n"), jvm.seq(db.spark, rest))
    return db._lattice_counts[column, length, raised]
