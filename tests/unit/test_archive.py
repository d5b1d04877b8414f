"""The class archive's bookkeeping (spark/archive.py), without a JVM: which archive a
start maps or writes, and what happens to what a JVM wrote at its exit."""

from __future__ import annotations

import os

import pytest

from sparklog.spark import archive

JAVA = "/usr/lib/jvm/java-17/bin/java\nopenjdk version \"17.0.15\" 2025-04-15\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(archive.ENV, str(tmp_path))
    return tmp_path


def test_the_first_start_writes_under_a_temporary_name_and_later_ones_map(cache):
    first = archive.choose(JAVA, "", write=True)
    assert first.writing == cache / f"{first.path.name}.{os.getpid()}.tmp"
    assert f"-XX:ArchiveClassesAtExit={first.writing}" in first.java_options()
    assert archive.choose(JAVA, "", write=False) is None  # nothing to map, not writing
    first.writing.write_bytes(b"archive")
    assert archive.keep(first, 0)
    assert first.path.read_bytes() == b"archive" and not first.writing.exists()
    later = archive.choose(JAVA, "", write=True)
    assert later == archive.Archive(first.path)
    assert f"-XX:SharedArchiveFile={first.path}" in later.java_options()
    assert "-Xlog:cds=off" in later.java_options()  # no warnings among a program's output


def test_another_java_has_another_archive(cache):
    one = archive.choose(JAVA, "", write=True)
    other = archive.choose(JAVA.replace("17.0.15", "21.0.2"), "", write=True)
    assert one.path != other.path


@pytest.mark.parametrize("code, content", [(1, b"half"), (None, b"half"), (0, b"")])
def test_what_a_failed_or_killed_jvm_wrote_is_dropped(cache, code, content):
    chosen = archive.choose(JAVA, "", write=True)
    chosen.writing.write_bytes(content)
    assert not archive.keep(chosen, code)
    assert not chosen.writing.exists() and not chosen.path.exists()


@pytest.mark.parametrize("options", ["-Xshare:off", "-XX:SharedArchiveFile=/x.jsa",
                                     "-Xmx1g -XX:ArchiveClassesAtExit=/y.jsa"])
def test_the_callers_own_sharing_options_win(cache, options):
    assert archive.choose(JAVA, options, write=True) is None


def test_off(monkeypatch):
    monkeypatch.setenv(archive.ENV, "off")
    assert archive.choose(JAVA, "", write=True) is None


def test_default_folder(monkeypatch, tmp_path):
    assert archive.folder_of({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "sparklog"
    assert archive.folder_of({}).parts[-2:] == (".cache", "sparklog")


def test_leftovers_of_ended_runs_are_swept(cache):
    dead = cache / "spark-x.jsa.999999999.tmp"  # no such process
    mine = cache / f"spark-x.jsa.{os.getpid()}.tmp"  # still running
    dead.write_bytes(b"x")
    mine.write_bytes(b"x")
    archive.choose(JAVA, "", write=True)
    assert not dead.exists() and mine.exists()
