"""Rounds: semi-naive evaluation of each stratum over the stored versions (storage.py).

One iteration of a stratum is one Spark job (its relations' versions computed together,
:func:`_compute`); for one relation:

    derived  = union of the loop kernels          (partition-local joins with stored sides)
    new      = derived shuffled once to its home, deduplicated, anti-joined with full
    full'    = full (restamped OLDER) ∪ new (stamped NEWEST), sorted, checkpointed

Delta sizes and partition sizes come from ``DataFrame.observe`` on that same job, and
derivation counts from the rows the one Exchange wrote (every derived tuple crosses it).
Rounds are pipelined: while round k's job runs on a worker thread (jobs.py), the driver
plans round k+1 over round k's (lazily checkpointed) versions (:func:`_loop`); with
reliable checkpoints, one round at a time. A round after the second reruns the executed
plan of the round before over the new versions (:func:`_plan`, jvm.swapped).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sparklog.ir.nodes import FULL, OLD, AggregateJoin, Bind, Filter, Kernel, Scan, StratumPlan
from sparklog.ir.smart import smart_lengths
from sparklog.ir.presum import guarded, presummed
from sparklog.ir.stages import advances
from sparklog.spark import jvm
from sparklog.spark.jvm import stored_rdd as _stored_rdd
from sparklog.spark.session import FACTORY_MODE
from sparklog.spark.jobs import _Job
from sparklog.spark.balance import home_sql
from sparklog.spark.storage import Database, Metrics, _checkpoint, _spark_type, empty_frame
from sparklog.spark.translate import (IT, NEWEST, Combine, creates_symbols, kernel_query,
                                      symbol_count)
from sparklog.syntax import nodes as n
from sparklog.syntax.printer import print_clause


@dataclass
class Stats:
    """One record per iteration per relation (the vocabulary of the design notes)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    on_record: Callable[[dict[str, Any]], None] | None = None

    def add(self, **record: Any) -> None:
        self.records.append(record)
        if self.on_record:
            self.on_record(record)


def evaluate(db: Database, stats: Stats) -> None:
    """Evaluate every stratum in order."""
    try:
        for sp in db.plan.strata:
            if sp.preamble or sp.loop:
                _evaluate_stratum(db, sp, stats)
    finally:
        db.close()
    db.spark.sparkContext.setJobGroup("sparklog", "sparklog: unread inputs")
    db.settle(force=True)
    db.drop_indexes()  # no result reads them
    db.spark.sparkContext.setJobGroup("sparklog", "sparklog: results")


def _evaluate_stratum(db: Database, sp: StratumPlan, stats: Stats) -> None:
    db.iteration = 0
    db.templates.clear()  # another stratum's plans
    db.loop_counts.clear()
    db.stages = {r: c for r, c in db.stage_columns.items() if r in sp.relations}
    db.advance = advances(sp, db.stages)
    db.smart = smart_lengths(sp, db.plan) if db.options.smart_end else {}
    db.presums = presummed(sp, db.plan) if db.options.presum else {}
    db.guarded = guarded(db.presums)
    db.running = frozenset(sp.relations) if sp.stratum.recursive else None
    try:
        projected = _projection(db, sp)
        if projected is not None:
            _project(db, sp, *projected, stats)
            return
        _round(db, sp, sp.preamble, stats)
        if sp.stratum.recursive:
            _loop(db, sp, stats)
    finally:
        db.aged = set()  # later strata read full versions only, every run of them
        db.stages, db.advance, db.stage_floor, db.read_floor = {}, {}, None, None
        db.delta_low.clear()
        db.smart, db.powers = {}, {}
        db.presums, db.guarded = {}, set()
        db.running = None
        db.drop_copies()


def _projection(db: Database, sp: StratumPlan) -> tuple[Kernel, Scan] | None:
    """The rule and scan of a stratum that only projects a $MIN/$MAX relation's value
    away, keeping each of its other columns where it is: ``tc(x, y) :- tc@len(x, y, _)``,
    the last stratum of every Smart, Balance and Thirds closure (rewrite/closure.py).
    Such a relation holds one row per key, so the projection holds no duplicate, and where
    the head relation is placed as the scanned one (translate._keeps_home) each of its rows
    is already home: its runs are then the scanned relation's, projected (:func:`_project`),
    and no job copies them. None for any other stratum, and while the scanned relation is
    not computed yet (deferred) or holds stale rows (Database.compact)."""
    if sp.stratum.recursive or sp.loop or len(sp.preamble) != 1:
        return None
    (kernel,) = sp.preamble
    head, scan = kernel.relation, kernel.steps[0]
    if len(kernel.steps) != 1 or head in db.stored or not isinstance(scan, Scan) \
            or scan.exists or scan.summed is not None or scan.version != FULL:
        return None
    source, mine = db.layout(scan.relation), db.layout(head)
    value = source.dependent
    if source.lattice not in ("min", "max") or value != len(kernel.head) \
            or len(scan.args) != value + 1 or mine.lattice is not None \
            or mine.index_of is not None or mine.replicated:
        return None
    names = [t.name if isinstance(t, n.Var) else None for t in kernel.head]
    if None in names or len(set(names)) != len(names) or any(
            not isinstance(a, n.Var) or a.name != name
            for a, name in zip(scan.args, names)) or isinstance(
            scan.args[value], n.Var) and scan.args[value].name in names \
            or not isinstance(scan.args[value], n.Var | n.Wildcard):
        return None
    if db.kinds(head) != db.kinds(scan.relation)[:value] or scan.relation not in db.stored \
            or db.stale.get(scan.relation) or any(
                e[0] is run for e in db.pending for run in db.runs(scan.relation)):
        return None
    allocation = db.allocation(scan.relation)
    if home_sql(mine, db.kinds(head), allocation, lambda i: f"c{i}") != home_sql(
            source, db.kinds(scan.relation), allocation, lambda i: f"c{i}"):
        return None
    return kernel, scan


