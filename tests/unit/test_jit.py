"""The compiler options session.start gives a local driver JVM, without a JVM."""

from __future__ import annotations

from sparklog.spark.session import LATE_C2, jit_options


def test_a_local_driver_calls_c2_late_unless_the_caller_chose_its_compilers():
    assert jit_options("local[2]", "") == LATE_C2
    assert jit_options("local[*]", "-Dfoo=1") == LATE_C2
    assert jit_options("spark://host:7077", "") == ""  # executors are JVMs of their own
    for chosen in ("-XX:TieredStopAtLevel=1", "-XX:-TieredCompilation",
                   "-XX:Tier4InvocationThreshold=9000", "-XX:CompilationMode=quick-only"):
        assert jit_options("local[2]", chosen) == "", chosen


def test_the_thresholds_are_ten_times_the_jvms_own():
    # HotSpot's tier-4 defaults (JDK 17): invocation 5000, minimum invocation 600,
    # compile 15000, back-edge 40000
    flags = dict(f.removeprefix("-XX:").split("=") for f in LATE_C2.split())
    assert flags == {"Tier4InvocationThreshold": "50000", "Tier4MinInvocationThreshold": "6000",
                     "Tier4CompileThreshold": "150000", "Tier4BackEdgeThreshold": "400000"}
