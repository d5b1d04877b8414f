"""The command line: run | check | explain | gen, with Soufflé's conventions.

Exit codes: 0 success, 1 an error in the program or its data, 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from sparklog.defaults import COMBINE, JOIN_PLANNING, REPLICATE, REPLICATE_ROWS
from sparklog.options import DEFAULTS, PLAN_REUSE, STORED_FORMS, STRATEGIES
from sparklog.errors import (DataError, Diagnostic, OutputError, SparklogError,
                             UsageError)

# Set by the first Ctrl-C: whatever then fails (a cancelled job, a py4j call cut short) is
# reported as the interrupt it is, with exit code 130.
_INTERRUPTED = threading.Event()


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    _quiet_internals()
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        return _interrupted()


def _dispatch(args) -> int:
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    from sparklog.engine import spark_message

    try:
        return args.func(args)
    except SparklogError as exc:
        if _INTERRUPTED.is_set():
            return _interrupted()
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except (PySparkException, Py4JError) as exc:  # e.g. an output directory not writable
        if _INTERRUPTED.is_set():
            return _interrupted()
        print(f"error: {spark_message(exc)}", file=sys.stderr)
        return 1


def _interrupted() -> int:
    print("interrupted", file=sys.stderr)
    return 130


def _quiet_internals() -> None:
    """No tracebacks from libraries: py4j logs one on the root logger when Ctrl-C cuts a
    call short (and logging would then configure itself to print it), and threads print
    theirs when an interrupt ends their work. main() reports the error once."""
    _INTERRUPTED.clear()
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.addFilter(lambda r: "py4j" not in r.pathname and not r.exc_info)
        root.addHandler(handler)
    from pyspark.logger import PySparkLogger

    # pyspark logs every failed query with its Java stack trace, as JSON, on loggers of
    # its own (pyspark/errors/exceptions/base.py); main() reports the failure in words
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
    if getattr(threading.excepthook, "sparklog", False):
        return
    previous = threading.excepthook

    def hook(args) -> None:
        if not _INTERRUPTED.is_set():
            previous(args)

    hook.sparklog = True
    threading.excepthook = hook


@contextmanager
def _interrupts(spark):
    """Within: replace pyspark's Ctrl-C handler, which calls into the JVM from the main
    thread while that thread may be waiting in the middle of another call. Cancel every
    job from a thread of its own instead, then interrupt the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sc = spark.sparkContext

    def cancel() -> None:
        try:
            sc.cancelAllJobs()
        except Exception:  # the JVM may be gone already; the interrupt is reported anyway
            pass

    def on_sigint(signum, frame) -> None:
        if not _INTERRUPTED.is_set():
            _INTERRUPTED.set()
            threading.Thread(target=cancel, name="sparklog-cancel", daemon=True).start()
        raise KeyboardInterrupt

    unraisable = sys.unraisablehook

    def on_unraisable(info) -> None:
        # A signal handler's exception raised while the main thread runs a finalizer (a
        # py4j object's weakref callback) cannot propagate: Python prints "Exception
        # ignored" and drops it. Deliver it again a moment later, from a timer thread, so
        # that it lands in the main thread's own code once this hook and the finalizer
        # have returned (were it to land in a finalizer again, it comes back here).
        if isinstance(info.exc_value, KeyboardInterrupt) and _INTERRUPTED.is_set():
            again = threading.Timer(0.05, signal.pthread_kill,
                                    (threading.main_thread().ident, signal.SIGINT))
            again.daemon = True
            again.start()
        else:
            unraisable(info)

    previous = signal.signal(signal.SIGINT, on_sigint)
    sys.unraisablehook = on_unraisable
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = unraisable


