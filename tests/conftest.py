"""Shared fixtures: one Spark session for every Spark test, with two partitions so that
partitioning bugs show."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# No test writes or maps the user's class archive (spark/archive.py); the tests of the
# archive choose their own folder.
os.environ["SPARKLOG_CACHE_DIR"] = "off"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import options  # noqa: E402 - needs the repository on sys.path


def _shared() -> Path:
    """The workplace's shared folder: $SPARKLOG_SHARED, else the nearest ``shared/`` above
    the repository (a clone may sit deeper than the main checkout)."""
    if os.environ.get("SPARKLOG_SHARED"):
        return Path(os.environ["SPARKLOG_SHARED"])
    for parent in ROOT.parents:
        if (parent / "shared" / "data").is_dir():
            return parent / "shared"
    return ROOT.parent / "shared"


SHARED = _shared()


def _forced_options() -> dict[str, object]:
    """Engine options every test's engine takes unless the test sets them itself, from
    $SPARKLOG_TEST_OPTIONS ("balance_ratio=1,balance_rows=0"): CI runs the tests that
    check answers a second time with the load balancer refining at every round."""
    return options.parse(os.environ.get("SPARKLOG_TEST_OPTIONS", ""))


if _forced_options():
    import sparklog.engine

    _init = sparklog.engine.Engine.__init__

    def _init_forced(self, spark=None, **options):
        _init(self, spark, **{**_forced_options(), **options})

    sparklog.engine.Engine.__init__ = _init_forced


@pytest.fixture(scope="session")
def spark():
    from sparklog.spark import session

    spark = session.start("local[2]", partitions=2, conf={"spark.driver.memory": "2g"})
    yield spark
    spark.stop()


@pytest.fixture(scope="module", autouse=True)
def _free_finished_runs():
    """After each module of Spark tests, let the JVM free the blocks of the runs its tests
    finished: Spark's cleaner unpersists an RDD only once the JVM has collected it, and
    left to itself collects every 30 minutes (spark.cleaner.periodicGC.interval), so
    blocks of finished runs would pile up in the shared session's 2g."""
    yield
    if "pyspark" in sys.modules:  # a Spark test has run: a session may hold finished runs
        import gc

        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            gc.collect()
            active.sparkContext._jvm.System.gc()


@pytest.fixture(scope="session")
def engine(spark):
    import sparklog

    return sparklog.Engine(spark=spark, partitions=2)


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the golden files (tests/golden/) from what the code prints")


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


def pytest_collection_modifyitems(items):
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) or "engine" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
