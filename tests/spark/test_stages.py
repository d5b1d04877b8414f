"""Staged recursions (ir/stages.py, storage.Database.retired): the runs of passed stages are
retired, and the answers stay those of networkx and of a run that reads every run.

Every engine here seals runs at a few rows, so a stratum has runs enough to retire."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparklog
from sparklog import programs
from sparklog.errors import EngineError
from sparklog.spark import rounds
from sparklog.spark.storage import Database
from tests.spark.helpers import rows
from tests.spark.test_lattice_graphs import frame

SLOW = settings(max_examples=4, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _engine(spark, retire: bool) -> sparklog.Engine:
    return sparklog.Engine(spark=spark, partitions=2, run_rows=4, retire_stages=retire)


@st.composite
def graphs(draw):
    n = draw(st.integers(3, 8))
    edges = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                         min_size=2, max_size=20))
    return sorted(edges)


ITERATIONS = 7


def _retired(result, relation: str) -> int:
    return sum(r["retired"] for r in result.stats if r["relation"] == relation)


def _l1_from_networkx(edges, ranks: dict) -> float:
    """L1 distance of ``ranks`` from ITERATIONS power iterations of networkx's Google matrix."""
    g = nx.DiGraph(edges)
    nodes = list(g)
    google = nx.google_matrix(g, alpha=0.85, nodelist=nodes)
    x = [1 / len(nodes)] * len(nodes)
    for _ in range(ITERATIONS):
        x = [sum(x[i] * google[i, j] for i in range(len(nodes))) for j in range(len(nodes))]
    return sum(abs(ranks[v] - x[i]) for i, v in enumerate(nodes))


@settings(SLOW, max_examples=2)
@given(graphs())
def test_pagerank_retires_passed_iterations_with_networkx_ranks(spark, edges):
    df = frame(spark, [(a, b, 0) for a, b in edges], weighted=False)
    ranks = {}
    for retire in (True, False):
        engine = _engine(spark, retire)
        result = engine.run(sparklog.Program.from_file(programs.path("pagerank")), {
            "edge": df,
            "iterations": spark.createDataFrame([(ITERATIONS,)], "k long"),
            "damping": spark.createDataFrame([(0.85,)], "a double")})
        ranks[retire] = dict(rows(result["pagerank"]))
        # the case under test happened, and only when asked for
        assert (_retired(result, "share@c") > 0) == retire
        # and the contributions of iteration i + 1 were not probed against iteration i's
        assert (sum(r["unread"] for r in result.stats if r["relation"] == "share@c") > 0) \
            == retire
    assert ranks[True] == ranks[False]  # bit for bit: the same sums in the same order
    assert _l1_from_networkx(edges, ranks[True]) < 1e-9


HOPS = """
.decl e(x:number, y:number)
.input e
.decl at(x:number, d:number)
at(0, 0).
at(y, d + 1) :- at(x, d), e(x, y), d < 6.
.decl first(x:number, d:number)
first(x, d) :- at(x, _), d = min c : at(x, c).
"""


@SLOW
@given(graphs())
def test_walks_by_hop_count_read_every_stage_afterwards(spark, edges):
    """``at`` holds every node a walk of d hops reaches, d <= 6; the later stratum reads
    every stage of it, retired runs included."""
    g = nx.DiGraph(edges)
    g.add_node(0)
    want, frontier = set(), {0}
    for d in range(7):
        want |= {(x, d) for x in frontier}
        frontier = {y for x in frontier for y in g.successors(x)}
    result = _engine(spark, True).run(sparklog.Program.from_text(HOPS),
                                      {"e": frame(spark, [(a, b, 0) for a, b in edges],
                                                  weighted=False)})
    assert rows(result["at"]) == want
    assert rows(result["first"]) == {(x, min(d for y, d in want if y == x))
                                     for x, _ in want}
    assert result.size("at") == len(want)


BACK = """
.decl e(x:number, y:number)
.input e
.decl w(x:number, d:number)
w(x, 5) :- e(x, _).
w(y, d - 1) :- w(x, d), e(x, y), d > 0.
"""


def test_a_stage_below_the_floor_is_an_error_not_an_answer(spark, monkeypatch):
    """The floor never falls in a staged stratum; were the analysis wrong (here: told that
    a counter which moves back is a stage), the round that derives below it stops the run
    with an error rather than read too few runs."""
    monkeypatch.setattr(Database, "stage_columns", property(
        lambda db: {"w": 1} if db.options.retire_stages else {}))
    df = frame(spark, [(0, 1, 0), (1, 2, 0), (2, 0, 0)], weighted=False)
    with pytest.raises(EngineError, match="below the floor"):
        _engine(spark, True).run(sparklog.Program.from_text(BACK), {"e": df})
    right = _engine(spark, False).run(sparklog.Program.from_text(BACK), {"e": df})
    assert rows(right["w"]) == {(x, d) for x in range(3) for d in range(6)}


def _spied(monkeypatch) -> list[tuple[str, str]]:
    """The loop kernels rounds._empty drops, as (head, delta relation)."""
    dropped: list[tuple[str, str]] = []
    real = rounds._empty

    def spy(db, kernel):
        empty = real(db, kernel)
        if empty:
            dropped.append((kernel.relation, kernel.steps[kernel.delta].relation))
        return empty

    monkeypatch.setattr(rounds, "_empty", spy)
    return dropped