def _project(db: Database, sp: StratumPlan, kernel: Kernel, scan: Scan, stats: Stats
             ) -> None:
    """The head relation's runs as the scanned relation's runs, projected (_projection):
    their rows, partitions and sizes are the scanned relation's, and no job runs."""
    started = time.perf_counter()
    head, source = kernel.relation, scan.relation
    db.allocations[head] = db.allocation(source)
    stored = db.columns(head).stored
    runs = []
    for run in db.runs(source):
        view = DataFrame(run._jdf.select(stored), db.spark)
        for kept in ("_sparklog_rows", "_sparklog_parts"):
            if kept in run.__dict__:
                view.__dict__[kept] = run.__dict__[kept]
        view.__dict__["_sparklog_rdd"] = None  # its blocks are the source's: never freed here
        runs.append(view)
    db.sealed[head], db.stored[head] = runs[:-1], runs[-1]
    db.partition_sizes[head] = list(db.partition_sizes[source])
    rows = db.sizes[head] = db.sizes[source]
    db.last_delta[head] = rows
    if rows:
        db.last_news[head] = rows
    stats.add(**_record(db, sp, head, 0, rows, rows), rules={print_clause(kernel.clause): rows},
              combined=False, shuffled=0, inner_iteration=0, largest_inner=None,
              outer="local", seconds=round(time.perf_counter() - started, 4), spark_jobs=0,
              unread=0, written=0)


def _loop(db: Database, sp: StratumPlan, stats: Stats) -> None:
    """The semi-naive rounds of a recursive stratum, pipelined when they can be.

    Each round is planned to its physical plan, then checkpointed lazily (which builds its
    RDDs) only once the previous round's job has ended; its job then computes and stores
    the new versions. Pipelined, that job runs on a worker thread while this thread swaps
    the versions in and plans the next round over them (SQL analysis, optimization,
    physical planning: about a third of a small round). When the job ends, the round is
    booked as a sequential one is; if it derived nothing, the plan made meanwhile is
    dropped unrun. Rounds, jobs, versions and stats are the same either way; only the
    driver's seconds overlap the job's. Only the new-row counts stand between one job and
    the next: the next round's job starts before this round's stats records are written.

    Building a round's RDDs before the previous version's checkpoint has finished would
    let them keep that version's uncut partitions, and through them every earlier
    round's: a chain that grows by one link a round until serializing a task overflows
    the stack of Spark's scheduler thread. Hence the RDDs of round k+1 are built only
    after round k's job (:func:`_mark`); tests/spark/test_lineage.py measures it. A
    rerun of a kept plan over local checkpoints is the exception: it scans the blocks
    the versions' checkpoints store, not their RDDs, so _plan builds its RDDs at once and
    only the new-row counts stand between its job and the one before.

    A plan that starts jobs while it is prepared (a broadcast, a kernel making symbols)
    is not planned ahead: the jobs of a round that may never run would start early. Nor
    are rounds over reliable checkpoints: such a checkpoint is written by a job of its own
    (:func:`_store`), so their rounds run one at a time, through this same loop.
    """
    limit = db.options.max_iterations
    within = lambda iteration: not limit or iteration <= limit
    if not within(1):
        return
    db.iteration = 1
    finished = time.perf_counter()  # a round's seconds run from the previous one's end
    db.bound_depth(set().union(*(k.reads() for k in sp.loop)), sp.loop)  # its job's lineage
    ahead: list[_Step] | None = _plan(db, sp, sp.loop)
    reliable = db.options.checkpoint != "local"
    # a round that may roll over (rollover_rows) decides from the last round's counts and
    # builds its pieces' RDDs while planning: it is planned after the job before it ends
    overlap = (db.options.pipelined and not reliable and not db.options.rollover_rows
               and not any(creates_symbols(k) for k in sp.loop) and not _starts_jobs(ahead))
    job: _Job | None = None  # the running job of ``current``, when already started
    while ahead is not None:
        current, iteration, ahead = ahead, db.iteration, None
        if job is None:
            current = _prune(db, sp, current)
        if job is None and reliable:
            job = _Job(db, _store, current)
        elif job is None:
            _mark(db, current)
            job = _Job(db, _compute, current)
        if overlap:
            previous = _swap(db, current, sp)
            if within(iteration + 1):
                db.iteration = iteration + 1
                ahead = _plan(db, sp, sp.loop)
            job.wait()
        else:
            job.wait()
            previous = _swap(db, current, sp)
        now = time.perf_counter()
        # round 1's job computed every deferred version the loop reads: the rounds after
        # it read the same relations, so they have none to settle (two calls per RDD)
        news, job = _count_round(db, sp, current, settle=iteration == 1), None
        last = _smart_ended(db, sp, current, news)
        moved = _compact(db, current)
        moved = _balance(db, sp, iteration, news) or moved
        if moved and ahead is not None:
            ahead = _plan(db, sp, sp.loop)  # planned over the old runs: plan it again
        elif ahead is not None and _codegen_stale(db, sp):
            ahead = _plan(db, sp, sp.loop)  # planned for fewer rows than it reads
        if overlap and ahead is not None and any(news[r] for r in sp.stratum.relations) \
                and not last:
            # the next round's job starts before this round's records are written
            ahead = _prune(db, sp, ahead)
            _mark(db, ahead)
            job = _Job(db, _compute, ahead)
        _record_round(db, sp, current, stats, iteration, round(now - finished, 4), news)
        _record_skipped(db, sp, current, stats, iteration, round(now - finished, 4))
        finished = now
        for versions in [*previous, *(step.pieces for step in current)]:
            for version in versions:
                db.release(version)
        if not any(news[r] for r in sp.stratum.relations):  # a lagging index's news
            break  # are the delta before the last: it needs no round of its own
        if last:
            break
        if not within(iteration + 1):
            _stopped(db, sp, news)
        if not overlap and within(iteration + 1):
            db.iteration = iteration + 1
            ahead = _plan(db, sp, sp.loop)


def _smart_ended(db: Database, sp: StratumPlan, steps: list[_Step], news: dict[str, int]
                 ) -> bool:
    """Whether the round just counted was a Smart closure's last to derive anything: it
    found no path whose length is a power of two (ir/smart.py). A rolled-over round is
    run to the end as any other (its inner iterations' tuples are counted apart)."""
    if not db.smart or any(step.pieces for step in steps):
        return False
    counted = {step.relation for step in steps}
    return all(r in db.smart and r in counted and news[r] and not db.powers.get(r, 1)
               for r in sp.stratum.relations)


