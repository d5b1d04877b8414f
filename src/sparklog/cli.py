"""The command line: run | check | explain | gen, with Soufflé's conventions.

Exit codes: 0 success, 1 an error in the program or its data, 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from sparklog.errors import SparklogError, UsageError


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    from sparklog.engine import spark_message

    try:
        return args.func(args)
    except SparklogError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except (PySparkException, Py4JError) as exc:  # e.g. an output directory not writable
        print(f"error: {spark_message(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    from sparklog import gen

    p = argparse.ArgumentParser(prog="sparklog", description="Datalog on Apache Spark")
    sub = p.add_subparsers(dest="command")

    run = sub.add_parser("run", help="evaluate a program")
    run.add_argument("program", type=Path)
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
    run.add_argument("--codegen-rows", type=int, default=1_000_000, metavar="N",
                     help="use whole-stage code generation only in rounds over at least N "
                          "stored rows (0: in every round; default %(default)s)")
    loud = run.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true")
    loud.add_argument("-v", "--verbose", action="store_true")
    run.set_defaults(func=_run)

    chk = sub.add_parser("check", help="report problems in a program; run nothing")
    chk.add_argument("program", type=Path)
    chk.set_defaults(func=_check)

    exp = sub.add_parser("explain", help="show strata, the RA plan and Spark's plan")
    exp.add_argument("program", type=Path)
    exp.add_argument("--show", default="strata,ir,spark-plan",
                     help="comma-separated: ast, strata, ir, spark-plan")
    exp.add_argument("-F", "--facts", type=Path, default=None)
    _spark_options(exp)
    exp.set_defaults(func=_explain)

    gen.add_parser(sub)
    return p


def _spark_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--master", default="local[*]", help="Spark master URL (default local[*])")
    p.add_argument("--partitions", type=int, default=None, help="partitions per relation")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting, may repeat")


def _conf(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise UsageError(f"--conf expects KEY=VALUE, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key.strip()] = value
    return out


def _check(args) -> int:
    from sparklog.engine import Program

    program = Program.from_file(args.program)
    print(f"{args.program}: ok ({len(program.plan.strata)} strata, "
          f"{sum(len(s.preamble) + len(s.loop) for s in program.plan.strata)} kernels)")
    return 0


def _explain(args) -> int:
    from sparklog.engine import Program
    from sparklog.explain import explain

    program = Program.from_file(args.program)
    show = {s.strip() for s in args.show.split(",")}
    engine = None
    if "spark-plan" in show:
        from sparklog.engine import Engine

        engine = Engine(master=args.master, partitions=args.partitions, conf=_conf(args.conf))
    print(explain(program, show, engine, args.facts))
    return 0


def _run(args) -> int:
    from sparklog.engine import Engine, Program
    from sparklog.progress import Progress

    program = Program.from_file(args.program)
    if args.partitions is not None and args.partitions < 1:
        raise UsageError("--partitions must be at least 1")
    progress = Progress(enabled=not args.quiet and sys.stderr.isatty(), verbose=args.verbose)
    with progress:
        engine = Engine(master=args.master, partitions=args.partitions, conf=_conf(args.conf),
                        checkpoint="reliable" if args.checkpoint_dir else "local",
                        checkpoint_dir=args.checkpoint_dir, deferred=args.deferred,
                        pipelined=args.pipelined, codegen_rows=args.codegen_rows,
                        on_record=progress.record)
        result = engine.run(program, facts_dir=args.facts)
        _write_outputs(program, result, args.output)
    if args.stats:
        _write_json(args.stats, result.stats)
    if args.verbose:
        for r in result.stats:
            print(json.dumps(r), file=sys.stderr)
    return 0


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
            kind, path, delimiter = output_target(d, Path(output if output != "-" else "."))
            if output == "-" or kind == "stdout":
                printed.append(_stdout_block(d.relation, df, kinds))
                continue
            writer.write(kind, df, kinds, path, delimiter)
        writer.commit()
    finally:
        writer.cleanup()
    if printed:
        print("\n".join(printed))


def _stdout_block(name: str, df, kinds) -> str:
    """Soufflé's -D - format; the rows are the program's final output."""
    from sparklog.io.facts import as_text_lines

    lines = as_text_lines(df.sortWithinPartitions(*df.columns).coalesce(1)
                          .sortWithinPartitions(*df.columns), kinds, "\t")
    body = [r["value"] for r in lines.toLocalIterator()]
    return "\n".join(["---------------", name, "===============", *body, "==============="])


def _write_json(path: Path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(records, indent=1) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