def _parser() -> argparse.ArgumentParser:
    from sparklog import gen

    p = argparse.ArgumentParser(prog="sparklog", description="Datalog on Apache Spark")
    sub = p.add_subparsers(dest="command")

    run = sub.add_parser("run", help="evaluate a program")
    run.add_argument("program", type=Path)
    _preprocessor_options(run)
    run.add_argument("-F", "--facts", type=Path, default=Path("."), help="input facts directory")
    run.add_argument("-D", "--output", default=".", help="output directory, or - for stdout")
    _spark_options(run)
    run.add_argument("--stats", type=Path, help="write per-iteration metrics as JSON")
    run.add_argument("--checkpoint-dir", help="reliable checkpoints (clusters) in this directory")
    run.add_argument("--no-deferred", dest="deferred", action="store_false",
                     help="store inputs and each recursive stratum's first version in jobs of "
                          "their own, not in the job of the first round that reads them")
    run.add_argument("--no-pipelined", dest="pipelined", action="store_false",
                     help="plan each round only after the previous round's job has ended")
    run.add_argument("--no-skip-idle", dest="skip_idle", action="store_false",
                     help="run every relation of a recursive stratum in every round, also "
                          "those none of whose rules has a delta to read")
    run.add_argument("--no-inline-totals", dest="inline_totals", action="store_false",
                     help="store a $SUM/$COUNT relation's totals in a round of their own and "
                          "read them the round after, not where they are summed")
    run.add_argument("--no-presum", dest="presum", action="store_false",
                     help="in a recursion over a counter (PageRank's iteration), store every "
                          "contribution to a $SUM, not each round's sum per key")
    run.add_argument("--no-inline-constants", dest="inline_constants", action="store_false",
                     help="cross-join a recursive rule's one-row parameters (iterations(k)) "
                          "every round, not read them once as literals")
    run.add_argument("--no-stored-copies", dest="stored_copies", action="store_false",
                     help="shuffle a lower stratum's relation to every sub-bucket of a "
                          "recursive join's rows every round, not store that copy once")
    run.add_argument("--no-retire-stages", dest="retire_stages", action="store_false",
                     help="in a recursion over a counter (PageRank's iteration), keep reading "
                          "the stored tuples of stages every delta has passed")
    run.add_argument("--no-smart-end", dest="smart_end", action="store_false",
                     help="run a Smart closure until a round derives nothing, also after the "
                          "round that found no path whose length is a power of two")
    run.add_argument("--plan-reuse", dest="reuse_plans", choices=PLAN_REUSE,
                     default=DEFAULTS.reuse_plans,
                     help="how loop rounds after the first are planned: run the executed plan "
                          "of the round before over the new versions (executed, the default), "
                          "plan from its optimized plan (optimized), or from the rules' SQL "
                          "(off)")
    run.add_argument("--no-plan-reuse", dest="reuse_plans", action="store_const", const="off",
                     help="the same as --plan-reuse off")
    run.add_argument("--max-iterations", type=int, default=DEFAULTS.max_iterations, metavar="N",
                     help="stop each recursive stratum after N rounds; a lattice relation "
                          "whose values still improve then is an error (default: no limit)")
    run.add_argument("--join-planning", choices=JOIN_PLANNING, default=DEFAULTS.join_planning,
                     help="a join that is not partition-local sends a small side to each "
                          "sub-bucket of the other (replicate), also broadcasts a small "
                          "delta (dynamic), or neither (off); default %(default)s")
    run.add_argument("--broadcast-rows", type=int, default=DEFAULTS.broadcast_rows, metavar="N",
                     help="the largest delta dynamic join planning broadcasts "
                          "(default %(default)s)")
    run.add_argument("--combine", choices=COMBINE, default=DEFAULTS.combine,
                     help="combine a round's candidates inside their partition before its "
                          "shuffle: while the last round derived many times what it kept (auto), "
                          "always (on), never (off); default %(default)s")
    run.add_argument("--run-rows", type=int, default=DEFAULTS.run_rows, metavar="N",
                     help="a relation's newest run is sealed at N rows and a round writes "
                          "only its new tuples and a bounded run, never all of a relation "
                          "again (0: one run, rewritten every round; default %(default)s)")
    run.add_argument("--balance", choices=("on", "off"),
                     default="on" if DEFAULTS.balance else "off",
                     help="refine heavy buckets into more sub-buckets and consolidate them "
                          "again (spatial load balancing); default %(default)s")
    run.add_argument("--balance-every", type=int, default=DEFAULTS.balance_every, metavar="N",
                     help="check the balance every N rounds (default %(default)s)")
    run.add_argument("--balance-ratio", type=float, default=DEFAULTS.balance_ratio,
                     metavar="R",
                     help="refine a bucket whose heaviest sub-bucket holds more than R times "
                          "the mean sub-bucket (default %(default)g)")
    run.add_argument("--balance-rows", type=int, default=DEFAULTS.balance_rows, metavar="N",
                     help="never refine a sub-bucket of fewer than N rows "
                          "(default %(default)s)")
    run.add_argument("--indexes", choices=("on", "off"),
                     default="on" if DEFAULTS.indexes else "off",
                     help="keep a second stored copy of a relation read by a join on columns "
                          "its placement does not serve, so no round reshuffles a stored "
                          "relation (secondary indexes); default %(default)s")
    run.add_argument("--replicate-static", choices=REPLICATE,
                     default=DEFAULTS.replicate_static,
                     help="place a linear recursion that joins its delta to relations of "
                          "lower strata alone by the columns its head keeps, and send those "
                          "relations to every sub-bucket of it each round, so no derived "
                          "tuple crosses a shuffle: auto does so for a closure whose "
                          "measured edges make at most %d copies a round (arcs times "
                          "partitions); default %%(default)s" % REPLICATE_ROWS)
    run.add_argument("--join-dedup", choices=("on", "off"),
                     default="on" if DEFAULTS.join_dedup else "off",
                     help="drop the variables a rule no longer needs, and the duplicate rows "
                          "that leaves, before each of its joins; default %(default)s")
    _strategy_option(run)
    run.add_argument("--stored", choices=STORED_FORMS, default=DEFAULTS.stored,
                     help="how stored versions sit in Spark's block storage: columnar "
                          "(column batches, about a quarter of the memory of deserialized "
                          "row objects), compressed (column batches compressed, a few "
                          "bytes a tuple, slower to write), deserialized, or serialized "
                          "(slower to read back); default %(default)s")
    run.add_argument("--rollover-threshold", type=int, default=DEFAULTS.rollover_rows,
                     metavar="T",
                     help="run a round whose join output is estimated over T tuples as inner "
                          "iterations over slices of its delta, each shuffled and deduplicated "
                          "before the next (iteration roll-over; 0: off, the default)")
    run.add_argument("--codegen-rows", type=int, default=DEFAULTS.codegen_rows, metavar="N",
                     help="use whole-stage code generation only in rounds over at least N "
                          "stored rows (0: in every round; default %(default)s)")
    run.add_argument("--stall-timeout", type=float, default=DEFAULTS.stall_seconds,
                     metavar="SECONDS",
                     help="end the run with an error when Spark runs no task for this long "
                          "(a failed scheduler; 0: wait forever; default %(default)g)")
    loud = run.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true")
    loud.add_argument("-v", "--verbose", action="store_true")
    run.set_defaults(func=_run)

    chk = sub.add_parser("check", help="report problems in a program; run nothing")
    chk.add_argument("program", type=Path)
    _preprocessor_options(chk)
    chk.set_defaults(func=_check)

    exp = sub.add_parser("explain", help="show strata, the RA plan and Spark's plan")
    exp.add_argument("program", type=Path)
    _preprocessor_options(exp)
    exp.add_argument("--show", default="strategies,strata,ir,spark-plan",
                     help="comma-separated: ast, strategies, strata, ir, spark-plan")
    exp.add_argument("-F", "--facts", type=Path, default=None)
    _strategy_option(exp)
    exp.add_argument("--replicate-static", choices=REPLICATE,
                     default=DEFAULTS.replicate_static,
                     help="as sparklog run's (default %(default)s)")
    _spark_options(exp)
    exp.set_defaults(func=_explain)

    gen.add_parser(sub)
    return p


