"""Workload generators: sizes checked against networkx and the papers' closed forms."""

from __future__ import annotations

import argparse
import os

import networkx as nx
import pytest

from sparklog import gen
from sparklog.errors import UsageError


def graph(edges) -> nx.DiGraph:
    """A networkx digraph of the given edges."""
    g = nx.DiGraph()
    g.add_edges_from((e[0], e[1]) for e in edges)
    return g


def tc_size(edges) -> int:
    """Number of pairs (x, y) joined by a path of length >= 1 (DAGs only: no (v, v) pairs)."""
    g = graph(edges)
    assert nx.is_directed_acyclic_graph(g)
    return sum(len(nx.descendants(g, v)) for v in g)


@pytest.mark.parametrize("direction", ["down", "up"])
@pytest.mark.parametrize("depth", range(1, 9))
def test_tree_tc_closed_form(depth, direction):
    edges = list(gen.tree(depth, direction))
    assert len(edges) == 2 ** depth - 2
    assert tc_size(edges) == depth * 2 ** depth - 2 * (2 ** depth - 1)


def test_tree_numbering_and_direction():
    assert sorted(gen.tree(2)) == [(1, 2), (1, 3)]
    assert sorted(gen.tree(2, "up")) == [(2, 1), (3, 1)]
    assert list(gen.tree(1)) == []


@pytest.mark.parametrize("width,length", [(1, 1), (1, 5), (4, 3), (3, 1), (7, 6), (10, 10)])
def test_bowtie_tc_closed_form(width, length):
    edges = list(gen.bowtie(width, length))
    assert len(edges) == 2 * width + length - 1
    assert len(set(edges)) == len(edges)
    w, l_ = width, length
    assert tc_size(edges) == w * w + 2 * l_ * w + l_ * (l_ - 1) // 2


@pytest.mark.parametrize("n", [0, 1, 2, 10, 57])
def test_chain_tc_closed_form(n):
    edges = list(gen.chain(n))
    assert edges == [(i, i + 1) for i in range(n)]
    assert tc_size(edges) == n * (n + 1) // 2


def test_paired_trees_fig2():
    edges = list(gen.paired_trees(4))
    assert len(edges) == len(set(edges)) == 60
    assert tc_size(edges) == 279
    g = graph(edges)
    assert g.number_of_nodes() == 46
    assert nx.is_directed_acyclic_graph(g)
    # Fig. 3 row (3): nodes reached from one node of each rank 1..8.
    rank_of = {v: r for r, layer in enumerate(nx.topological_generations(g), 1) for v in layer}
    reach = {r: {len(nx.descendants(g, v)) for v in g if rank_of[v] == r} for r in range(1, 10)}
    assert reach == {1: {45}, 2: {22}, 3: {11}, 4: {6}, 5: {4}, 6: {3}, 7: {2}, 8: {1}, 9: {0}}


@pytest.mark.parametrize("h", [1, 2, 3, 5])
def test_paired_trees_shape(h):
    edges = list(gen.paired_trees(h))
    assert len(edges) == len(set(edges)) == 2 * (2 ** (h + 1) - 2)
    g = graph(edges)
    sources = [v for v in g if g.in_degree(v) == 0]
    sinks = [v for v in g if g.out_degree(v) == 0]
    assert len(sources) == len(sinks) == 1
    assert nx.has_path(g, sources[0], sinks[0])
    # every path from the left root to the right root has length 2h (all paths shortest)
    assert nx.shortest_path_length(g, sources[0], sinks[0]) == 2 * h
    assert nx.dag_longest_path_length(g) == 2 * h


@pytest.mark.parametrize("sizes", [[3, 2, 4, 1, 3], [1], [2, 2], [1, 5, 1, 5]])
def test_ladder_sizes_and_tc(sizes):
    edges = list(gen.ladder(sizes))
    assert len(edges) == sum(a * b for a, b in zip(sizes, sizes[1:]))
    expected = sum(sizes[i] * sizes[k] for i in range(len(sizes)) for k in range(i + 1, len(sizes)))
    assert tc_size(edges) == expected


def test_ladder_example_2_4():
    m = 3
    edges = list(gen.ladder_smart(4, m))
    g = graph(edges)
    assert g.number_of_nodes() == 15 - 4 + 4 * m  # rungs 0..14; 0, 8, 12, 14 have m nodes
    sizes = [m if i in (0, 8, 12, 14) else 1 for i in range(15)]
    assert edges == list(gen.ladder(sizes))
    assert list(gen.ladder_balance(7, 2)) == list(gen.ladder([2, 1, 1, 2, 1, 1, 2]))


def test_rmat_counts_and_determinism():
    edges = list(gen.rmat(8, 4, seed=7))
    assert len(edges) == len(set(edges))
    assert all(u != v for u, v in edges)
    assert all(0 <= u < 256 and 0 <= v < 256 for u, v in edges)
    assert 0.5 * 4 * 256 < len(edges) <= 4 * 256
    assert edges == list(gen.rmat(8, 4, seed=7))
    assert edges != list(gen.rmat(8, 4, seed=8))


def test_rmat_skew():
    edges = list(gen.rmat(10, 8, seed=1))
    out_deg = graph(edges).out_degree()
    assert max(d for _, d in out_deg) > 10 * len(edges) / 1024  # a = 0.57 makes hubs


