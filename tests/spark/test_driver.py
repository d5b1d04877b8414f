"""The driver's promises: one shuffle per TC iteration, bounded jobs, flat storage, stats."""

from __future__ import annotations

import re

import pytest

import sparklog
from sparklog import gen
from sparklog.explain import iteration_plan
from tests.spark.helpers import TC, edges_df, run


def test_one_tc_iteration_shuffles_only_the_new_tuples(engine, tmp_path):
    from sparklog.gen import write_facts

    write_facts(gen.tree(6, "down"), tmp_path / "edge.facts")
    plan = iteration_plan(engine, sparklog.Program.from_text(TC), tmp_path)
    exchanges = re.findall(r"Exchange (\w+)\(([^)]*)\)", plan)
    assert len(exchanges) == 1, plan
    kind, keys = exchanges[0]
    assert kind == "hashpartitioning" and re.match(r"c1#\d+L, _sb#\d+, 2", keys), plan
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


def test_partition_stats(engine, spark):
    result = run(engine, TC, inputs={"edge": edges_df(spark, gen.tree(6, "up"))})
    last = [r for r in result.stats if r["relation"] == "tc"][-1]
    assert last["partitions"] == 2 and last["sub_buckets"] == 1
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
    engine = sparklog.Engine(spark=spark, partitions=2)
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


def _jobs_and_stats(spark, program: str, deferred: bool, **inputs):
    engine = sparklog.Engine(spark=spark, partitions=2, deferred=deferred)
    before = spark.sparkContext._jsc.sc().dagScheduler().nextJobId()
    result = run(engine, program, inputs=inputs)
    jobs = spark.sparkContext._jsc.sc().dagScheduler().nextJobId() - before
    keep = ("stratum", "iteration", "relation", "delta", "full", "derivations", "max_partition")
    return jobs, [{k: r[k] for k in keep} for r in result.stats], result


def test_deferred_versions_save_their_jobs_and_keep_the_stats(spark):
    """The input and the first version of tc are stored by round 1's job, not their own."""
    edges = edges_df(spark, gen.tree(5, "up"))
    eager_jobs, eager, _ = _jobs_and_stats(spark, TC, False, edge=edges)
    jobs, stats, result = _jobs_and_stats(spark, TC, True, edge=edges)
    assert jobs == eager_jobs - 2, (jobs, eager_jobs)
    assert stats == eager
    first = [r for r in result.stats if r["relation"] == "tc"][:2]
    assert [(r["iteration"], r["spark_jobs"]) for r in first] == [(0, 0), (1, 1)]
    assert result.size("edge") == 30 and result.size("tc") == 5 * 2**5 - 2 * (2**5 - 1)


def test_deferred_inputs_no_rule_reads_are_still_counted_and_checked(spark, tmp_path):
    from sparklog.errors import DataError

    program = (".decl a(x: number)\n.input a\n.output a\n.decl b(x: number)\n.input b\n"
               ".decl c(x: number)\n.output c\nc(x) :- b(x).\n")
    (tmp_path / "a.facts").write_text("1\n2\n2\n")
    (tmp_path / "b.facts").write_text("7\n")
    engine = sparklog.Engine(spark=spark, partitions=2)
    result = run(engine, program, facts_dir=tmp_path)
    assert result.size("a") == 2 and result.size("b") == 1 and result.size("c") == 1
    (tmp_path / "a.facts").write_text("1\nx\n")
    with pytest.raises(DataError) as err:
        run(engine, program, facts_dir=tmp_path)
    assert "a.facts:2:1" in str(err.value), str(err.value)
