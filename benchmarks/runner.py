"""Benchmark runner: every system on every workload, checked, timed, written to results/.

One local[2] SparkSession is shared by all systems. First ``--warmup-runs`` passes over
every system on a small workload (the JVM keeps compiling Spark's hot paths for dozens of
runs; a single warm-up left a measured run's place in the order worth 10-15%), then per
workload ``repeat`` measured runs, interleaved across systems (run 1 of every system, then run 2, ...; each pass rotates
the order, see ``rotated``) so that noise on the shared machine spreads over all systems
rather than hitting one.

A run's time covers the system's whole evaluation plus a ``count()`` of its result
(the peers return an already computed result; for sparklog the count forces evaluation if
its result is lazy). The correctness check, ``distinct().count()`` against the workload's
expected TC size, is made after the clock stops.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sparklog.defaults import CODEGEN_CACHE_ENTRIES

from . import peers, workloads

DEFAULT_WORKLOADS = "chain:200,tree-down:12,tree-up:12"
DEFAULT_SYSTEMS = "sparklog,typical,expert,sql"
DEFAULT_WARMUP = "chain:30"
SYSTEM_ORDER = ("sparklog", "sparklog-eager", "sparklog-serial", "sparklog-codegen",
                "sparklog-optimized", "sparklog-no-reuse", "typical",
                "expert", "sql")
# sparklog with a mechanism switched off, to measure what the mechanism is worth
SPARKLOG_VARIANTS = {"sparklog": {}, "sparklog-eager": {"deferred": False},
                     "sparklog-serial": {"pipelined": False},
                     "sparklog-codegen": {"codegen_rows": 0},
                     "sparklog-optimized": {"reuse_plans": "optimized"},
                     "sparklog-no-reuse": {"reuse_plans": "off"}}
DEFAULT_OUT = Path(__file__).resolve().parent / "results"

TC_PROGRAM = """\
.decl edge(x:number, y:number)
.input edge
.decl tc(x:number, y:number)
.output tc

tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), edge(z, y).
"""

SystemFn = Callable[[Any, Any], tuple[Any, int]]


# --------------------------------------------------------------------------------------
# systems
# --------------------------------------------------------------------------------------


def load_sparklog() -> tuple[Any | None, str | None]:
    """Import sparklog (installed, or from this repo's src/). Returns (module, why_not)."""
    try:
        import sparklog  # type: ignore[import-not-found]
    except ImportError:
        src = Path(__file__).resolve().parent.parent / "src"
        if src.is_dir() and str(src) not in sys.path:
            sys.path.insert(0, str(src))
        try:
            import sparklog  # type: ignore[import-not-found]  # noqa: F811
        except Exception as exc:  # ImportError, or an error inside the half-written package
            return None, f"sparklog is not importable yet ({type(exc).__name__}: {exc})"
    except Exception as exc:
        return None, f"importing sparklog failed ({type(exc).__name__}: {exc})"
    missing = [name for name in ("Engine", "Program") if not hasattr(sparklog, name)]
    if missing:
        return None, f"sparklog has no {', '.join(missing)} yet (module {sparklog.__file__})"
    return sparklog, None


def make_sparklog_system(sparklog: Any, **options: Any) -> SystemFn:
    # the rules as written (linear rounds), as the loops beside it run them; the closure
    # strategies are measured by benchmarks/closure.py
    options = {"strategy": "asis", **options}

    def sparklog_tc(spark: Any, edges_df: Any) -> tuple[Any, int]:
        from pyspark.sql import functions as F

        engine = sparklog.Engine(spark=spark, **options)
        program = sparklog.Program.from_text(TC_PROGRAM)
        edge = edges_df.select(F.col("src").alias("x"), F.col("dst").alias("y"))
        result = engine.run(program, inputs={"edge": edge})
        df = result["tc"]
        iterations = max(
            (int(r["iteration"]) for r in result.stats if r["relation"] == "tc"), default=0
        )
        return df, iterations

    return sparklog_tc


def resolve_systems(names: list[str], log: Callable[[str], None]) -> tuple[dict[str, SystemFn], dict[str, str]]:
    """Map system names to functions; a system that can't run goes to the `skipped` dict."""
    systems: dict[str, SystemFn] = {}
    skipped: dict[str, str] = {}
    for name in names:
        if name in SPARKLOG_VARIANTS:
            module, why_not = load_sparklog()
            if module is None:
                skipped[name] = why_not or "unavailable"
                log(f"!! SKIPPING sparklog: {why_not}")
            else:
                systems[name] = make_sparklog_system(module, **SPARKLOG_VARIANTS[name])
        elif name in peers.PEERS:
            systems[name] = peers.PEERS[name]
        else:
            raise SystemExit(f"unknown system {name!r}; expected some of {', '.join(SYSTEM_ORDER)}")
    return systems, skipped


# --------------------------------------------------------------------------------------
# machine facts
# --------------------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine_facts(spark: Any) -> dict[str, Any]:
    try:
        java = spark.sparkContext._jvm.System.getProperty("java.version")
    except Exception:
        java = "unknown"
    facts = machine_facts_static()
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "nproc": facts.pop("nproc"),
        "memory_gib": facts.pop("memory_gib"),
        "cpu_model": facts.pop("cpu_model"),
        "python": facts.pop("python"),
        "pyspark": facts.pop("pyspark"),
        "java": java,
        "spark_master": spark.sparkContext.master,
        "shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "loadavg_start": _read("/proc/loadavg").split()[:3],
        "note": "shared, noisy 2-core machine: compare medians and ratios only",
    }