def _strategy_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strategy", choices=STRATEGIES, default=DEFAULTS.strategy,
                   help="how a transitive closure is evaluated: as written (asis), linear "
                        "(right or left), or in logarithmic rounds with each path derived "
                        "once (smart, balance, thirds: Afrati & Ullman); auto chooses; "
                        "doubling rewrites chain programs into binary t predicates. A "
                        "relation's .pragma r(strategy=...) overrides it; only a pragma "
                        "asks for a length partition of your own (strategy=split, "
                        "first=\"(l + 1) / 2\") or for doubling another linear recursion "
                        "at twice its arity; default %(default)s")


def _spark_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", default="local[*]", help="Spark master URL (default local[*])")
    p.add_argument("--partitions", type=int, default=None, help="partitions per relation")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting, may repeat")


def _conf(pairs: list[str]) -> dict[str, str]:
    """--conf KEY=VALUE pairs, as spark-submit takes them: a key that does not start
    with ``spark.`` is ignored with a warning; a missing ``=`` or key is a usage error.
    A setting sparklog must fix (session.REQUIRED_CONF) is ignored with a warning too."""
    from sparklog.spark.session import REQUIRED_CONF

    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise UsageError(f"--conf expects KEY=VALUE, got {pair!r}")
        if not key.startswith("spark."):
            print(f"warning: ignoring non-Spark config property: {key}", file=sys.stderr)
            continue
        if key in REQUIRED_CONF and value.strip() != REQUIRED_CONF[key]:
            print(f"warning: ignoring --conf {key}={value}: sparklog needs "
                  f"{key}={REQUIRED_CONF[key]}", file=sys.stderr)
            continue
        out[key] = value
    return out


