"""The Spark session sparklog starts when the caller brings none, and the settings it needs."""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import subprocess
import threading
import warnings
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from sparklog.defaults import CODEGEN_CACHE_ENTRIES
from sparklog.errors import SparklogError, UsageError
from sparklog.spark import archive

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
    # A runtime Bloom filter on a join with a small side costs a job of its own per round
    # (a subquery that aggregates the small side before the round's job can start).
    "spark.sql.optimizer.runtime.bloomFilter.enabled": "false",
    # Inferring filters from constraints walks the constraints of every operator of a
    # round's plan, every round, for filters no plan here gains from (NOT NULL on columns
    # that hold no NULLs). Reused plans (rounds._plan) also rely on it being off: no
    # optimized plan then depends on what a version holds.
    "spark.sql.constraintPropagation.enabled": "false",
    # The analyzer resolves nested lambda functions one level per pass, and a term nested
    # as deep as the parser allows (syntax/parser.py MAX_NESTING) binds arguments to
    # nested lambdas (spark/expressions.py _once): its default 100 passes are too few.
    "spark.sql.analyzer.maxIterations": "1000",
    # Observed metrics (storage.Metrics: a version's row and partition counts) summed over
    # every task that computed the observed rows. Spark 4 otherwise reports the tasks of
    # one stage only, the one with the highest RDD id; a lazily checkpointed version is
    # computed by the stages of the job that reads it, several at a time, and its counts
    # came out short by the partitions the other stages computed (tc's first version
    # booked 35 of 110 rows, one run in ten): a delta counted short, or empty, would end
    # a recursion early.
    "spark.sql.legacy.observeMetricsAggregateAllAttempts": "true",
}
# Settings a run switches round by round (storage.Database.use_codegen); saved and restored.
WHOLE_STAGE = "spark.sql.codegen.wholeStage"
# Whether a task generates Java for each projection and ordering it makes (FALLBACK, the
# default) or evaluates them interpreted (NO_CODEGEN). An internal setting of Spark's
# (SQLConf.CODEGEN_FACTORY_MODE), read where each object is made: on the driver from the
# session, in a task from its job's local properties; tests/spark/test_driver.py checks
# that it reaches a round's tasks.
FACTORY_MODE = "spark.sql.codegen.factoryMode"
SWITCHED_CONF = (WHOLE_STAGE, FACTORY_MODE)
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def java_problem() -> str | None:
    """None if a Java 17+ runtime is reachable, else what to do about it."""
    return _java()[1]


def _java() -> tuple[str, str | None]:
    """(what ``java -version`` says, None) if a Java 17+ runtime is reachable, else
    ("", what to do about it)."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") \
        else shutil.which("java")
    fix = ("sparklog runs Spark, which needs Java 17 or newer. Install it (Debian/Ubuntu: "
           "'sudo apt-get install openjdk-17-jre-headless'; macOS: 'brew install openjdk@17') "
           "or set JAVA_HOME to a Java 17 installation.")
    if not java or not os.path.exists(java):
        return "", f"Java not found. {fix}"
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except OSError as exc:
        return "", f"cannot run {java}: {exc}. {fix}"
    said = out.stderr or out.stdout
    first = said.splitlines()[0] if said else ""
    version = first.split('"')[1] if '"' in first else ""
    major = version.split(".")[0] if not version.startswith("1.") else "8"
    if major.isdigit() and int(major) < 17:
        return "", f"Java {version} found at {java}, but Spark 4 needs 17 or newer. {fix}"
    return f"{os.path.realpath(java)}\n{said}", None


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
        # Every checkpoint is a SQL execution, whose start event carries the plan's
        # explain text: "formatted" (Spark's default) about doubles a checkpoint's cost.
        "spark.sql.ui.explainMode": "simple",
        # Java serialization reset after every object: a rerun stores its rows serialized,
        # and the row objects its plan reuses must each be written out (jvm.stored)
        "spark.serializer.objectStreamReset": "1",
        # Compiled code, by its Java source: a run's rounds compile hundreds of distinct
        # classes and come back to each round after round, so Spark's 100 entries evict
        # each before it is used again (README, "Room for every compiled class"). A static
        # setting, so only a session sparklog starts gets it; advise() tells the others.
        "spark.sql.codegen.cache.maxEntries": str(CODEGEN_CACHE_ENTRIES),
        **REQUIRED_CONF,
    }


# In local mode the driver's JVM runs every task, and a fresh one compiles Spark's hot code
# while the run goes on. C2, the optimizing compiler, then takes seconds of CPU from the
# tasks on a machine of few cores, much of it for code that does not run long enough to
# repay it; C1 alone starts short runs sooner but makes long recursions slower. So C2 is
# called in only for the hottest code, at ten times the JVM's tier-4 thresholds: C1 still
# compiles early, and a long recursion still gets C2's code where it spends its time
# (benchmarks/results/c2-late.md). A caller's own choice of compilers is left alone.
TIER4_DEFAULTS = {"InvocationThreshold": 5000, "MinInvocationThreshold": 600,
                  "CompileThreshold": 15000, "BackEdgeThreshold": 40000}  # HotSpot 17's


def tier4_options(factor: int) -> str:
    """-XX options setting each of the JVM's tier-4 thresholds to ``factor`` times its own."""
    return " ".join(f"-XX:Tier4{name}={value * factor}" for name, value in TIER4_DEFAULTS.items())