def machine_facts_static() -> dict[str, Any]:
    """What machine_facts knows without a Spark session."""
    cpu_model = next(
        (line.split(":", 1)[1].strip() for line in _read("/proc/cpuinfo").splitlines()
         if line.startswith("model name")),
        platform.processor() or "unknown",
    )
    mem_kib = next(
        (int(line.split()[1]) for line in _read("/proc/meminfo").splitlines()
         if line.startswith("MemTotal:")),
        0,
    )
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count() or 0
    import pyspark

    return {"nproc": nproc, "memory_gib": round(mem_kib / 1024**2, 1), "cpu_model": cpu_model,
            "python": platform.python_version(), "pyspark": pyspark.__version__}


# --------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------


def start_spark(shuffle_partitions: int = 4) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparklog-benchmarks")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        # as sparklog starts its own sessions; every peer shares it (session.default_conf)
        .config("spark.sql.codegen.cache.maxEntries", str(CODEGEN_CACHE_ENTRIES))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def edges_dataframe(spark: Any, wl: workloads.Workload) -> Any:
    df = spark.createDataFrame(wl.edges, "src long, dst long")
    return df.localCheckpoint()  # materialized once, outside any timing


def _next_job_id(spark: Any) -> int | None:
    """The scheduler's next job id: the difference over a run is the number of jobs it started.

    (The status tracker keeps only the last spark.ui.retainedJobs = 1000 jobs, too few for the
    typical loop on chain:200, so job-group counts would be capped.)
    """
    try:
        value = spark.sparkContext._jsc.sc().dagScheduler().nextJobId()
        return int(value.get()) if hasattr(value, "get") else int(value)
    except Exception:
        return None


def run_once(spark: Any, system: str, fn: SystemFn, wl: workloads.Workload, edges_df: Any, tag: str) -> dict[str, Any]:
    sc = spark.sparkContext
    group = f"bench-{tag}-{system}-{wl.name}-{time.monotonic_ns()}"
    sc.setJobGroup(group, group)
    gc.collect()
    loadavg = _read("/proc/loadavg").split()[:1]
    try:
        first_job = _next_job_id(spark)
        t0 = time.perf_counter()
        result_df, iterations = fn(spark, edges_df)
        rows = result_df.count()
        seconds = time.perf_counter() - t0
        last_job = _next_job_id(spark)
        if first_job is not None and last_job is not None:
            jobs = last_job - first_job
        else:
            jobs = len(sc.statusTracker().getJobIdsForGroup(group))
        distinct_pairs = result_df.distinct().count()
    except Exception as exc:
        return {
            "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:500],
            "traceback": traceback.format_exc()[-4000:],
            "ok": False,
        }
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    iterations = int(iterations)
    return {
        "seconds": round(seconds, 4),
        "iterations": iterations,
        "s_per_iteration": round(seconds / iterations, 4) if iterations else None,
        "rows": rows,
        "distinct_pairs": distinct_pairs,
        "expected": wl.expected_tc,
        "ok": distinct_pairs == wl.expected_tc,
        "spark_jobs": jobs,
        "loadavg_1min_at_start": float(loadavg[0]) if loadavg else None,
    }


