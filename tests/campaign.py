"""Differential testing of the engine against the reference evaluator on random programs.

Usage (from the repository root)::

    python3 -m tests.campaign --runs 5000            # seeds 0..4999
    python3 -m tests.campaign --runs 500 --seed 7000 --batch 8 --partitions 2 2>/dev/null
    python3 -m tests.campaign --runs 1 --seed 25     # one program again, shrunk if it fails
    python3 -m tests.campaign --runs 300 --lattice 1  # programs with $MIN/$MAX relations
    python3 -m tests.campaign --runs 2000 --lattice 0.2  # a fifth of them lattice programs
    python3 -m tests.campaign --runs 300 --closures 1 --strategy smart  # rewritten recursions
    python3 -m tests.campaign --runs 200 --options tiny_rows=0,rollover_rows=1  # mechanisms
    python3 -m tests.campaign --runs 50000 --clingo  # the reference against clingo, no Spark
    python3 -m tests.campaign --runs 20000 --clingo --lattice 1  # lattice programs, the same

Each seed gives one program (tests/strategies.py ``generate``, or ``generate_lattice`` for
a lattice program: ``--lattice P`` draws one for a fraction P of the seeds, the same seeds
for the same P; tests/closure_programs.py ``generate_closure`` for ``--closures P``: the
recursions sparklog rewrites, run with ``--strategy``) with its facts. Programs are
evaluated ``--batch`` at a time in one engine run: their relations carry a prefix per
program (``p3_r0``), so the programs are independent parts of one text, and the result is
split back per program. A program whose batch fails is rerun alone to find the culprit.
Prints progress, then a summary: programs run, agreements, and for each disagreement or
crash the program text, its facts, and expected vs got, after shrinking it (dropping
clauses, body literals and facts while it still fails; ``--no-shrink`` skips this).
Exit status 0 when every program agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, replace

from sparklog.syntax.nodes import Program
from sparklog.syntax.parser import parse
from sparklog.syntax.printer import print_program
from tests import reference
from tests.closure_programs import generate_closure
from tests.options import parse as parse_options
from tests.staged_programs import generate_staged
from tests.strategies import generate, generate_lattice

KIND_OF_DF = {"number": "long", "unsigned": "long", "float": "double", "symbol": "string"}


@dataclass
class Case:
    """One generated program: the seed, the parsed text and the ``.input`` facts."""

    seed: int
    text: str
    ast: Program
    facts: dict[str, set[tuple]]
    lattice: bool = False  # drawn by generate_lattice
    closure: bool = False  # drawn by closure_programs.generate_closure
    staged: bool = False  # drawn by staged_programs.generate_staged


@dataclass
class Outcome:
    """How a case went: ``ok``, or ``error`` / ``differs`` with a description."""

    case: Case
    status: str
    detail: str = ""


def make_case(seed: int, prefix: str = "", lattice: bool = False, closure: bool = False,
              staged: bool = False, **sizes) -> Case:
    """The case of a seed; relation names get ``prefix``. ``lattice``: a program of
    ``generate_lattice`` (sizes: ``max_inputs``, ``max_groups``) rather than ``generate``;
    ``closure``: one of ``generate_closure``, ``staged``: of ``generate_staged`` (no
    sizes)."""
    program, facts = _drawn(seed, prefix, lattice, closure, staged, **sizes)
    return from_program(seed, program, facts, lattice, closure, staged)


def _drawn(seed: int, prefix: str, lattice: bool, closure: bool, staged: bool = False,
           **sizes):
    if staged:
        return generate_staged(seed, prefix)
    if closure:
        return generate_closure(seed, prefix)
    return (generate_lattice if lattice else generate)(seed, prefix, **sizes)


def from_program(seed: int, program: Program, facts: dict[str, set[tuple]],
                 lattice: bool = False, closure: bool = False, staged: bool = False) -> Case:
    """A case that both the engine and the reference see through the printed text."""
    text = print_program(program)
    return Case(seed, text, parse(text), facts, lattice, closure, staged)


def drawn_as(seed: int, fraction: float, family: str = "lattice") -> bool:
    """Whether the campaign draws a program of ``family`` for a seed (``--lattice
    fraction``, ``--closures fraction``): the same answer for the same seed and fraction,
    whatever the other seeds."""
    return fraction >= 1 or random.Random(f"{family} {seed}").random() < fraction


def _normal(kinds: tuple[str, ...], row: tuple) -> tuple:
    """A row with unsigned values as 64-bit patterns (the reference wraps them as signed)."""
    return tuple(int(v) % (1 << 64) if k == "unsigned" else v
                 for k, v in zip(kinds, row, strict=True))


def expected(case: Case) -> dict[str, set[tuple]]:
    """The reference's answer for every declared relation."""
    result = reference.evaluate(case.ast, case.facts)
    return {d.name: {_normal(_kinds(d), r) for r in result.get(d.name, set())}
            for d in case.ast.decls}


