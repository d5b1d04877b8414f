"""Every round cuts its lineage for real: what a round's job carries of the past stays the
same from round to round, in every mode, and a job that stops making progress ends the run
with an error instead of a hang."""

from __future__ import annotations

import threading
import time

import pytest

import sparklog
from sparklog.errors import EngineError
from sparklog.options import Options
from sparklog.spark import jobs, storage

COUNTER = """
.decl c(x:number)
.output c
c(0).
c(x + 1) :- c(x), x < 60.
"""


MODES = pytest.mark.parametrize("mode", [dict(), dict(pipelined=False), dict(deferred=False)],
                                ids=["pipelined", "serial", "eager"])


@MODES
def test_round_lineage_stays_constant(spark, mode):
    # combine "on": the default ("auto") stops combining the counter's candidates a few
    # rounds in (there is nothing to drop), and that one change of plan adds an RDD less.
    # Stages off: the counter is a staged recursion, whose rounds with stages on cycle
    # through a few shapes of live runs as passed stages retire (the next test)
    engine = sparklog.Engine(spark=spark, partitions=2, trace_lineage=True, combine="on",
                             retire_stages=False, **mode)
    result = engine.run(COUNTER)
    assert result.size("c") == 61
    trace = result.lineage
    assert len(trace) == 61  # 60 productive rounds and the empty one
    # from the third round on (the first ones also compute the deferred first versions),
    # each job reaches the same RDDs and ships partitions of the same size
    assert {t["rdds"] for t in trace[3:]} == {trace[3]["rdds"]}, trace
    assert max(t["partition_bytes"] for t in trace[3:]) <= trace[3]["partition_bytes"] + 200
    # from the third round on the executed plan reruns over the stored blocks of c (its
    # two scans, of the delta and of full, read one version): its RDDs were built before
    # the job that stores them ran, in the pipelined mode, and reach no earlier version
    assert [t["blocks"] for t in trace[2:]] == [1] * (len(trace) - 2), trace


@MODES
def test_round_lineage_stays_bounded_as_stages_retire(spark, mode):
    """With stages on, the counter's runs of passed stages retire, so a round reads one
    or two live runs and its plan takes one of a few shapes (each planned once, then
    rerun over the stored blocks): what a job carries of the past takes the same few
    values late in the run as early, and never grows."""
    engine = sparklog.Engine(spark=spark, partitions=2, trace_lineage=True, combine="on",
                             **mode)
    result = engine.run(COUNTER)
    assert result.size("c") == 61 and sum(r["retired"] for r in result.stats) > 0
    trace = result.lineage
    assert len(trace) == 61
    early, late = trace[3:31], trace[31:]
    assert {t["rdds"] for t in late} == {t["rdds"] for t in early}, trace
    assert max(t["partition_bytes"] for t in late) <= \
        max(t["partition_bytes"] for t in early) + 200
    assert [t["blocks"] for t in trace[10:]] == [1] * (len(trace) - 10), trace


def test_only_reruns_read_stored_blocks(spark):
    """Rounds planned anew (here: from the optimized plan) read the versions' RDDs."""
    engine = sparklog.Engine(spark=spark, partitions=2, trace_lineage=True,
                             reuse_plans="optimized")
    result = engine.run(COUNTER)
    assert result.size("c") == 61
    assert {t["blocks"] for t in result.lineage} == {0}, result.lineage


def test_reliable_checkpoints_cut_lineage_too(spark, tmp_path):
    engine = sparklog.Engine(spark=spark, partitions=2, checkpoint="reliable",
                             checkpoint_dir=str(tmp_path), trace_lineage=True)
    result = engine.run(COUNTER.replace("60", "12"))
    assert result.size("c") == 13


class _Stalled:
    """A status tracker whose one active stage never runs a task."""

    def getActiveStageIds(self):
        return [7]

    def getStageInfo(self, stage):
        class Info:
            numActiveTasks = numCompletedTasks = numFailedTasks = 0
        return Info()


def test_a_job_that_makes_no_progress_ends_the_run(spark, monkeypatch):
    """Spark's scheduler thread dying leaves a job waiting for tasks nobody launches."""
    release = threading.Event()
    db = storage.Database(spark, sparklog.Program.from_text(COUNTER).plan,
                         Options(partitions=2, stall_seconds=1.5))
    monkeypatch.setattr(type(spark.sparkContext), "statusTracker", lambda self: _Stalled())
    started = time.monotonic()
    job = jobs._Job(db, lambda db: release.wait(30))
    with pytest.raises(EngineError, match="no progress for 1.5 s"):
        job.wait()
    assert time.monotonic() - started < 10
    release.set()


def test_a_failing_job_reraises(spark):
    db = storage.Database(spark, sparklog.Program.from_text(COUNTER).plan, Options(partitions=2))

    def fail(db):
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        jobs._Job(db, fail).wait()


def test_a_dead_spark_thread_ends_the_run(spark, monkeypatch):
    """The JVM's stderr shows `Exception in thread "dispatcher-event-loop-0" ...` when a
    thread of Spark's scheduler dies: the run ends with that line as its error."""
    from sparklog.spark import session

    release = threading.Event()
    db = storage.Database(spark, sparklog.Program.from_text(COUNTER).plan, Options(partitions=2))
    monkeypatch.setattr(session, "JVM_THREAD_FAILURES", [])
    job = jobs._Job(db, lambda db: release.wait(30))
    line = 'Exception in thread "dispatcher-event-loop-0" java.lang.StackOverflowError'
    threading.Timer(0.5, session.JVM_THREAD_FAILURES.append, [line]).start()
    with pytest.raises(EngineError, match="dispatcher-event-loop-0"):
        job.wait()
    release.set()


def test_a_chain_of_a_hundred_deferred_strata_runs(spark):
    """Each non-recursive version is computed by the job that first reads it (deferred),
    and a chain of them made that job's lineage deep: at a hundred one-join strata,
    declared last-read-first, serializing it overflowed the JVM's stack. The chain is
    computed in pieces of bounded depth (Database.bound_depth) instead."""
    from sparklog.syntax.parser import parse
    from tests.reference import evaluate

    size = 100
    text = ".decl e(x:number, y:number)\n" + "".join(f"e({i}, {i + 1}).\n" for i in range(30))
    text += "".join(f".decl r{i}(x:number, y:number)\n" for i in range(size))
    text += f"r{size - 1}(x, y) :- e(x, y).\n" + "".join(
        f"r{i}(x, y) :- r{i + 1}(x, y), e(y, _), x != {i % 37 + 15}.\n" for i in range(size - 1))
    text += ".output r0\n"
    result = sparklog.Engine(spark=spark, partitions=2).run(text)
    expected = evaluate(parse(text))["r0"]
    assert 0 < len(expected) < 30
    assert {tuple(row) for row in result["r0"].collect()} == expected
