"""Same generation on a random forest: sparklog against the best hand-written DataFrame loop.

    python3 -m benchmarks.same_generation [--n 2000] [--repeat 3] [--seed 1]
        [--sparklog-options key=value,...] [--config NAME:key=value,...]... [--out DIR]

The program is ``SG_PROGRAM`` below (``sg(x, y) :- e(a, x), sg(a, b), e(b, y).`` and its
base rule). ``e(parent, child)`` are the edges of a random forest of ``--n`` nodes: node
``i > 0`` gets a parent drawn uniformly from ``[0, i)`` with probability ``--p-parent`` (0.9), else it is a
new root (``random.Random(--seed)``). ``sg`` then holds the ordered pairs of distinct nodes
at the same depth (at least 1) of the same tree.

Systems, all in one ``local[2]`` SparkSession with 2 partitions:

* ``sparklog`` (and every ``--config NAME:key=value,...``, repeatable): ``sparklog.Engine``
  with ``partitions=2`` and the given options (values that look like ints are ints;
  ``none``, ``true``, ``false`` and floats are understood too). ``--sparklog-options``
  gives the options of the default ``sparklog`` configuration.
* ``expert``: semi-naive evaluation written by hand in the DataFrame API (see
  :func:`expert_sg`): ``e`` hash-partitioned on the parent once and checkpointed, ``sg``
  stored partitioned on its first column, two shuffles and one Spark job per round.

First one warm-up run of every system on a forest of ``--warmup-n`` (200) nodes, then
``--repeat`` measured runs, interleaved (run 1 of every system, then run 2, ...; each pass
rotates the order, see ``runner.rotated``). A run's time covers the evaluation plus a
``count()`` of the result; the check (distinct pairs against the number computed in pure
Python) is made after the clock stops, and a mismatch or a failure marks the row ok=false.
Writes ``DIR/same_generation.json`` and ``DIR/same_generation.md`` (DIR: ``--out``,
default benchmarks/results); exits 1 if any run was wrong or failed.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
import traceback
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import runner

RESULTS = Path(__file__).resolve().parent / "results"

SG_PROGRAM = """\
.decl e(x:number, y:number)
.input e
.decl sg(x:number, y:number)
.output sg
sg(x, y) :- e(a, x), e(a, y), x != y.
sg(x, y) :- e(a, x), sg(a, b), e(b, y).
"""

PARTITIONS = 2


# --------------------------------------------------------------------------------------
# the workload and its expected result
# --------------------------------------------------------------------------------------


def forest(n: int, seed: int, p_parent: float = 0.9) -> list[tuple[int, int]]:
    """Edges (parent, child) of a random forest over nodes 0..n-1."""
    rng = random.Random(seed)
    edges = []
    for i in range(1, n):
        if rng.random() < p_parent:
            edges.append((rng.randrange(i), i))
    return edges


def expected_sg(edges: list[tuple[int, int]]) -> tuple[int, int]:
    """(number of sg pairs, recursive rounds) by semi-naive iteration over Python sets.

    Rounds count the evaluations of the recursive rule, the last one (which derives
    nothing new) included, as the expert loop counts them.
    """
    children: dict[int, list[int]] = defaultdict(list)
    for parent, child in edges:
        children[parent].append(child)
    sg = {(x, y) for kids in children.values() for x in kids for y in kids if x != y}
    delta, rounds = set(sg), 0
    while delta:
        rounds += 1
        derived = {(x, y) for a, b in delta for x in children.get(a, ())
                   for y in children.get(b, ())}
        delta = derived - sg
        sg |= delta
    return len(sg), rounds


def forest_facts(n: int, edges: list[tuple[int, int]]) -> dict[str, int]:
    parent = dict((c, p) for p, c in edges)
    depth = [0] * n
    for i in range(n):  # parents precede their children
        depth[i] = depth[parent[i]] + 1 if i in parent else 0
    return dict(nodes=n, edges=len(edges), roots=n - len(edges), max_depth=max(depth, default=0))


# --------------------------------------------------------------------------------------
# systems: (spark, e DataFrame (x long, y long)) -> (result DataFrame (x, y), rounds, extra)
# --------------------------------------------------------------------------------------

# (result DataFrame, rounds, extra facts for the JSON)
System = Callable[[Any, Any], tuple[Any, int, dict[str, Any]]]


def make_sparklog(spark: Any, options: dict[str, Any]) -> System:
    import sparklog

    engine = sparklog.Engine(spark=spark, **{"partitions": PARTITIONS, **options})
    program = sparklog.Program.from_text(SG_PROGRAM)

    def run(spark: Any, edges_df: Any) -> tuple[Any, int, dict[str, Any]]:
        result = engine.run(program, inputs={"e": edges_df})
        mine = [r for r in result.stats if r["relation"] == "sg"]
        rounds = max((int(r["iteration"]) for r in mine), default=0)
        extra = dict(size=result.size("sg"),
                     spark_jobs=sum(r.get("spark_jobs") or 0 for r in result.stats),
                     round_seconds=[r["seconds"] for r in mine if r["iteration"] >= 1])
        return result["sg"], rounds, extra

    return run


def expert_sg(spark: Any, edges_df: Any, *, partitions: int = PARTITIONS,
              explain: bool = False) -> tuple[Any, int, dict[str, Any]]:
    """Semi-naive sg the way an expert writes it in the DataFrame API.

    * ``e(p, c)`` is hash-partitioned on the parent ``p``, sorted within partitions and
      localCheckpointed once. ``full(x, y, it)`` (sg with the round that derived each pair)
      is kept hash-partitioned on ``x`` and sorted on (x, y), so the first join of a round,
      ``delta(a, b) ⋈ e(a, x)``, and the base rule's self-join of ``e`` shuffle nothing.
    * The pairs ``(x, b)`` are repartitioned on ``b`` for the second join ``⋈ e(b, y)``
      (exchange 1), the derived ``(x, y)`` on ``x`` (exchange 2); ``distinct`` and the
      anti-join against ``full`` then run inside those partitions.
    * ``full ∪ new`` (tagged with the round number) is localCheckpointed: the round's one
      Spark job, which cuts the lineage; the number of new pairs comes from an Observation
      on that job (a count, no relation data reaches the driver). Delta is
      ``full.filter(it == i)``. The loop stops after the round that derives nothing new.
    Session settings as in peers.EXPERT_CONF (no AQE, no broadcasts, hash partitioning on a
    subset of the keys co-partitions), restored afterwards.
    """
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from .peers import EXPERT_CONF, session_conf

    P = partitions
    with session_conf(spark, {**EXPERT_CONF, "spark.sql.shuffle.partitions": str(P)}):
        e = (edges_df.select(F.col("x").alias("p"), F.col("y").alias("c"))
             .repartition(P, "p").sortWithinPartitions("p", "c").localCheckpoint())
        left = e.select(F.col("p").alias("a"), F.col("c").alias("x"))
        right = e.select(F.col("p").alias("a"), F.col("c").alias("y"))
        base = (left.join(right, "a").where(F.col("x") != F.col("y")).select("x", "y")
                .repartition(P, "x").distinct())
        full = (base.withColumn("it", F.lit(0)).sortWithinPartitions("x", "y")
                .localCheckpoint())
        e_by_a = e.select(F.col("p").alias("a"), F.col("c").alias("x"))
        e_by_b = e.select(F.col("p").alias("b"), F.col("c").alias("y"))
        rounds = 0
        while True:
            i = rounds
            rounds += 1
            delta = full.filter(F.col("it") == F.lit(i)).select(
                F.col("x").alias("a"), F.col("y").alias("b"))
            derived = (
                delta.join(e_by_a, "a").select("x", "b")
                .repartition(P, "b").join(e_by_b, "b").select("x", "y")
                .repartition(P, "x").distinct()
            )
            new = derived.join(full.select("x", "y"), ["x", "y"], "left_anti")
            obs = Observation(f"sg_new_{i + 1}")
            new = new.observe(obs, F.count(F.lit(1)).alias("n"))
            step = (full.unionByName(new.withColumn("it", F.lit(i + 1)))
                    .sortWithinPartitions("x", "y"))
            if explain:
                print(step._jdf.queryExecution().executedPlan().toString())
            full = step.localCheckpoint()  # the round's one job
            if obs.get["n"] == 0:
                break
    return full.select("x", "y"), rounds, {}


# --------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------


def parse_options(text: str) -> dict[str, Any]:
    """``key=value,...`` -> {key: value}, values read as int, float, None or bool if they can."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        if "=" not in item:
            raise SystemExit(f"option {item!r}: expected key=value")
        key, value = (s.strip() for s in item.split("=", 1))
        options[key] = _value(value)
    return options


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def configurations(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    configs = {"sparklog": parse_options(args.sparklog_options)}
    for spec in args.config:
        name, _, rest = spec.partition(":")
        name = name.strip()
        if not name or name == "expert" or name in configs:
            raise SystemExit(f"--config {spec!r}: the name must be new and not 'expert'")
        configs[name] = parse_options(rest)
    from dataclasses import fields

    from sparklog.errors import UsageError
    from sparklog.options import Options

    known = {f.name for f in fields(Options)}
    for name, options in configs.items():  # checked before Spark starts
        unknown = sorted(set(options) - known)
        if unknown:
            raise SystemExit(f"{name}: unknown sparklog option {unknown[0]!r}; the options "
                             f"are {', '.join(sorted(known))}")
        try:
            Options(**{"partitions": PARTITIONS, **options})
        except UsageError as exc:
            raise SystemExit(f"{name}: {exc}") from None
    return configs


def run_once(spark: Any, fn: System, edges_df: Any, expected: int) -> dict[str, Any]:
    gc.collect()
    load = float(open("/proc/loadavg").read().split()[0])
    try:
        started = time.perf_counter()
        df, rounds, extra = fn(spark, edges_df)
        rows = df.count()
        seconds = time.perf_counter() - started
        pairs = df.distinct().count()
    except Exception as exc:
        return dict(error=f"{type(exc).__name__}: {exc}".splitlines()[0][:500],
                    traceback=traceback.format_exc()[-4000:], ok=False, loadavg_1min=load)
    return dict(seconds=round(seconds, 4), rounds=int(rounds), rows=rows,
                distinct_pairs=pairs, expected=expected, ok=pairs == expected,
                loadavg_1min=load, **extra)


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in runs if "error" not in r]
    seconds = [r["seconds"] for r in good]
    return dict(runs=runs, seconds=seconds,
                median_seconds=round(statistics.median(seconds), 4) if seconds else None,
                rounds=sorted({r["rounds"] for r in good}),
                distinct_pairs=sorted({r["distinct_pairs"] for r in good}),
                ok=bool(runs) and len(good) == len(runs) and all(r["ok"] for r in good))