LATE_C2 = tier4_options(10)
_JIT_CALLERS = ("Tier4", "TieredStopAtLevel", "TieredCompilation", "CompilationMode")


def jit_options(master: str, callers: str) -> str:
    """The driver JVM's compiler options sparklog adds: C2 late in local mode, unless the
    caller's spark.driver.extraJavaOptions already choose the compilers."""
    if not master.startswith("local") or any(k in callers for k in _JIT_CALLERS):
        return ""
    return LATE_C2


def _memory_gib() -> int:
    try:
        with open("/proc/meminfo") as f:
            kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
        return kib // (1024 * 1024)
    except (OSError, StopIteration, ValueError):
        return 4


def start(master: str = "local[*]", partitions: int | None = None,
          conf: dict[str, str] | None = None, write_archive: bool = False):
    """Start (or join) a SparkSession with sparklog's defaults and quiet logs.

    Problems found before the JVM starts (no Java, a malformed or unreachable master)
    are reported at once, not after Spark's own retries. A JVM started here maps the
    class archive (archive.py) if there is one; with ``write_archive`` and none yet, it
    writes one when it exits, which the caller keeps with :func:`end`.
    """
    settings = {**default_conf(master, partitions), **(conf or {})}
    check_master(settings["spark.master"])
    java, problem = _java()
    if problem:
        raise UsageError(problem)
    check_reachable(settings["spark.master"])
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    _ignore_pyspark_warnings()
    log4j = files("sparklog.spark").joinpath("conf/log4j2.properties")
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    callers = settings.get("spark.driver.extraJavaOptions", "")
    chosen = None
    if SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        chosen = archive.choose(java, callers, write_archive)  # a JVM starts here
    if chosen is not None:
        java_opts += " " + chosen.java_options()
    java_opts = f"{java_opts} {jit_options(settings['spark.master'], callers)}".strip()
    settings["spark.driver.extraJavaOptions"] = (java_opts + " " + callers).strip()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    gateway = _launch_gateway(settings)
    if gateway is not None and chosen is not None and chosen.writing is not None:
        _WRITING.append((gateway, chosen))
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = _get_or_create(builder, settings["spark.master"], gateway)
    quiet(spark)
    return spark


# A JVM started here that writes the class archive at its exit, with that archive.
_WRITING: list[tuple[Any, archive.Archive]] = []
ARCHIVE_SECONDS = 120.0  # how long end() waits for the JVM to write it


def writes_archive() -> bool:
    """Whether the JVM started here writes the class archive when it ends."""
    return bool(_WRITING)


