"""What session.start gives the JVM it launches."""

from __future__ import annotations


def test_the_local_driver_jvm_calls_c2_late(spark):
    """The suite's session was started by session.start: its JVM took LATE_C2, and the JVM
    accepted each flag (an unknown -XX flag would have stopped it from starting)."""
    from sparklog.spark.session import LATE_C2

    jvm = spark.sparkContext._jvm
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                     .getInputArguments())
    assert set(LATE_C2.split()) <= set(arguments), arguments
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    assert bean.getVMOption("Tier4InvocationThreshold").getValue() == "50000"


def test_a_run_shuffles_into_its_own_partitions_and_restores_the_session(spark):
    """A session built without sparklog keeps Spark's 200 shuffle partitions: a run's
    own Exchanges (an aggregate's, a join's on unplaced columns) make the run's
    partitions instead, and the session's setting is back afterwards."""
    import sparklog
    from sparklog.spark import rounds
    from tests import reference
    from tests.spark.helpers import rows

    text = """
.decl e(x: number, y: number)
e(1, 2). e(2, 3). e(3, 1). e(3, 4). e(5, 4).
.decl deg(x: number, c: number)
deg(x, c) :- e(x, _), c = count : { e(x, _) }.
.decl r(x: number, y: number)
.output r
r(x, y) :- e(x, y).
r(x, z) :- r(x, y), e(y, z), deg(y, c), c > 0.
"""
    key = "spark.sql.shuffle.partitions"
    before = spark.conf.get(key)
    seen = []
    real = rounds._evaluate_stratum

    def spy(db, sp, stats):
        seen.append(spark.conf.get(key))
        return real(db, sp, stats)

    spark.conf.set(key, "7")
    rounds._evaluate_stratum = spy
    try:
        program = sparklog.Program.from_text(text)
        result = sparklog.Engine(spark=spark, partitions=3).run(program)
        assert rows(result["r"]) == reference.evaluate(program.ast)["r"]
        assert seen and set(seen) == {"3"}
        assert spark.conf.get(key) == "7"
    finally:
        rounds._evaluate_stratum = real
        spark.conf.set(key, before)
