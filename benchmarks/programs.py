"""Cold and warm timings: one process per run, as a CLI user gets, and one shared session.

Cold mode runs every measured run in a fresh process: ``python3 -m sparklog run`` for
sparklog (the program, its facts in a folder, outputs to a folder), and a fresh Python
with its own SparkSession for each peer loop. Every child reports the seconds it spent
starting Spark (JVM and session) apart from the evaluation; the parent times the whole
process. Warm mode runs a program workload repeatedly in one session and reports the
seconds of each loop round of its counter stratum, from sparklog's stats.

    python3 -m benchmarks.programs                      # strata10 and chain:200, cold and warm
    python3 -m benchmarks.programs --baseline-src /tmp/base/src   # also an older checkout

``--baseline-src`` puts a second sparklog (say, ``git worktree add /tmp/base <commit>``) beside
the working tree's: both run interleaved in the same invocation, so their ratio is
measured under the same machine load. Results go to ``results/programs.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import peers, runner, workloads

ROOT = Path(__file__).resolve().parent.parent
MARK = "sparklog-bench:"  # the line a child prints its own timings on (stderr)


# --------------------------------------------------------------------------------------
# children: one measured run each
# --------------------------------------------------------------------------------------


def _report(**fields: Any) -> None:
    print(MARK, json.dumps(fields), file=sys.stderr, flush=True)


def child_cli(argv: list[str]) -> int:
    """``python3 -m sparklog <argv>``, with the session start and the evaluation timed."""
    import runpy

    from sparklog import engine
    from sparklog.spark import session

    times: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                times[name] = times.get(name, 0.0) + time.perf_counter() - started
        return wrapper

    session.start = timed("start", session.start)
    engine.Engine.run = timed("evaluate", engine.Engine.run)
    sys.argv = ["sparklog", *argv]
    code = 0
    try:
        runpy.run_module("sparklog", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    _report(start=times.get("start"), evaluate=times.get("evaluate"), exit=code)
    return code


def child_peer(name: str, spec: str) -> int:
    """One peer loop on one TC workload in this fresh process."""
    started = time.perf_counter()
    spark = runner.start_spark(2)
    start = time.perf_counter() - started
    wl = workloads.make(spec)
    edges = runner.edges_dataframe(spark, wl)
    t0 = time.perf_counter()
    result, iterations = peers.PEERS[name](spark, edges)
    result.count()
    evaluate = time.perf_counter() - t0
    ok = result.distinct().count() == wl.expected_tc
    _report(start=start, evaluate=evaluate, iterations=iterations, ok=ok, exit=0)
    spark.stop()
    return 0


def child_warm(name: str, runs: int) -> int:
    """``runs`` runs of a program workload in one session, after one warm-up run."""
    import sparklog

    wl = workloads.PROGRAMS[name]
    engine = sparklog.Engine(master="local[2]", partitions=2)
    program = sparklog.Program.from_text(wl.text)
    for i in range(runs + 1):
        load = float(Path("/proc/loadavg").read_text().split()[0])
        t0 = time.perf_counter()
        result = engine.run(program)
        rows = {tuple(r) for r in result[wl.output].collect()}
        seconds = time.perf_counter() - t0
        rounds = [r["seconds"] for r in result.stats
                  if r["stratum"] == wl.counter and r["iteration"] >= 1]
        _report(run=i, warmup=i == 0, seconds=seconds, rounds=len(rounds),
                round_median=statistics.median(rounds) if rounds else None,
                ok=rows == set(wl.expected), load=load)
    return 0


# --------------------------------------------------------------------------------------
# the parent
# --------------------------------------------------------------------------------------


def _child(args: list[str], src: str | None, timeout: float, extra_env: dict[str, str] | None = None
           ) -> tuple[float, list[dict], str]:
    """Run ``python3 -m benchmarks.programs <args>``; wall seconds, its reports, stderr."""
    env = dict(os.environ, **(extra_env or {}))
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "benchmarks.programs", *args], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    reports = [json.loads(line.split(MARK, 1)[1]) for line in out.stderr.splitlines()
               if line.startswith(MARK)]
    return wall, reports, out.stderr[-2000:]


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _check_outputs(folder: Path, relation: str, expected: set[tuple[int, ...]] | int) -> bool:
    path = folder / f"{relation}.csv"
    if not path.exists():
        return False
    rows = {tuple(int(v) for v in line.split("\t")) for line in path.read_text().splitlines()}
    return len(rows) == expected if isinstance(expected, int) else rows == expected


def _cold_task(system: str, spec: str, tmp: Path, srcs: dict[str, str | None]
               ) -> tuple[list[str], str | None, Any]:
    """(child arguments, source tree, checker) of one cold run."""
    out = Path(tempfile.mkdtemp(dir=tmp))
    if spec in workloads.PROGRAMS:
        wl = workloads.PROGRAMS[spec]
        program = tmp / f"{spec}.dl"
        program.write_text(wl.text)
        check = lambda: _check_outputs(out, wl.output, set(wl.expected))  # noqa: E731
    else:
        tc = workloads.make(spec)
        facts = tmp / spec.replace(":", "_")
        facts.mkdir(exist_ok=True)
        (facts / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in tc.edges))
        program = tmp / "tc.dl"
        program.write_text(runner.TC_PROGRAM)
        if system in peers.PEERS:
            return ["peer", system, spec], None, None
        check = lambda: _check_outputs(out, "tc", tc.expected_tc)  # noqa: E731
    argv = ["cli", "--", "run", str(program), "-D", str(out), "--quiet"]
    if spec not in workloads.PROGRAMS:
        argv += ["-F", str(facts)]
    return argv, srcs[system], check


# The working tree's runs map the class archive (src/sparklog/spark/archive.py) that its
# first run, measured apart, writes into a folder of the benchmark's own; NO_ARCHIVE runs
# without one, as every run did before the archive.
FIRST_RUN, NO_ARCHIVE = "sparklog, first run (writes the class archive)", "sparklog-no-archive"


def run_cold(specs: list[str], systems: list[str], srcs: dict[str, str | None], repeat: int,
             log: Any) -> dict[str, Any]:
    results: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        envs = {s: {"SPARKLOG_CACHE_DIR": "off"} for s in systems}
        envs["sparklog"] = {"SPARKLOG_CACHE_DIR": str(tmp / "cache")}
        for spec in specs:
            mine = [s for s in systems if spec not in workloads.PROGRAMS or s in srcs]
            results[spec] = {s: [] for s in mine}
            if "sparklog" in mine and not (tmp / "cache").exists():
                results[spec] = {FIRST_RUN: [], **results[spec]}
            first = FIRST_RUN in results[spec]
            for rep in range(-1 if first else 0, repeat):
                for system in [FIRST_RUN] if rep < 0 else runner.rotated(mine, rep):
                    task = "sparklog" if system == FIRST_RUN else system
                    argv, src, check = _cold_task(task, spec, tmp, srcs)
                    load = _load()
                    wall, reports, err = _child(argv, src, 1800, envs[task])
                    r = reports[-1] if reports else {"exit": None}
                    ok = (r.get("exit") == 0 and (check() if check else bool(r.get("ok"))))
                    run = {"wall": round(wall, 3), "start": r.get("start"),
                           "evaluate": r.get("evaluate"), "ok": ok, "load": load}
                    if not ok:
                        run["stderr"] = err
                    results[spec][system].append(run)
                    log(f"cold {spec} {system} run {max(rep, 0) + 1}: wall {wall:.1f}s start "
                        f"{r.get('start') or 0:.1f}s evaluate {r.get('evaluate') or 0:.1f}s "
                        f"load {load} {'ok' if ok else '!!! FAILED/WRONG'}")
    return results


def run_warm(specs: list[str], srcs: dict[str, str | None], runs: int, log: Any
             ) -> dict[str, Any]:
    """Each source tree in its own process, one after the other (one session each)."""
    results: dict[str, dict[str, list[dict]]] = {}
    for spec in specs:
        results[spec] = {}
        for system, src in srcs.items():
            if system == NO_ARCHIVE:  # a warm session has started its JVM already
                continue
            _, reports, err = _child(["warm", spec, "--runs", str(runs)], src, timeout=3600)
            results[spec][system] = [r for r in reports if not r["warmup"]]
            for r in reports:
                log(f"warm {spec} {system} run {r['run']}{' (warm-up)' if r['warmup'] else ''}: "
                    f"{r['seconds']:.1f}s, {r['rounds']} counter rounds, median round "
                    f"{(r['round_median'] or 0) * 1000:.0f} ms, load {r['load']} "
                    f"{'ok' if r['ok'] else '!!! WRONG'}")
            if not reports:
                log(f"!!! warm {spec} {system} failed: {err}")
    return results


def _med(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """Medians per (workload, system), and ratios to the reference system."""
    out: dict[str, Any] = {"cold": {}, "warm": {}}
    for spec, by_system in report["cold"].items():
        out["cold"][spec] = {s: {k: _med([r[k] for r in runs if r["ok"]])
                                 for k in ("wall", "start", "evaluate", "load")}
                             | {"ok": all(r["ok"] for r in runs), "runs": len(runs)}
                             for s, runs in by_system.items()}
    for spec, by_system in report["warm"].items():
        out["warm"][spec] = {s: {"seconds": _med([r["seconds"] for r in runs]),
                                 "round_median": _med([r["round_median"] for r in runs]),
                                 "load": _med([r["load"] for r in runs]),
                                 "ok": bool(runs) and all(r["ok"] for r in runs),
                                 "runs": len(runs)}
                             for s, runs in by_system.items()}
    return out


def _x(a: float | None, b: float | None) -> str:
    return "—" if a is None or not b else f"{a / b:.2f}×"


def _s(x: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "—" if x is None else f"{x * scale:.{digits}f}"


def markdown(report: dict[str, Any]) -> str:
    m, summary, ref = report["machine"], report["summary"], report["reference"]
    lines = [
        "# sparklog benchmarks: cold (one process per run) and warm (one session)", "",
        f"{m['date']} · {m['nproc']} cores ({m['cpu_model']}) · {m['memory_gib']} GiB · "
        f"Python {m['python']} · load average (1/5/15 min) at start "
        f"{' '.join(m['loadavg_start'])}, at end {' '.join(m['loadavg_end'])} · "
        f"{report['config']['cold_repeat']} cold runs and {report['config']['warm_runs']} warm "
        "runs per system, medians shown.", "",
        "**A shared 2-core machine under heavy load from other work** (the load column is the "
        "1-minute load average when the runs started): compare ratios within one table, not "
        "absolute seconds across days.", "",
        f"Systems: {'; '.join(f'{k}: {v}' for k, v in report['systems'].items())}.", "",
        "## Cold: one process per run", "",
        "Process = the whole child process, as the user waits for it; start = starting Spark "
        "(JVM and session) inside it; evaluation = the engine's run (sparklog: `Engine.run`; "
        "peers: the loop and a count). × = process seconds over the reference's.", "",
        f"| workload | system | process s | start s | evaluation s | load | × {ref} | ok |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for spec, by_system in summary["cold"].items():
        base = (by_system.get(ref) or {}).get("wall")
        for system, s in by_system.items():
            lines.append(f"| {spec} | {system} | {_s(s['wall'])} | {_s(s['start'])} | "
                         f"{_s(s['evaluate'])} | {_s(s['load'])} | {_x(s['wall'], base)} | "
                         f"{'yes' if s['ok'] else '**NO**'} |")
    lines += ["", "## Warm: one session, after one warm-up run", "",
              "Run s = one whole run of the program; round ms = the median seconds of the "
              "counter stratum's loop rounds (sparklog's stats: from one round's end to the "
              "next's).", "",
              f"| workload | system | run s | round ms | load | × {ref} (run) | × {ref} (round) "
              "| ok |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for spec, by_system in summary["warm"].items():
        base = by_system.get(ref) or {}
        for system, s in by_system.items():
            lines.append(f"| {spec} | {system} | {_s(s['seconds'])} | "
                         f"{_s(s['round_median'], 1000, 0)} | {_s(s['load'])} | "
                         f"{_x(s['seconds'], base.get('seconds'))} | "
                         f"{_x(s['round_median'], base.get('round_median'))} | "
                         f"{'yes' if s['ok'] else '**NO**'} |")
    return "\n".join(lines + [""] + [f"Note: {n}" for n in report["notes"]] + [""])


def _git_head(src: str) -> str:
    out = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "?"


def parent(args: argparse.Namespace) -> int:
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    log_file = open(out_dir / "programs.log", "w", encoding="utf-8")

    def log(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        log_file.write(line + "\n")

    srcs: dict[str, str | None] = {"sparklog": None, NO_ARCHIVE: None}
    described = {"sparklog": f"the working tree ({_git_head(str(ROOT))} + changes), mapping "
                             "the class archive its first run wrote",
                 NO_ARCHIVE: "the same, without a class archive (SPARKLOG_CACHE_DIR=off)"}
    if args.baseline_src:
        srcs["sparklog-base"] = args.baseline_src
        described["sparklog-base"] = f"{args.baseline_src} at {_git_head(args.baseline_src)}"
    systems = list(srcs) + [s for s in args.peers.split(",") if s]
    described.update({p: "benchmarks/peers.py, its own local[2] session" for p in systems
                      if p in peers.PEERS})
    specs = [s for s in args.workloads.split(",") if s]
    notes = []
    try:
        import duckdb  # noqa: F401
    except ImportError:
        notes.append("DuckDB is not installed here, so it is not measured.")
    facts = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "nproc": len(os.sched_getaffinity(0)),
             "loadavg_start": Path("/proc/loadavg").read_text().split()[:3]}
    facts.update({k: v for k, v in runner.machine_facts_static().items() if k not in facts})
    report: dict[str, Any] = {
        "machine": facts, "systems": described, "reference": "sparklog-base"
        if args.baseline_src else "sparklog", "notes": notes,
        "config": {"workloads": specs, "cold_repeat": args.cold_repeat,
                   "warm_runs": args.warm_runs},
        "cold": run_cold(specs, systems, srcs, args.cold_repeat, log) if args.cold_repeat else {},
        "warm": run_warm([s for s in specs if s in workloads.PROGRAMS], srcs, args.warm_runs,
                         log) if args.warm_runs else {},
    }
    report["machine"]["loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3]
    report["summary"] = summarize(report)
    (out_dir / "programs.json").write_text(json.dumps(report, indent=2) + "\n")
    (out_dir / "programs.md").write_text(markdown(report))
    print(markdown(report))
    failed = any(not s["ok"] for mode in report["summary"].values()
                 for by in mode.values() for s in by.values())
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["cli"]:
        return child_cli(argv[2:] if argv[1:2] == ["--"] else argv[1:])
    if argv[:1] == ["peer"]:
        return child_peer(argv[1], argv[2])
    if argv[:1] == ["warm"]:
        return child_warm(argv[1], int(argv[3]))
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.programs", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default="strata10,chain:200",
                   help="program workloads (strata10) and TC workloads (KIND:SIZE)")
    p.add_argument("--peers", default="typical,expert",
                   help="peer loops run cold on the TC workloads ('' for none)")
    p.add_argument("--baseline-src", help="the src/ folder of another sparklog checkout")
    p.add_argument("--cold-repeat", type=int, default=3)
    p.add_argument("--warm-runs", type=int, default=3)
    p.add_argument("--out", default=str(runner.DEFAULT_OUT))
    return parent(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