def _kinds(decl) -> tuple[str, ...]:
    return tuple(a.type for a in decl.attributes)


def merged(cases: list[Case]) -> tuple[Program, dict[str, set[tuple]]]:
    """One program holding every case (their relation names are already apart)."""
    program = Program(types=tuple(t for c in cases for t in c.ast.types),
                      decls=tuple(d for c in cases for d in c.ast.decls),
                      clauses=tuple(x for c in cases for x in c.ast.clauses),
                      directives=tuple(x for c in cases for x in c.ast.directives),
                      lattices=tuple(x for c in cases for x in c.ast.lattices))
    return program, {k: v for c in cases for k, v in c.facts.items()}


def engine_rows(engine, spark, program: Program, facts: dict[str, set[tuple]]
                ) -> dict[str, set[tuple]]:
    """Every declared relation after one engine run, fetched with a single Spark job."""
    import sparklog
    from pyspark.sql import functions as F

    inputs = {}
    for name, tuples in facts.items():
        decl = program.decl(name)
        schema = ", ".join(f"c{i} {KIND_OF_DF[a.type]}" for i, a in enumerate(decl.attributes))
        inputs[name] = spark.createDataFrame(sorted(tuples, key=repr), schema)
    result = engine.run(sparklog.Program(program), inputs=inputs)
    parts = []
    for decl in program.decls:
        df = result[decl.name]
        row = F.to_json(F.struct(*df.columns)) if df.columns else F.lit("{}")
        parts.append(df.select(F.lit(decl.name).alias("r"), row.alias("j")))
    union = parts[0]
    for part in parts[1:]:
        union = union.unionAll(part)
    # as many tasks as the session has partitions, not one per stored partition of every
    # relation (a batch of 25 programs holds 240): the read costs tasks, not rows
    union = union.coalesce(spark.sparkContext.defaultParallelism)
    out: dict[str, set[tuple]] = {d.name: set() for d in program.decls}
    for name, text in union.collect():
        kinds = _kinds(program.decl(name))
        out[name].add(_normal(kinds, tuple(json.loads(text).values())))
    return out


def compare(case: Case, got: dict[str, set[tuple]]) -> Outcome:
    """The outcome of a case given the engine's rows for (at least) its relations."""
    want = expected(case)
    bad = []
    for name, rows in want.items():
        have = got.get(name, set())
        if have != rows:
            bad.append(f"{name}: missing {sorted(rows - have, key=repr)}, "
                       f"extra {sorted(have - rows, key=repr)}")
    return Outcome(case, "differs", "\n".join(bad)) if bad else Outcome(case, "ok")


def run_cases(engine, spark, cases: list[Case]) -> list[Outcome]:
    """Outcomes of cases run together in one engine run; if that run crashes, each half
    is run apart (bisection finds the crashing programs in few runs)."""
    program, facts = merged(cases)
    try:
        got = engine_rows(engine, spark, program, facts)
    except Exception as exc:  # noqa: BLE001 - any crash is an outcome to report
        if len(cases) > 1:
            half = len(cases) // 2
            return run_cases(engine, spark, cases[:half]) + run_cases(engine, spark, cases[half:])
        return [Outcome(cases[0], "error", f"{type(exc).__name__}: {exc}")]
    return [compare(case, got) for case in cases]


# ---------------------------------------------------------------------------------------
# Shrinking


def _candidates(case: Case):
    """Smaller versions of a case: without a clause, a body literal, or an input fact."""
    ast = case.ast
    for i in range(len(ast.clauses)):
        yield replace(case, ast=replace(ast, clauses=ast.clauses[:i] + ast.clauses[i + 1:]))
    for i, clause in enumerate(ast.clauses):
        for j in range(len(clause.body)):
            smaller = replace(clause, body=clause.body[:j] + clause.body[j + 1:])
            if smaller.body:
                clauses = ast.clauses[:i] + (smaller,) + ast.clauses[i + 1:]
                yield replace(case, ast=replace(ast, clauses=clauses))
    for name, rows in case.facts.items():
        for row in sorted(rows, key=repr):
            yield replace(case, facts={**case.facts, name: rows - {row}})


