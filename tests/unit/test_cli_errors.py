"""Command-line errors found before Spark starts: one line with its place, exit 1 (2 for
usage), no traceback, and no Spark session (starting one would fail these tests)."""

from __future__ import annotations

import json
import re
import os
import signal
import socket
import threading
import time
import warnings
from pathlib import Path

import pytest

import sparklog

from sparklog import cli
from sparklog.cli import main
from sparklog.errors import OutputError, SparklogError, UsageError
from sparklog.spark import session

TC = """.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
.output tc
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), edge(z, y).
"""


@pytest.fixture(autouse=True)
def no_spark(monkeypatch):
    """Every error here must be found before Spark starts."""
    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(session, "_launch_gateway", refuse)


@pytest.fixture
def tc_dir(tmp_path: Path) -> Path:
    (tmp_path / "tc.dl").write_text(TC)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "edge.facts").write_text("1\t2\n")
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def first_line(err: str) -> str:
    return err.splitlines()[0]


# ------------------------------------------------------------------ the program file


@pytest.mark.parametrize("data, place", [
    (b'.decl e(x:symbol)\ne("caf\xe9").\n', "2:7"),  # Latin-1
    (b".decl e(x:number)\n\x00\xff\xfe binary", "2:2"),
])
def test_a_program_that_is_not_utf8_is_reported_at_its_first_bad_byte(tmp_path, capsys, data,
                                                                       place):
    (tmp_path / "p.dl").write_bytes(data)
    code, err = run(capsys, "check", str(tmp_path / "p.dl"))
    assert code == 1
    assert first_line(err).startswith(f"{tmp_path / 'p.dl'}:{place}: error: byte 0x")
    assert "not UTF-8" in err


def test_preprocessor_flags_and_an_include_not_found(tmp_path, capsys):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "e.dl").write_text(".decl e(x:number)\ne(1).\n")
    (tmp_path / "p.dl").write_text('#include "e.dl"\n.decl c(x:number)\nc(x) :- e(x), x < N.\n')
    code, err = run(capsys, "check", str(tmp_path / "p.dl"))
    assert code == 1
    assert first_line(err) == f"{tmp_path / 'p.dl'}:1:1: error: cannot find the included file e.dl"
    code = main(["check", str(tmp_path / "p.dl"), "-I", str(tmp_path / "lib"), "-M", "N=2"])
    assert code == 0 and capsys.readouterr().out.endswith("ok (2 strata, 1 kernels)\n")


def test_a_directory_as_program(tmp_path, capsys):
    code, err = run(capsys, "check", str(tmp_path))
    assert code == 1 and first_line(err).startswith(f"error: cannot read program {tmp_path}")



def test_check_reports_io_directives_sparklog_cannot_honour(tmp_path, capsys):
    """``check`` reads and writes nothing, but an input or output no run could read or
    write is a problem of the program: each at its directive."""
    (tmp_path / "p.dl").write_text('.decl f(a: symbol)\n.input f(IO=json)\n'
                                   '.output f(IO=sqlite)\n'
                                   '.output f(rfc4180=true, delimiter="\\"")\n')
    code, err = run(capsys, "check", str(tmp_path / "p.dl"))
    assert code != 0
    assert "p.dl:2:8: error: unsupported IO=json" in err
    assert "p.dl:3:9: error: unsupported IO=sqlite" in err
    assert "p.dl:4:9: error: with rfc4180=true the delimiter cannot contain a double quote" in err

# ------------------------------------------------------------------ inputs


def test_missing_input_is_reported_before_spark_starts(tc_dir, capsys):
    (tc_dir / "facts" / "edge.facts").unlink()
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"))
    assert code == 1
    assert first_line(err) == (f"{tc_dir / 'tc.dl'}:2:8: error: input file "
                               f"{tc_dir / 'facts' / 'edge.facts'} for relation edge not found")


def test_facts_path_that_is_a_directory(tc_dir, capsys):
    (tc_dir / "facts" / "edge.facts").unlink()
    (tc_dir / "facts" / "edge.facts").mkdir()
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"))
    assert code == 1
    assert first_line(err).endswith("for relation edge is a directory")
    assert first_line(err).startswith(f"{tc_dir / 'tc.dl'}:2:8: error: input file")


