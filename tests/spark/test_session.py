"""What session.start gives the JVM it launches."""

from __future__ import annotations


def test_the_local_driver_jvm_runs_with_c1_only(spark):
    """session.start gives the local driver's JVM sparklog's compiler choice (QUICK_JIT)."""
    from sparklog.spark.session import QUICK_JIT

    jvm = spark.sparkContext._jvm
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                     .getInputArguments())
    assert QUICK_JIT in arguments, arguments
