"""The command line end to end: Soufflé's file conventions, exit codes, atomic outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparklog.cli import main

TC = """.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
.output tc
.printsize tc
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), edge(z, y).
"""


@pytest.fixture
def tc_dir(tmp_path: Path) -> Path:
    (tmp_path / "tc.dl").write_text(TC)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "edge.facts").write_text("1\t2\n2\t3\n3\t4\n")
    return tmp_path


def sparklog(*args: str) -> int:
    return main(["run", *args, "--master", "local[2]", "--partitions", "2", "-q"]) \
        if args and args[0].endswith(".dl") else main(list(args))


def test_run_writes_tab_separated_sorted_output(spark, tc_dir, capsys):
    code = sparklog(str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", str(tc_dir / "out"),
                    "--stats", str(tc_dir / "stats.json"))
    assert code == 0
    assert (tc_dir / "out" / "tc.csv").read_text() == "1\t2\n1\t3\n1\t4\n2\t3\n2\t4\n3\t4\n"
    assert "tc\t6" in capsys.readouterr().out  # .printsize
    assert '"relation": "tc"' in (tc_dir / "stats.json").read_text()
    assert not list((tc_dir / "out").glob(".sparklog-*"))


def test_theorem_3_2_warns_about_the_arity(spark, tmp_path, capsys):
    program = tmp_path / "sg.dl"
    program.write_text(".decl par(x: number, y: number)\n.input par\n"
                       ".decl sg(x: number, y: number)\n.output sg\n"
                       ".pragma sg(strategy=doubling)\n"
                       "sg(x, y) :- par(x, z), par(y, z).\n"
                       "sg(x, y) :- par(x, xp), par(y, yp), sg(xp, yp).\n")
    (tmp_path / "par.facts").write_text("2\t1\n3\t1\n4\t2\n5\t3\n")
    assert sparklog(str(program), "-F", str(tmp_path), "-D", str(tmp_path / "out")) == 0
    assert "warning: sg: Theorem 3.2 doubles the arity: its t predicates have up to 4 " \
        "columns" in capsys.readouterr().err
    assert (tmp_path / "out" / "sg.csv").read_text().splitlines() == [
        "2\t2", "2\t3", "3\t2", "3\t3", "4\t4", "4\t5", "5\t4", "5\t5"]


def test_a_refuted_presum_is_noted_on_stderr_and_the_output_is_right(spark, tmp_path, capsys):
    """ir/presum.py: a $MAX improved twice refutes the presummed $SUM it feeds; the run is
    evaluated again with every contribution stored, and says so (tests/spark/test_presum.py
    has the oracle)."""
    from tests.spark.test_presum import REFUTED

    (tmp_path / "p.dl").write_text(REFUTED)
    assert sparklog(str(tmp_path / "p.dl"), "-D", str(tmp_path / "out")) == 0
    assert "1\t2\t100\n" in (tmp_path / "out" / "s.csv").read_text()
    err = capsys.readouterr().err
    assert "sparklog: presumming refuted (a: 3 key(s) improved again" in err
    assert sparklog(str(tmp_path / "p.dl"), "-D", str(tmp_path / "out2"), "--no-presum") == 0
    assert (tmp_path / "out2" / "s.csv").read_text() == (tmp_path / "out" / "s.csv").read_text()
    assert "presumming" not in capsys.readouterr().err


def test_dash_d_prints_to_stdout(spark, tc_dir, capsys):
    assert sparklog(str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", "-") == 0
    out = capsys.readouterr().out
    assert "---------------\ntc\n===============\n1\t2\n" in out


def test_subsumption_reads_its_input_and_outputs_what_survives(spark, tmp_path):
    """``best.facts`` fills the subsumed relation's rows (syntax/subsumption.py renames its
    input), the output holds each key's greatest value, and a rule reading it sees only
    those; intervals in records keep the widest; a recursive least distance is $MIN."""
    program = tmp_path / "sub.dl"
    program.write_text(".type P = [a: number, b: number]\n"
                       ".decl best(k: number, v: number)\n.input best\n.output best\n"
                       "best(k, v) <= best(k, w) :- v < w.\n"
                       ".decl twice(k: number, v: number)\ntwice(k, 2 * v) :- best(k, v).\n"
                       ".output twice\n.decl iv(n: symbol, i: P)\n"
                       'iv("x", [0, 5]). iv("x", [1, 3]). iv("x", [2, 9]). iv("y", [4, 4]).\n'
                       "iv(n, [a, b]) <= iv(n, [c, d]) :- a >= c, b <= d.\n.output iv\n"
                       # recursive: Soufflé's shortest-path idiom, run as $MIN
                       ".decl e(x: number, y: number, w: number)\ne(1, 2, 5). e(2, 3, 1).\n"
                       "e(1, 3, 9). e(3, 1, 1). e(3, 4, 2).\n.decl dist(x: number, d: number)\n"
                       "dist(1, 0).\ndist(y, d + w) :- dist(x, d), e(x, y, w).\n"
                       "dist(x, d1) <= dist(x, d2) :- d2 <= d1.\n.output dist\n")
    (tmp_path / "best.facts").write_text("1\t5\n1\t7\n2\t3\n")
    assert sparklog(str(program), "-F", str(tmp_path), "-D", str(tmp_path / "out")) == 0
    read = lambda name: sorted((tmp_path / "out" / f"{name}.csv").read_text().splitlines())
    assert read("best") == ["1\t7", "2\t3"]
    assert read("twice") == ["1\t14", "2\t6"]
    assert read("iv") == ["x\t[0, 5]", "x\t[2, 9]", "y\t[4, 4]"]
    assert read("dist") == ["1\t0", "2\t5", "3\t6", "4\t8"]


def test_stdout_keeps_the_directives_delimiter_quoting_and_header(spark, tmp_path, capsys):
    """As Soufflé's WriteCoutCSV: ``IO=stdout`` (and ``-D -``) print with the directive's
    ``delimiter``, ``rfc4180`` (symbols quoted, a comma by default) and ``headers``."""
    program = tmp_path / "out.dl"
    program.write_text('.decl s(a: symbol, n: number, f: float)\n'
                       's("hello, world", 1, 0.5).\ns("q\\"uote", 3, 2.0).\n'
                       '.output s(IO=stdout, rfc4180=true, headers=true)\n'
                       '.decl t(a: symbol, n: number)\nt("x y", 1).\n'
                       '.output t(delimiter="|")\n')
    assert sparklog(str(program), "-D", "-") == 0
    out = capsys.readouterr().out
    assert '---------------\ns\na,n,f\n===============\n"hello, world",1,0.5\n' \
        '"q""uote",3,2\n===============\n' in out
    assert "---------------\nt\n===============\nx y|1\n===============\n" in out


def test_bad_facts_fail_with_file_and_line_and_keep_earlier_output(spark, tc_dir, capsys):
    out = tc_dir / "out"
    assert sparklog(str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", str(out)) == 0
    before = (out / "tc.csv").read_text()
    (tc_dir / "facts" / "edge.facts").write_text("1\t2\n2\tx3\n3\t4\t5\n")
    capsys.readouterr()
    assert sparklog(str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", str(out)) == 1
    err = capsys.readouterr().err
    assert "edge.facts:2:3: error: 'x3' is not a number" in err
    assert "Traceback" not in err and "java" not in err.lower()
    assert (out / "tc.csv").read_text() == before
    assert not list(out.glob(".sparklog-*"))


def test_too_few_columns(spark, tc_dir, capsys):
    """Soufflé ignores columns past the arity, and fails on a line with too few."""
    (tc_dir / "facts" / "edge.facts").write_text("1\t2\n2\n")
    assert sparklog(str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", "-") == 1
    assert "edge.facts:2:1: error: 1 columns, but relation edge has 2" in capsys.readouterr().err


def test_missing_input_file(spark, tc_dir, capsys):
    (tc_dir / "facts" / "edge.facts").unlink()
    assert sparklog(str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", "-") == 1
    err = capsys.readouterr().err
    assert "tc.dl:2:8: error: input file" in err and "edge.facts for relation edge not found" in err


def test_parse_error_exit_code_and_caret(tc_dir, capsys):
    (tc_dir / "bad.dl").write_text(".decl a(x:number)\na(x) :- a(x)\n")
    assert main(["check", str(tc_dir / "bad.dl")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{tc_dir / 'bad.dl'}:2:13: error: missing '.' at the end of this rule")


def test_check_ok_and_usage_errors(tc_dir, capsys):
    assert main(["check", str(tc_dir / "tc.dl")]) == 0
    assert main(["run", str(tc_dir / "tc.dl"), "--conf", "novalue"]) == 2
    assert main(["run", str(tc_dir / "tc.dl"), "--codegen-rows", "-1"]) == 2
    assert main(["run", str(tc_dir / "tc.dl"), "--broadcast-rows", "-1"]) == 2
    assert main(["run", str(tc_dir / "tc.dl"), "--max-iterations", "0"]) == 2
    assert "--max-iterations must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["run"])
    assert exit_.value.code == 2


def test_symbols_round_trip_exactly(spark, tmp_path):
    program = tmp_path / "s.dl"
    program.write_text('.decl s(a: symbol, n: number)\n.input s\n.decl t(a: symbol, b: symbol)\n'
                       '.output t\nt(a, cat(a, "!")) :- s(a, n), n > 0.\n')
    (tmp_path / "s.facts").write_text(
        'quote"d\t1\nwith\\ttab\t2\nünïcödé ∀x\t3\nback\\\\slash\t4\nskip\t0\n')
    assert sparklog(str(program), "-F", str(tmp_path), "-D", str(tmp_path / "o")) == 0
    lines = sorted((tmp_path / "o" / "t.csv").read_text().splitlines())
    assert lines == sorted(['quote"d\tquote"d!', 'with\\ttab\twith\\ttab!',
                            'ünïcödé ∀x\tünïcödé ∀x!', 'back\\\\slash\tback\\\\slash!'])


def test_csv_and_parquet_inputs_and_outputs(spark, tmp_path):
    spark.createDataFrame([(1, 2), (2, 3)], "a long, b long").write.parquet(str(tmp_path / "e.pq"))
    (tmp_path / "f.csv").write_text("3,4\n")
    program = tmp_path / "io.dl"
    program.write_text(
        '.decl e(x: number, y: number)\n.input e(IO=parquet, filename="e.pq")\n'
        '.input e(IO=file, filename="f.csv", delimiter=",")\n'
        '.decl tc(x: number, y: number)\n.output tc(IO=parquet, filename="tc.pq")\n'
        '.output tc(IO=file, filename="tc.txt", delimiter=",")\n'
        '.output tc(IO=file, filename="tc-h.txt", delimiter=",", headers=true)\n'
        '.decl none(from: number)\n.output none(headers=true)\n'
        'tc(x, y) :- e(x, y).\ntc(x, y) :- tc(x, z), e(z, y).\nnone(x) :- e(x, x).\n')
    assert sparklog(str(program), "-F", str(tmp_path), "-D", str(tmp_path / "o")) == 0
    assert (tmp_path / "o" / "tc.txt").read_text().splitlines() == ["1,2", "1,3", "1,4", "2,3",
                                                                      "2,4", "3,4"]
    # Soufflé's headers=true: the attribute names first
    assert (tmp_path / "o" / "tc-h.txt").read_text().splitlines() == [
        "x,y", "1,2", "1,3", "1,4", "2,3", "2,4", "3,4"]
    assert (tmp_path / "o" / "none.csv").read_text() == "from\n"
    assert spark.read.parquet(str(tmp_path / "o" / "tc.pq")).count() == 6


def test_rfc4180_quoted_fields_in_and_out_and_gzipped_output(spark, tmp_path):
    """Soufflé's ``rfc4180=true``: a comma by default, quoted fields that hold the
    delimiter, line breaks, ``""`` for a quote and nothing at all; such an output quotes
    every symbol (numbers as they are). ``compress=true`` gzips the file. Read as plain
    lines, the first file gave symbols with their quotes in (a silent wrong answer)."""
    import gzip

    (tmp_path / "a.facts").write_text('plain,1\n"a,b",2\n"say ""hi""",3\n"two\nlines",4\n'
                                      '"",5\n')
    (tmp_path / "h.csv").write_text('name;n\n"x;y";7\n')
    program = tmp_path / "q.dl"
    program.write_text(
        '.decl a(s: symbol, n: number)\n.input a(rfc4180=true)\n'
        '.input a(IO=file, filename="h.csv", rfc4180=true, delimiter=";", headers=true)\n'
        '.decl b(s: symbol, n: number)\n.output b\n'
        '.output b(IO=file, filename="q.csv", rfc4180=true)\n'
        '.output b(IO=file, filename="b.csv.gz", compress=true)\n'
        'b(s, n + 1) :- a(s, n).\n')
    assert sparklog(str(program), "-F", str(tmp_path), "-D", str(tmp_path / "o")) == 0
    out = tmp_path / "o"
    assert (out / "q.csv").read_text() == ('"",6\n"a,b",3\n"plain",2\n"say ""hi""",4\n'
                                           '"two\nlines",5\n"x;y",8\n')
    plain = '\t6\na,b\t3\nplain\t2\nsay "hi"\t4\ntwo\nlines\t5\nx;y\t8\n'
    assert (out / "b.csv").read_text() == plain
    with gzip.open(out / "b.csv.gz", "rt") as f:
        assert f.read() == plain