def _empty(db: Database, kernel: Kernel) -> bool:
    """Whether a loop kernel of a staged recursion (ir/stages.py) cannot derive anything
    in the round being planned: an OLD read of it sees only rows below the stages its
    delta can hold. Every read of the stratum's relations in a kernel has one stage
    variable, so a delta tuple meets only old rows of its own stage. The delta is what the
    round before derived, at least its relation's advance above the floor that round read
    (the floor the last counted round read is no higher: it never falls); the old rows
    were stored before that round (Database.old_below). PageRank's rank round reads the
    new shares with the lost mass, and the old shares with the new lost mass, of a later
    iteration than any old share: that second kernel is dropped. Spark would run it, and
    its scans, joins and shuffle, to find nothing."""
    if kernel.delta is None or db.read_floor is None:
        return False
    delta = kernel.steps[kernel.delta].relation
    if delta not in db.stages or delta not in db.advance:
        return False
    low = db.read_floor + db.advance[delta]
    for step in kernel.steps:
        if isinstance(step, Scan) and step.version == OLD and step.relation in db.stages:
            if db.old_below(step.relation, low):
                return True
    return False


def _live(db: Database, kernel: Kernel) -> bool:
    """Whether a loop kernel may derive anything: not if its delta relation's last round
    was skipped (its delta is empty: Database.aged)."""
    if kernel.delta is None:
        return True
    return kernel.steps[kernel.delta].relation not in db.aged


def _prune(db: Database, sp: StratumPlan, steps: list[_Step]) -> list[_Step]:
    """A planned loop round without the steps of relations none of whose kernels has a
    delta to read, decided once the round before it is counted (its news are the deltas
    this round reads). A skipped relation keeps its stored runs as they are, with no job
    and nothing rewritten; its delta is then empty and every stored row old
    (Database.aged, set when the round's versions are swapped in: :func:`_swap`). A
    stratum whose relations take turns (PageRank's ranks, contributions and totals) then
    runs only the relations whose turn it is. Not the first loop round: the deltas it
    reads were counted by the job that computed them, not yet booked."""
    if db.iteration < 2 or not db.options.skip_idle:
        return steps
    delta = lambda k: k.steps[k.delta].relation  # noqa: E731
    kept = []
    for step in steps:
        kernels = [k for k in sp.loop if k.relation == step.relation]
        if any(k.delta is None or db.last_delta.get(delta(k), 0) > 0 for k in kernels):
            kept.append(step)
    return kept


def _record_skipped(db: Database, sp: StratumPlan, steps: list[_Step], stats: Stats,
                    iteration: int, seconds: float) -> None:
    """The stats records of the relations a round skipped (:func:`_prune`): no new tuple,
    no derivation, no job, nothing written."""
    computed = {step.relation for step in steps}
    for relation in sp.relations:
        if relation in computed or db.layout(relation).index_of is not None:
            continue
        stats.add(**_record(db, sp, relation, iteration, 0, 0), inner_iteration=0,
                  largest_inner=None, outer="local", seconds=seconds, spark_jobs=0, written=0,
                  combined=False, shuffled=0, unread=0)


def _compact(db: Database, steps: list[_Step]) -> bool:
    """Remove the stale rows the round just counted (``steps``) left in lattice relations'
    sealed runs (Database.compact), before the next round reads them, in the jobs of the
    relation's round (its stats record counts them); whether any run changed."""
    stale = [step for step in steps if step.relation in db.stale]
    for step in stale:
        db.spark.sparkContext.setJobGroup(step.group, step.description)
        db.compact(step.relation)
    return bool(stale)


def _balance(db: Database, sp: StratumPlan, iteration: int, news: dict[str, int]) -> bool:
    """Every ``balance_every`` rounds, check each relation that grew for refinement and
    consolidation (Database.rebalance); whether any relation's rows moved. Run between
    two rounds' jobs: the round just counted is stored, the next one not yet started."""
    if not db.options.balance or iteration % db.options.balance_every or not any(news.values()):
        return False
    moved = False
    for relation in sp.relations:
        if news.get(relation) and db.layout(relation).key:
            moved |= db.rebalance(relation)
    return moved


def _slices(db: Database, sp: StratumPlan, relation: str, kernels: list[Kernel]) -> int:
    """Iteration roll-over (Kumar & Gilray §3.2, Fig. 9): how many inner iterations the
    relation's round runs as (1: the round runs whole).

    The round's join output is estimated per join key, as the paper counts it key by key:
    each kernel's delta keys meet the tuple count of each key of the stored relation it
    joins first (Database.key_counts), summed by one small job (:func:`_estimate`); a
    kernel whose first join is with a relation of its own stratum is estimated by the
    relation's derivations in the last round, scaled by how the delta grew. Over
    ``rollover_rows``, the delta is cut into ceil(estimate / rollover_rows) slices (at
    most MAX_INNER) by a hash of each delta tuple: every derivation reads exactly one delta
    tuple, so the slices together derive what the round would. The paper cuts the outer
    relation between join keys; cutting by tuple also splits a single heavy key (the
    bowtie's one chain end), which no cut between keys can. Each inner iteration's tuples
    are shuffled home and deduplicated against ``full`` and the slices before it
    (Database.piece) before the next starts. Set relations only, local checkpoints."""
    limit = db.options.rollover_rows
    # not in the first loop round: it computes the deferred versions the estimate reads
    layout = db.layout(relation)
    if (not limit or db.iteration < 2 or layout.lattice is not None or layout.index_of
            or db.options.checkpoint != "local" or any(k.delta is None for k in kernels)
            or not kernels):
        return 1
    estimate = _estimate(db, sp, relation, kernels)
    return min(MAX_INNER, max(1, math.ceil(estimate / limit)))