def edges_frame(spark: Any, edges: list[tuple[int, int]]) -> Any:
    df = spark.createDataFrame(edges, "x long, y long")
    return df.localCheckpoint()  # materialized once, outside any timing


def describe(run: dict[str, Any]) -> str:
    if "error" in run:
        return f"ERROR {run['error']}"
    flag = "ok" if run["ok"] else f"MISMATCH (expected {run['expected']})"
    return (f"{run['seconds']:8.2f} s {run['rounds']:3d} rounds {run['distinct_pairs']} pairs "
            f"load {run['loadavg_1min']} {flag}")


def main() -> int:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.same_generation",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=2000, help="nodes of the forest")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--p-parent", type=float, default=0.9,
                   help="probability that a node has a parent (else it is a root)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--warmup-n", type=int, default=200, help="nodes of the warm-up forest; 0: none")
    p.add_argument("--sparklog-options", default="", help="key=value,... for 'sparklog'")
    p.add_argument("--config", action="append", default=[], metavar="NAME:key=value,...",
                   help="another sparklog configuration (repeatable)")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args()
    configs = configurations(args)

    load_start = open("/proc/loadavg").read().split()[:3]
    edges = forest(args.n, args.seed, args.p_parent)
    expected, expected_rounds = expected_sg(edges)
    facts = forest_facts(args.n, edges)
    print(f"forest: {json.dumps(facts)}; expected {expected} sg pairs, "
          f"{expected_rounds} recursive rounds", flush=True)

    from sparklog.spark import session

    spark = session.start(f"local[{PARTITIONS}]", partitions=PARTITIONS)
    machine = runner.machine_facts(spark)
    machine["loadavg_start"] = load_start
    systems: dict[str, System] = {name: make_sparklog(spark, options)
                                  for name, options in configs.items()}
    systems["expert"] = expert_sg
    names = list(systems)

    warmup: dict[str, Any] = {}
    if args.warmup_n > 0:
        warm_edges = forest(args.warmup_n, args.seed, args.p_parent)
        warm_expected = expected_sg(warm_edges)[0]
        warm_df = edges_frame(spark, warm_edges)
        for name in names:
            r = run_once(spark, systems[name], warm_df, warm_expected)
            warmup[name] = r
            print(f"warm-up   {name:12} {describe(r)}", flush=True)

    edges_df = edges_frame(spark, edges)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for rep in range(args.repeat):
        for name in runner.rotated(names, rep):
            r = run_once(spark, systems[name], edges_df, expected)
            runs[name].append(r)
            print(f"run {rep + 1}/{args.repeat} {name:12} {describe(r)}", flush=True)

    results = {name: summarize(rs) for name, rs in runs.items()}
    base = results["expert"]["median_seconds"]
    for summary in results.values():
        mine = summary["median_seconds"]
        summary["over_expert"] = round(mine / base, 3) if mine is not None and base else None
    machine["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    report = dict(
        machine=machine,
        config=dict(n=args.n, seed=args.seed, p_parent=args.p_parent, repeat=args.repeat,
                    warmup_n=args.warmup_n, partitions=PARTITIONS,
                    sparklog_configs=configs,
                    timing="evaluation + count() of the result; distinct-pair check after "
                           "the clock stops"),
        forest=facts, expected_pairs=expected, expected_rounds=expected_rounds,
        warmup=warmup, results=results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "same_generation.json").write_text(json.dumps(report, indent=1) + "\n")
    text = markdown(report)
    (args.out / "same_generation.md").write_text(text)
    print()
    print(text)
    spark.stop()
    bad = [name for name, s in results.items() if not s["ok"]]
    if bad:
        print(f"!!! WRONG OR FAILED RESULTS: {', '.join(bad)} !!!", flush=True)
    return 1 if bad else 0