def _preprocessor_options(p: argparse.ArgumentParser) -> None:
    """Soufflé's flags for the C preprocessor it runs over the program."""
    p.add_argument("-I", "--include-dir", dest="include_dirs", action="append", default=[],
                   type=Path, metavar="DIR", help="where #include looks after the "
                   "including file's folder (may repeat)")
    p.add_argument("-M", "--macro", dest="macros", action="append", default=[],
                   metavar="NAME[=VALUE]", help="a macro for the preprocessor, as "
                   "#define NAME VALUE (may repeat)")


def _program(args):
    from sparklog.engine import Program

    # a file that is not UTF-8: a ParseError at its byte
    return Program.from_file(args.program, include_dirs=args.include_dirs, macros=args.macros)


def _check(args) -> int:
    from sparklog.io.facts import directive_problems

    program = _program(args)
    problems = directive_problems(program.checked)
    if problems:
        raise DataError(problems, program.sources)
    print(f"{args.program}: ok ({len(program.plan.strata)} strata, "
          f"{sum(len(s.preamble) + len(s.loop) for s in program.plan.strata)} kernels)")
    return 0


def _explain(args) -> int:
    from sparklog.explain import explain
    from sparklog.spark import session

    conf = _conf(args.conf)
    session.check_master(conf.get("spark.master", args.master))
    program = _program(args)
    show = {s.strip() for s in args.show.split(",")}
    engine = None
    # Spark runs for the iteration plan, and for what --strategy auto measures of the facts
    if "spark-plan" in show or args.facts is not None and program.closures and \
            show & {"strategies", "strata", "ir"}:
        from sparklog.engine import Engine

        engine = Engine(master=args.master, partitions=args.partitions, conf=conf,
                        strategy=args.strategy,
                        replicate_static=args.replicate_static)
        with _interrupts(engine.spark):
            print(explain(program, show, engine, args.facts, args.strategy))
        return 0
    print(explain(program, show, engine, args.facts, args.strategy, args.replicate_static))
    return 0


