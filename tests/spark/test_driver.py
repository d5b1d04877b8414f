"""The driver's promises: one shuffle per TC iteration, bounded jobs, flat storage, stats."""

from __future__ import annotations

import re
import secrets

import pytest

import sparklog
from sparklog import gen
from sparklog.explain import iteration_plan
from tests.spark.helpers import TC, edges_df, run


@pytest.fixture(scope="module")
def engine(spark):
    """The rules as written: these tests count the jobs, shuffles and stats of a set
    relation's rounds, not those of a closure strategy (tests/spark/test_closure.py)."""
    return sparklog.Engine(spark=spark, partitions=2, strategy="asis")


def test_one_tc_iteration_shuffles_only_the_new_tuples(engine, tmp_path):
    from sparklog.gen import write_facts

    write_facts(gen.tree(6, "down"), tmp_path / "edge.facts")
    plan = iteration_plan(engine, sparklog.Program.from_text(TC), tmp_path)
    exchanges = re.findall(r"Exchange (\w+)\(([^)]*)\)", plan)
    assert len(exchanges) == 1, plan
    kind, keys = exchanges[0]
    assert kind == "hashpartitioning" and re.match(r"_sb#\d+, 2", keys), plan
    assert "BroadcastExchange" not in plan and "CartesianProduct" not in plan


def test_iterations_run_one_job_each_and_report_stats(engine, spark):
    result = run(engine, TC, inputs={"edge": edges_df(spark, gen.chain(12))})
    loop = [r for r in result.stats if r["relation"] == "tc" and r["iteration"] > 0]
    assert len(loop) == 12  # 11 productive iterations and the empty one
    assert all(r["spark_jobs"] == 1 for r in loop), [r["spark_jobs"] for r in loop]
    assert [r["delta"] for r in loop] == list(range(11, 0, -1)) + [0]
    assert loop[-1]["full"] == 12 * 13 // 2
    # linear TC on a chain derives exactly the new tuples: no duplicate derivations
    assert [r["derivations"] for r in loop] == [r["delta"] for r in loop]


NONLINEAR_TC = TC.replace("tc(x, z), edge(z, y)", "tc(x, z), tc(z, y)")


def test_stored_versions_do_not_inherit_size_estimates(engine, spark):
    """A join's estimate is the product of its sides': a version planned from a
    self-join, if it kept its plan's estimate, would square it every round (its digits
    doubling) until the optimizer spends minutes multiplying them and the heap runs out."""
    result = run(engine, NONLINEAR_TC, inputs={"edge": edges_df(spark, gen.chain(40))})
    assert result.size("tc") == 40 * 41 // 2 and result.iterations("tc") >= 6
    default = int(spark.conf.get("spark.sql.defaultSizeInBytes").rstrip("b"))
    for relation in ("tc", "edge"):
        stats = result._db.stored[relation]._jdf.queryExecution().optimizedPlan().stats()
        assert int(stats.sizeInBytes()) == default, relation


FAILS_AFTER_A_LOOP = """
.decl n(x: number)
n(0).
n(x + 1) :- n(x), x < 5.
.decl flag(p: number)
.input flag
.decl bad(x: number)
.output bad
bad(x) :- n(x), flag(p).
"""


def failing(spark, message: str):
    """A one-row input whose value fails the job that reads it."""
    from pyspark.sql import functions as F

    return spark.createDataFrame([(1,)], "p long").withColumn(
        "p", F.when(F.col("p") == 1, F.raise_error(F.lit(message))).otherwise(F.col("p")))


def test_a_failed_run_frees_its_block_storage(engine, spark):
    from sparklog.errors import EngineError
    from sparklog.spark.jvm import cached_rdds as _cached_rdds

    before = set(_cached_rdds(spark))
    with pytest.raises(EngineError, match="flag is bad"):
        run(engine, FAILS_AFTER_A_LOOP, inputs={"flag": failing(spark, "flag is bad")})
    assert set(_cached_rdds(spark)) <= before