def test_an_output_sparklog_cannot_write_is_an_error_at_its_directive(tc_dir, capsys):
    """Not a text file under the name of a database (it was written so)."""
    (tc_dir / "s.dl").write_text('.decl s(a: symbol)\n.output s(IO=sqlite)\ns("x").\n')
    assert sparklog(str(tc_dir / "s.dl"), "-D", str(tc_dir / "o")) != 0
    err = capsys.readouterr().err
    assert "s.dl:2:" in err and "unsupported IO=sqlite" in err
    assert not (tc_dir / "o").exists() or not any((tc_dir / "o").iterdir())


def test_gen_writes_facts(tmp_path, capsys):
    assert main(["gen", "tree", "4", "up", "-o", str(tmp_path)]) == 0
    assert len((tmp_path / "edge.facts").read_text().splitlines()) == 14


def test_the_readme_command_in_a_fresh_process_prints_only_its_result(tmp_path):
    """The first command a newcomer runs: a new JVM, the bundled example, stdout only.

    Spark's own start-up lines must not reach the terminal, nor the JVM's warning about
    the incubator module Spark's launcher always adds: stderr stays empty. The first run
    on a machine writes the class archive (spark/archive.py) as its JVM exits, without a
    word about it; the second maps it (its class-loading log says which classes came
    from the archive's dynamic part, "top"), with the same output.
    """
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, SPARKLOG_CACHE_DIR=str(tmp_path / "cache"))
    size = 8 * 2**8 - 2 * (2**8 - 1)  # TC of the 8-level tree: 1538
    command = [sys.executable, "-m", "sparklog", "run", "examples/tc/tc.dl", "-F",
               "examples/tc", "-D", "-", "--master", "local[2]"]
    loads = tmp_path / "classes.log"
    log_loads = ["--conf", f"spark.driver.extraJavaOptions=-Xlog:class+load=info:file={loads}"]
    for run in (command, command + log_loads):
        done = subprocess.run(run, cwd=root, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        pairs = [line for line in done.stdout.splitlines() if line.split("\t")[0].isdigit()]
        assert len(pairs) == size
        assert f"tc\t{size}" in done.stdout.splitlines()  # .printsize
        assert done.stdout.count("\n") == size + 5, done.stdout[-2000:]  # nothing else
        assert done.stderr == ""
        # the class archive and the grammar's parse tables (cache.py), nothing half-written
        assert sorted(p.suffix for p in (tmp_path / "cache").iterdir()) == [".jsa", ".lark"]
    assert "source: shared objects file (top)" in loads.read_text()


def _fresh(args: list[str], registration_seconds: float | None = None, **popen):
    """``sparklog ARGS`` in a new process (a new JVM), as a user runs it."""
    import subprocess
    import sys

    setup = (f"from sparklog.spark import session; "
             f"session.REGISTRATION_SECONDS = {registration_seconds}; "
             if registration_seconds else "")
    code = f"import sys; {setup}from sparklog.cli import main; sys.exit(main({args!r}))"
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def _children(pid: int) -> list[str]:
    """Command names of the processes whose parent is ``pid``."""
    names = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:]
        if int(rest.split()[1]) == pid:
            names.append(name)
    return names