def _run(args) -> int:
    from sparklog.engine import Engine
    from sparklog.progress import Progress
    from sparklog.spark import session

    conf = _conf(args.conf)
    session.check_master(conf.get("spark.master", args.master))
    if args.stored == "serialized":  # Kryo reads the rows back about 1.6 times as fast
        # as Java serialization reset after every row (README, "Secondary indexes")
        conf.setdefault("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
    if args.partitions is not None and args.partitions < 1:
        raise UsageError("--partitions must be at least 1")
    if args.codegen_rows < 0:
        raise UsageError("--codegen-rows must be at least 0")
    if args.broadcast_rows < 0:
        raise UsageError("--broadcast-rows must be at least 0")
    if args.run_rows < 0:
        raise UsageError("--run-rows must be at least 0")
    if args.rollover_threshold < 0:
        raise UsageError("--rollover-threshold must be at least 0")
    if args.balance_every < 1:
        raise UsageError("--balance-every must be at least 1")
    if not args.balance_ratio >= 1:
        raise UsageError("--balance-ratio must be at least 1")
    if args.balance_rows < 0:
        raise UsageError("--balance-rows must be at least 0")
    if args.max_iterations is not None and args.max_iterations < 1:
        raise UsageError("--max-iterations must be at least 1")
    if args.stall_timeout < 0:
        raise UsageError("--stall-timeout must be at least 0")
    program = _program(args)
    _check_paths(program, args)
    for choice in program.rewritten(args.strategy)[1]:  # what only a pragma asks for
        if choice.strategy == "doubling-arity":
            print(f"warning: {', '.join(choice.closure.relations)}: "
                  f"{choice.why.split('warning: ', 1)[1]}", file=sys.stderr)
    progress = Progress(enabled=not args.quiet and sys.stderr.isatty(), verbose=args.verbose)
    records: list[dict] = []  # every round's record as it ends: kept if the run fails

    def record(r: dict) -> None:
        records.append(r)
        progress.record(r)

    with progress:
        # the first run on a machine has its JVM write the class archive that later
        # ones map (spark/archive.py); it is kept once the JVM has exited (session.end)
        spark = session.start(args.master, args.partitions, conf, write_archive=True)
        engine = Engine(spark, partitions=args.partitions,
                        checkpoint="reliable" if args.checkpoint_dir else "local",
                        checkpoint_dir=args.checkpoint_dir, deferred=args.deferred,
                        pipelined=args.pipelined, skip_idle=args.skip_idle,
                        retire_stages=args.retire_stages, smart_end=args.smart_end,
                        inline_totals=args.inline_totals, presum=args.presum,
                        inline_constants=args.inline_constants,
                        stored_copies=args.stored_copies,
                        reuse_plans=args.reuse_plans,
                        join_planning=args.join_planning, broadcast_rows=args.broadcast_rows,
                        combine=args.combine, max_iterations=args.max_iterations,
                        codegen_rows=args.codegen_rows, run_rows=args.run_rows,
                        rollover_rows=args.rollover_threshold,
                        indexes=args.indexes == "on",
                        replicate_static=args.replicate_static,
                        join_dedup=args.join_dedup == "on",
                        stored=args.stored,
                        strategy=args.strategy,
                        balance=args.balance == "on", balance_every=args.balance_every,
                        balance_ratio=args.balance_ratio, balance_rows=args.balance_rows,
                        stall_seconds=args.stall_timeout or None, on_record=record)
        try:
            with _interrupts(engine.spark):
                result = engine.run(program, facts_dir=args.facts)
                _write_outputs(program, result, args.output)
        except BaseException:
            if args.stats:  # a failed run still says what its finished rounds did
                try:
                    _write_json(args.stats, records)
                except OutputError:
                    pass  # the run's own error is the one to report
            raise
    for note in result.notes:
        print(f"sparklog: {note}", file=sys.stderr)
    if args.stats:
        _write_json(args.stats, result.stats)
    if args.verbose:
        for r in result.stats:
            print(json.dumps(r), file=sys.stderr)
    if session.writes_archive() and progress.enabled:
        print("sparklog: saving Spark's classes for faster starts (once per machine)",
              file=sys.stderr)
    session.end(engine.spark)
    return 0


def _check_paths(program, args) -> None:
    """Every file the run reads or writes, checked before Spark starts (which takes
    seconds), so that a typo in a path does not cost the whole computation."""
    from sparklog.io.facts import AtomicWriter, missing_inputs, output_target

    if args.facts.exists() and not args.facts.is_dir():
        raise DataError(f"-F {args.facts}: not a directory")
    problems = missing_inputs(program.checked, {}, args.facts)
    if problems:
        raise DataError(problems, program.sources)
    out = Path(args.output)
    if args.output != "-" and out.exists() and not out.is_dir():
        raise OutputError(f"-D {out}: not a directory")
    for d in program.checked.outputs():
        if d.kind == "printsize":
            continue
        try:
            target = output_target(d, out)
        except DataError as exc:
            problems += exc.diagnostics
            continue
        if target.kind == "stdout" or args.output == "-":
            continue
        problem = AtomicWriter.problem(target.kind, target.path)
        if problem:
            problems.append(Diagnostic(d.span, f"cannot write {target.path}: {problem}"))
    if problems:
        raise OutputError(problems, program.sources)
    problem = args.stats and AtomicWriter.problem("file", args.stats)
    if problem:
        raise OutputError(f"--stats {args.stats}: cannot write: {problem}")


def _write_outputs(program, result, output: str) -> None:
    from sparklog.io.facts import AtomicWriter, output_target
    from sparklog.spark.decode import check_symbol_table

    writer = AtomicWriter()
    printed = []
    check_symbol_table(result._db)
    try:
        for d in program.checked.outputs():
            df = result[d.relation]
            kinds = program.checked.kinds[d.relation]
            if d.kind == "printsize":
                printed.append(f"{d.relation}\t{result.size(d.relation)}")
                continue
            target = output_target(d, Path(output if output != "-" else "."))
            decl = program.ast.decl(d.relation)
            records = decl.records if decl is not None else ()
            header = None
            if (d.param("headers") or "false").lower() == "true":
                header = target.delimiter.join(
                    [name for name, _ in records] or [a.name for a in decl.attributes])
            if output == "-" or target.kind == "stdout":
                printed.append(_stdout_block(d.relation, df, kinds, records, target, header))
                continue
            writer.write(target, df, kinds, header, records)
        writer.commit()
    finally:
        writer.cleanup()
    if printed:
        print("\n".join(printed))


def _stdout_block(name: str, df, kinds, records, target, header: str | None) -> str:
    """Soufflé's -D - format (WriteCoutCSV): the relation's name, its header line with
    ``headers=true``, then its rows in the directive's delimiter, quoted as ``rfc4180=true``
    asks; the rows are the program's final output."""
    from sparklog.io.facts import as_text_lines

    if df.columns:  # sorted output; a nullary relation has nothing to sort by
        df = df.sortWithinPartitions(*df.columns).coalesce(1).sortWithinPartitions(*df.columns)
    lines = as_text_lines(df.coalesce(1), kinds, target.delimiter, target.rfc4180, records)
    body = [r["value"] for r in lines.toLocalIterator()]
    return "\n".join(["---------------", name, *([header] if header is not None else []),
                      "===============", *body, "==============="])


def _write_json(path: Path, records) -> None:
    """Write atomically; a failure leaves neither a partial file nor the temporary."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(records, indent=1) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"--stats {path}: cannot write: {exc.strerror or exc}") from None


if __name__ == "__main__":
    sys.exit(main())