def _estimate(db: Database, sp: StratumPlan, relation: str, kernels: list[Kernel]) -> float:
    """The round's join output, estimated: per kernel, the stored tuples of the key each
    delta tuple joins first, or the last round's derivations scaled by the delta."""
    parts, scaled = [], []
    for kernel in kernels:
        delta = kernel.steps[kernel.delta]
        first = next((s for s in kernel.steps if isinstance(s, Scan) and s is not delta
                      and not s.exists), None)
        columns = {a.name: i for i, a in reversed(list(enumerate(delta.args)))
                   if isinstance(a, n.Var)}
        key = db.layout(first.relation).key if first is not None else ()
        joined = [first.args[i] for i in key] if first is not None else []
        if (first is None or first.relation in sp.relations or not key
                or not all(isinstance(a, n.Var) and a.name in columns for a in joined)):
            scaled.append(delta.relation)
            continue
        counts = db.key_counts(first.relation)
        on = " AND ".join(f"d.k{j} = c.c{i}" for j, i in enumerate(key))
        keys = ", ".join(f"c{columns[a.name]} AS k{j}" for j, a in enumerate(joined))
        parts.append(f"SELECT sum(c.n) AS n FROM (SELECT {keys} FROM {db.view(delta.relation)}"
                     f" WHERE {IT} = {NEWEST}) d JOIN {counts} c ON {on}")
    estimate = 0.0
    if parts:
        union = " UNION ALL ".join(f"({p})" for p in parts)
        estimate += db.spark.sql(f"SELECT sum(n) FROM ({union}) e").first()[0] or 0
    if scaled and relation in db.derived_last:
        now = sum(db.last_delta.get(d, 0) for d in set(scaled))
        before = sum(db.delta_before.get(d, 0) for d in set(scaled))
        estimate += db.derived_last[relation] * now / before if before else 0
    return estimate


MAX_INNER = 16  # inner iterations of one round, at most: each costs a Spark job


def _stopped(db: Database, sp: StratumPlan, news: dict[str, int]) -> None:
    """The stratum reached --max-iterations with a delta left. A set relation then holds
    what the rounds derived, as asked; a lattice relation's values may not be final, which
    would be a wrong answer, so that is an error. Its rules are monotone as written (the
    checker proved what it could), so values that keep improving mean a cycle that keeps
    improving them: a negative cycle under $MIN, say."""
    from sparklog.errors import EngineError

    from sparklog.rewrite.closure import LENGTH

    # a closure's path lengths (rewrite/closure.py) are never improved, only added: what
    # the rounds derived is a closure's paths up to a length, as for a set relation
    improving = [r for r in sp.relations
                 if news.get(r) and db.plan.lattice(r) and not r.endswith(LENGTH)]
    if improving:
        relation = improving[0]
        raise EngineError(
            f"{relation} did not converge: {news[relation]} of its keys still improved in "
            f"iteration {db.iteration}, the last one --max-iterations allows "
            f"({db.options.max_iterations}); its values keep improving along a cycle "
            "(a negative cycle under $MIN, a positive one under $MAX), so there is no "
            "least fixed point to report")


def _starts_jobs(steps: list[_Step]) -> bool:
    """Whether preparing the round's physical plan started jobs (broadcasts, subqueries)."""
    for step in steps:
        text = step.new.executed().toString()
        if "BroadcastExchange" in text or "Subquery" in text:
            return True
    return False


def _mark(db: Database, steps: list[_Step]) -> None:
    """Checkpoint a planned round's versions lazily: builds their RDDs, runs no job. A
    step marked already (a rerun over the versions' blocks, by _plan) is left as it is."""
    sc = db.spark.sparkContext
    for step in steps:
        if step.marked:
            continue
        sc.setJobGroup(step.group, step.description)
        if step.rerun is not None and db.options.columnar:
            step.full = jvm.columnar(db.spark, *step.rerun, eager=False,
                                     compressed=db.options.compressed)
        elif step.rerun is not None and step.serialized:
            step.full = jvm.stored(db.spark, *step.rerun)
        else:
            step.full = _checkpoint(_frame(db, step), db.options, eager=False,
                                    estimated=step.rerun is None)
        step.marked = True


def _frame(db: Database, step: _Step) -> DataFrame:
    """The step's planned version; a rerun's RDDs are built now, when the versions it
    reads are stored or it reads their blocks (see _loop on building RDDs early)."""
    return step.full if step.rerun is None else jvm.frame(db.spark, *step.rerun)


def _compute(db: Database, steps: list[_Step]) -> None:
    """Run a marked round's jobs: compute and store its lazily checkpointed versions.

    The versions of a round's relations are independent of each other (each reads the
    versions of the rounds before), so those whose tasks make projections alike are
    computed by one job (jvm.compute_together; their partitions pairwise, so the versions
    must have as many partitions), not one job a relation: a mutual
    recursion, a relation with a lagging index, PageRank's ranks and sums pay one job's
    fixed cost a round. A rolled-over round's inner iterations run first, in order, each
    a job of its own (they read the pieces before them).
    """
    together: dict[tuple[str, int], list[tuple[_Step, Any]]] = {}
    for step in steps:
        if step.pieces:
            _for_job(db, step)
        for piece in step.pieces:  # a rolled-over round's inner iterations, in order
            _stored_rdd(piece).doCheckpoint()
        rdd = _stored_rdd(step.full)
        if rdd is not None:
            if db.lineage is not None:
                db.lineage.append(jvm.lineage(db.spark, rdd))
            together.setdefault((step.factory, rdd.getNumPartitions()), []).append((step, rdd))
    for group in together.values():
        first = group[0][0]
        if len(group) == 1:
            _for_job(db, first)
            group[0][1].doCheckpoint()  # one job: what an eager local checkpoint runs
            continue
        joint = f"{first.group}+{len(group) - 1}"
        for step, _ in group:
            step.joint = joint
        _for_job(db, replace(first, group=joint, description=f"{first.description} and "
                             f"{', '.join(s.relation for s, _ in group[1:])}"))
        jvm.compute_together(db.spark, [rdd for _, rdd in group])
        for _, rdd in group:
            rdd.doCheckpoint()  # a no-op once the joint job has checkpointed it


def _store(db: Database, steps: list[_Step]) -> None:
    """Checkpoint a planned round's versions eagerly: its job runs now."""
    for step in steps:
        _for_job(db, step)
        if step.rerun is not None and db.options.columnar:
            step.full = jvm.columnar(db.spark, *step.rerun, eager=True,
                                     compressed=db.options.compressed)
        else:
            step.full = _checkpoint(_frame(db, step), db.options, eager=True,
                                    estimated=step.rerun is None)


def _for_job(db: Database, step: _Step) -> None:
    """The local properties of the step's job, set on the worker thread that runs it:
    its job group, and how its tasks make projections (Database.use_codegen)."""
    sc = db.spark.sparkContext
    sc.setJobGroup(step.group, step.description)
    if step.factory != db.job_factory:
        sc.setLocalProperty(FACTORY_MODE, step.factory)
        db.job_factory = step.factory