def rotated(systems: list[str], rep: int) -> list[str]:
    """The order of pass ``rep``: the systems' list rotated by ``rep``.

    Spark's generated-code cache and the JIT favour a run that follows a run of the same
    system (measured here: 10-15% on a tree(12) run), so a fixed order would favour whoever
    comes second. Rotating puts every system in every position equally often.
    """
    k = rep % len(systems) if systems else 0
    return systems[k:] + systems[:k]


def side_medians(rows: list[dict[str, Any]], sides: tuple[str, ...], count: str, same: str
                 ) -> dict[str, tuple[float, float, float, bool]]:
    """An in-process A/B's rows of one workload, per side: the median run seconds, load
    and ``count``, and whether every run's ``same`` check held."""
    out = {}
    for side in sides:
        mine = [r for r in rows if r["side"] == side]
        out[side] = (statistics.median(r["run_s"] for r in mine),
                     statistics.median(r["load"] for r in mine),
                     statistics.median(r[count] for r in mine),
                     all(r[same] for r in mine))
    return out


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def summarize(runs: list[dict[str, Any]], expected: int) -> dict[str, Any]:
    good = [r for r in runs if "error" not in r]
    sizes = sorted({r["distinct_pairs"] for r in good})
    return {
        "runs": runs,
        "median_seconds": _median([r["seconds"] for r in good]),
        "median_s_per_iteration": _median([r["s_per_iteration"] for r in good if r["s_per_iteration"] is not None]),
        "iterations": _median([r["iterations"] for r in good]),
        "result_size": sizes[0] if len(sizes) == 1 else sizes or None,
        "result_rows": _median([r["rows"] for r in good]),
        "expected_size": expected,
        "median_spark_jobs": _median([r["spark_jobs"] for r in good]),
        "ok": bool(runs) and len(good) == len(runs) and all(r["ok"] for r in good),
    }


