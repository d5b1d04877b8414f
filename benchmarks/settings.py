"""Settings of the local driver JVM and its Spark that only a fresh session takes, compared
cold: one ``sparklog run`` per run, the settings interleaved (their order alternating, so
the machine's noise falls on both), every run's output checked.

    python3 -m benchmarks.settings --compare jit|c2-late|code-cache|combine [--workloads ...] [--repeat 3]

``--compare jit``: the JVM's tiered C1+C2 (sparklog's default, C2 late) against C1 alone
(``-XX:TieredStopAtLevel=1``). In local mode the driver's JVM runs every task; a fresh JVM
compiles Spark's hot code while the run goes on, and C2 spends seconds of CPU on it, taken
from the tasks on a machine of few cores; a run of many rounds is slower without C2's code.

``--compare c2-late``: the JVM's tiered compilers with C2 called in ten times later
(``-XX:Tier4InvocationThreshold`` and the other tier-4 thresholds x10; sparklog's default
since 2026-12-03, session.LATE_C2) against the JVM's own thresholds: C1 still compiles
early, C2 spends its seconds only on the hottest code, which a long recursion still
reaches. ``--compare jit`` measured C1 alone against the JVM's own thresholds before that.

``--compare code-cache``: room for 4,096 compiled classes (sparklog's default) against
Spark's 100 (``spark.sql.codegen.cache.maxEntries``, a static setting). A run's rounds and
strata compile hundreds of distinct classes and come back to each; with 100 entries each is
evicted before its next use and compiled again.

Each run is the CLI as a user runs it (class archive on, ``--master local[2]``), timed from
process start to exit. Outputs are checked: the TC sizes and the CC label sum against
../shared/data/README.md and the closure's formula; PageRank against 20 power iterations
within 1e-6; the strata chain against the same rules evaluated in Python.

Workloads: ``chain-smart`` (TC of chain(1000), Smart), ``cc`` and ``pagerank`` (20
iterations) on p2p-Gnutella08, ``sssp`` (weighted, rome99), ``email`` (left-linear TC of
email-Eu-core), ``tree17`` (left-linear TC of a complete binary tree of 17 levels, edges
down), ``chain-left`` (left-linear TC of chain(1000)), ``strata`` (60 non-recursive strata,
each a join, a negation or a comparison over the one before, as program analyses chain
them). Writes results/jit.{json,md} or results/code-cache.{json,md}.

``--compare combine``: ``--combine off`` against the default ``auto`` (the combine before
the round's one shuffle, Options.combine); writes results/combine-cold.{json,md}.

``--compare join-dedup``: ``--join-dedup off`` against the default (a rule's rows drop the
variables no later step reads, and the duplicates that leaves, before each join); writes
results/join-dedup.{json,md}. ``cspa`` is Graspan's context-sensitive alias analysis
(programs/cspa.dl) on a random points-to graph (300 variables, 300 assignments, 150
dereferences, seed 5; ``cspa-600`` twice that), checked against the same fixpoint
computed with scipy's sparse matrices.

``--compare inline-totals``: ``--no-inline-totals`` against the default (the rules of a
stratum read a $SUM relation's totals where they are summed, rewrite/totals.py: PageRank
takes two rounds an iteration instead of three); writes results/inline-totals.{json,md}.

``--compare smart-end``: ``--no-smart-end`` against the default (a Smart closure stops
after the round that found no path whose length is a power of two, ir/smart.py), on
``chain-smart``, ``chain2000-smart`` and ``tree12-smart`` (longest paths 1000, 2000 and 11
arcs: a round saved each) and ``tree17-smart`` (16 arcs, a power of two: no round saved,
the control); writes results/smart-end.{json,md}.

``--compare presum``: ``--no-presum`` against the default (a staged $SUM whose
contributions are each derived once stores a sum per key and round, ir/presum.py: PageRank
a share per node, not one per edge); writes results/presum.{json,md}.

``--compare inline-constants``: ``--no-inline-constants`` against the default (a recursive
rule's one-row parameters, PageRank's ``iterations(k)``, ``damping(a)`` and ``size(c)``,
read once per stratum as literals, not cross-joined every round: Database.constant_rows);
writes results/inline-constants.{json,md}.

``--compare replicate-static``: ``--replicate-static off`` (a linear recursion placed by
the join column) against the default ``auto`` (a closure's measured edges sent to its delta
when their copies a round are few); writes results/replicate-static.{json,md}.
``lederberg`` is the left-linear TC of Lederberg.tsv.

``--compare stored-copies``: ``--no-stored-copies`` (the edges a linear recursion sends to
every sub-bucket of its delta shuffled there every round) against the default (their copies
stored once per stratum: Database.copy_view); writes results/stored-copies.{json,md}.

``--compare stored-compression``: ``--stored compressed`` (Spark's compression schemes
encode every stored batch) against the default ``columnar`` (plain batches); writes
results/stored-compression.{json,md}.

``--compare twolevel``: Spark's aggregation with its fast first-level map (the default)
against the one-level map (``spark.sql.codegen.aggregate.map.twolevel.enabled=false``);
writes results/twolevel.{json,md}.

``--compare gc``: the JVM's own collector, G1, against the Parallel collector
(``-XX:+UseParallelGC``); writes results/gc.{json,md}.

``--compare revision --baseline REV``: the code of git revision REV (checked out into a
temporary worktree) against this tree, same flags; writes results/revision.{json,md}.
``tree17-auto`` is the tree's closure with the default strategy (auto: Smart).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sparklog.spark.session import tier4_options

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DATA = ROOT.parent / "shared" / "data"
PROGRAMS = ROOT / "src" / "sparklog" / "programs"
TC_LEFT = (".decl edge(x:number, y:number)\n.input edge\n.decl tc(x:number, y:number)\n"
           ".output tc\ntc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n")
TC_NONLINEAR = TC_LEFT.replace("tc(x, z), edge(z, y)", "tc(x, z), tc(z, y)")
COMPARISONS = {
    "jit": {"C1 only": ["--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1"],
            "tiered C1+C2 (default, C2 late)": []},
    # sparklog's driver JVMs call C2 late (session.LATE_C2) unless given compiler options:
    # the JVM's own thresholds must be asked for
    "c2-late": {"C2 later (tier-4 thresholds x10)": [],
                "tiered C1+C2 (the JVM's thresholds)": [
                    "--conf", f"spark.driver.extraJavaOptions={tier4_options(1)}"]},
    "code-cache": {"100 classes (Spark's default)":
                   ["--conf", "spark.sql.codegen.cache.maxEntries=100"],
                   "4,096 classes (default)": []},
    "combine": {"no combine before the shuffle": ["--combine", "off"],
                "combine auto (default)": []},
    "join-dedup": {"no dedup between joins": ["--join-dedup", "off"],
                   "dedup between joins (default)": []},
    "inline-totals": {"totals stored, read a round later": ["--no-inline-totals"],
                      "totals read where summed (default)": []},
    "smart-end": {"Smart until a round derives nothing": ["--no-smart-end"],
                  "Smart ends after no power of two (default)": []},
    "presum": {"every contribution stored": ["--no-presum"],
               "contributions summed per key (default)": []},
    "inline-constants": {"parameters cross-joined every round": ["--no-inline-constants"],
                         "parameters read as literals (default)": []},
    "replicate-static": {"placed by the join column (off)": ["--replicate-static", "off"],
                         "edges sent to the delta (auto, default)": []},
    "stored-copies": {"edges shuffled to the delta every round": ["--no-stored-copies"],
                      "edges' copies stored once (default)": []},
    "stored-compression": {"compressed column batches": ["--stored", "compressed"],
                           "plain column batches (default)": []},
    "twolevel": {"two-level aggregation map (Spark's default)": [],
                 "one-level map": ["--conf",
                                   "spark.sql.codegen.aggregate.map.twolevel.enabled=false"]},
    "gc": {"G1 (the JVM's default)": [],
           "Parallel GC": ["--conf", "spark.driver.extraJavaOptions=-XX:+UseParallelGC"]},
    "revision": {},  # filled by main: the baseline's code, then this tree's
}
TITLES = {"jit": "JIT compilers of the local driver JVM",
          "c2-late": "C2 compiling only the hottest code (the JVM's tier-4 thresholds x10)",
          "code-cache": "Compiled classes Spark keeps (spark.sql.codegen.cache.maxEntries)",
          "combine": "The combine before the shuffle (--combine)",
          "join-dedup": "Dead variables and duplicates dropped before each join (--join-dedup)",
          "inline-totals": "$SUM totals read where they are summed (--no-inline-totals)",
          "smart-end": "Smart's last round known before it runs (--no-smart-end)",
          "presum": "$SUM contributions summed per key before they are stored (--no-presum)",
          "inline-constants": "A recursive rule's one-row parameters read as literals "
                              "(--no-inline-constants)",
          "replicate-static": "A linear recursion placed by the columns its head keeps, "
                              "its edges sent to the delta (--replicate-static)",
          "stored-copies": "The copies of the edges sent to the delta stored once per "
                           "stratum (--no-stored-copies)",
          "stored-compression": "Stored versions as compressed or plain column batches "
                                "(--stored compressed|columnar)",
          "twolevel": "Spark's two-level aggregation map against the one-level map",
          "gc": "The local driver JVM's garbage collector: G1 against Parallel",
          "revision": "This tree against an earlier revision"}
STRATA = 60


def _graph(name: str) -> list[tuple[int, int]]:
    rows = []
    for line in (DATA / name).read_text().splitlines():
        if line and not line.startswith("#"):
            a, b = line.split()[:2]
            rows.append((int(a), int(b)))
    return rows


def _rmat(scale: int) -> list[tuple[int, int]]:
    """The distinct arcs of ``sparklog gen rmat SCALE 16 --seed 0`` (benchmarks.graphs's)."""
    from sparklog import gen

    return sorted({(a, b) for a, b, *_ in gen.rmat(scale, 16, seed=0)})


def _workloads(folder: Path) -> dict[str, dict[str, Any]]:
    """name: the program, its facts folder, extra CLI arguments, and the check."""
    from sparklog import gen

    def facts(name: str, edges, **extra: str) -> Path:
        d = folder / name
        d.mkdir()
        (d / "edge.facts").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
        for relation, text in extra.items():
            (d / f"{relation}.facts").write_text(text + "\n")
        return d

    p2p = _graph("p2p-Gnutella08.tsv")
    tc_left, tc_nonlinear = folder / "tc_left.dl", folder / "tc_nonlinear.dl"
    tc_left.write_text(TC_LEFT)
    tc_nonlinear.write_text(TC_NONLINEAR)
    return {
        "chain-smart": dict(program=tc_nonlinear, facts=facts("chain", gen.chain(1000)),
                            args=["--strategy", "smart"], check=("tc", 1000 * 1001 // 2)),
        "cc": dict(program=PROGRAMS / "cc.dl", facts=facts("p2p_cc", p2p),
                   args=[], check=("cc", None)),
        "pagerank": dict(program=PROGRAMS / "pagerank.dl",
                         facts=facts("p2p_pr", p2p, iterations="20", damping="0.85"),
                         args=[], check=("pagerank", p2p)),
        # R-MAT 14 (sparklog gen rmat 14 16 --seed 0: 12,513 nodes, 228,329 arcs)
        "pagerank-rmat14": dict(program=PROGRAMS / "pagerank.dl",
                                facts=facts("rmat14_pr", rmat14 := _rmat(14), iterations="20",
                                            damping="0.85"),
                                args=[], check=("pagerank", rmat14)),
        "sssp": dict(program=PROGRAMS / "sssp.dl", facts=_weighted(folder / "rome99"),
                     args=[], check=("sssp", None)),
        "strata": dict(program=_strata(folder), facts=facts("strata", _strata_edges()),
                       args=[], check=("strata", None)),
        "email": dict(program=tc_left, facts=facts("email", _graph("email-Eu-core.tsv")),
                      args=["--strategy", "left"], check=("tc", 793_283)),
        "lederberg": dict(program=tc_left, facts=facts("lederberg", _graph("Lederberg.tsv")),
                          args=["--strategy", "left"], check=("tc", 3_359_842)),
        "tree17": dict(program=tc_left, facts=facts("tree17", gen.tree(17, "down")),
                       args=["--strategy", "left"], check=("tc", _tree_pairs(17))),
        "tree17-auto": dict(program=tc_left, facts=folder / "tree17", args=[],
                            check=("tc", _tree_pairs(17))),
        "cspa": dict(program=PROGRAMS / "cspa.dl", facts=_cspa_facts(folder / "cspa", 300),
                     args=[], check=("cspa", 300)),
        "cspa-600": dict(program=PROGRAMS / "cspa.dl",
                         facts=_cspa_facts(folder / "cspa600", 600), args=[],
                         check=("cspa", 600)),
        "chain-left": dict(program=tc_left, facts=folder / "chain", args=["--strategy", "left"],
                           check=("tc", 1000 * 1001 // 2)),
        "chain2000-smart": dict(program=tc_nonlinear, facts=facts("chain2000", gen.chain(2000)),
                                args=["--strategy", "smart"], check=("tc", 2000 * 2001 // 2)),
        "tree12-smart": dict(program=tc_nonlinear, facts=facts("tree12", gen.tree(12, "down")),
                             args=["--strategy", "smart"], check=("tc", _tree_pairs(12))),
        "tree17-smart": dict(program=tc_nonlinear, facts=facts("tree17s", gen.tree(17, "down")),
                             args=["--strategy", "smart"], check=("tc", _tree_pairs(17))),
    }


def _cspa_edges(n: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """A random points-to graph: ``n`` variables, ``n`` assignments, ``n / 2`` dereferences."""
    import random

    draw = random.Random(5)
    assign = [(draw.randrange(n), draw.randrange(n)) for _ in range(n)]
    return assign, [(draw.randrange(n), draw.randrange(n)) for _ in range(n // 2)]


def _cspa_facts(folder: Path, n: int) -> Path:
    folder.mkdir()
    for name, rows in zip(("assign", "dereference"), _cspa_edges(n)):
        (folder / f"{name}.facts").write_text("".join(f"{a}\t{b}\n" for a, b in rows))
    return folder


def _cspa_expected(n: int) -> dict[str, set[tuple[int, int]]]:
    """CSPA's least fixpoint as boolean sparse-matrix products (scipy), round by round."""
    import numpy as np
    from scipy import sparse

    assign, deref = _cspa_edges(n)

    def matrix(pairs):
        a, b = zip(*pairs) if pairs else ((), ())
        return sparse.csr_matrix((np.ones(len(pairs)), (a, b)), shape=(n, n)).astype(bool)

    a, d = matrix(assign), matrix(deref)
    used = sorted({x for pair in assign for x in pair})
    ident = matrix([(x, x) for x in used])
    vf, ma, va = (a + ident).astype(bool), ident, matrix([])
    while True:
        vf2 = (vf + a @ ma + vf @ vf).astype(bool)
        ma2 = (ma + d.T @ va @ d).astype(bool)
        va2 = (va + vf.T @ vf + vf.T @ ma @ vf).astype(bool)
        if (vf2 != vf).nnz == 0 and (ma2 != ma).nnz == 0 and (va2 != va).nnz == 0:
            break
        vf, ma, va = vf2, ma2, va2
    return {name: set(zip(*m.nonzero())) for name, m in
            (("valueFlow", vf), ("memoryAlias", ma), ("valueAlias", va))}


def _weighted(folder: Path) -> Path:
    """rome99 as sssp.dl reads it, from its smallest source."""
    folder.mkdir()
    rows = [line.split() for line in (DATA / "rome99.tsv").read_text().splitlines()]
    (folder / "edge.facts").write_text("".join(f"{a}\t{b}\t{w}\n" for a, b, w in rows))
    (folder / "source.facts").write_text(f"{min(int(r[0]) for r in rows)}\n")
    return folder


def _strata_edges() -> list[tuple[int, int]]:
    import random

    draw = random.Random(1)
    return [(draw.randrange(100), draw.randrange(100)) for _ in range(300)]


def _strata_rules() -> list[tuple[str, int]]:
    """Stratum i's rule over r(i-1): a join with the edges, a comparison, a negation."""
    return [("join", i) if i % 3 == 1 else ("less", i) if i % 3 == 2 else ("not", i)
            for i in range(1, STRATA)]


def _strata(folder: Path) -> Path:
    lines = [".decl edge(x: number, y: number)", ".input edge",
             ".decl r0(x: number, y: number)", "r0(x, y) :- edge(x, y)."]
    for kind, i in _strata_rules():
        body = {"join": f"r{i}(x, z) :- r{i - 1}(x, y), edge(y, z).",
                "less": f"r{i}(x, y) :- r{i - 1}(x, y), x < y + {i}.",
                "not": f"r{i}(x, y) :- r{i - 1}(x, y), !r{i - 2}(y, x)."}[kind]
        lines += [f".decl r{i}(x: number, y: number)", body]
    path = folder / "strata.dl"
    path.write_text("\n".join(lines + [f".output r{STRATA - 1}"]) + "\n")
    return path


def _strata_expected() -> set[tuple[int, int]]:
    edges = set(_strata_edges())
    r = [edges]
    for kind, i in _strata_rules():
        prev = r[i - 1]
        if kind == "join":
            r.append({(x, z) for x, y in prev for y2, z in edges if y == y2})
        elif kind == "less":
            r.append({(x, y) for x, y in prev if x < y + i})
        else:
            r.append({(x, y) for x, y in prev if (y, x) not in r[i - 2]})
    return r[-1]


def _tree_pairs(levels: int) -> int:
    """Pairs (ancestor, descendant) of a complete binary tree: each node at depth d has d
    ancestors."""
    return sum(d * (1 << d) for d in range(levels))


def _check(out: Path, check: tuple[str, Any]) -> str | None:
    """None if the output is right, else what is wrong."""
    what, want = check
    if what == "tc":
        got = sum(1 for _ in (out / "tc.csv").open())
        return None if got == want else f"tc has {got} rows, not {want}"
    if what == "cc":  # the minimum-label sum of ../shared/data/README.md for p2p-Gnutella08
        import networkx as nx
        g = nx.Graph(_graph("p2p-Gnutella08.tsv"))
        want = sum(min(c) * len(c) for c in nx.connected_components(g))
        rows = [line.split() for line in (out / "cc.csv").open()]
        got = sum(int(r[1]) for r in rows)
        return None if got == want else f"label sum {got}, not {want}"
    if what == "cspa":
        for name, want in _cspa_expected(want).items():
            got = {tuple(int(v) for v in line.split()) for line in (out / f"{name}.csv").open()}
            if got != want:
                return f"{name}: {len(got)} rows, not the {len(want)} expected"
        return None
    if what == "strata":
        name = f"r{STRATA - 1}"
        got = {tuple(int(v) for v in line.split()) for line in (out / f"{name}.csv").open()}
        want = _strata_expected()
        return None if got == want else f"{name}: {len(got)} rows, not the {len(want)} expected"
    if what == "sssp":
        import networkx as nx
        g = nx.DiGraph()
        for line in (DATA / "rome99.tsv").read_text().splitlines():
            a, b, w = (int(v) for v in line.split())
            if not g.has_edge(a, b) or g[a][b]["weight"] > w:
                g.add_edge(a, b, weight=w)
        want = nx.single_source_dijkstra_path_length(g, min(a for a, _ in g.edges))
        got = {int(a): int(b) for a, b in (line.split() for line in (out / "dist.csv").open())}
        return None if got == want else f"{len(set(got.items()) ^ set(want.items()))} " \
            "distances differ from Dijkstra's"
    import networkx as nx
    g = nx.DiGraph(want)
    got = {}
    for line in (out / "pagerank.csv").open():
        node, rank = line.split()
        got[int(node)] = float(rank)
    expected = _power(g, 20)
    l1 = sum(abs(got.get(v, 0.0) - r) for v, r in expected.items())
    return None if l1 < 1e-6 else f"L1 {l1:.3g} from 20 power iterations"


def _power(g, iterations: int) -> dict[int, float]:
    """networkx's power iteration, stopped after ``iterations`` steps (its pagerank runs
    to a tolerance; programs/pagerank.dl runs a fixed number)."""
    n = g.number_of_nodes()
    rank = {v: 1.0 / n for v in g}
    for _ in range(iterations):
        lost = sum(rank[v] for v in g if g.out_degree(v) == 0)
        new = {v: (1 - 0.85) / n + 0.85 * lost / n for v in g}
        for v in g:
            d = g.out_degree(v)
            for w in g.successors(v):
                new[w] += 0.85 * rank[v] / d
        rank = new
    return rank


def one(workload: dict[str, Any], setting: list[str], out: Path, archive: Path,
        src: Path = ROOT / "src") -> dict[str, Any]:
    cmd = [sys.executable, "-m", "sparklog", "run", str(workload["program"]),
           "-F", str(workload["facts"]), "-D", str(out), "--master", "local[2]",
           *workload["args"], *setting]
    env = {**os.environ, "SPARKLOG_CACHE_DIR": str(archive),
           "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = round(time.perf_counter() - started, 2)
    problem = done.stderr.strip().splitlines()[-1] if done.returncode else \
        _check(out, workload["check"])
    return dict(seconds=seconds, ok=problem is None, problem=problem)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--compare", choices=sorted(COMPARISONS), required=True)
    p.add_argument("--workloads", default="chain-smart,cc,pagerank,email,tree17,chain-left")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--baseline", help="with --compare revision: the git revision to compare")
    args = p.parse_args()
    if (args.compare == "revision") != bool(args.baseline):
        p.error("--baseline goes with --compare revision, and it needs one")
    from benchmarks.runner import machine_facts_static

    runs: list[dict[str, Any]] = []
    report = dict(date=_dt.datetime.now().isoformat(timespec="seconds"), compare=args.compare,
                  machine=machine_facts_static(), load_before=os.getloadavg(), runs=runs)
    settings = {name: (flags, ROOT / "src") for name, flags in COMPARISONS[args.compare].items()}
    with tempfile.TemporaryDirectory(prefix="sparklog-settings-") as tmp:
        folder = Path(tmp)
        archive = folder / "cache"
        if args.baseline:
            settings = {_revision(args.baseline, folder / "baseline", report): ([],
                        folder / "baseline" / "src"), "this tree": ([], ROOT / "src")}
        report["settings"] = list(settings)
        workloads = _workloads(folder)
        chosen = args.workloads.split(",")
        # the first run writes the class archive: run it apart, unmeasured
        one(workloads[chosen[0]], [], folder / "out", archive)
        for rep in range(args.repeat):
            for name in chosen:
                order = list(settings.items())
                if rep % 2:
                    order.reverse()
                for setting, (flags, src) in order:
                    r = one(workloads[name], flags, folder / "out", archive, src)
                    runs.append(dict(workload=name, setting=setting, rep=rep, **r))
                    print(f"{name:12} {setting:30} {r['seconds']:8.2f} s "
                          f"{'ok' if r['ok'] else r['problem']}", flush=True)
                    _write(args.out, report)
        if args.baseline:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(folder / "baseline")], check=False)
    report["load_after"] = os.getloadavg()
    _write(args.out, report)
    return 0 if all(r["ok"] for r in runs) else 1


def _revision(rev: str, where: Path, report: dict[str, Any]) -> str:
    """Check ``rev`` out into ``where``; its setting's name (and the tree's, in notes)."""
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", rev], capture_output=True,
                            text=True, check=True).stdout.strip()
    subprocess.run([*git, "worktree", "add", "--detach", "-q", str(where), commit], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=True).stdout.strip()
    report.setdefault("notes", []).append(
        f"This tree: {head}{' with uncommitted changes' if dirty else ''}; "
        f"baseline: {commit}.")
    return f"at {commit}"


def _write(out: Path, report: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    stem = {"combine": "combine-cold"}.get(report["compare"], report["compare"])
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n")
    first, second = report["settings"]
    lines = [f"# {TITLES[report['compare']]} (cold `sparklog run`, wall seconds)", "",
             f"{report['date']}, {report['machine'].get('cpu_model', '')}, "
             f"{report['machine'].get('nproc', '')} cores; load before "
             f"{report['load_before'][0]:.1f}"
             + (f", after {report['load_after'][0]:.1f}" if "load_after" in report else "")
             + ". Medians of each setting's runs, one process each, interleaved; ratio = "
             f"{first} over {second} (above 1: {second} is faster).", "",
             *[f"{note}\n" for note in report.get("notes", [])],
             f"| workload | {first} s | {second} s | ratio | runs | all right |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    names = list(dict.fromkeys(r["workload"] for r in report["runs"]))
    for name in names:
        mine = [r for r in report["runs"] if r["workload"] == name]
        med = {s: statistics.median([r["seconds"] for r in mine if r["setting"] == s] or [0])
               for s in (first, second)}
        a, b = med[first], med[second]
        lines.append(f"| {name} | {a:.2f} | {b:.2f} | {a / b if b else float('nan'):.2f} | "
                     f"{len(mine)} | {'yes' if all(r['ok'] for r in mine) else 'NO'} |")
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