def end(spark) -> None:
    """Stop Spark; if its JVM writes the class archive, let it exit, wait, keep it.

    The JVM pyspark starts exits when its standard input closes; it writes the archive on
    the way out (a second or two, once per machine). A JVM that does not exit in time, or
    not cleanly, leaves no archive.
    """
    if not _WRITING:
        return
    gateway, chosen = _WRITING.pop()
    spark.stop()
    proc = gateway.proc
    try:
        proc.stdin.close()
        code = proc.wait(timeout=ARCHIVE_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        code = None
    archive.keep(chosen, code)


# ---------------------------------------------------------------------------------------
# Master URLs: the forms SparkContext.createTaskScheduler accepts, checked before Spark starts

_MASTER_FORMS = (
    re.compile(r"local"),
    re.compile(r"local\[\s*([1-9][0-9]*|\*)\s*(,\s*[0-9]+\s*)?\]"),
    re.compile(r"local-cluster\[\s*[1-9][0-9]*\s*,\s*[1-9][0-9]*\s*,\s*[1-9][0-9]*\s*\]"),
    re.compile(r"yarn"),
    re.compile(r"k8s://\S+"),
)
MASTER_HELP = ("local, local[N], local[*], local[N,F], local-cluster[N,C,M], "
               "spark://HOST:PORT[,HOST:PORT...], yarn or k8s://URL")
PROBE_SECONDS = 5.0  # how long a spark:// master may take to accept a connection
# How long a spark:// master may take to register the application: one of the three 20 s
# attempts Spark's standalone client makes before it stops the context.
REGISTRATION_SECONDS = 20.0


def check_master(master: str) -> None:
    """Raise a UsageError unless ``master`` has a form Spark accepts.

    >>> check_master("local[2]"); check_master("spark://a:7077,b:7077")
    """
    if any(form.fullmatch(master) for form in _MASTER_FORMS):
        return
    if master.startswith("spark://") and _standalone_addresses(master):
        return
    raise UsageError(f"invalid Spark master URL {master!r} (expected {MASTER_HELP})")


def _standalone_addresses(master: str) -> list[tuple[str, int]]:
    """(host, port) of each master in ``spark://h1:p1,h2:p2``; [] if one is malformed."""
    out = []
    for part in master.removeprefix("spark://").split(","):
        try:
            url = urlsplit(f"spark://{part}")
            host, port = url.hostname, url.port
        except ValueError:
            return []
        if not host or port is None or url.path or url.query or url.username:
            return []
        out.append((host, port))
    return out


def check_reachable(master: str, seconds: float = PROBE_SECONDS) -> None:
    """Fail fast if no master of a ``spark://`` URL accepts a TCP connection.

    Spark's standalone client retries registration three times, 20 s apart (fixed in
    StandaloneAppClient, no setting bounds it), and then reports only that the context
    was stopped; a plain connection attempt tells the user in seconds, naming the URL.
    """
    if not master.startswith("spark://"):
        return
    reasons = []
    for host, port in _standalone_addresses(master):
        try:
            with socket.create_connection((host, port), timeout=seconds):
                return
        except socket.timeout:
            reasons.append(f"{host}:{port}: no answer within {seconds:g} s")
        except OSError as exc:
            reasons.append(f"{host}:{port}: {exc.strerror or exc}")
    raise SparklogError(f"cannot reach the Spark master {master} ({'; '.join(reasons)})")


def _get_or_create(builder, master: str, gateway):
    """builder.getOrCreate(), but for a spark:// master that accepts connections and does
    not register the application (not a Spark master, a firewall that answers for it),
    give up after REGISTRATION_SECONDS: stop the JVM sparklog started and say so."""
    if gateway is None or not master.startswith("spark://"):
        return builder.getOrCreate()
    from pyspark import SparkContext

    gave_up = threading.Event()

    def give_up() -> None:
        gave_up.set()
        gateway.proc.kill()

    timer = threading.Timer(REGISTRATION_SECONDS, give_up)
    timer.daemon = True
    timer.start()
    try:
        spark = builder.getOrCreate()
    except Exception:
        if not gave_up.is_set():
            raise
        spark = None
    finally:
        timer.cancel()
    if gave_up.is_set():
        SparkContext._gateway = SparkContext._jvm = None  # a later start launches anew
        raise SparklogError(f"the Spark master {master} did not register this application "
                            f"within {REGISTRATION_SECONDS:g} s (is a Spark master running "
                            "there, and reachable from here?)")
    return spark


# ---------------------------------------------------------------------------------------
# The JVM's stderr, filtered

# Spark's launcher always adds --add-modules=jdk.incubator.vector (JavaModuleOptions), and
# the JVM then prints this line at start; no JVM option turns it off.
_INCUBATOR_WARNING = b"WARNING: Using incubator modules:"
# "Exception in thread ..." lines the JVM printed: a Spark thread died (e.g. a
# StackOverflowError in the dispatcher); the driver may check this to fail, not hang.
JVM_THREAD_FAILURES: list[str] = []


def _launch_gateway(settings: dict[str, str]):
    """Start Spark's JVM as pyspark does, its stderr passed on less the incubator line.

    Everything else the JVM writes reaches stderr unchanged (errors at start included).
    Returns the gateway, or None if pyspark already has a JVM (a running session, or
    PYSPARK_GATEWAY_PORT).
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return None
    conf = SparkConf(loadDefaults=False)
    for key, value in settings.items():
        conf.set(key, value)  # spark-submit needs them (driver memory, Java options)
    read, write = os.pipe()
    threading.Thread(target=_forward_stderr, args=(read,), name="sparklog-jvm-stderr",
                     daemon=True).start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write})
    finally:
        os.close(write)  # the JVM holds its own copy; EOF comes when it exits
    SparkContext._ensure_initialized(gateway=gateway)
    return gateway


def _forward_stderr(fd: int) -> None:
    with open(fd, "rb") as pipe:
        for line in pipe:
            if line.startswith(_INCUBATOR_WARNING):
                continue
            if line.startswith(b"Exception in thread"):
                JVM_THREAD_FAILURES.append(line.decode("utf-8", "replace").rstrip())
            view = memoryview(line)
            while view:
                view = view[os.write(2, view):]


def _ignore_pyspark_warnings() -> None:
    """pyspark.testing (imported by pyspark's own type conversion) warns on pandas 3."""
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                            category=FutureWarning)


def quiet(spark) -> None:
    """Spark's own logging off; sparklog reports errors itself, without Java stacks."""
    spark.sparkContext.setLogLevel("OFF")
    logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL + 1)