@dataclass
class _Step:
    """One relation's part of a round: its new version and the metrics observed on it."""

    relation: str
    full: DataFrame | None  # full ∪ new, planned (a rerun's: by _mark); checkpointed by _round
    derives: bool  # whether any kernel feeds this step (else there is nothing to count)
    new: Metrics
    group: str = ""
    description: str = ""
    # a rerun (jvm.swapped): the kept plan and the swapped one, made a DataFrame by _mark
    rerun: tuple[jvm.Executed, Any] | None = None
    marked: bool = False  # full is lazily checkpointed (_mark): its RDDs are built
    factory: str = "FALLBACK"  # FACTORY_MODE for its tasks (Database.use_codegen)
    whole_stage: str = "true"  # spark.sql.codegen.wholeStage it was planned with
    joint: str | None = None  # the group of the job it shared with others (_compute)
    serialized: bool = False  # a tiny rerun, stored serialized (Database.serialized_reruns)
    outer: str = "local"  # what its joins move (_derive): the stats' join-planning choice
    merges: int | None = None  # how many of the newest stored runs it replaces (merges())
    # a rolled-over round (_slices): its inner iterations' new tuples, and the derived
    # tuples each counted
    pieces: list[DataFrame] = field(default_factory=list)
    inner: list[Metrics] = field(default_factory=list)
    kernels: tuple[Kernel, ...] = ()  # what derives its candidates, in their union's order
    combined: bool = False  # candidates combined in their partition before the shuffle
    unread: int = 0  # live runs its combine step passed over (Database.unread)


@dataclass
class _Kept:
    """What a stratum keeps of a relation's first loop round to plan the rounds after it."""

    template: jvm.Template  # its optimized plan
    name: str  # the name of its new-rows metrics
    placed_name: str | None  # and of its restored placement's, if any
    derived_name: str | None  # and of its derived tuples', if counted (Database.insert)
    outer: str  # what its joins move (_derive)
    executed: jvm.Executed | None = None  # its executed plan, once a rerun may use it
    combined: bool = False  # whether its candidates are combined before the shuffle


def _plan(db: Database, sp: StratumPlan, kernels: tuple[Kernel, ...]) -> list[_Step]:
    """Plan every relation's new version over the stored versions; run nothing.

    Every loop round of a stratum has the same plan over different stored versions. So
    the first loop round's plans are kept (_Kept), and the rounds after it are planned
    from them with the versions swapped: the kernels' SQL is parsed, analyzed and
    optimized, and the insert built, once per stratum instead of once per round.
    ``reuse_plans="executed"`` runs the second loop round's executed plan again with its
    scans swapped (jvm.swapped, jvm.frame): no planning at all, and the placement it was
    checked to have. ``"optimized"`` (and a plan that cannot be rerun: jvm.executed) re-plans the
    optimized plan with its leaves swapped (jvm.replan), which Spark still plans
    physically, with the placement checked every round; a template Spark would not take
    back is dropped. Not for kernels that make symbols (the symbol table changes between
    rounds), nor when a version the round reads is not a stored RDD.
    """
    _choose_codegen(db, sp, kernels)
    versions = _versions(db, sp) if (
        db.options.reuse_plans != "off" and kernels is sp.loop and db.iteration >= 1
        and not any(creates_symbols(k) for k in kernels)) else None
    steps = []
    scans: dict[str, Any] = {}  # the versions' blocks, made once for every rerun
    for relation in sp.relations:
        mine = [k for k in kernels if k.relation == relation
                and (kernels is not sp.loop or _live(db, k))]
        # a loop kernel whose old side lies wholly below the stages of its delta
        empty = "".join("e" if kernels is sp.loop and _empty(db, k) else "-" for k in mine)
        mine = [k for k, e in zip(mine, empty) if e == "-"]
        if not mine and relation in db.stored:
            continue
        # one kept plan per join-planning choice and per shape of the stored runs (how
        # many each relation has, how many this one's version replaces): each changes it
        choice = "".join("b" if db.broadcast_delta(k) else "-" for k in mine)
        combine = db.combine(relation)
        choice += "c" if combine is not None else ""
        merges = db.merges(relation, db.iteration)
        shape = ",".join(str(len(db.live_runs(r))) + ("a" if r in db.aged else "")
                         for r in sp.relations)
        # and by which stored runs its combine step passes over (Database.unread)
        unread = "".join("u" if u else "-" for u in db.unread(relation, merges))
        key = f"{sp.stratum.index}/{relation}/{choice}/{shape}/{merges}/{unread}/{empty}"
        slices = _slices(db, sp, relation, mine) if kernels is sp.loop else 1
        planned = _replan(db, key, relation, versions, scans) if versions and slices == 1 \
            else None
        pieces: list[DataFrame] = []
        inner: list[Metrics] = []
        if slices > 1:
            outer = "local"
            for number in range(slices):
                db.delta_slice = (number, slices)
                try:  # not combined: each slice's derived tuples are counted as derived
                    derived, moves, _ = _derive(db, relation, mine)
                finally:
                    db.delta_slice = None
                outer = moves if moves != "local" else outer
                counted = Metrics(db.spark, f"inner_{relation}_{db.iteration}_{number}")
                derived = DataFrame(counted.on(derived._jdf, F.count(F.lit(1)).alias("n"),
                                               jvm.seq(db.spark, [])), db.spark)
                pieces.append(db.piece(relation, derived, pieces))
                counted.source = pieces[-1].__dict__["_sparklog_planned"]
                inner.append(counted)
            full, new = db.insert_pieces(relation, pieces, db.iteration, merges)
            rerun, combined = None, False
        elif planned is not None:
            full, new, rerun = planned
            outer, combined = db.templates[key].outer, db.templates[key].combined
            new.merged = merges
            new.rows = sum(db.rows_of(relation, r) for r in db.newest_runs(relation, merges))
        else:
            derived, outer, combined = _derive(db, relation, mine, combine)
            full, new = db.insert(relation, derived, db.iteration, merges)
            if combined and new.derived is not None:
                # already placed, so counted as derived (Database.insert): not combined,
                # or the count would miss what the combine dropped
                derived, outer, combined = _derive(db, relation, mine)
                full, new = db.insert(relation, derived, db.iteration, merges)
            rerun = None
            if versions:
                db.templates[key] = _Kept(
                    jvm.template(db.spark, full, versions), new.name,
                    new.placed.name if new.placed is not None else None,
                    new.derived.name if new.derived is not None else None, outer,
                    combined=combined)
        group = f"{db.prefix}-s{sp.stratum.index}-i{db.iteration}-{relation}"
        description = f"sparklog stratum {sp.stratum.index} iteration {db.iteration}: {relation}"
        step = _Step(relation, full, bool(mine), new, group, description, rerun,
                     factory=db.factory_now, whole_stage=db.whole_stage_now,
                     serialized=db.tiny and db.serialized_reruns,
                     outer=outer, merges=merges, pieces=pieces, inner=inner,
                     kernels=tuple(mine), combined=combined, unread=unread.count("u"))
        if rerun is not None and scans:
            _mark(db, [step])  # it reads blocks, not versions: no need to wait for them
        steps.append(step)
    return steps