def test_partition_stats(engine, spark):
    result = run(engine, TC, inputs={"edge": edges_df(spark, gen.tree(6, "up"))})
    last = [r for r in result.stats if r["relation"] == "tc"][-1]
    assert last["partitions"] == 2 and last["sub_buckets"] == 2  # one per bucket, P buckets
    assert last["max_partition"] >= last["mean_partition"] == last["full"] / 2
    assert last["imbalance"] == round(last["max_partition"] / last["mean_partition"], 3)
    # the observed sizes are the real ones (a second, independent count)
    from pyspark.sql import functions as F
    stored = result._db.stored["tc"]
    actual = sorted(r["n"] for r in stored.groupBy(F.spark_partition_id()).agg(
        F.count(F.lit(1)).alias("n")).collect())
    assert max(actual) == last["max_partition"] and sum(actual) == last["full"]


def test_storage_memory_stays_flat(spark):
    """Dead versions are released: memory after 60 iterations ~ memory after 20."""
    engine = sparklog.Engine(spark=spark, partitions=2, strategy="asis")
    sc = spark.sparkContext
    samples = {}

    def record(r):
        if r["relation"] == "tc" and r["iteration"] in (20, 60):
            infos = sc._jsc.sc().getRDDStorageInfo()
            samples[r["iteration"]] = (len(infos), sum(i.memSize() for i in infos))

    engine.on_record = record
    run(engine, TC, inputs={"edge": edges_df(spark, gen.chain(60))})
    engine.on_record = None
    (rdds20, _), (rdds60, _) = samples[20], samples[60]
    assert rdds20 >= 1, samples  # the relations live in block storage...
    assert rdds60 <= rdds20 + 1, samples  # ...and dead versions leave it


def test_reliable_checkpoints(spark, tmp_path):
    engine = sparklog.Engine(spark=spark, partitions=2, checkpoint="reliable",
                             checkpoint_dir=str(tmp_path / "ckpt"))
    result = run(engine, TC, inputs={"edge": edges_df(spark, gen.chain(5))})
    assert result["tc"].count() == 15


def _jobs_and_stats(spark, program: str, deferred: bool = True, pipelined: bool = True,
                    max_iterations: int | None = None, **inputs):
    engine = sparklog.Engine(spark=spark, partitions=2, deferred=deferred, pipelined=pipelined,
                             max_iterations=max_iterations, strategy="asis")
    before = spark.sparkContext._jsc.sc().dagScheduler().nextJobId()
    result = run(engine, program, inputs=inputs)
    jobs = spark.sparkContext._jsc.sc().dagScheduler().nextJobId() - before
    keep = ("stratum", "iteration", "relation", "delta", "full", "derivations", "max_partition")
    return jobs, [{k: r[k] for k in keep} for r in result.stats], result


def _values_df(spark, edges):
    """Edges as SQL VALUES: a plan that knows its rows (jvm.estimated_rows)."""
    rows = ", ".join(f"({x}, {y})" for x, y in edges)
    return spark.sql(f"SELECT * FROM VALUES {rows} AS t(x, y)")


def test_deferred_versions_save_their_jobs_and_keep_the_stats(spark):
    """The input and the first version of tc are stored by round 1's job, not their own."""
    edges = _values_df(spark, gen.tree(5, "up"))
    eager_jobs, eager, _ = _jobs_and_stats(spark, TC, False, edge=edges)
    jobs, stats, result = _jobs_and_stats(spark, TC, True, edge=edges)
    assert jobs == eager_jobs - 2, (jobs, eager_jobs)
    assert stats == eager
    first = [r for r in result.stats if r["relation"] == "tc"][:2]
    assert [(r["iteration"], r["spark_jobs"]) for r in first] == [(0, 0), (1, 1)]
    assert result.size("edge") == 30 and result.size("tc") == 5 * 2**5 - 2 * (2**5 - 1)