def test_facts_dir_that_is_a_file(tc_dir, capsys):
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F",
                    str(tc_dir / "facts" / "edge.facts"))
    assert (code, first_line(err)) == (1, f"error: -F {tc_dir / 'facts' / 'edge.facts'}: "
                                          "not a directory")


# ------------------------------------------------------------------ outputs


def test_output_dir_that_is_a_file(tc_dir, capsys):
    (tc_dir / "afile").write_text("")
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"),
                    "-D", str(tc_dir / "afile"))
    assert (code, first_line(err)) == (1, f"error: -D {tc_dir / 'afile'}: not a directory")


def test_output_filename_whose_parent_cannot_be_created(tc_dir, capsys):
    (tc_dir / "afile").write_text("")
    target = tc_dir / "afile" / "sub" / "tc.csv"
    (tc_dir / "o.dl").write_text(TC.replace(".output tc", f'.output tc(filename="{target}")'))
    code, err = run(capsys, "run", str(tc_dir / "o.dl"), "-F", str(tc_dir / "facts"),
                    "-D", str(tc_dir / "out"))
    assert code == 1
    assert first_line(err) == (f"{tc_dir / 'o.dl'}:4:9: error: cannot write {target}: "
                               f"{tc_dir / 'afile'} is not a directory")


def test_output_file_that_is_a_directory(tc_dir, capsys):
    (tc_dir / "out" / "tc.csv").mkdir(parents=True)
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"),
                    "-D", str(tc_dir / "out"))
    assert code == 1 and first_line(err).endswith("tc.csv: it is a directory")


def test_stats_naming_a_directory_fails_before_running_and_leaves_nothing(tc_dir, capsys):
    (tc_dir / "stats").mkdir()
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"),
                    "-D", str(tc_dir / "out"), "--stats", str(tc_dir / "stats"))
    assert code == 1
    assert first_line(err) == f"error: --stats {tc_dir / 'stats'}: cannot write: it is a directory"
    assert sorted(p.name for p in tc_dir.iterdir()) == ["facts", "stats", "tc.dl"]


def test_a_failed_stats_write_leaves_no_temporary(tmp_path):
    (tmp_path / "stats.json").mkdir()  # found only at write time (e.g. made during the run)
    with pytest.raises(OutputError, match="cannot write"):
        cli._write_json(tmp_path / "stats.json", [{"a": 1}])
    assert [p.name for p in tmp_path.iterdir()] == ["stats.json"]
    cli._write_json(tmp_path / "s2.json", [{"a": 1}])
    assert json.loads((tmp_path / "s2.json").read_text()) == [{"a": 1}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s2.json", "stats.json"]


# ------------------------------------------------------------------ gen


def test_gen_into_a_file(tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    code, err = run(capsys, "gen", "chain", "3", "-o", str(tmp_path / "afile"))
    assert (code, first_line(err)) == (1, f"error: gen: -o {tmp_path / 'afile'}: not a directory")


# ------------------------------------------------------------------ Spark options


@pytest.mark.parametrize("master", ["bogus", "local[0]", "local[x]", "spark://host",
                                    "spark://host:port", "spark://", "mesos://h:5050", ""])
def test_malformed_master_is_a_usage_error(tc_dir, capsys, master):
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"),
                    "--master", master)
    assert code == 2 and first_line(err).startswith(f"error: invalid Spark master URL {master!r}")


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[4,2]",
                                    "local-cluster[2,1,1024]", "yarn", "k8s://https://h:6443",
                                    "spark://a:7077", "spark://a:7077,b:7078", "spark://[::1]:7077"])
def test_well_formed_masters(master):
    session.check_master(master)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_master_fails_fast_naming_the_url(tc_dir, capsys):
    master = f"spark://127.0.0.1:{_closed_port()},127.0.0.1:{_closed_port()}"
    code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"),
                    "--master", master)
    assert code == 1
    assert first_line(err).startswith(f"error: cannot reach the Spark master {master} (")
    assert "Connection refused" in err


def test_reachable_master_passes():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        session.check_reachable(f"spark://127.0.0.1:{_closed_port()},"
                                f"127.0.0.1:{server.getsockname()[1]}")