def _versions(db: Database, sp: StratumPlan) -> dict[str, Any] | None:
    """The RDD a scan reads of each stored run of the stratum's relations (``r`` for the
    newest, ``r#0``.. for the sealed ones); None if one is not stored in an RDD (an empty
    version never written, say), which no template could swap."""
    versions = {}
    for relation in sp.relations:
        if relation not in db.stored:
            return None
        for i, run in enumerate(db.live_sealed(relation)):
            versions[f"{relation}#{i}"] = jvm.scan_rdd(run)
        versions[relation] = jvm.scan_rdd(db.stored[relation])
    if any(rdd is None for rdd in versions.values()):
        return None
    return versions


def _replan(db: Database, key: str, relation: str, versions: dict[str, Any],
            scans: dict[str, Any]) -> tuple[DataFrame | None, Metrics,
                                             tuple[jvm.Executed, Any] | None] | None:
    """The relation's new version planned from what was kept of the stratum's first loop
    round (for a rerun: None, and the plans _mark makes it from); None if nothing was
    kept.

    With local checkpoints a rerun scans the blocks each version's checkpoint stores
    (jvm.blocks; made into ``scans`` once per round), not the versions' RDDs: its RDDs can
    then be built while the job that stores those blocks still runs (see _loop).
    """
    kept = db.templates.get(key)
    if kept is None:
        return None
    if kept.executed is not None and kept.executed.whole_stage == db.whole_stage_now:
        try:
            if not scans and db.options.checkpoint == "local":
                scans.update({r: jvm.blocks(db.spark, kept.executed, rdd,
                                            db.options.partitions, r)
                              for r, rdd in versions.items()})
            plan = jvm.swapped(db.spark, kept.executed, scans or versions)
        except Exception:  # noqa: BLE001 - Spark would not take it: re-plan it
            kept.executed = None
        else:
            return None, _metrics(db, kept, plan=plan), (kept.executed, plan)
    try:
        full = jvm.replan(db.spark, kept.template, versions)._jdf
        placed = db.placed(relation, full)  # as the template's own round was
    except Exception:  # noqa: BLE001 - Spark would not take the plan back: plan from SQL
        placed = False
    if not placed:
        del db.templates[key]
        return None
    if db.options.reuse_plans == "executed":  # planned and placed: rerun it from now on
        kept.executed = jvm.executed(db.spark, full, versions, db.whole_stage_now)
    return DataFrame(full, db.spark), _metrics(db, kept, source=full), None


def _metrics(db: Database, kept: _Kept, source: Any = None, plan: Any = None) -> Metrics:
    """The metrics of a version planned from ``kept``, read off ``source`` or ``plan``."""
    new = Metrics(db.spark, kept.name)
    new.source, new.plan = source, plan
    if kept.placed_name is not None:
        new.placed = Metrics(db.spark, kept.placed_name)
        new.placed.source, new.placed.plan = source, plan
    if kept.derived_name is not None:
        new.derived = Metrics(db.spark, kept.derived_name)
        new.derived.source, new.derived.plan = source, plan
    return new


def _choose_codegen(db: Database, sp: StratumPlan, kernels: tuple[Kernel, ...]) -> None:
    """Plan a round with or without whole-stage code generation (Database.use_codegen),
    by the sizes of the relations it reads and writes: booked ones, else the expected
    size of a deferred version not yet computed (Database.expected)."""
    relations = set(sp.relations).union(*(k.reads() for k in kernels))
    db.use_codegen(sum(db.size_or_expected(r) for r in relations))


def _codegen_stale(db: Database, sp: StratumPlan) -> bool:
    """Whether the round planned ahead would now be planned with other code generation.

    A round planned while the round before runs decides by the sizes booked until then,
    which miss that round's new tuples: the round after the first loop round of a
    growing closure (email-Eu-core: 51,000 rows booked, 357,000 by the time its job
    starts, 11.9 million derivations) was planned without whole-stage code generation.
    The round is planned again then: where the booked sizes cross a threshold, once or
    twice a stratum as they grow."""
    before = (db.whole_stage_now, db.tiny)
    _choose_codegen(db, sp, sp.loop)
    return (db.whole_stage_now, db.tiny) != before


def _round(db: Database, sp: StratumPlan, kernels: tuple[Kernel, ...], stats: Stats
           ) -> dict[str, int]:
    """One round: every relation of the stratum gets its new tuples in one job."""
    started = time.perf_counter()
    eager = not (db.options.defers and db.iteration == 0)
    depth = db.bound_depth(set().union(*(k.reads() for k in kernels)), kernels)
    steps = _plan(db, sp, kernels)
    # The first version of a recursive stratum, and the version of a non-recursive one,
    # is stored by the first job that reads it (Database.defer): a stratum over a few
    # hundred tuples would otherwise cost a job and its bookkeeping of its own.
    if eager:
        _Job(db, _store, steps).wait()
    else:
        _mark(db, steps)
    seconds = round(time.perf_counter() - started, 4)
    if not eager:  # its rows, metrics and time belong to the job that reads it, and it
        # reads the previous version: that is released once this one is computed
        iteration = db.iteration
        for step in steps:  # until then, an estimate from what it reads
            db.expected[step.relation] = _expected_rows(
                db, [k for k in kernels if k.relation == step.relation])
        for step, previous in zip(steps, _swap(db, steps)):
            def settle(step: _Step = step, previous: list[DataFrame] = previous) -> list[Any]:
                _book(db, sp, step, stats, iteration, 0.0, jobs=0)
                for version in previous:
                    db.release(version)
                return []
            db.defer(step.full, settle)
            db.depths[step.relation] = depth
        return {relation: 0 for relation in sp.relations}
    news = _book_round(db, sp, steps, stats, db.iteration, seconds)
    for previous in _swap(db, steps):  # versions are swapped only after the round
        for version in previous:
            db.release(version)
    return news