def _valid(case: Case) -> Case | None:
    """The case re-parsed from its text if the checker and the reference accept it."""
    import sparklog

    try:
        fresh = from_program(case.seed, case.ast, case.facts, case.lattice, case.closure,
                             case.staged)
        sparklog.Program(fresh.ast)
        reference.evaluate(fresh.ast, fresh.facts)
    except Exception:  # noqa: BLE001 - an invalid candidate is simply skipped
        return None
    return fresh


def shrink(engine, spark, outcome: Outcome, budget: int = 120) -> Outcome:
    """A smaller case that still fails the same way (greedy, at most ``budget`` runs)."""
    current, runs = outcome, 0
    progress = True
    while progress and runs < budget:
        progress = False
        for candidate in _candidates(current.case):
            fresh = _valid(candidate)
            if fresh is None:
                continue
            runs += 1
            result = run_cases(engine, spark, [fresh])[0]
            if result.status == outcome.status:
                current, progress = result, True
                break
            if runs >= budget:
                break
    return current


# ---------------------------------------------------------------------------------------
# The command


def report(outcome: Outcome) -> str:
    """A failing case as text: seed, program, facts, what differs."""
    facts = "\n".join(f"  {name}: {sorted(rows, key=repr)}"
                      for name, rows in sorted(outcome.case.facts.items()))
    kind = " (lattice program)" if outcome.case.lattice else \
        " (closure program)" if outcome.case.closure else \
        " (staged program)" if outcome.case.staged else ""
    return (f"--- seed {outcome.case.seed}{kind}: {outcome.status}\n{outcome.case.text}"
            f"facts (DataFrame inputs):\n{facts or '  (none)'}\n{outcome.detail}\n")


