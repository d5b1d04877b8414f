"""No sparklog job needs Python on an executor: a run succeeds with an executor Python
that does not exist (Spark would fail to start a Python worker)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.spark.helpers import TC

PROGRAM = TC + """
.decl name(x:number, s:symbol)
name(1, "one"). name(2, "two"). name(3, cat("th", "ree")).
.decl named(s:symbol, t:symbol)
.output named
named(s, t) :- tc(x, y), name(x, s), name(y, t).
.decl nothing(x:number)
.output nothing
.decl f(x:float)
f(1.5).
.output f
.decl z()
z().
.output z
"""


def test_a_run_starts_no_python_worker(tmp_path):
    (tmp_path / "p.dl").write_text(PROGRAM)
    (tmp_path / "edge.facts").write_text("1\t2\n2\t3\n")
    env = dict(os.environ, PYSPARK_PYTHON=str(tmp_path / "no-such-python"))
    done = subprocess.run([sys.executable, "-m", "sparklog", "run", str(tmp_path / "p.dl"),
                           "-F", str(tmp_path), "-D", str(tmp_path / "out"), "-q",
                           "--master", "local[2]"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    assert sorted((out / "tc.csv").read_text().split("\n")) == ["", "1\t2", "1\t3", "2\t3"]
    assert set((out / "named.csv").read_text().split("\n")) == {
        "", "one\ttwo", "one\tthree", "two\tthree"}
    assert (out / "nothing.csv").read_text() == ""
    assert (out / "f.csv").read_text() == "1.5\n"
    assert (out / "z.csv").read_text() == "()\n"
