"""The Spark session sparklog starts when the caller brings none, and the settings it needs."""

from __future__ import annotations

import logging
import os
from importlib.resources import files
import shutil
import subprocess

from sparklog.errors import UsageError

# Settings every sparklog run needs, applied to the caller's session too.
# - AQE would coalesce shuffle partitions and undo the co-partitioning of stored relations.
# - With requireAllClusterKeysForCoPartition=false a join on (bucket, other columns) accepts
#   inputs partitioned by the bucket alone, so deduplication against full shuffles nothing.
# - unionOutputPartitioning keeps full ∪ delta partitioned like its inputs.
# - ANSI mode off: 64-bit arithmetic wraps and division by zero yields NULL (the body fails)
#   as in Soufflé, instead of aborting the query.
# - No automatic broadcast: joins stay partition-local and plans stay the same at any size.
REQUIRED_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    "spark.sql.unionOutputPartitioning": "true",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
}
# Settings a run switches round by round (driver.Database.use_codegen); saved and restored.
WHOLE_STAGE = "spark.sql.codegen.wholeStage"
SWITCHED_CONF = (WHOLE_STAGE,)


def java_problem() -> str | None:
    """None if a Java 17+ runtime is reachable, else what to do about it."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") \
        else shutil.which("java")
    fix = ("sparklog runs Spark, which needs Java 17 or newer. Install it (Debian/Ubuntu: "
           "'sudo apt-get install openjdk-17-jre-headless'; macOS: 'brew install openjdk@17') "
           "or set JAVA_HOME to a Java 17 installation.")
    if not java or not os.path.exists(java):
        return f"Java not found. {fix}"
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        return f"cannot run {java}: {exc}. {fix}"
    first = (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else ""
    version = first.split('"')[1] if '"' in first else ""
    major = version.split(".")[0] if not version.startswith("1.") else "8"
    if major.isdigit() and int(major) < 17:
        return f"Java {version} found at {java}, but Spark 4 needs 17 or newer. {fix}"
    return None


def default_conf(master: str, partitions: int | None) -> dict[str, str]:
    """Defaults for local mode, every one overridable with --conf."""
    cores = os.cpu_count() or 2
    memory_gib = _memory_gib()
    return {
        "spark.master": master,
        "spark.app.name": "sparklog",
        "spark.sql.shuffle.partitions": str(partitions or max(2, cores)),
        "spark.default.parallelism": str(partitions or max(2, cores)),
        # the driver is the executor in local mode: give it half the machine, at most 16g
        "spark.driver.memory": f"{max(1, min(16, memory_gib // 2))}g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "spark.sql.execution.arrow.pyspark.enabled": "false",
        **REQUIRED_CONF,
    }


def _memory_gib() -> int:
    try:
        with open("/proc/meminfo") as f:
            kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
        return kib // (1024 * 1024)
    except (OSError, StopIteration, ValueError):
        return 4


def start(master: str = "local[*]", partitions: int | None = None,
          conf: dict[str, str] | None = None):
    """Start (or join) a SparkSession with sparklog's defaults and quiet logs."""
    problem = java_problem()
    if problem:
        raise UsageError(problem)
    from pyspark.sql import SparkSession

    settings = {**default_conf(master, partitions), **(conf or {})}
    log4j = files("sparklog.spark").joinpath("conf/log4j2.properties")
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    settings["spark.driver.extraJavaOptions"] = (
        java_opts + " " + settings.get("spark.driver.extraJavaOptions", "")).strip()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    quiet(spark)
    return spark


def quiet(spark) -> None:
    """Spark's own logging off; sparklog reports errors itself, without Java stacks."""
    spark.sparkContext.setLogLevel("OFF")
    logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL + 1)


def apply_required(spark) -> dict[str, str | None]:
    """Set the settings sparklog depends on; return the previous values to restore."""
    previous = {key: spark.conf.get(key, None) for key in SWITCHED_CONF}
    for key, value in REQUIRED_CONF.items():
        previous[key] = spark.conf.get(key, None)
        spark.conf.set(key, value)
    return previous


def restore(spark, previous: dict[str, str | None]) -> None:
    for key, value in previous.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