class SessionAdvice(UserWarning):
    """A session that sparklog did not start lacks a setting that makes runs faster."""


def advise(spark) -> None:
    """Warn when a session keeps fewer compiled classes than a run uses (a static setting,
    which only the session's builder can change)."""
    key = "spark.sql.codegen.cache.maxEntries"
    kept = spark.conf.get(key, "100")
    if kept.isdigit() and int(kept) < CODEGEN_CACHE_ENTRIES:
        warnings.warn(f"this Spark session keeps {kept} compiled classes ({key}); sparklog's "
                      f"rounds compile the same ones again and again unless it keeps "
                      f"{CODEGEN_CACHE_ENTRIES}: build the session with "
                      f".config(\"{key}\", \"{CODEGEN_CACHE_ENTRIES}\")",
                      SessionAdvice, stacklevel=3)


def apply_required(spark, partitions: int | None = None) -> dict[str, str | None]:
    """Set the settings sparklog depends on; return the previous values to restore.

    With ``partitions`` (the run's), Spark's own shuffles (an aggregate's, a join's on
    columns no relation is placed by) make as many partitions as the stored relations
    have, as in a session sparklog starts. A session built without sparklog keeps Spark's
    200 (adaptive execution, which would coalesce them, is off: REQUIRED_CONF), and every
    such Exchange runs 200 tasks, round after round, for a few thousand rows."""
    previous = {key: spark.conf.get(key, None) for key in SWITCHED_CONF}
    settings = dict(REQUIRED_CONF)
    if partitions is not None:
        settings[SHUFFLE_PARTITIONS] = str(partitions)
    for key, value in settings.items():
        previous[key] = spark.conf.get(key, None)
        spark.conf.set(key, value)
    return previous


def restore(spark, previous: dict[str, str | None]) -> None:
    for key, value in previous.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