def _expected_rows(db: Database, kernels: list[Kernel]) -> int:
    """The rows a deferred version is taken to have until its job counts them: one for a
    kernel that scans nothing and aggregates without grouping (``size(c) :- c = count :
    {node(_)}``), else as many as the kernel reads. A parameter taken for as large as the
    relation it counts is not gathered into one partition for the cross joins that read
    it (translate._gathered), and the plan made then is run again every round."""
    def single(k: Kernel) -> bool:
        return all(isinstance(s, (Bind, Filter)) or isinstance(s, AggregateJoin)
                   and not s.group for s in k.steps)
    return sum(1 if single(k) else sum(db.size_or_expected(r) for r in k.reads())
               for k in kernels)


def _swap(db: Database, steps: list[_Step], sp: StratumPlan | None = None
          ) -> list[list[DataFrame]]:
    """Make the round's versions the newest stored runs; return, per step, the runs they
    replace (Database.replace)."""
    for step in steps:  # until its round is counted (Database.add_new), a run's rows are
        # those it merged and as many new ones as the relation's last round had
        if step.full is not None and step.merges is not None:
            step.full.__dict__.setdefault(
                "_sparklog_rows", step.new.rows + db.last_delta.get(step.relation, 0))
    if sp is not None:  # a loop round: the relations it skipped now have no delta
        swapped = {step.relation for step in steps}
        db.aged = {r for r in sp.relations if r in db.stored and r not in swapped}
    return [db.replace(step.relation, step.full, step.merges) for step in steps]


def _book_round(db: Database, sp: StratumPlan, steps: list[_Step], stats: Stats,
                iteration: int, seconds: float) -> dict[str, int]:
    """Settle what the round's jobs computed and add its stats records; new rows by relation."""
    news = _count_round(db, sp, steps)
    _record_round(db, sp, steps, stats, iteration, seconds, news)
    return news


def _count_round(db: Database, sp: StratumPlan, steps: list[_Step], settle: bool = True
                 ) -> dict[str, int]:
    """Settle what the round's jobs computed and fold in its sizes; new rows by relation.

    All the next round needs to start. Its records (:func:`_record_round`) ask the JVM for
    more (the derivations, the round's jobs) and can be written while the next job runs.
    """
    if settle:
        db.settle()  # deferred versions this round's jobs computed
    news = {relation: 0 for relation in sp.relations}
    for step in steps:
        news[step.relation] = db.add_new(step.relation, step.new, step.full)
    db.delta_before.update({r: db.last_delta.get(r, 0) for r in news})
    db.last_delta.update(news)
    db.last_news.update({r: rows for r, rows in news.items() if rows})
    if db.stages and sp.stratum.recursive:
        db.read_floor = db.stage_floor
        _raise_floor(db, sp, steps, news)
    return news


def _raise_floor(db: Database, sp: StratumPlan, steps: list[_Step], news: dict[str, int]
                 ) -> None:
    """Raise a staged recursion's stage floor (Database.retired) to the lowest stage of
    the round's deltas. It never falls (ir/stages.py): if it did, the analysis would be
    wrong and a retired run might have been needed, so that is an error, not an answer."""
    from sparklog.errors import EngineError

    lows = [db.delta_low.get(step.relation) for step in steps if news[step.relation]]
    if not lows or any(low is None for low in lows):
        return
    floor = min(lows)
    if db.stage_floor is not None and floor < db.stage_floor:
        raise EngineError(
            f"internal error: stratum {sp.stratum.index} is staged ({db.stages}) but a "
            f"round derived stage {floor} below the floor {db.stage_floor}; rerun with "
            "--no-retire-stages and report it")
    db.stage_floor = floor


def _record_round(db: Database, sp: StratumPlan, steps: list[_Step], stats: Stats,
                  iteration: int, seconds: float, news: dict[str, int]) -> None:
    for step in steps:
        if not _recorded(db, step):
            continue
        # a relation's record counts the jobs of its lagging indexes' copies too
        jobs = len(set().union(*(_job_ids(db, s) for s in steps if s is step
                                 or db.layout(s.relation).index_of == step.relation)))
        _record_step(db, sp, step, stats, iteration, seconds, news[step.relation], jobs)


def _job_ids(db: Database, step: _Step) -> set[int]:
    """The Spark jobs that computed the step's version: its own, and the joint one."""
    ids = set(db.tracker().getJobIdsForGroup(step.group))
    if step.joint is not None:
        ids.update(db.tracker().getJobIdsForGroup(step.joint))
    return ids


def _recorded(db: Database, step: _Step) -> bool:
    """Whether the step has a stats record: not a secondary index (rewrite/indexes.py),
    a copy of its relation's tuples that the relation's records describe."""
    return db.layout(step.relation).index_of is None


def _book(db: Database, sp: StratumPlan, step: _Step, stats: Stats, iteration: int,
          seconds: float, jobs: int | None = None) -> int:
    """Fold a computed step's metrics into the sizes and add its stats record."""
    new_rows = db.add_new(step.relation, step.new, step.full)
    _record_step(db, sp, step, stats, iteration, seconds, new_rows, jobs)
    return new_rows