@pytest.mark.parametrize("n,m", [(10, 0), (10, 30), (10, 90), (200, 1000), (2, 2)])
def test_gnm_counts(n, m):
    edges = list(gen.gnm(n, m, seed=3))
    assert len(edges) == len(set(edges)) == m
    assert all(u != v and 0 <= u < n and 0 <= v < n for u, v in edges)
    assert edges == list(gen.gnm(n, m, seed=3))


@pytest.mark.parametrize("call", [
    lambda: gen.gnm(3, 7, seed=0), lambda: gen.bowtie(0, 2), lambda: gen.paired_trees(0),
    lambda: gen.tree(0), lambda: gen.chain(-1), lambda: gen.ladder([]), lambda: gen.rmat(3, 2, 0, a=0.9),
])
def test_bad_calls_raise_eagerly(call):
    with pytest.raises(UsageError):
        call()  # raised by the call itself, before any iteration


def test_weighted_deterministic():
    base = list(gen.chain(50))
    rows = list(gen.weighted(base, seed=5))
    assert [r[:2] for r in rows] == base
    assert all(1 <= r[2] <= 100 for r in rows)
    assert rows == list(gen.weighted(base, seed=5))
    assert rows != list(gen.weighted(base, seed=6))
    assert all(r[2] == 4 for r in gen.weighted(base, seed=0, low=4, high=4))


def test_write_facts_format(tmp_path):
    path = tmp_path / "edge.facts"
    assert gen.write_facts([(0, 1), (1, 2, 30)], path) == 2
    assert path.read_bytes() == b"0\t1\n1\t2\t30\n"
    assert os.listdir(tmp_path) == ["edge.facts"]
    assert gen.write_facts([], path) == 0
    assert path.read_bytes() == b""


def test_write_facts_atomic_on_failure(tmp_path):
    path = tmp_path / "edge.facts"
    gen.write_facts([(1, 2)], path)

    def broken():
        yield (3, 4)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        gen.write_facts(broken(), path)
    assert path.read_text() == "1\t2\n"
    assert os.listdir(tmp_path) == ["edge.facts"]


def test_generate_list_and_dict(tmp_path):
    p = gen.generate("tree", ["3", "up"], tmp_path / "out")
    assert p == tmp_path / "out" / "edge.facts"
    rows = [tuple(map(int, line.split("\t"))) for line in p.read_text().splitlines()]
    assert rows == list(gen.tree(3, "up"))
    q = gen.generate("bowtie", {"width": 2, "length": 3}, tmp_path, name="arc", weighted=True, seed=1)
    assert q.name == "arc.facts"
    lines = q.read_text().splitlines()
    assert len(lines) == 6 and all(len(line.split("\t")) == 3 for line in lines)
    assert gen.generate("ladder", ["3", "2", "4"], tmp_path, name="lad").read_text().count("\n") == 14
    r1 = gen.generate("rmat", ["5", "2"], tmp_path, name="r1", seed=9).read_text()
    r2 = gen.generate("rmat", {"scale": 5, "edge_factor": 2, "seed": 9}, tmp_path, name="r2").read_text()
    assert r1 == r2
    assert gen.generate("paired-trees", ["4"], tmp_path, name="pt").read_text().count("\n") == 60


@pytest.mark.parametrize("kind,args,fragment", [
    ("cube", ["3"], "unknown kind"),
    ("tree", [], "missing depth"),
    ("tree", ["3", "sideways"], "direction"),
    ("tree", ["x"], "depth must be int"),
    ("chain", ["3", "4"], "too many"),
    ("bowtie", ["0", "3"], "width"),
    ("ladder", [], "missing rungs"),
    ("ladder", ["2", "0"], "rung size"),
    ("gnm", ["3", "7"], "m must be"),
    ("chain", {"length": 3}, "unknown parameter"),
])
def test_generate_usage_errors(tmp_path, kind, args, fragment):
    with pytest.raises(UsageError, match=fragment):
        gen.generate(kind, args, tmp_path)
    assert not list(tmp_path.iterdir())


def test_cli(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="sparklog")
    sub = parser.add_subparsers(dest="command")
    gen.add_parser(sub)
    ns = parser.parse_args(["gen", "gnm", "20", "40", "-o", str(tmp_path), "--weighted", "--seed", "2"])
    assert ns.func(ns) == 0
    assert "wrote 40 rows" in capsys.readouterr().out
    assert (tmp_path / "edge.facts").read_text().count("\n") == 40
    help_text = sub.choices["gen"].format_help()
    for kind in gen.WORKLOADS:
        assert gen.usage(kind) in help_text
    assert "tree DEPTH [DIRECTION=down]" in help_text


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_get_the_usual_mode_and_no_temporary_stays(tmp_path, umask):
    old = os.umask(umask)
    try:
        path = gen.generate("chain", [3], tmp_path)
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["edge.facts"]


def test_a_file_as_output_directory(tmp_path):
    from sparklog.errors import OutputError

    (tmp_path / "afile").write_text("")
    with pytest.raises(OutputError, match="-o .*afile: not a directory"):
        gen.generate("chain", [3], tmp_path / "afile")
    (tmp_path / "d" / "edge.facts").mkdir(parents=True)
    with pytest.raises(OutputError, match="cannot write .*edge.facts"):
        gen.generate("chain", [3], tmp_path / "d")
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["edge.facts"]