def test_conf_like_spark_submit(capsys):
    assert cli._conf(["spark.a=1", "spark.b = x=y", "foo=2", " spark.c=", "spark.d="]) == \
        {"spark.a": "1", "spark.b": " x=y", "spark.c": "", "spark.d": ""}
    assert capsys.readouterr().err == "warning: ignoring non-Spark config property: foo\n"
    for bad in ["novalue", "=x", " =x", ""]:
        with pytest.raises(UsageError, match="--conf expects KEY=VALUE"):
            cli._conf([bad])


def test_conf_that_sparklog_must_override_is_not_ignored_silently(capsys):
    assert cli._conf(["spark.sql.adaptive.enabled=true", "spark.sql.ansi.enabled=false"]) == \
        {"spark.sql.ansi.enabled": "false"}
    assert capsys.readouterr().err == ("warning: ignoring --conf spark.sql.adaptive.enabled=true:"
                                       " sparklog needs spark.sql.adaptive.enabled=false\n")


def test_conf_errors_exit_2(tc_dir, capsys):
    for bad in ["novalue", "=x"]:
        code, err = run(capsys, "run", str(tc_dir / "tc.dl"), "--conf", bad)
        assert (code, first_line(err)) == (2, f"error: --conf expects KEY=VALUE, got {bad!r}")


def test_plan_reuse_modes(tc_dir, capsys):
    parse = cli._parser().parse_args
    program = str(tc_dir / "tc.dl")
    assert parse(["run", program]).reuse_plans == "executed"
    assert parse(["run", program, "--plan-reuse", "optimized"]).reuse_plans == "optimized"
    assert parse(["run", program, "--no-plan-reuse"]).reuse_plans == "off"
    with pytest.raises(SystemExit) as exited:
        parse(["run", program, "--plan-reuse", "sometimes"])
    assert exited.value.code == 2 and "invalid choice: 'sometimes'" in capsys.readouterr().err
    with pytest.raises(UsageError, match="reuse_plans must be one of executed, optimized, off"):
        sparklog.Engine(reuse_plans="sometimes")


# ------------------------------------------------------------------ noise


def test_jvm_stderr_passes_everything_but_the_incubator_warning(capfd):
    read, write = os.pipe()
    os.write(write, b"WARNING: Using incubator modules: jdk.incubator.vector\n"
                    b"Error: a real problem\n"
                    b'Exception in thread "dispatcher-event-loop-0" java.lang.StackOverflowError\n'
                    b"no newline at the end")
    os.close(write)
    before = len(session.JVM_THREAD_FAILURES)
    session._forward_stderr(read)
    assert capfd.readouterr().err == (
        'Error: a real problem\nException in thread "dispatcher-event-loop-0" '
        "java.lang.StackOverflowError\nno newline at the end")
    assert session.JVM_THREAD_FAILURES[before:] == [
        'Exception in thread "dispatcher-event-loop-0" java.lang.StackOverflowError']


def test_pyspark_pandas_3_warning_is_ignored_and_others_are_not():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        session._ignore_pyspark_warnings()
        warnings.warn("PySpark does not yet fully support pandas >= 3.0.0. Some features may "
                      "not work correctly.", FutureWarning)
        warnings.warn("something else", FutureWarning)
    assert [str(w.message) for w in seen] == ["something else"]


class _FakeContext:
    def __init__(self) -> None:
        self.cancelled = threading.Event()

    def cancelAllJobs(self) -> None:
        self.cancelled.set()


class _FakeSpark:
    def __init__(self) -> None:
        self.sparkContext = _FakeContext()