def clingo_campaign(first: int, runs: int, closures: float = 0.0, staged: float = 0.0,
                    lattices: float = 0.0, **sizes) -> int:
    """The reference evaluator against clingo on the programs of seeds first.. (those the
    oracle translates; ``closures``, ``staged`` and ``lattices`` as in the engine's
    campaign); prints each disagreement and a summary; 1 if any."""
    from tests import clingo_oracle
    from tests.reference import RangeTooLong, evaluate

    compared = skipped = 0
    failed: list[int] = []
    refused: list[str] = []  # programs the reference cannot finish (generator gaps)
    start = time.time()
    for seed in range(first, first + runs):
        closure = drawn_as(seed, closures, "closure")
        staging = not closure and drawn_as(seed, staged, "staged")
        lattice = not closure and not staging and drawn_as(seed, lattices)
        program, facts = _drawn(seed, "", lattice, closure, staging, **sizes)
        try:
            reference = evaluate(program, facts)
            found = clingo_oracle.agree(program, facts, reference)
        except RangeTooLong as exc:
            refused.append(f"{seed} ({exc})")
            continue
        except Exception as exc:  # noqa: BLE001 - the reference or the oracle failed
            found = {"(error)": (set(), {f"{type(exc).__name__}: {exc}"})}
        if found is None:
            skipped += 1
            continue
        compared += 1
        if found:
            failed.append(seed)
            print(f"--- seed {seed}: clingo and the reference differ (only clingo's rows, "
                  f"only the reference's)\n{print_program(program)}facts: {facts}\n{found}\n",
                  flush=True)
        if (seed - first + 1) % 1000 == 0:
            print(f"[{time.time() - start:7.1f}s] {seed - first + 1}/{runs} programs", flush=True)
    print(f"summary: {runs} programs (seeds {first}..{first + runs - 1}), {compared} compared "
          f"with clingo, {skipped} outside its translation, {len(failed)} differ"
          + (": seeds " + ", ".join(map(str, failed)) if failed else "")
          + (f"; the reference cannot finish {len(refused)}: " + "; ".join(refused)
             if refused else ""))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.campaign",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="number of programs")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--batch", type=int, default=8, help="programs per engine run")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--max-inputs", type=int, default=None,
                        help="input relations, at most (default 3; lattice programs: 2 "
                        "besides their edges and nodes)")
    parser.add_argument("--max-groups", type=int, default=None,
                        help="strata drawn, at most (default 4; lattice programs: 3)")
    parser.add_argument("--lattice", type=float, default=0.0, metavar="P",
                        help="fraction of seeds drawn as lattice programs ($MIN/$MAX "
                        "relations, tests/strategies.py generate_lattice); 1 for all")
    parser.add_argument("--closures", type=float, default=0.0, metavar="P",
                        help="fraction of seeds drawn as programs around the recursions "
                        "sparklog rewrites (tests/closure_programs.py); 1 for all")
    parser.add_argument("--staged", type=float, default=0.0, metavar="P",
                        help="fraction of seeds drawn as staged recursions (a counter that "
                        "rules move forward, tests/staged_programs.py); 1 for all")
    parser.add_argument("--strategy", default=None,
                        help="Options.strategy of the runs (default: the engine's, auto)")
    parser.add_argument("--no-shrink", action="store_true", help="report failures as drawn")
    parser.add_argument("--run-rows", type=int, default=None, metavar="N",
                        help="seal stored runs at N rows (Options.run_rows; small N: many runs)")
    parser.add_argument("--options", default="", metavar="NAME=VALUE,...",
                        help="engine options of the runs, e.g. 'tiny_rows=0,join_planning="
                        "dynamic,broadcast_rows=1000000': thresholds set so that the "
                        "mechanisms the small random inputs never reach run in every round")
    parser.add_argument("--clingo", action="store_true",
                        help="compare the reference evaluator with clingo instead "
                        "(tests/clingo_oracle.py; no Spark, thousands of programs a minute)")
    args = parser.parse_args(argv)
    if args.clingo:
        return clingo_campaign(args.seed, args.runs, args.closures, args.staged, args.lattice, **{
            k: v for k, v in (("max_inputs", args.max_inputs), ("max_groups", args.max_groups))
            if v is not None})
    from sparklog.spark import session
    import sparklog

    spark = session.start(f"local[{args.partitions}]", partitions=args.partitions,
                          conf={"spark.driver.memory": "2g"})
    options = parse_options(args.options)
    if args.run_rows is not None:
        options["run_rows"] = args.run_rows
    if args.strategy is not None:
        options["strategy"] = args.strategy
    engine = sparklog.Engine(spark=spark, partitions=args.partitions, **options)
    sizes = {k: v for k, v in (("max_inputs", args.max_inputs),
                               ("max_groups", args.max_groups)) if v is not None}
    failures: list[Outcome] = []
    done, start = 0, time.time()
    seeds = list(range(args.seed, args.seed + args.runs))
    for at in range(0, len(seeds), args.batch):
        chunk, broken = [], []
        for seed in seeds[at:at + args.batch]:
            closure = drawn_as(seed, args.closures, "closure")
            staged = not closure and drawn_as(seed, args.staged, "staged")
            lattice = not closure and not staged and drawn_as(seed, args.lattice)
            try:
                chunk.append(make_case(seed, f"p{seed}_", lattice, closure, staged, **sizes))
            except Exception as exc:  # noqa: BLE001 - the parser failed on a printed program
                program, facts = _drawn(seed, "", lattice, closure, staged, **sizes)
                broken.append(Outcome(Case(seed, print_program(program), program, facts,
                                           lattice, closure, staged),
                                      "error", f"parse: {type(exc).__name__}: {exc}"))
        for outcome in broken + (run_cases(engine, spark, chunk) if chunk else []):
            done += 1
            if outcome.status != "ok":
                first = outcome
                if not outcome.detail.startswith("parse: "):
                    alone = make_case(outcome.case.seed, "", outcome.case.lattice,
                                      outcome.case.closure, outcome.case.staged, **sizes)
                    first = run_cases(engine, spark, [alone])[0]
                if first.status == "ok":  # fails only next to other programs
                    first = outcome
                elif not args.no_shrink:
                    first = shrink(engine, spark, first)
                failures.append(first)
                print(report(first), flush=True)
        print(f"[{time.time() - start:7.1f}s] {done}/{len(seeds)} programs, "
              f"{done - len(failures)} agree, {len(failures)} fail", flush=True)
    closures = sum(drawn_as(s, args.closures, "closure") for s in seeds)
    staged = sum(drawn_as(s, args.staged, "staged") for s in seeds
                 if not drawn_as(s, args.closures, "closure"))
    lattices = sum(drawn_as(s, args.lattice) for s in seeds
                   if not drawn_as(s, args.closures, "closure")
                   and not drawn_as(s, args.staged, "staged"))
    print(f"summary: {done} programs (seeds {args.seed}..{args.seed + args.runs - 1}"
          f"{f', {lattices} of them lattice programs' if args.lattice else ''}"
          f"{f', {closures} closure programs' if args.closures else ''}"
          f"{f', {staged} staged programs' if args.staged else ''}"
          f"{f', strategy {args.strategy}' if args.strategy else ''}"
          f"{f', options {options}' if options else ''}), "
          f"{done - len(failures)} agree with the reference, {len(failures)} fail"
          + ("" if not failures else ": seeds " + ", ".join(str(f.case.seed) for f in failures)))
    spark.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