@pytest.mark.spark
def test_ctrl_c_prints_only_interrupted_and_exits_130(tc_dir):
    """Ctrl-C while Spark works: no py4j traceback, no thread's output, no staged files."""
    import signal
    import time

    from sparklog import gen

    gen.generate("chain", [400], tc_dir / "long")  # hundreds of rounds: minutes of work
    proc = _fresh(["run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "long"),
                   "-D", str(tc_dir / "out"), "--master", "local[2]", "-q"])
    deadline = time.monotonic() + 120
    while "java" not in _children(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(10)  # into the rounds (an earlier interrupt must end the same way)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, err, out) == (130, "interrupted\n", "")
    assert not list(tc_dir.glob("out/.sparklog-*"))


@pytest.mark.spark
def test_a_master_that_never_registers_the_application_fails_naming_it(tc_dir):
    """A spark:// address that accepts connections but is no Spark master: Spark would
    retry for 60 s and then fail on a stopped context; sparklog gives up with a clear error."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        master = f"spark://127.0.0.1:{silent.getsockname()[1]}"
        proc = _fresh(["run", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", "-",
                       "--master", master], registration_seconds=3)
        out, err = proc.communicate(timeout=300)
    assert (proc.returncode, out) == (1, "")
    assert err == (f"error: the Spark master {master} did not register this application "
                   "within 3 s (is a Spark master running there, and reachable from here?)\n")


@pytest.mark.parametrize("flags, first_jobs",
                         [((), 0), (("--no-deferred",), 1), (("--no-pipelined",), 0),
                          (("--codegen-rows", "0"), 0)])
def test_no_deferred_gives_the_first_version_its_own_job(spark, tc_dir, flags, first_jobs):
    import json

    stats = tc_dir / "stats.json"
    assert sparklog(str(tc_dir / "tc.dl"), "-F", str(tc_dir / "facts"), "-D", str(tc_dir / "out"),
                    "--stats", str(stats), "--strategy", "asis", *flags) == 0
    records = [r for r in json.loads(stats.read_text()) if r["relation"] == "tc"]
    assert (records[0]["iteration"], records[0]["spark_jobs"]) == (0, first_jobs)
    assert [r["full"] for r in records] == [3, 5, 6, 6]
    assert (tc_dir / "out" / "tc.csv").read_text().count("\n") == 6


def test_a_failed_run_still_writes_the_stats_of_its_finished_rounds(spark, tmp_path, capsys):
    """A negative cycle under $MIN keeps improving: --max-iterations 4 ends the run with an
    error, and --stats holds the records of the rounds it finished."""
    program = tmp_path / "neg.dl"
    program.write_text(".decl e(x:number, y:number, w:number)\n"
                       "e(1, 2, 1). e(2, 1, -3).\n"
                       ".decl d(x:number, c:number)\n.output d\n"
                       "d(1, 0).\nd(y, $MIN(c + w)) :- d(x, c), e(x, y, w).\n")
    stats = tmp_path / "stats.json"
    assert sparklog(str(program), "-D", str(tmp_path / "out"), "--max-iterations", "4",
                    "--stats", str(stats)) == 1
    assert "did not converge" in capsys.readouterr().err
    records = json.loads(stats.read_text())
    # (the records of versions stored by round 1's job come when they settle, at the end)
    assert [r["iteration"] for r in records if r["relation"] == "d"][-4:] == [1, 2, 3, 4]
    assert not (tmp_path / "out" / "d.csv").exists()


def test_records_are_written_as_soufflé_prints_them(spark, tmp_path, capsys):
    """Records stored as their fields (syntax/records.py) are put back together on output:
    ``[1, x]``, nested ``[[1, x], 3]``, the declared column names as the header."""
    program = tmp_path / "rec.dl"
    program.write_text(".type Pair = [a: number, b: symbol]\n.type Nest = [p: Pair, w: number]\n"
                       ".decl e(x: number, s: symbol)\n.input e\n"
                       ".decl p(x: Pair, n: number)\np([x, s], x * 2) :- e(x, s).\n"
                       ".decl q(v: Nest)\nq([y, n + 1]) :- p(y, n), p(z, _), y != z.\n"
                       ".output p(headers=true)\n.output q\n.output q(IO=stdout)\n"
                       ".decl back(v: Nest, k: number)\n.input back\n"
                       "p(y, k) :- back([y, _], k).\n")
    (tmp_path / "e.facts").write_text("1\tx\n2\ty z\n")
    # records in a facts file as Soufflé writes them, white space around fields allowed
    (tmp_path / "back.facts").write_text("[[7, w], 1]\t0\n[ [8,v] , 2 ]\t9\n")
    assert sparklog(str(program), "-F", str(tmp_path), "-D", str(tmp_path / "out")) == 0
    assert (tmp_path / "out" / "p.csv").read_text() == \
        "x\tn\n[1, x]\t2\n[2, y z]\t4\n[7, w]\t0\n[8, v]\t9\n"
    q = ["[[1, x], 3]", "[[2, y z], 5]", "[[7, w], 1]", "[[8, v], 10]"]
    assert (tmp_path / "out" / "q.csv").read_text() == "".join(f"{r}\n" for r in q)
    assert "q\n===============\n" + "".join(f"{r}\n" for r in q) in capsys.readouterr().out
    # a record of the wrong shape stops the run with the line and column
    (tmp_path / "back.facts").write_text("[[7, w], 1]\t0\n[7, w, 1]\t0\n")
    assert sparklog(str(program), "-F", str(tmp_path), "-D", str(tmp_path / "out2")) != 0
    assert "back.facts:2:1: error: '[7, w, 1]' is not a record of 3 fields" in \
        capsys.readouterr().err


def test_algebraic_data_types_are_written_as_soufflé_prints_them(spark, tmp_path):
    """``$Circle(2)``, ``$Dot`` (a branch without fields), a record inside a branch."""
    program = tmp_path / "adt.dl"
    program.write_text(".type Pair = [a: number, b: symbol]\n"
                       ".type Shape = Circle {r: number} | Dot {} | Tagged {t: Pair, s: symbol}\n"
                       ".decl s(v: Shape)\ns($Circle(2)). s($Dot). s($Tagged([7, \"x\"], \"y\")).\n"
                       ".decl big(v: Shape)\nbig($Circle(r + 1)) :- s($Circle(r)).\n"
                       "big(v) :- s(v), v != $Circle(2).\n.output big\n")
    assert sparklog(str(program), "-D", str(tmp_path / "out")) == 0
    assert sorted((tmp_path / "out" / "big.csv").read_text().splitlines()) == \
        ["$Circle(3)", "$Dot", "$Tagged([7, x], y)"]
