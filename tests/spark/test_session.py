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