def test_an_input_of_unknown_size_is_stored_first_and_planned_from_its_rows(spark, monkeypatch):
    """A DataFrame made from Python rows has no size estimate: it is stored by a job of
    its own, so the rounds after it are planned from its 30 rows (no whole-stage code
    generation), not from the guess that any such DataFrame is large."""
    from sparklog.spark.storage import Database

    planned = []
    use_codegen = Database.use_codegen
    monkeypatch.setattr(Database, "use_codegen",
                        lambda db, rows: (planned.append(rows), use_codegen(db, rows))[1])
    edges = edges_df(spark, gen.tree(5, "up"))
    eager_jobs, eager, _ = _jobs_and_stats(spark, TC, False, edge=edges)
    planned.clear()
    jobs, stats, result = _jobs_and_stats(spark, TC, True, edge=edges)
    assert jobs == eager_jobs - 1, (jobs, eager_jobs)  # only tc's first version deferred
    assert stats == eager and result.size("edge") == 30
    from sparklog.defaults import CODEGEN_ROWS as threshold
    assert planned[0] >= threshold  # the load itself: the input taken as large
    assert planned[1:] and max(planned[1:]) < 1000, planned  # every round: its real rows


def test_observed_counts_add_up_when_two_jobs_compute_the_partitions(spark):
    """A deferred version's partitions are computed by whichever stage of the job that
    reads it gets there first; its observed counts (storage.Metrics) must add up all of
    them. Here a first job computes partition 0 only and a second the others: Spark 4
    reports only the second's (the highest RDD id) unless session.REQUIRED_CONF says to
    aggregate every task's."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from sparklog.spark import jvm
    from sparklog.spark.storage import Metrics

    metrics = Metrics(spark, f"split_{secrets.token_hex(4)}")
    numbers = spark.range(0, 300, 1, 3)
    observed = metrics.on(numbers._jdf, F.count(F.lit(1)).alias("n"), jvm.seq(spark, []))
    stored = DataFrame(observed, spark).localCheckpoint(eager=False)
    metrics.source = observed
    assert len(stored.limit(1).collect()) == 1  # computes and stores partition 0 alone
    assert stored.count() == 300  # computes partitions 1 and 2, reads 0 from storage
    assert metrics.get["n"] == 300


def test_deferred_inputs_no_rule_reads_are_still_counted_and_checked(spark, tmp_path):
    from sparklog.errors import DataError

    program = (".decl a(x: number)\n.input a\n.output a\n.decl b(x: number)\n.input b\n"
               ".decl c(x: number)\n.output c\nc(x) :- b(x).\n")
    (tmp_path / "a.facts").write_text("1\n2\n2\n")
    (tmp_path / "b.facts").write_text("7\n")
    engine = sparklog.Engine(spark=spark, partitions=2, strategy="asis")
    result = run(engine, program, facts_dir=tmp_path)
    assert result.size("a") == 2 and result.size("b") == 1 and result.size("c") == 1
    (tmp_path / "a.facts").write_text("1\nx\n")
    with pytest.raises(DataError) as err:
        run(engine, program, facts_dir=tmp_path)
    assert "a.facts:2:1" in str(err.value), str(err.value)


MUTUAL = """
.decl e(x: number, y: number)
.input e
.decl a(x: number, y: number)
.output a
.decl b(x: number, y: number)
.output b
a(x, y) :- e(x, y).
b(x, z) :- a(x, y), e(y, z).
a(x, z) :- b(x, y), e(y, z).
"""


@pytest.mark.parametrize("program, limit", [(TC, None), (MUTUAL, None), (TC, 3)])
def test_pipelined_rounds_keep_the_jobs_and_the_stats(spark, program, limit):
    """Planning round k+1 during round k's job changes when the driver works, nothing else:
    the plan made after the last round is dropped without a job, and max_iterations holds."""
    inputs = {"edge" if program is TC else "e": edges_df(spark, gen.tree(5, "down"))}
    serial_jobs, serial, _ = _jobs_and_stats(spark, program, pipelined=False,
                                             max_iterations=limit, **inputs)
    jobs, stats, result = _jobs_and_stats(spark, program, max_iterations=limit, **inputs)
    assert (jobs, stats) == (serial_jobs, serial)
    loop = [r for r in result.stats if r["iteration"] > 0]
    # one job a relation a round, none for a relation the round skipped (rounds._prune):
    # MUTUAL's a and b take turns
    skipped = [r for r in loop if r["spark_jobs"] == 0]
    assert all(r["spark_jobs"] == 1 for r in loop if r not in skipped)
    assert all(r["delta"] == 0 and r["written"] == 0 for r in skipped)
    assert bool(skipped) == (program is MUTUAL)
    if limit:
        assert max(r["iteration"] for r in stats) == limit
    elif program is MUTUAL:  # a: odd path lengths, b: even ones, on the 5-level tree
        pairs = {(x, y, d) for x, y, d in _paths(gen.tree(5, "down"))}
        assert result.size("a") == sum(1 for *_, d in pairs if d % 2 == 1)
        assert result.size("b") == sum(1 for *_, d in pairs if d % 2 == 0)


def _paths(edges):
    """(x, y, length) of every path of a tree (one path per pair), by networkx."""
    import networkx as nx

    g = nx.DiGraph(edges)
    return [(x, y, d) for x, lengths in nx.all_pairs_shortest_path_length(g)
            for y, d in lengths.items() if d > 0]


def test_pipelined_rounds_plan_while_the_previous_job_runs(spark, monkeypatch):
    """The next round is planned on the driver while a worker thread runs the current job."""
    import threading
    import time

    from sparklog.spark import rounds

    events = []
    plan_round, compute = rounds._plan, rounds._compute

    def timed_plan(db, sp, kernels):
        events.append(("plan", db.iteration, time.perf_counter()))
        return plan_round(db, sp, kernels)

    def timed_compute(db, steps):
        events.append(("start", threading.current_thread().name, time.perf_counter()))
        compute(db, steps)
        events.append(("end", steps[0].group, time.perf_counter()))

    monkeypatch.setattr(rounds, "_plan", timed_plan)
    monkeypatch.setattr(rounds, "_compute", timed_compute)
    result = run(sparklog.Engine(spark=spark, partitions=2, strategy="asis"), TC,
                 inputs={"edge": edges_df(spark, gen.chain(8))})
    assert result.size("tc") == 36
    starts = [e for e in events if e[0] == "start"]
    assert len(starts) == 8 and all(name.startswith("sparklog-round") for _, name, _ in starts)
    plans = {it: t for kind, it, t in events if kind == "plan" and it > 0}
    ends = [t for kind, _, t in events if kind == "end"]
    assert sorted(plans) == list(range(1, 10))  # round 9 is planned, found unneeded, dropped
    overlapped = sum(plans[k + 1] < ends[k - 1] for k in range(1, 9))
    assert overlapped >= 4, events  # round k+1's planning began before round k's job ended


FLAGGED = TC.replace("tc(x, y) :- tc(x, z), edge(z, y).",
                     ".decl flag(p: number)\n.input flag\n"
                     "tc(x, y) :- tc(x, z), edge(z, y), flag(p).")


@pytest.mark.parametrize("program, bad_input, cause", [
    # a bad input row: the input is stored by round 1's job, on the worker thread
    (TC, True, "[USER_RAISED_EXCEPTION] edge 7 is bad"),
    # a bad row of an input only the loop reads, joined with no shared variable
    (FLAGGED, False, "[USER_RAISED_EXCEPTION] flag is bad"),
])
def test_a_job_failing_at_run_time_is_a_one_line_error(spark, program, bad_input, cause):
    from pyspark.sql import functions as F

    from sparklog.errors import EngineError

    edges = edges_df(spark, gen.chain(8))
    if bad_input:
        edges = edges.withColumn("y", F.when(F.col("y") == 7, F.raise_error(F.lit("edge 7 is bad")))
                                 .otherwise(F.col("y")))
    inputs = {"edge": edges}
    if program is FLAGGED:
        inputs["flag"] = failing(spark, "flag is bad")
    with pytest.raises(EngineError) as err:
        run(sparklog.Engine(spark=spark, partitions=2, strategy="asis"), program,
            inputs=inputs)
    message = str(err.value)
    assert f"Spark failed: {cause}" in message and len(message.splitlines()) == 1, message


def test_whole_stage_codegen_only_for_rounds_over_codegen_rows(spark, tmp_path, monkeypatch):
    """By default no round uses whole-stage code generation; with codegen_rows=N the rounds
    over at least N stored rows do (all of them with 0), and the run leaves the session's
    setting as it found it."""
    from sparklog.gen import write_facts
    from sparklog.spark import rounds

    write_facts(gen.tree(6, "down"), tmp_path / "edge.facts")
    program = sparklog.Program.from_text(TC)
    plans = {limit: iteration_plan(sparklog.Engine(spark=spark, partitions=2, strategy="asis",
                                                   codegen_rows=limit), program, tmp_path)
             for limit in (None, 0)}
    assert "WholeStageCodegen" not in plans[None] and "*(" not in plans[None], plans[None]
    assert "*(" in plans[0], plans[0]  # the marker of a whole-stage-generated operator

    chosen = []
    choose = rounds._choose_codegen

    def record(db, sp, kernels):
        choose(db, sp, kernels)
        if sp.stratum.recursive and kernels == sp.loop:
            chosen.append((db.size_or_expected("edge") + db.size_or_expected("tc"),
                           spark.conf.get("spark.sql.codegen.wholeStage")))
            factory = spark.conf.get("spark.sql.codegen.factoryMode")
            assert factory == ("FALLBACK" if chosen[-1][1] == "true" else "NO_CODEGEN")

    monkeypatch.setattr(rounds, "_choose_codegen", record)
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    try:
        result = run(sparklog.Engine(spark=spark, partitions=2, codegen_rows=40,
                                     strategy="asis"), TC,
                     inputs={"edge": edges_df(spark, gen.chain(12))})
        assert result.size("tc") == 78
        assert all((rows >= 40) == (on == "true") for rows, on in chosen), chosen
        assert {on for _, on in chosen} == {"true", "false"}, chosen  # both kinds of round
        assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"  # restored
        assert spark.conf.get("spark.sql.codegen.factoryMode") == "FALLBACK"
    finally:
        spark.conf.unset("spark.sql.codegen.wholeStage")


def test_a_round_planned_ahead_is_planned_again_when_its_rows_cross_codegen_rows(spark):
    """Pipelined, round k+1 is planned while round k runs, from the sizes booked before
    round k's new tuples: a growing closure would start a round over more than
    codegen_rows rows planned without code generation. Every round's job must run the
    plan the sizes booked when it starts call for (rounds._codegen_stale)."""
    from sparklog.spark import rounds

    started = []
    compute = rounds._compute

    def record(db, steps):
        rows = db.size_or_expected("edge") + db.size_or_expected("tc")
        started.extend((db.iteration, rows, step.whole_stage) for step in steps)
        compute(db, steps)

    patch = pytest.MonkeyPatch()
    patch.setattr(rounds, "_compute", record)
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    try:
        result = run(sparklog.Engine(spark=spark, partitions=2, codegen_rows=40,
                                     strategy="asis"), TC,
                     inputs={"edge": edges_df(spark, gen.chain(12))})
    finally:
        patch.undo()
        spark.conf.unset("spark.sql.codegen.wholeStage")
    assert result.size("tc") == 78
    loop = [(rows, on) for iteration, rows, on in started if iteration >= 2]
    assert {on for _, on in loop} == {"true", "false"}, started  # the threshold is crossed
    assert all((rows >= 40) == (on == "true") for rows, on in loop), started


def _generated_sources(spark) -> int:
    """How many Java sources Spark has compiled in this JVM (a cache miss each)."""
    metrics = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics
    return metrics.METRIC_SOURCE_CODE_SIZE().getCount()


@pytest.mark.parametrize("codegen_rows", [None, 0], ids=["small rounds", "code generation"])
def test_small_rounds_generate_no_code_in_any_task(spark, codegen_rows):
    """Rounds under codegen_rows rows evaluate projections and orderings interpreted, in
    both stages of their jobs (the shuffle's map tasks see the setting only as a local
    property of the job). A constant no earlier run used makes any generated projection
    new Java, which Spark would compile (and count)."""
    bound = 500 + secrets.randbelow(10**6)
    program = f"""
