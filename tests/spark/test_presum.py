"""$SUM contributions summed before they are stored (ir/presum.py): PageRank stores a sum per
node and iteration instead of a row per edge, with networkx's ranks; a key improved twice
refutes the presum and the run is evaluated again, with the reference evaluator's answer
(and without the guard, a wrong one); random staged programs drawn in the shape agree."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np

import sparklog
from sparklog import programs
from sparklog.ir.presum import presummed
from sparklog.spark import rounds
from tests.campaign import compare, engine_rows, make_case
from tests.reference import evaluate
from tests.spark.helpers import rows
from tests.spark.test_lattice_graphs import frame

EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (4, 1), (4, 5), (5, 6), (1, 2), (7, 4), (0, 4),
         (4, 0)]
ITERATIONS = 9


def _pagerank(spark, presum: bool) -> sparklog.Result:
    engine = sparklog.Engine(spark=spark, partitions=2, presum=presum)
    return engine.run(sparklog.Program.from_file(programs.path("pagerank")), {
        "edge": frame(spark, [(a, b, 0) for a, b in EDGES], weighted=False),
        "iterations": spark.range(1).selectExpr(f"{ITERATIONS}L AS k"),
        "damping": spark.range(1).selectExpr("0.85D AS a")})


def test_pagerank_stores_a_sum_per_node_and_iteration_with_networkx_ranks(spark):
    results = {presum: _pagerank(spark, presum) for presum in (True, False)}
    g = nx.DiGraph(EDGES)
    nodes = list(g)
    google = nx.google_matrix(g, alpha=0.85, nodelist=nodes)
    x = np.full(len(nodes), 1 / len(nodes))
    for _ in range(ITERATIONS):
        x = x @ google
    for result in results.values():
        got = dict(rows(result["pagerank"]))
        assert sum(abs(got[v] - x[i]) for i, v in enumerate(nodes)) < 1e-12
        assert result.notes == []

    def written(result, relation):
        return [r["written"] for r in result.stats
                if r["relation"] == relation and r["iteration"] >= 1 and r["written"]]

    # 8 nodes, 11 distinct edges (one repeated) and one dangling node (6), each iteration:
    # a share per node (its edges' shares summed, and the zero every node gets) and one
    # dangling mass, against one row per edge, per node and per node with a dangling mass
    assert written(results[True], "share@c") == [8] * ITERATIONS
    assert written(results[True], "lost@c") == [1] * ITERATIONS
    assert written(results[False], "share@c") == [11 + 8] * ITERATIONS
    assert written(results[False], "lost@c") == [1 + 8] * ITERATIONS
    # derived as many as before: summed where they are derived, then stored
    derived = lambda r: [s["derivations"] for s in r.stats if s["relation"] == "share@c"]  # noqa
    assert derived(results[True]) == derived(results[False])
    # and summed where they are derived, before the shuffle, as GraphX sums its messages:
    # the parameter they cross (``iterations(k)``) goes to their sub-buckets instead of
    # the rows leaving them (from the second loop round: the first is planned before the
    # ranks it reads are counted)
    loop = [s for s in results[True].stats if s["relation"] in ("share@c", "lost@c")
            and s["iteration"] >= 2 and s["derivations"]]
    assert len(loop) == 2 * (ITERATIONS - 1) and all(s["combined"] for s in loop)
    assert sum(s["shuffled"] for s in loop) < sum(s["derivations"] for s in loop)
    assert not any(s["combined"] for s in results[False].stats if s["relation"] == "share@c")


ONE_RELATION = Path(__file__).resolve().parents[2] / "benchmarks" / "programs" \
    / "pagerank_one_relation.dl"


def test_pagerank_in_one_relation_reads_its_own_totals_presummed_with_networkx_ranks(spark):
    """benchmarks/programs/pagerank_one_relation.dl: a $SUM that reads its own totals a
    stage below, one round an iteration."""
    program = sparklog.Program.from_file(ONE_RELATION)
    (sp,) = [sp for sp in program.plan.strata if sp.loop]
    assert presummed(sp, program.plan) == {"base@c": ("base@c", "spread@c"),
                                           "spread@c": ("base@c", "spread@c")}
    engine = sparklog.Engine(spark=spark, partitions=2)
    result = engine.run(program, {
        "edge": frame(spark, [(a, b, 0) for a, b in EDGES], weighted=False),
        "iterations": spark.range(1).selectExpr(f"{ITERATIONS}L AS k"),
        "damping": spark.range(1).selectExpr("0.85D AS a")})
    assert result.notes == []
    assert result.iterations("base@c") == ITERATIONS + 1
    g = nx.DiGraph(EDGES)
    nodes = list(g)
    google = nx.google_matrix(g, alpha=0.85, nodelist=nodes)
    x = np.full(len(nodes), 1 / len(nodes))
    for _ in range(ITERATIONS):
        x = x @ google
    got = dict(rows(result["pagerank"]))
    assert sum(abs(got[v] - x[i]) for i, v in enumerate(nodes)) < 1e-12


# a stage's $MAX improved twice: by its sum in one round, by a chain of two rules later
REFUTED = """
.decl node(n: number)
node(1). node(2). node(3).
.decl a(n: number, i: number, v: number)
.decl s(n: number, i: number, v: number)
.decl late(n: number, i: number)
.decl later(n: number, i: number)
a(n, 0, $MAX(1)) :- node(n).
s(n, i + 1, $SUM(v)) :- a(n, i, v), i < 3.
a(n, i, $MAX(v)) :- s(n, i, v).
late(n, i + 1) :- a(n, i, _), i < 3.
later(n, i) :- late(n, i).
a(n, i, $MAX(100)) :- later(n, i).
.output s
"""


def test_a_key_improved_twice_refutes_the_presum_and_the_run_is_evaluated_again(
        spark, monkeypatch):
    program = sparklog.Program.from_text(REFUTED)
    assert any(presummed(sp, program.plan) == {"s@c": ("a",)} for sp in program.plan.strata)
    want = {tuple(r) for r in evaluate(program.ast)["s"]}
    assert (1, 2, 100) in want  # the contribution of a(1, 1, _) is its last value, 100
    engine = sparklog.Engine(spark=spark, partitions=2)
    result = engine.run(program)
    assert rows(result["s"]) == want
    (note,) = result.notes
    assert "a: 3 key(s) improved again" in note and "--no-presum" in note
    # without the guard the presum adds the value a key held to the one it improved to
    monkeypatch.setattr(rounds, "guarded", lambda presums: set())
    wrong = engine.run(program)
    assert wrong.notes == [] and rows(wrong["s"]) != want
    assert (1, 2, 101) in rows(wrong["s"])


# walks counted by length, each stage's counts from the stage below: a $SUM that reads its
# own total (ir/presum.py's one read), summed per node before it is stored
WALKS = """
.decl e(x: number, y: number)
.input e
.decl w(x: number, i: number, c: number)
.output w
w(x, 0, $SUM(1)) :- e(x, _).
w(y, i + 1, $SUM(c)) :- w(x, i, c), e(x, y), i < 5.
"""
# and a second way to each stage, two relations and one round later: the counts of a
# stage get a second sum, after the stage above was derived from the first
WALKS_LATE = WALKS + """
.decl mid(x: number, i: number)
.decl late(x: number, i: number)
mid(x, i) :- w(x, i, _).
late(x, i) :- mid(x, i).
w(x, i + 1, $SUM(10)) :- late(x, i), i < 5.
"""


def test_walks_counted_by_length_store_a_sum_per_node_and_stage(spark):
    program = sparklog.Program.from_text(WALKS)
    assert any(presummed(sp, program.plan) == {"w@c": ("w@c",)} for sp in program.plan.strata)
    edges = sorted(set(EDGES))
    nodes = sorted({v for e in edges for v in e})
    a = np.zeros((len(nodes), len(nodes)), dtype=np.int64)
    for x, y in edges:
        a[nodes.index(x), nodes.index(y)] = 1
    v = a.sum(axis=1)  # w(x, 0): a contribution per edge out of x (its `_` tells them apart)
    want = set()
    for i in range(6):
        want |= {(n, i, int(c)) for n, c in zip(nodes, v) if c}
        v = v @ a
    results = {}
    for presum in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=2, presum=presum)
        results[presum] = engine.run(program, {"e": frame(spark, edges, weighted=False)})
        assert rows(results[presum]["w"]) == want
        assert results[presum].notes == []
    stored = lambda r: [s["full"] for s in r.stats if s["relation"] == "w@c"][-1]  # noqa
    # stage 0 a contribution per edge (a fact each); then a row per node a stage reaches,
    # where every walk's last edge was one
    assert stored(results[True]) == len(edges) + sum(
        len({n for n, i, _ in want if i == k}) for k in range(1, 6))
    assert stored(results[False]) > stored(results[True])


def test_a_stage_summed_twice_refutes_its_own_presum(spark, monkeypatch):
    program = sparklog.Program.from_text(WALKS_LATE)
    assert any(presummed(sp, program.plan) == {"w@c": ("w@c",)} for sp in program.plan.strata)
    inputs = {"e": frame(spark, sorted(set(EDGES)), weighted=False)}
    facts = {"e": set(EDGES)}
    want = {tuple(r) for r in evaluate(program.ast, facts)["w"]}
    engine = sparklog.Engine(spark=spark, partitions=2)
    result = engine.run(program, inputs)
    assert rows(result["w"]) == want
    (note,) = result.notes
    assert "w@c:" in note and "improved again" in note
    # without the guard, the stage above keeps what it summed from the first sum too
    monkeypatch.setattr(rounds, "guarded", lambda presums: set())
    wrong = engine.run(program, inputs)
    assert wrong.notes == [] and rows(wrong["w"]) != want

# w a stage above t's totals, t summed at its stage from a, then again one round later
# from b: each of t's totals grows by a new contribution row, which t's combine step does
# not count as raised
OTHER_TOTAL = """
.decl e(x: number, y: number)
e(1, 2). e(2, 3).
.decl a(x: number, i: number)
.decl b(x: number, i: number)
.decl t(x: number, i: number, c: number)
.decl w(x: number, i: number, c: number)
.output w
a(x, 0) :- e(x, _).
a(x, i) :- w(x, i, _).
b(x, i) :- a(x, i).
t(x, i, $SUM(1)) :- a(x, i).
t(x, i, $SUM(1)) :- b(x, i).
w(x, i + 1, $SUM(v)) :- t(x, i, v), i < 3.
"""


def test_a_sum_of_another_sums_grown_total_refutes_its_presum(spark, monkeypatch):
    program = sparklog.Program.from_text(OTHER_TOTAL)
    assert any(presummed(sp, program.plan) == {"w@c": ("t@c", "w@c")}
               for sp in program.plan.strata)
    want = {tuple(r) for r in evaluate(program.ast)["w"]}
    assert (1, 1, 2) in want  # t(1, 0) is 2: one contribution from a, one from b
    engine = sparklog.Engine(spark=spark, partitions=2)
    result = engine.run(program)
    assert rows(result["w"]) == want
    (note,) = result.notes
    assert "w@c:" in note and "improved again" in note
    # guarded by t@c alone, w would keep what it summed from t's first total as well
    monkeypatch.setattr(rounds, "guarded", lambda presums: {"t@c"})
    wrong = engine.run(program)
    assert wrong.notes == [] and (1, 1, 3) in rows(wrong["w"])


def test_random_staged_programs_in_the_presummed_shape_agree_with_reference(
        spark, monkeypatch):
    """tests/staged_programs.py draws a third of its programs so that their $SUM is
    presummed (some of its forks are too); each of the first seeds that is runs alone (a refutation reruns a whole
    run), and keeps its presum or is refuted (both happen), with the reference's answer."""
    engine = sparklog.Engine(spark=spark, partitions=3, run_rows=2)
    cases = []
    for seed in range(40):
        case = make_case(seed, f"q{seed}_", staged=True)
        plan = sparklog.Program(case.ast).plan
        if any(presummed(sp, plan) for sp in plan.strata):
            cases.append(case)
    assert len(cases) >= 3
    notes = []
    real_run = sparklog.Engine.run

    def run(self, *args, **kwargs):
        result = real_run(self, *args, **kwargs)
        notes.append(result.notes)
        return result

    monkeypatch.setattr(sparklog.Engine, "run", run)
    outcomes = [compare(case, engine_rows(engine, spark, case.ast, case.facts))
                for case in cases[:6]]
    assert [o.status for o in outcomes] == ["ok"] * len(outcomes), outcomes
    assert [] in notes and any("presumming refuted" in " ".join(n) for n in notes), notes