def test_pagerank_drops_the_kernel_of_old_shares_and_new_lost_mass(spark, monkeypatch):
    """The rank round's kernel that reads the old shares with the new lost mass would meet
    only shares of earlier iterations: it is dropped from the rounds after the first few,
    and the ranks are bit for bit those of a run that runs it (retirement off: no stages,
    so nothing is dropped) and within 1e-9 of networkx's."""
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (4, 2), (1, 4)]  # node 3 dangles
    df = frame(spark, [(a, b, 0) for a, b in edges], weighted=False)
    inputs = {"edge": df, "iterations": spark.createDataFrame([(ITERATIONS,)], "k long"),
              "damping": spark.createDataFrame([(0.85,)], "a double")}
    program = sparklog.Program.from_file(programs.path("pagerank"))
    dropped = _spied(monkeypatch)
    ranks = {}
    for retire in (True, False):
        dropped.clear()
        result = _engine(spark, retire).run(program, inputs)
        ranks[retire] = dict(rows(result["pagerank"]))
        assert bool(dropped) == retire
        # no run holds on to the runs it merged once it is counted (Database.book_stages)
        assert not [r for rel in result._db.stored for r in result._db.runs(rel)
                    if "_sparklog_merged_from" in r.__dict__]
        assert set(dropped) <= {("rank", "lost@c")}, dropped
    assert ranks[True] == ranks[False]
    assert _l1_from_networkx(edges, ranks[True]) < 1e-9


LOCKSTEP = """
.decl e(x:number, y:number)
.input e
.decl a(x:number, d:number)
.decl b(x:number, d:number)
a(0, 0).
b(x, d) :- a(x, d).
a(y, d + 1) :- a(x, d), b(x, d), e(x, y), d < 5.
"""


@SLOW
@given(graphs())
def test_a_kernel_whose_old_side_holds_its_delta_stage_is_kept(spark, monkeypatch, edges):
    """``b`` copies ``a`` at the same stage, a round later: the round that reads the new
    ``b`` of stage d reads old ``a`` rows of stage d, so its kernel ``a_old ⋈ Δb`` derives
    and must run. Nothing is dropped here, and the answer is the reference evaluator's."""
    from sparklog.syntax.parser import parse
    from tests import reference

    dropped = _spied(monkeypatch)
    result = _engine(spark, True).run(sparklog.Program.from_text(LOCKSTEP),
                                      {"e": frame(spark, [(a, b, 0) for a, b in edges],
                                                  weighted=False)})
    want = reference.evaluate(parse(LOCKSTEP), {"e": set(edges)})
    assert rows(result["a"]) == want["a"] and rows(result["b"]) == want["b"]
    assert not dropped, dropped


FORKED = """
.decl e(x:number, y:number)
.input e
.decl a(x:number, d:number)
.decl out(x:number, d:number)
.decl into(x:number, d:number)
a(0, 0).
out(y, d + 1) :- a(x, d), e(x, y), d < 5.
into(y, d + 1) :- a(x, d), e(y, x), d < 5.
a(x, d) :- out(x, d), into(x, d).
"""


@SLOW
@given(graphs())
def test_a_fork_joined_again_keeps_the_answer(spark, monkeypatch, edges):
    """PageRank's shape over sets: ``out`` and ``into`` are derived at d + 1 in one round
    from the new ``a`` of stage d, and joined again at d + 1, so the kernel of the old
    ``out`` with the new ``into`` meets nothing (every old ``out`` is of stage d or
    below). It is the only kernel rounds._empty may drop; the answer is the reference
    evaluator's either way, and that of a run with stages off."""
    from sparklog.syntax.parser import parse
    from tests import reference

    dropped = _spied(monkeypatch)
    e = frame(spark, [(a, b, 0) for a, b in edges], weighted=False)
    want = reference.evaluate(parse(FORKED), {"e": set(edges)})
    answers = {}
    for retire in (True, False):
        dropped.clear()
        result = _engine(spark, retire).run(sparklog.Program.from_text(FORKED), {"e": e})
        answers[retire] = {r: rows(result[r]) for r in ("a", "out", "into")}
        assert set(dropped) <= {("a", "into")}, dropped
        if not retire:
            assert not dropped
    assert answers[True] == answers[False] == {r: want[r] for r in ("a", "out", "into")}


def test_a_set_fork_drops_its_empty_kernel_and_retires_runs(spark, monkeypatch):
    """The fork's set relations have known stages from their first version on, the input
    fact ``a(0, 0)`` included, though the preamble's version is counted after the first
    loop round merged it (pipelined rounds): so the kernel of the old ``out`` with the new
    ``into`` is dropped, passed stages' runs are retired, and the answer stays the
    reference evaluator's."""
    from sparklog.syntax.parser import parse
    from tests import reference

    edges = [(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2), (3, 1), (1, 3)]
    dropped = _spied(monkeypatch)
    e = frame(spark, [(a, b, 0) for a, b in edges], weighted=False)
    result = _engine(spark, True).run(sparklog.Program.from_text(FORKED), {"e": e})
    want = reference.evaluate(parse(FORKED), {"e": set(edges)})
    assert {r: rows(result[r]) for r in ("a", "out", "into")} == \
        {r: want[r] for r in ("a", "out", "into")}
    assert dropped and set(dropped) == {("a", "into")}, dropped
    assert _retired(result, "out") > 0 and _retired(result, "a") > 0
    # every run was counted and let go of the runs it merged (Database.book_stages)
    db = result._db
    assert not [r for rel in db.stored for r in db.runs(rel)
                if "_sparklog_merged_from" in r.__dict__]