def test_ctrl_c_cancels_jobs_and_is_reported_once(capsys):
    """The handler cancels Spark's jobs from another thread; then whatever the main thread
    sees (here a py4j error, as when the interrupt cut a JVM call short) ends as 130."""
    from py4j.protocol import Py4JError

    spark = _FakeSpark()
    before = signal.getsignal(signal.SIGINT)

    def work(args) -> int:
        with cli._interrupts(spark):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):  # the handler runs between bytecodes
                    pass
            except KeyboardInterrupt:
                raise Py4JError("Gateway must be connected to send cancel cmd.") from None
        raise AssertionError("no KeyboardInterrupt")

    class Args:
        func = staticmethod(work)

    cli._quiet_internals()
    assert cli._dispatch(Args()) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert spark.sparkContext.cancelled.wait(5)
    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_during_a_finalizer_is_delivered_again_not_printed(capsys):
    """A Ctrl-C whose handler runs inside a weakref callback (py4j frees JVM objects
    that way) cannot raise there: Python prints "Exception ignored" and drops it. It is
    delivered again in the main thread's own code, and nothing is printed."""
    import weakref

    class Referent:
        pass

    spark = _FakeSpark()
    seen = []

    def finalizer(_ref) -> None:
        seen.append("finalizer")
        signal.raise_signal(signal.SIGINT)  # the handler runs before this call returns
        for _ in range(1000):
            pass
        seen.append("finalizer finished")  # not reached when the interrupt raised here

    cli._quiet_internals()  # a fresh run: not interrupted yet
    with pytest.raises(KeyboardInterrupt):
        with cli._interrupts(spark):
            obj = Referent()
            ref = weakref.ref(obj, finalizer)
            del obj  # runs the callback now, in this thread
            time.sleep(10)  # the interrupt arrives again, and ends this sleep
    assert seen == ["finalizer"], seen
    assert ref() is None
    assert "Exception ignored" not in capsys.readouterr().err
    assert spark.sparkContext.cancelled.wait(5)


def test_negative_stall_timeout_is_a_usage_error(tc_dir, capsys):
    assert main(["run", str(tc_dir / "tc.dl"), "--stall-timeout", "-1"]) == 2
    assert "--stall-timeout must be at least 0" in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    (dict(reuse_plans="x"), "reuse_plans must be one of executed, optimized, off, not 'x'"),
    (dict(checkpoint="reliable"), "checkpoint='reliable' needs checkpoint_dir"),
    (dict(partitions=0), "partitions must be at least 1, not 0"),
    (dict(max_iterations=0), "max_iterations must be at least 1, not 0"),
    (dict(stall_seconds=0), "stall_seconds must be None or more than 0"),
    (dict(broadcast_rows=-1), "broadcast_rows must be at least 0, not -1"),
    (dict(combine="x"), "combine must be one of auto, on, off, not 'x'"),
    (dict(stored="rows"),
     "stored must be one of columnar, compressed, deserialized, serialized, not 'rows'"),
    (dict(bogus=1), "unknown Engine option 'bogus'"),
])
def test_engine_options_are_validated_before_spark_starts(options, message):
    import sparklog

    with pytest.raises(UsageError, match=re.escape(message)):
        sparklog.Engine(**options)  # no JVM: the options fail first


def test_options_are_frozen_and_accept_booleans_for_plan_reuse():
    import dataclasses

    from sparklog.options import DEFAULTS, Options

    assert Options(reuse_plans=False).reuse_plans == "off"
    assert Options(reuse_plans=True).reuse_plans == "executed" == DEFAULTS.reuse_plans
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULTS.partitions = 3  # type: ignore[misc]


class _Conf:
    def __init__(self, values):
        self.values = values

    def get(self, key, default=None):
        return self.values.get(key, default)


class _Session:
    def __init__(self, values):
        self.conf = _Conf(values)


def test_a_session_sparklog_starts_keeps_room_for_every_compiled_class():
    from sparklog.defaults import CODEGEN_CACHE_ENTRIES

    key = "spark.sql.codegen.cache.maxEntries"
    assert session.default_conf("local[2]", 2)[key] == str(CODEGEN_CACHE_ENTRIES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        session.advise(_Session({key: str(CODEGEN_CACHE_ENTRIES)}))


@pytest.mark.parametrize("values", [{}, {"spark.sql.codegen.cache.maxEntries": "100"}])
def test_a_session_of_the_users_with_spark_s_small_code_cache_is_told_how_to_grow_it(values):
    with pytest.warns(session.SessionAdvice, match=r'\.config\("spark\.sql\.codegen\.cache'
                      r'\.maxEntries", "4096"\)'):
        session.advise(_Session(values))