def markdown(report: dict[str, Any]) -> str:
    m, c, f = report["machine"], report["config"], report["forest"]
    configs = "; ".join(f"{name}: {', '.join(f'{k}={v}' for k, v in opts.items()) or 'defaults'}"
                        for name, opts in c["sparklog_configs"].items())
    warm = (f"One warm-up run per system on {c['warmup_n']} nodes, then "
            if c["warmup_n"] else "No warm-up; ")
    lines = [
        "# Same generation on a random forest: sparklog vs the expert DataFrame loop",
        "",
        f"{m['date']} · {m['cpu_model']}, {m['nproc']} cores, {m['memory_gib']} GiB · "
        f"Python {m['python']}, PySpark {m['pyspark']}, Java {m['java']} · "
        f"`{m['spark_master']}`, {c['partitions']} partitions · load average "
        f"{' '.join(m['loadavg_start'])} at start, {' '.join(m['loadavg_end'])} at end.",
        "",
        f"Forest: {f['nodes']} nodes, {f['edges']} edges, {f['roots']} roots, depth "
        f"{f['max_depth']} (seed {c['seed']}, parent probability {c['p_parent']}). "
        f"{warm}"
        f"{c['repeat']} measured runs per system, interleaved; a run is the evaluation plus "
        f"a count() of sg. sparklog configurations: {configs}.",
        "",
        "| system | median s | runs | rounds | sg pairs (expected) | ok | ÷ expert |",
        "| --- | ---: | --- | ---: | ---: | --- | ---: |",
    ]
    for name, s in report["results"].items():
        median = "—" if s["median_seconds"] is None else f"{s['median_seconds']:.2f}"
        runs = ", ".join("err" if "error" in r else f"{r['seconds']:.2f}" for r in s["runs"])
        rounds = ", ".join(str(r) for r in s["rounds"]) or "—"
        pairs = ", ".join(str(n) for n in s["distinct_pairs"]) or "—"
        ratio = "—" if s["over_expert"] is None else f"{s['over_expert']:.2f}×"
        lines.append(f"| {name} | {median} | {runs} | {rounds} | {pairs} "
                     f"({report['expected_pairs']}) | {'yes' if s['ok'] else '**NO**'} | "
                     f"{ratio} |")
    errors = [f"{name} run {i + 1}: {r['error']}" for name, s in report["results"].items()
              for i, r in enumerate(s["runs"]) if "error" in r]
    if errors:
        lines += ["", "Errors:", ""] + [f"- {e}" for e in errors]
    lines += ["", f"Rounds: the recursive rule's evaluations, the last (empty) one included; "
              f"pure Python needs {report['expected_rounds']}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