def _record_step(db: Database, sp: StratumPlan, step: _Step, stats: Stats, iteration: int,
                 seconds: float, new_rows: int, jobs: int | None = None) -> None:
    """Add a computed step's stats record (its sizes already folded in)."""
    if not _recorded(db, step):
        return
    key = f"{sp.stratum.index}/{step.relation}/{min(iteration, 1)}"
    if jobs is None:
        jobs = len(_job_ids(db, step))
    # a round whose placement was restored has a second home Exchange above the first
    hint = db.exchanges if step.new.placed is None else None
    inner = [int(m.get["n"] or 0) for m in step.inner]  # a rolled-over round's slices
    if not step.derives:
        derivations = 0
    elif inner:
        derivations = sum(inner)
    elif step.new.derived is not None:  # no home Exchange: counted as derived
        derivations = int(step.new.derived.get["n"] or 0)
    else:
        derivations = jvm.derivations(step.new.executed(), hint, key, step.combined)
    db.derived_last[step.relation] = derivations
    if iteration >= 1:
        db.loop_counts[step.relation] = (derivations, new_rows)
    # the rows that crossed the one shuffle: fewer than derived when combined before it,
    # none when the derived tuples were placed already (no home Exchange)
    if not inner and step.new.derived is not None:
        shuffled = 0
    elif step.combined and step.derives:
        shuffled = jvm.shuffled(step.new.executed(), hint, key)
    else:
        shuffled = derivations
    stats.add(**_record(db, sp, step.relation, iteration, new_rows, derivations),
              rules=_by_rule(step, derivations, hint, key, bool(inner)),
              combined=step.combined, shuffled=shuffled,
              # iteration roll-over: how many inner iterations, the largest one's output
              inner_iteration=len(inner), largest_inner=max(inner, default=None),
              outer=step.outer, seconds=seconds, spark_jobs=jobs, unread=step.unread,
              # rows the round stored: its new tuples and the runs it merged (merges())
              written=step.full.__dict__.get("_sparklog_rows") if step.full is not None else None)


def _by_rule(step: _Step, derivations: int, hint: dict[str, int] | None, key: str,
             rolled: bool) -> dict[str, int] | None:
    """The round's derivations per rule (a rule's semi-naive variants summed), by the rule
    as the plan runs it (rewritten, if a pass rewrote it). One rule: all of them; several:
    the row counts of each kernel's part of the plan (jvm.derivations_by_kernel), None
    when they cannot be read (a rolled-over round, a pruned kernel)."""
    clauses = [print_clause(k.clause) for k in step.kernels]
    if not clauses:
        return None
    if len(set(clauses)) == 1:
        return {clauses[0]: derivations}
    if rolled or step.new.derived is not None:
        return None
    counts = jvm.derivations_by_kernel(step.new.executed(), len(clauses), hint, key)
    if counts is None:
        return None
    rules: dict[str, int] = {}
    for clause, count in zip(clauses, counts, strict=True):
        rules[clause] = rules.get(clause, 0) + count
    return rules


def _derive(db: Database, relation: str, kernels: list[Kernel], combine: Combine | None = None
            ) -> tuple[DataFrame, str, bool]:
    """The union of a relation's kernels, planned from one SQL text, and what their joins
    that are not partition-local move: "local" (no such join: only the new tuples cross
    the round's one shuffle), "outer" (the outer rows go to the stored side's sub-buckets,
    which stay), "inner" (the joined relation's rows go to the outer rows' sub-buckets,
    which stay where their own relation placed them), "delta" (the delta side is
    broadcast, the stored side stays), "both"
    (Spark shuffles both sides); and whether any kernel's candidates are combined inside
    their partition before the shuffle (``combine``: translate.kernel_query).

    Kernels that make strings are computed first, by a job of their own, with the text of
    each new string beside its id (:func:`_kept_symbols`); the round's job reads them
    from there. Not combined nor kept home then: the stored rows hold no placement."""
    if not kernels:
        return empty_frame(db.spark, [(f"c{i}", _spark_type(k))
                                      for i, k in enumerate(db.kinds(relation))]), "local", \
            False
    # (a nullary relation stores nothing a string could be read from)
    symbols = max(symbol_count(k) for k in kernels) if db.kinds(relation) else 0
    if symbols:
        queries = [kernel_query(k, db, keep=False, symbols=symbols) for k in kernels]
    else:
        queries = [kernel_query(k, db, combine) for k in kernels]
        if not all(query[3] for query in queries):  # one column set for the union
            queries = [kernel_query(k, db, combine, keep=False) if query[3] else query
                       for k, query in zip(kernels, queries)]
    sql = " UNION ALL ".join(f"({text})" for text, *_ in queries)
    moved = {m for _, ms, *_ in queries for m in ms}
    outer = next((m for m in ("both", "delta", "inner", "outer") if m in moved), "local")
    combined = any(c for _, _, c, _ in queries)
    derived = DataFrame(db.spark._jsparkSession.sql(sql), db.spark)
    if symbols:
        derived = _kept_symbols(db, derived, len(db.kinds(relation)), symbols)
    return derived, outer, combined


def _kept_symbols(db: Database, derived: DataFrame, width: int, pairs: int) -> DataFrame:
    """A relation's derived rows and the strings they made (``pairs`` columns of id and
    text: translate.kernel_query), stored by one job now; the strings join the symbol
    table (read from the stored rows when it is next built: the next round reads the new
    strings by their ids), the rows go on without them. A rolled-over round's slices too."""
    stored = _checkpoint(derived, db.options)
    made = [stored.select(F.col(f"_i{j}").alias("id"), F.col(f"_s{j}").alias("symbol"))
            for j in range(pairs)]
    union = made[0]
    for part in made[1:]:
        union = union.unionByName(part)
    db.add_symbols(union.where(F.col("symbol").isNotNull()))
    return stored.select(*[f"c{i}" for i in range(width)])


def _record(db: Database, sp: StratumPlan, relation: str, iteration: int, delta: int,
            derivations: int) -> dict[str, Any]:
    sizes = db.unbalanced.pop(relation, None) or db.partition_sizes.get(relation, [0])
    mean = sum(sizes) / len(sizes)
    return dict(stratum=sp.stratum.index, iteration=iteration, relation=relation,
                delta=delta, full=db.sizes.get(relation, 0),
                derivations=derivations, partitions=len(sizes), max_partition=max(sizes),
                mean_partition=round(mean, 2),
                imbalance=round(max(sizes) / mean, 3) if mean else 1.0,
                sub_buckets=db.allocation(relation).sub_buckets, runs=len(db.runs(relation)),
                # the runs of a staged recursion the next round does not read (ir/stages.py)
                retired=len(db.runs(relation)) - len(db.live_runs(relation)),
                # what the balance check after this round did (Database.rebalance)
                refined=db.balanced.get(relation, (0, 0))[0],
                consolidated=db.balanced.pop(relation, (0, 0))[1],
                # a lattice relation's delta is its improved keys (new ones included);
                # None for a set relation, whose delta only ever adds tuples
                improved=delta if db.plan.lattice(relation) else None,
                # a lattice relation's old rows of keys it improved in its sealed runs,
                # removed before the next round (Database.compact)
                stale=db.compacted.pop(relation, 0))
