"""Transitive-closure strategies on Spark (rewrite/closure.py, Afrati & Ullman §2): the
paper's derivation counts on its paired trees, the rounds its Example 2.2 gives, the
derivations of ladders by the paper's formula, and closures equal to networkx's."""

from __future__ import annotations

import math
import random

import networkx as nx
import pytest

import sparklog
from sparklog import gen
from tests.spark.helpers import edges_df, rows, run

NONLINEAR = """
.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
.output tc
tc(x, y) :- edge(x, y).
tc(x, y) :- tc(x, z), tc(z, y).
"""

# P(l) = (l1, l2) for each strategy (Definition 2.1, Example 2.1, §2)
PARTITIONS = {
    "right": lambda l: (1, l - 1),
    "left": lambda l: (l - 1, 1),
    "smart": lambda l: (1 << ((l - 1).bit_length() - 1), l - (1 << ((l - 1).bit_length() - 1))),
    "balance": lambda l: ((l + 1) // 2, l // 2),
    "thirds": lambda l: (l - max(1, l // 3), max(1, l // 3)),
}


def _recursive(result, relation: str = "tc") -> list[dict]:
    """The loop rounds of the relation the closure's rounds store."""
    stored = relation + "@len" if any(r["relation"] == relation + "@len"
                                      for r in result.stats) else relation
    return [r for r in result.stats if r["relation"] == stored and r["iteration"] > 0]


def _derivations(result) -> int:
    return sum(r["derivations"] for r in _recursive(result))


def _rounds_with_news(result) -> int:
    """Rounds that found paths, the first (the arcs) included."""
    return 1 + sum(1 for r in _recursive(result) if r["delta"] > 0)


def test_partitions_are_the_papers():
    assert [PARTITIONS["thirds"](l) for l in range(2, 10)] == [
        (1, 1), (2, 1), (3, 1), (4, 1), (4, 2), (5, 2), (6, 2), (6, 3)]
    assert [PARTITIONS["balance"](l) for l in range(2, 10)] == [
        (1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3), (4, 4), (5, 4)]
    assert [PARTITIONS["smart"](l) for l in range(2, 10)] == [
        (1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (4, 3), (4, 4), (8, 1)]


@pytest.fixture(scope="module")
def paired(spark):
    return edges_df(spark, sorted(gen.paired_trees(4)))


@pytest.mark.parametrize("strategy, derivations", [
    ("right", 268), ("left", 268), ("smart", 312), ("thirds", 288),
    ("balance", 320),  # the paper prints 316: its row (3, 2) is 40, not 36
])
def test_paired_trees_derivations_are_the_papers(spark, paired, strategy, derivations):
    """Fig. 2's graph (60 arcs, 279 paths): the recursive derivations of Figs. 4-7."""
    engine = sparklog.Engine(spark=spark, partitions=2, strategy=strategy)
    result = run(engine, NONLINEAR, inputs={"edge": paired})
    assert len(rows(result["tc"])) == 279
    assert _derivations(result) == derivations
    for record in _recursive(result):  # one recursive rule (two semi-naive variants)
        assert list(record["rules"].values()) == [record["derivations"]], record
    longest = 8  # root to root
    expected = longest if strategy in ("right", "left") else \
        1 + math.ceil(math.log2(longest)) if strategy != "thirds" else 6  # m_i: 1,2,3,4,6,9
    assert _rounds_with_news(result) == expected


@pytest.mark.parametrize("first, derivations, rounds", [
    ("(l + 1) / 2", 320, 4),  # Balance's partition, written by the user
    ("l - 1", 268, 8),  # left-linear's
])
def test_a_user_split_is_the_strategy_it_spells(spark, paired, first, derivations, rounds):
    """A `.pragma tc(strategy=split, first=...)` that spells a known partition derives what
    that strategy derives on the paired trees (the paper's counts), in its rounds."""
    engine = sparklog.Engine(spark=spark, partitions=2)
    pragma = f'.pragma tc(strategy=split, first="{first}")'
    text = NONLINEAR.replace(".output tc", f".output tc\n{pragma}")
    result = run(engine, text, inputs={"edge": paired})
    assert [c.strategy for c in result.strategies] == ["split"]
    assert len(rows(result["tc"])) == 279
    assert _derivations(result) == derivations
    assert _rounds_with_news(result) == rounds


def _m(strategy: str, rounds: int) -> int:
    """Example 2.2's m_i: the longest path known after ``rounds`` rounds."""
    m = 1
    for _ in range(rounds - 1):
        m = max(l for l in range(m + 1, 2 * m + 2) if max(PARTITIONS[strategy](l)) <= m)
    return m


@pytest.mark.parametrize("strategy", ["smart", "balance", "thirds"])
def test_a_chain_takes_the_rounds_of_example_2_2(spark, strategy):
    n = 37
    engine = sparklog.Engine(spark=spark, partitions=2, strategy=strategy)
    result = run(engine, NONLINEAR, inputs={"edge": edges_df(spark, list(gen.chain(n)))})
    assert len(rows(result["tc"])) == n * (n + 1) // 2
    expected = next(i for i in range(1, n + 1) if _m(strategy, i) >= n)
    if strategy != "thirds":
        assert expected == 1 + math.ceil(math.log2(n)) == 7
    assert _rounds_with_news(result) == expected
    assert _derivations(result) == n * (n + 1) // 2 - n  # a chain: each path derived once


def _ladder_derivations(rungs: list[int], strategy: str) -> int:
    """§2.2: the sum over rung triples i < j < k with P(k - i) = (j - i, k - j) of
    m_i m_j m_k (every path of a ladder is a shortest path)."""
    n = len(rungs)
    return sum(rungs[i] * rungs[j] * rungs[k]
               for i in range(n) for j in range(i + 1, n) for k in range(j + 1, n)
               if PARTITIONS[strategy](k - i) == (j - i, k - j))


@pytest.mark.parametrize("ladder, worst", [
    ([8 if i in (0, 8, 12, 14) else 1 for i in range(15)], "smart"),  # ladder_smart(4, 8)
    ([8 if i % 3 == 0 else 1 for i in range(10)], "balance"),  # ladder_balance(10, 8)
])
def test_ladders_make_each_algorithm_the_worst_as_example_2_4_says(spark, ladder, worst):
    df = edges_df(spark, sorted(gen.ladder(ladder)))
    counts = {}
    for strategy in PARTITIONS:
        engine = sparklog.Engine(spark=spark, partitions=2, strategy=strategy)
        counts[strategy] = _derivations(run(engine, NONLINEAR, inputs={"edge": df}))
        assert counts[strategy] == _ladder_derivations(ladder, strategy), strategy
    assert max(counts, key=counts.get) == worst, counts


def _closure(edges) -> set[tuple[int, int]]:
    g = nx.DiGraph(edges)
    return {(a, b) for a in g for s in g.successors(a) for b in {s} | nx.descendants(g, s)}


@pytest.mark.parametrize("strategy", ["auto", "asis", "linear", "right", "left", "smart",
                                      "balance", "thirds"])
def test_every_strategy_computes_the_closure_of_a_graph_with_cycles(spark, strategy):
    rng = random.Random(11)
    edges = sorted({(rng.randrange(30), rng.randrange(30)) for _ in range(45)})
    engine = sparklog.Engine(spark=spark, partitions=3, strategy=strategy)
    result = run(engine, NONLINEAR, inputs={"edge": edges_df(spark, edges)})
    assert rows(result["tc"]) == _closure(edges)
    assert result.size("tc") == len(_closure(edges))


@pytest.mark.parametrize("n", [5, 8, 13])
def test_smart_stops_after_the_round_that_found_no_power_of_two(spark, n):
    """ir/smart.py: on chain(n) Smart's rounds find the paths of lengths 2, 3-4, 5-8, ...;
    the round after the one that reached n derives nothing, and is run only when n is a
    power of two (the paths of length n may then extend). Without the test, always."""
    edges = edges_df(spark, list(gen.chain(n)))
    loops = {}
    for end in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=2, strategy="smart", smart_end=end)
        result = run(engine, NONLINEAR, inputs={"edge": edges})
        assert rows(result["tc"]) == {(a, b) for a in range(n + 1) for b in range(a + 1, n + 1)}
        loops[end] = [r["delta"] for r in _recursive(result)]
    k = math.ceil(math.log2(n))
    assert len(loops[False]) == k + 1 and loops[False][-1] == 0
    assert loops[True] == (loops[False] if n & (n - 1) == 0 else loops[False][:-1])


@pytest.mark.parametrize("seed", [3, 17])
def test_smart_ends_early_on_graphs_with_cycles_as_networkx(spark, seed):
    """Cycles, several roots, paths of every length: the closure is networkx's whether or
    not Smart stops early, and it never runs more rounds with the test than without."""
    rng = random.Random(seed)
    edges = sorted({(rng.randrange(40), rng.randrange(40)) for _ in range(50)})
    counts = []
    for end in (True, False):
        engine = sparklog.Engine(spark=spark, partitions=3, strategy="smart", smart_end=end)
        result = run(engine, NONLINEAR, inputs={"edge": edges_df(spark, edges)})
        assert rows(result["tc"]) == _closure(edges)
        counts.append(len(_recursive(result)))
    assert counts[0] <= counts[1]


COLOURED = """
.decl arc(x: number, c: number, y: number)
.input arc
.decl path(x: number, c: number, y: number)
.output path
path(x, c, y) :- arc(x, c, y).
path(x, c, y) :- path(x, c, z), path(z, c, y).
"""


@pytest.mark.parametrize("strategy", ["auto", "asis", "left", "smart", "balance", "thirds"])
def test_a_closure_with_a_parameter_column_is_a_closure_per_value(spark, strategy):
    """A colour column every atom carries: each strategy computes a closure per colour
    (networkx), and the length strategies keep the colour in path@len."""
    rng = random.Random(5)
    arcs = sorted({(rng.randrange(20), rng.randrange(3), rng.randrange(20)) for _ in range(50)})
    engine = sparklog.Engine(spark=spark, partitions=3, strategy=strategy)
    frame = spark.createDataFrame(arcs, "x long, c long, y long")
    result = run(engine, COLOURED, inputs={"arc": frame})
    want = {(a, c, b) for c in range(3)
            for a, b in _closure([(x, y) for x, k, y in arcs if k == c])}
    assert rows(result["path"]) == want
    [choice] = result.strategies
    assert choice.strategy == {"asis": "nonlinear", "auto": "left"}.get(strategy, strategy)
    if strategy == "auto":  # not measured as if (x, c) were an arc
        assert "parameter column" in choice.why, choice.why


def test_a_pragma_chooses_for_its_relation(spark, tmp_path):
    text = NONLINEAR + ".pragma tc(strategy=thirds)\n"
    engine = sparklog.Engine(spark=spark, partitions=2, strategy="smart")
    result = run(engine, text, inputs={"edge": edges_df(spark, sorted(gen.paired_trees(4)))})
    assert _derivations(result) == 288


EXAMPLE_3_2 = """
.decl r(x: number, y: number)
.input r
.decl b(x: number, y: number)
.input b
.decl p(x: number, y: number)
.output p
.decl q(x: number, y: number)
p(x, y) :- r(x, z), q(z, y).
q(x, y) :- b(x, z), p(z, y).
p(x, y) :- r(x, y).
"""


def test_doubling_a_chain_program_takes_logarithmic_rounds(spark):
    """Theorem 3.1 on Example 3.2 over a path of 64 arcs alternating red and blue: the
    t predicates' rounds grow with log2 64, the written program's with 64."""
    n = 64
    red = edges_df(spark, [(i, i + 1) for i in range(0, n, 2)])
    blue = edges_df(spark, [(i, i + 1) for i in range(1, n, 2)])
    results = {}
    for strategy in ("asis", "doubling"):
        engine = sparklog.Engine(spark=spark, partitions=2, strategy=strategy)
        results[strategy] = run(engine, EXAMPLE_3_2, inputs={"r": red, "b": blue})
    # p: paths from an even node to an odd one, of odd length
    expected = {(a, c) for a in range(0, n, 2) for c in range(a + 1, n + 1, 2)}
    assert rows(results["asis"]["p"]) == rows(results["doubling"]["p"]) == expected
    rounds = {s: {r["relation"]: r["iteration"] for r in result.stats}
              for s, result in results.items()}
    assert rounds["asis"]["p"] >= n // 2
    transfer = max(i for name, i in rounds["doubling"].items() if name.startswith("t@"))
    assert transfer <= math.ceil(math.log2(n)) + 2, rounds["doubling"]
    assert rounds["doubling"]["p"] <= 3, rounds["doubling"]


SAME_GENERATION = """
.decl par(x: number, y: number)
.input par
.decl sg(x: number, y: number)
.output sg
sg(x, y) :- par(x, z), par(y, z).
sg(x, y) :- par(x, xp), par(y, yp), sg(xp, yp).
"""


def test_theorem_3_2_doubles_same_generation_on_request(spark):
    """Example 3.3 on two chains of 16 parents each above one root (par(child, parent)):
    the same pairs as the written program, sg in a few rounds where the written program
    takes one per generation, and the t predicate's rounds growing with log2 16."""
    n = 16
    par = [(i + 1, i) for i in range(n)] + [(100 + i + 1, 100 + i) for i in range(n)] + \
        [(100, 0)]
    frames = {"par": edges_df(spark, par)}
    engine = sparklog.Engine(spark=spark, partitions=2)
    written = run(engine, SAME_GENERATION, inputs=frames)
    doubled = run(engine, SAME_GENERATION + ".pragma sg(strategy=doubling)\n", inputs=frames)
    assert [c.strategy for c in doubled.strategies] == ["doubling-arity"]
    assert rows(doubled["sg"]) == rows(written["sg"])
    rounds = {s: {r["relation"]: r["iteration"] for r in result.stats}
              for s, result in (("written", written), ("doubled", doubled))}
    assert rounds["written"]["sg"] >= n
    assert rounds["doubled"]["t@sg@sg"] <= math.ceil(math.log2(2 * n)) + 2, rounds
    assert rounds["doubled"]["sg"] <= 3, rounds


def test_max_iterations_stops_a_length_strategy_as_it_stops_a_set_closure(spark):
    """--max-iterations on a closure Smart evaluates keeps what the rounds derived (paths
    up to a length), as for the rules as written, and is not a lattice that failed to
    converge."""
    engine = sparklog.Engine(spark=spark, partitions=2, strategy="smart", max_iterations=3)
    result = run(engine, NONLINEAR, inputs={"edge": edges_df(spark, list(gen.chain(20)))})
    # rounds 1-3 after the arcs find the paths of lengths 2, 3-4 and 5-8
    assert rows(result["tc"]) == {(a, b) for a in range(21)
                                  for b in range(a + 1, min(a + 8, 20) + 1)}


def test_auto_measures_the_edges_it_is_given(spark, tmp_path):
    """A DataFrame or a facts file: sparse and deep takes Smart, sparse and shallow or
    dense stay linear."""
    from sparklog.gen import write_facts

    deep = edges_df(spark, list(gen.chain(40)))
    shallow = edges_df(spark, sorted(gen.tree(7, "down")))  # 6 arcs deep
    rng = random.Random(5)
    dense = sorted({(rng.randrange(20), rng.randrange(20)) for _ in range(150)})
    engine = sparklog.Engine(spark=spark, partitions=2)
    result = run(engine, NONLINEAR, inputs={"edge": deep})
    assert [c.strategy for c in result.strategies] == ["smart"]
    assert _derivations(result) == 40 * 41 // 2 - 40
    result = run(engine, NONLINEAR, inputs={"edge": shallow})
    [choice] = result.strategies
    assert choice.strategy == "left" and "shallow" in choice.why, choice.why
    assert rows(result["tc"]) == _closure(sorted(gen.tree(7, "down")))
    write_facts(dense, tmp_path / "edge.facts")
    text = NONLINEAR.replace(".input edge", '.input edge(IO=file, delimiter="\\t")')
    result = run(engine, text, facts_dir=tmp_path)
    [choice] = result.strategies
    assert choice.strategy == "left" and "dense" in choice.why, choice.why
    assert rows(result["tc"]) == _closure(dense)


def test_an_input_of_the_wrong_arity_fails_before_auto_measures_and_leaves_the_session(spark):
    from sparklog.errors import UsageError

    key = "spark.sql.adaptive.enabled"  # a setting a run changes (session.REQUIRED_CONF)
    before = spark.conf.get(key)
    spark.conf.set(key, "true")
    try:
        wrong = spark.createDataFrame([(1, 2, 3)], "a long, b long, c long")
        with pytest.raises(UsageError, match="DataFrame for edge has 3 columns"):
            run(sparklog.Engine(spark=spark, partitions=2), NONLINEAR, inputs={"edge": wrong})
        assert spark.conf.get(key) == "true"
    finally:
        spark.conf.set(key, before)


SEVERAL_RULES = """
.decl e(x: number, y: number)
.decl f(x: number, y: number)
.decl p(x: number, y: number)
e(1, 2). e(2, 3). e(3, 4). e(4, 1). f(4, 5). f(5, 6). f(1, 1). f(6, 2).
p(x, y) :- e(x, y).
p(x, y) :- p(x, z), e(z, y).
p(x, y) :- p(x, z), f(z, y).
p(x, y) :- p(x, z), p(z, y).
"""


def _semi_naive_by_rule(e: set, f: set) -> list[list[int]]:
    """Per loop round, the candidates each recursive rule of SEVERAL_RULES derives under
    semi-naive evaluation (the nonlinear rule: delta with full, then old with delta)."""
    full, delta, rounds = set(), set(e), []
    while delta:
        old, full = full, full | delta
        by_e = [(x, y) for x, z in delta for z2, y in e if z == z2]
        by_f = [(x, y) for x, z in delta for z2, y in f if z == z2]
        by_p = [(x, y) for x, z in delta for z2, y in full if z == z2] + \
            [(x, y) for x, z in old for z2, y in delta if z == z2]
        rounds.append([len(by_e), len(by_f), len(by_p)])
        delta = set(by_e + by_f + by_p) - full
    return rounds


def test_derivations_are_counted_per_rule(spark):
    """Stats ``rules``: each rule's derivations in a round, its semi-naive variants summed
    (a Python semi-naive evaluation is the oracle), adding up to the round's."""
    engine = sparklog.Engine(spark=spark, partitions=2, strategy="asis")
    result = run(engine, SEVERAL_RULES)
    e = {(1, 2), (2, 3), (3, 4), (4, 1)}
    f = {(4, 5), (5, 6), (1, 1), (6, 2)}
    loop = [r for r in result.stats if r["relation"] == "p" and r["iteration"] >= 1]
    expected = _semi_naive_by_rule(e, f)
    rules = ["p(x, y) :- p(x, z), e(z, y).", "p(x, y) :- p(x, z), f(z, y).",
             "p(x, y) :- p(x, z), p(z, y)."]
    got = [[r["rules"][rule] for rule in rules] for r in loop if r["rules"] is not None]
    assert len(got) == len(loop) >= 3
    assert got == expected[:len(got)] and len(expected) == len(got)
    for record in loop:
        assert sum(record["rules"].values()) == record["derivations"]
    base = next(r for r in result.stats if r["relation"] == "p" and r["iteration"] == 0)
    assert base["rules"] == {"p(x, y) :- e(x, y).": 4}
