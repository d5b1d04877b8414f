"""Storage in runs (storage.Database.merges): a set relation's newest run is sealed at
``run_rows`` rows and runs of like size merge, so a round never rewrites all of full.

Runs change where tuples are stored, never what a round derives: every test here runs a
program with runs sealed at a handful of rows (many runs, many merges) and checks its
result against an oracle, and its rounds against the same program stored as one run."""

from __future__ import annotations

import networkx as nx
import pytest

import sparklog
from sparklog import gen
from sparklog.spark import jvm
from sparklog.syntax.parser import parse
from tests import reference
from tests.spark.helpers import TC, edges_df, rounds, rows, run


@pytest.fixture(scope="module")
def sealed(spark):
    """Runs sealed at 4 rows: a relation of a few hundred tuples keeps several."""
    return sparklog.Engine(spark=spark, strategy="asis", partitions=2, run_rows=4)


@pytest.fixture(scope="module")
def one_run(spark):
    return sparklog.Engine(spark=spark, strategy="asis", partitions=2, run_rows=0)



def test_chain_closure_is_exact_and_its_runs_stay_few(sealed, one_run, spark):
    n = 120
    edges = edges_df(spark, gen.chain(n))
    result = run(sealed, TC, {"edge": edges})
    assert rows(result["tc"]) == {(i, j) for i in range(n + 1) for j in range(i + 1, n + 1)}
    records = [r for r in result.stats if r["relation"] == "tc"]
    assert max(r["runs"] for r in records) >= 2
    single = run(one_run, TC, {"edge": edges})
    assert rounds(result) == rounds(single)
    # one run rewrites all of tc every round; runs write each tuple a few times
    size = n * (n + 1) // 2
    once = [r for r in single.stats if r["relation"] == "tc"]
    assert sum(r["written"] for r in once) > n / 3 * size
    assert sum(r["written"] for r in records) < 8 * size
    print(sum(r["written"] for r in once), sum(r["written"] for r in records), size,
          [r["runs"] for r in records])


NONLINEAR = """
.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
tc(x, y) :- edge(x, y).
tc(x, z) :- tc(x, y), tc(y, z).
.decl sg(x: number, y: number)
sg(x, y) :- edge(a, x), edge(a, y), x != y.
sg(x, y) :- edge(a, x), sg(a, b), edge(b, y).
"""


def test_nonlinear_closure_and_same_generation_read_every_run(sealed, one_run, spark):
    graph = nx.gnm_random_graph(40, 70, seed=5, directed=True)
    edges = edges_df(spark, list(graph.edges()))
    result = run(sealed, NONLINEAR, {"edge": edges})
    closure = nx.transitive_closure(graph, reflexive=False)
    assert rows(result["tc"]) == set(closure.edges())
    expected = reference.evaluate(parse(NONLINEAR), {"edge": set(graph.edges())})
    assert rows(result["sg"]) == expected["sg"]
    assert max(r["runs"] for r in result.stats if r["relation"] == "tc") >= 2
    other = run(one_run, NONLINEAR, {"edge": edges})
    assert rounds(result) == rounds(other)
    assert rounds(result, "sg") == rounds(other, "sg")


@pytest.mark.parametrize("options", [
    {"pipelined": False}, {"reuse_plans": "off"}, {"reuse_plans": "optimized"},
    {"deferred": False}, {"checkpoint": "reliable"}],
    ids=["serial", "no-reuse", "optimized", "eager", "reliable"])
def test_every_way_of_running_rounds_reads_every_run(spark, tmp_path, options):
    if options.get("checkpoint") == "reliable":
        options = {**options, "checkpoint_dir": str(tmp_path)}
    engine = sparklog.Engine(spark=spark, strategy="asis", partitions=2, run_rows=4, **options)
    n = 40
    result = run(engine, TC, {"edge": edges_df(spark, gen.chain(n))})
    assert rows(result["tc"]) == {(i, j) for i in range(n + 1) for j in range(i + 1, n + 1)}
    assert max(r["runs"] for r in result.stats if r["relation"] == "tc") >= 2


def test_a_join_over_several_runs_moves_no_stored_row(spark):
    """A join reading a relation's full version, stored as several runs, reads the runs
    where they lie: Smart's two loop rules join ``tc@len`` with its own full version, and
    every round shuffles as many times whether it is kept as one run or as many (a union
    of runs that lost their placement would reshuffle all of full every round)."""
    chain = edges_df(spark, gen.chain(40))
    shuffles = {}
    for run_rows in (0, 4):
        engine = sparklog.Engine(spark=spark, strategy="smart", partitions=2,
                                 run_rows=run_rows, trace_lineage=True)
        result = run(engine, TC, {"edge": chain})
        assert result.size("tc") == 40 * 41 // 2
        runs = {r["runs"] for r in result.stats if r["relation"] == "tc@len"}
        assert max(runs) >= 2 if run_rows else runs == {1}, runs
        shuffles[run_rows] = [t["shuffles"] for t in result.lineage]
    assert shuffles[4] == shuffles[0], shuffles


def _stored_bytes_per_tuple(spark, stored: str) -> float:
    """Run a closure stored as ``stored`` (each form keeps the rows) and return its stored
    runs' bytes of block storage per tuple."""
    n = 60
    engine = sparklog.Engine(spark=spark, strategy="asis", partitions=2, run_rows=400,
                             stored=stored)
    result = run(engine, TC, {"edge": edges_df(spark, gen.chain(n))})
    assert rows(result["tc"]) == {(i, j) for i in range(n + 1) for j in range(i + 1, n + 1)}
    db = result._db
    versions = [*db.live_sealed("tc"), db.stored["tc"]]
    assert len(versions) >= 2  # sealed runs are read back as well as the newest
    stored_rdds = [jvm.stored_rdd(v) for v in versions]
    kinds = {r.elementClassTag().toString() for r in stored_rdds}
    assert any("CachedBatch" in k for k in kinds) == (stored in ("columnar", "compressed")), \
        kinds
    infos = {i.id(): i for i in spark.sparkContext._jsc.sc().getRDDStorageInfo()}
    stored_bytes = sum(infos[r.id()].memSize() + infos[r.id()].diskSize() for r in stored_rdds)
    return stored_bytes / result.size("tc")


@pytest.mark.parametrize("stored", ["columnar", "compressed", "deserialized", "serialized"])
def test_each_stored_form_keeps_the_rows_and_the_columnar_ones_are_compact(spark, stored):
    """Stored versions as column batches (the default), compressed column batches, row
    objects or serialized rows: the same closure, and the column batches in a fraction of
    the row objects' bytes (a two-number tuple as a row object takes about 100 bytes of
    block storage; as plain column batches its two numbers and two stamps take 24)."""
    per_tuple = _stored_bytes_per_tuple(spark, stored)
    print(stored, per_tuple)
    if stored in ("columnar", "compressed"):
        assert per_tuple < 40, per_tuple
    elif stored == "deserialized":
        assert per_tuple > 60, per_tuple


def test_compressed_batches_take_a_fraction_of_the_plain_ones_bytes(spark):
    """``stored="compressed"`` has Spark's compression schemes encode the batches, whatever
    the session says (a sorted closure compresses well), and ``"columnar"`` does not."""
    key = "spark.sql.inMemoryColumnarStorage.compressed"
    before = spark.conf.get(key)
    plain = _stored_bytes_per_tuple(spark, "columnar")
    compressed = _stored_bytes_per_tuple(spark, "compressed")
    assert compressed < plain / 3, (compressed, plain)
    assert spark.conf.get(key) == before  # the session's own setting is left alone