.decl c(x:number, y:number)
c(0, {bound}).
c(x + 1, y - {bound % 97 + 1}) :- c(x, y), x < 12.
.output c
"""
    before = _generated_sources(spark)
    engine = sparklog.Engine(spark=spark, partitions=2, codegen_rows=codegen_rows)
    assert engine.run(program).size("c") == 13
    compiled = _generated_sources(spark) - before
    assert (compiled == 0) == (codegen_rows is None), compiled


STRATA = """
.decl n(x: number)
n(0).
n(x + 1) :- n(x), x < 9.
.decl even(x: number)
even(x) :- n(x), x % 2 = 0.
.decl odd(x: number)
odd(x) :- n(x), !even(x).
.decl pair(x: number, y: number)
.output pair
pair(x, y) :- even(x), odd(y), y = x + 1.
.decl total(s: number)
.output total
total(s) :- s = sum x : pair(x, _).
"""


def test_non_recursive_strata_are_stored_by_the_job_that_reads_them(spark):
    """even, odd and pair are computed by the job that stores total: no jobs of their own."""
    eager_jobs, eager, _ = _jobs_and_stats(spark, STRATA, False)
    jobs, stats, result = _jobs_and_stats(spark, STRATA, True)
    order = lambda r: (r["stratum"], r["iteration"], r["relation"])  # noqa: E731
    assert sorted(stats, key=order) == sorted(eager, key=order)
    assert jobs <= eager_jobs - 4, (jobs, eager_jobs)  # n's first version, even, odd, pair
    assert {tuple(r) for r in result["pair"].collect()} == {(x, x + 1) for x in range(0, 10, 2)}
    assert [tuple(r) for r in result["total"].collect()] == [(0 + 2 + 4 + 6 + 8,)]



def test_a_relation_name_reused_with_other_types_in_one_session(engine):
    """Two programs in one session whose ``g`` has a float column, then a number column:
    the placement columns are kept per gateway and layout, and once were not told apart
    by the column types, so the second run placed ``g`` by the float's hash and its join
    found nothing (the suite's float-range test, then its plan-shape test, in CI)."""
    from sparklog.syntax.parser import parse
    from tests import reference
    from tests.spark.helpers import rows

    first = """
.decl g(x: float)
g(1.0). g(2.0).
.decl h(x: float)
h(x) :- g(x), g(x + 1.0).
"""
    second = """
.decl g(x: number)
g(1). g(2). g(3).
.decl f(x: number, v: number)
f(1, 1). f(2, 1). f(2, 5). f(3, 4).
.decl h(x: number)
h(x) :- g(x), g(count : f(x, _) + 1).
"""
    for text in (first, second):
        program = parse(text, "types.dl")
        result = engine.run(sparklog.Program(program))
        assert rows(result["h"]) == reference.evaluate(program, {})["h"]
    assert rows(result["h"]) == {(1,), (2,), (3,)}
