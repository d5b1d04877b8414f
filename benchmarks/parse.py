"""Front-end time: parsing a program, the LALR(1) parser against the Earley parser that
read the grammar before it, side by side in one process.

    python3 -m benchmarks.parse [--rules 40,160,640,2560] [--repeat 5] [--earley-rev b163578^]

Programs: a chain of N rules over two-column relations, each with three atoms (one
negated), a comparison and arithmetic, as program analyses write them, and the library
and golden-file programs of the repository (``src/sparklog/programs``, ``tests/golden``). The Earley parser is built from ``grammar.lark`` as it was at
``--earley-rev`` (git), with lark's Earley algorithm and basic lexer as sparklog used it,
and its trees go through the same builder; every program's AST is checked equal between
the two before anything is timed. Times are the median of ``--repeat`` parses in one
process (the parsers built once, outside the clock), taken in turn. Writes
results/parse.json and parse.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.runner import machine_facts_static

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def chain_program(rules: int) -> str:
    lines = [".decl e(x: number, y: number)", ".input e"]
    lines += [f".decl r{i}(x: number, y: number)" for i in range(1, rules + 1)]
    lines.append("r1(x, y) :- e(x, y).")
    lines += [f"r{i}(x, z) :- r{i - 1}(x, y), e(y, z), !r1(z, x), x < y + 5, z != 3."
              for i in range(2, rules + 1)]
    lines.append(f".output r{rules}")
    return "\n".join(lines) + "\n"


def _earley(rev: str):
    import lark

    grammar = subprocess.run(["git", "show", f"{rev}:src/sparklog/syntax/grammar.lark"],
                             cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return lark.Lark(grammar, parser="earley", lexer="basic", propagate_positions=True,
                     ambiguity="resolve")


def _timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    from sparklog.syntax import parser as P

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="40,160,640,2560")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--earley-rev", default="b163578^")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    earley, lalr = _earley(args.earley_rev), P._parser()

    def build(tree, text):
        return P._assemble(P._Builder("p.dl", text).transform(tree), "p.dl", text)

    programs = {f"chain of {n} rules": chain_program(int(n)) for n in args.rules.split(",")}
    corpus = sorted([*(ROOT / "src/sparklog/programs").glob("*.dl"),
                     *(ROOT / "tests/golden").rglob("*.dl")])
    corpus_text = [p.read_text() for p in corpus if "#" not in p.read_text()]
    programs[f"{len(corpus_text)} repository programs, each parsed"] = corpus_text
    rows = []
    for name, texts in programs.items():
        texts = texts if isinstance(texts, list) else [texts]
        for text in texts:  # the same AST, or the comparison means nothing
            assert build(earley.parse(text), text) == build(lalr.parse(text), text), name
        lines = sum(t.count("\n") for t in texts)
        seconds = {}
        for parser_name, parser in (("earley", earley), ("lalr", lalr)):
            seconds[parser_name] = _timed(lambda: [build(parser.parse(t), t) for t in texts],
                                          args.repeat)
        rows.append({"program": name, "lines": lines, "earley_s": round(seconds["earley"], 4),
                     "lalr_s": round(seconds["lalr"], 4),
                     "speedup": round(seconds["earley"] / seconds["lalr"], 1)})
        print(rows[-1], flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    report = {"when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "commit": commit, "earley_rev": args.earley_rev, "repeat": args.repeat,
              "machine": machine_facts_static(), "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "parse.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "parse.md").write_text(render(report))


def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    out = ["# Parsing: LALR(1) against the Earley parser it replaced", "",
           f"{report['when']} at {report['commit']} · {m['cpu_model']}, {m['nproc']} cores · "
           f"Python {m['python']} · median of {report['repeat']} parses per program and "
           f"parser in one process; the Earley parser is the grammar at "
           f"{report['earley_rev']}, and both give the same AST for every program.", "",
           "| program | lines | Earley s | LALR s | Earley ÷ LALR |",
           "| --- | ---: | ---: | ---: | ---: |"]
    for r in report["rows"]:
        out.append(f"| {r['program']} | {r['lines']:,} | {r['earley_s']:.3f} | "
                   f"{r['lalr_s']:.3f} | {r['speedup']}× |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