def run(args: argparse.Namespace) -> int:
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    log_file = open(out_dir / "latest.log", "w", encoding="utf-8")

    def log(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    wls = [workloads.make(s.strip()) for s in args.workloads.split(",") if s.strip()]
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    systems, skipped = resolve_systems(names, log)
    if not systems:
        log("nothing to run")
        return 2

    spark = start_spark(args.shuffle_partitions)
    facts = machine_facts(spark)
    log(f"machine: {json.dumps(facts)}")
    log(f"systems: {', '.join(systems)}; skipped: {skipped or 'none'}; workloads: "
        f"{', '.join(w.name for w in wls)}; repeat {args.repeat}")

    report: dict[str, Any] = {
        "machine": facts,
        "config": {
            "workloads": [w.name for w in wls],
            "systems": names,
            "repeat": args.repeat,
            "warmup": args.warmup,
            "warmup_runs": args.warmup_runs,
            "timing": "system call + count() of its result; distinct-pair check after the clock stops",
        },
        "skipped": skipped,
        "results": {},
        "mismatches": [],
    }

    def applicable(system: str, wl: workloads.Workload) -> str | None:
        if system == "sql" and not wl.is_dag:
            return "SQL WITH RECURSIVE (UNION ALL) enumerates paths: runs only on DAGs"
        return None

    # warm-up passes over every system
    if args.warmup != "none":
        warm = wls[0] if args.warmup == "first" else workloads.make(args.warmup)
        warm_edges = edges_dataframe(spark, warm)
        for rep in range(args.warmup_runs):
            for system in rotated(list(systems), rep):
                if applicable(system, warm):
                    continue
                r = run_once(spark, system, systems[system], warm, warm_edges, "warmup")
                status = r.get("error") or f"{r['seconds']:.2f}s ok={r['ok']}"
                log(f"warm-up {rep + 1} {system:9} {warm.name:14} {status}")

    for wl in wls:
        edges_df = edges_dataframe(spark, wl)
        runs: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
        for system in systems:
            why = applicable(system, wl)
            if why:
                log(f"skip {system} on {wl.name}: {why}")
                runs.pop(system)
        for rep in range(args.repeat):
            for system in rotated(list(runs), rep):
                r = run_once(spark, system, systems[system], wl, edges_df, f"r{rep}")
                runs[system].append(r)
                if "error" in r:
                    log(f"!! ERROR {system} on {wl.name} run {rep + 1}: {r['error']}")
                    continue
                flag = "ok" if r["ok"] else (
                    f"!!! MISMATCH: {r['distinct_pairs']} distinct pairs, expected {r['expected']} !!!")
                log(f"{wl.name:14} {system:9} run {rep + 1}/{args.repeat}: {r['seconds']:8.2f}s "
                    f"{r['iterations']:4d} it {r['s_per_iteration'] or 0:.3f} s/it "
                    f"rows={r['rows']} distinct={r['distinct_pairs']} jobs={r['spark_jobs']} "
                    f"load={r['loadavg_1min_at_start']} {flag}")
        report["results"][wl.name] = {}
        for system, rs in runs.items():
            summary = summarize(rs, wl.expected_tc)
            report["results"][wl.name][system] = summary
            if not summary["ok"]:
                report["mismatches"].append(f"{system} on {wl.name}")
        _write(out_dir, report)  # partial results survive an interrupted run

    report["machine"]["loadavg_end"] = _read("/proc/loadavg").split()[:3]
    _write(out_dir, report)
    log(f"wrote {out_dir / 'latest.json'} and {out_dir / 'latest.md'}")
    print()
    print((out_dir / "latest.md").read_text())
    if report["mismatches"]:
        log("!!! WRONG OR FAILED RESULTS: " + "; ".join(report["mismatches"]) + " !!!")
    log_file.close()
    spark.stop()
    return 1 if report["mismatches"] else 0


# --------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------


def _fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or not b else f"{a / b:.2f}×"


def _warmup_text(config: dict[str, Any]) -> str:
    if config.get("warmup", "none") == "none":
        return "no warm-up · "
    return f"{config.get('warmup_runs', 1)} warm-up runs per system on {config['warmup']} · "


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# sparklog benchmarks: linear transitive closure",
        "",
        f"{m['date']} · {m['nproc']} cores ({m['cpu_model']}) · {m['memory_gib']} GiB · "
        f"Python {m['python']} · PySpark {m['pyspark']} · Java {m['java']} · "
        f"{m['spark_master']}, {m['shuffle_partitions']} shuffle partitions · "
        f"{_warmup_text(report['config'])}{report['config']['repeat']} runs each, medians "
        f"shown. Load average (1/5/15 min) "
        f"at start {' '.join(m.get('loadavg_start') or ['?'])}, at end "
        f"{' '.join(m.get('loadavg_end') or ['?'])}.",
        "",
        "Numbers come from a shared, noisy 2-core machine: read medians and ratios, not "
        "absolute times. × sparklog (× expert) = the system's median seconds divided by "
        "sparklog's (expert's) median seconds on the same workload; above 1× is slower.",
        "",
        "| workload | system | median s | iterations | median s/iteration | × sparklog | × expert "
        "| jobs/run | distinct pairs (expected) | ok |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for wl, by_system in report["results"].items():
        base = (by_system.get("sparklog") or {}).get("median_seconds")
        expert = (by_system.get("expert") or {}).get("median_seconds")
        for system in sorted(by_system, key=lambda s: SYSTEM_ORDER.index(s) if s in SYSTEM_ORDER else 99):
            s = by_system[system]
            it = s["iterations"]
            size = s["result_size"]
            size_text = f"{size} ({s['expected_size']})"
            if system == "sql" and s.get("result_rows") is not None and s["result_rows"] != size:
                size_text += f", {int(s['result_rows'])} path rows"
            lines.append(
                f"| {wl} | {system} | {_fmt(s['median_seconds'])} | {'—' if it is None else int(it)} "
                f"| {_fmt(s['median_s_per_iteration'], 3)} | {_ratio(s['median_seconds'], base)} "
                f"| {_ratio(s['median_seconds'], expert)} "
                f"| {'—' if s['median_spark_jobs'] is None else int(s['median_spark_jobs'])} "
                f"| {size_text} | {'yes' if s['ok'] else '**NO — MISMATCH/ERROR**'} |"
            )
    paired = paired_ratios(report)
    if paired:
        lines += ["", "sparklog ÷ expert, run by run (the two systems' i-th runs ran in the same pass): "
                  + "; ".join(f"{wl} median {m:.2f}× (range {lo:.2f}-{hi:.2f}×, sparklog faster "
                              f"in {k} of {n})" for wl, (m, lo, hi, k, n) in paired.items()) + "."]
    if report["skipped"]:
        lines += ["", "Skipped: " + "; ".join(f"{k}: {v}" for k, v in report["skipped"].items())]
    for note in report.get("notes", []):
        lines += ["", f"Note: {note}"]
    if report["mismatches"]:
        lines += ["", "**WRONG OR FAILED RESULTS: " + "; ".join(report["mismatches"]) + "**"]
    lines += [
        "",
        "Iterations: rounds of the recursive rule evaluated, the last (empty) one included; "
        "for sql, recursion levels produced (max level). sparklog: max `iteration` in its stats "
        "for `tc`. jobs/run: Spark jobs started by one run (including the final count).",
        "",
    ]
    return "\n".join(lines)


def paired_ratios(report: dict[str, Any]) -> dict[str, tuple[float, float, float, int, int]]:
    """Per workload: sparklog's time over expert's for each run index, summarized.

    Runs are interleaved, so the i-th runs of both systems met about the same machine load;
    the spread of these ratios says how far one median ratio can be trusted on a noisy machine.
    """
    out = {}
    for wl, by_system in report["results"].items():
        a, b = (by_system.get(s, {}).get("runs", []) for s in ("sparklog", "expert"))
        ratios = [x["seconds"] / y["seconds"] for x, y in zip(a, b)
                  if "seconds" in x and "seconds" in y and y["seconds"]]
        if ratios:
            out[wl] = (statistics.median(ratios), min(ratios), max(ratios),
                       sum(r < 1 for r in ratios), len(ratios))
    return out


def _write(out_dir: Path, report: dict[str, Any]) -> None:
    (out_dir / "latest.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (out_dir / "latest.md").write_text(markdown(report), encoding="utf-8")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time sparklog against hand-written PySpark peers on transitive closure.",
    )
    p.add_argument("--workloads", default=DEFAULT_WORKLOADS,
                   help=f"comma-separated KIND:SIZE, KIND in chain, tree-down, tree-up (default {DEFAULT_WORKLOADS})")
    p.add_argument("--repeat", type=int, default=3, help="measured runs per system and workload (default 3)")
    p.add_argument("--systems", default=DEFAULT_SYSTEMS,
                   help=f"comma-separated subset of {DEFAULT_SYSTEMS} (default: all)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="output folder (default benchmarks/results)")
    p.add_argument("--warmup", default=DEFAULT_WARMUP,
                   help=f"workload for the warm-up runs, 'first' for the first "
                        f"workload, or 'none' (default {DEFAULT_WARMUP})")
    p.add_argument("--warmup-runs", type=int, default=5,
                   help="warm-up runs per system before any measurement (default 5)")
    p.add_argument("--shuffle-partitions", type=int, default=4, help="session's spark.sql.shuffle.partitions (default 4)")
    p.add_argument("--render", metavar="JSON",
                   help="only rewrite latest.md beside JSON (a latest.json) from it, running nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.render:
        src = Path(args.render)
        report = json.loads(src.read_text(encoding="utf-8"))
        (src.parent / "latest.md").write_text(markdown(report), encoding="utf-8")
        print(markdown(report))
        return 0
    if args.repeat < 1:
        raise SystemExit("--repeat must be >= 1")
    if args.warmup_runs < 1:
        raise SystemExit("--warmup-runs must be >= 1 (use --warmup none for no warm-up)")
    return run(args)
