"""Graph programs to run and to edit: the ``.dl`` files beside this module, and functions
that run them on a DataFrame of edges.

Each program is a few lines of Datalog (``path("sssp").read_text()``; ``sparklog run
$(python3 -m sparklog.programs sssp) -F FACTS_DIR`` runs one from the command line). Each
function takes the edges as a DataFrame whose first columns are (source, destination[,
weight]) and returns the program's output as a DataFrame:

>>> from sparklog import programs
>>> sorted(programs.NAMES)
['apsp', 'bfs', 'cc', 'cspa', 'khop', 'pagerank', 'reach', 'sssp', 'widest']

Source nodes are made in the JVM (no Python worker is needed on an executor).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NAMES = tuple(sorted(p.stem for p in HERE.glob("*.dl")))


def path(name: str) -> Path:
    """The ``.dl`` file of a program."""
    if name not in NAMES:
        raise KeyError(f"no program {name!r}; there are {', '.join(NAMES)}")
    return HERE / f"{name}.dl"


def sssp(edges: Any, source: int, engine: Any = None) -> Any:
    """(node, d): the least total weight from ``source`` to every node it reaches."""
    return _run("sssp", "dist", engine, edge=edges, source=_nodes(edges, [source]))


def apsp(edges: Any, sources: Iterable[int] | None = None, engine: Any = None) -> Any:
    """(from, to, d): shortest paths from each of ``sources`` (default: every node)."""
    nodes = _every_node(edges) if sources is None else _nodes(edges, sources)
    return _run("apsp", "dist", engine, edge=edges, source=nodes)


def bfs(edges: Any, source: int, engine: Any = None) -> Any:
    """(node, d): hops from ``source`` to every node it reaches."""
    return _run("bfs", "hops", engine, edge=_two(edges), source=_nodes(edges, [source]))


def connected_components(edges: Any, engine: Any = None) -> Any:
    """(n, label): each node labelled with the least node id of its (undirected) component."""
    return _run("cc", "cc", engine, edge=_two(edges))


def reach(edges: Any, sources: Iterable[int], engine: Any = None) -> Any:
    """(node): every node reachable from ``sources``, the sources included."""
    return _run("reach", "reach", engine, edge=_two(edges), source=_nodes(edges, sources))


def k_hop(edges: Any, sources: Iterable[int], k: int, engine: Any = None) -> Any:
    """(node, d): the nodes within ``k`` hops of ``sources`` and their distance in hops."""
    return _run("khop", "khop", engine, edge=_two(edges), source=_nodes(edges, sources),
                k=_nodes(edges, [k]))


def widest_path(edges: Any, source: int, engine: Any = None) -> Any:
    """(node, c): the largest bottleneck capacity of a path from ``source`` to each node."""
    return _run("widest", "width", engine, edge=edges, source=_nodes(edges, [source]))


def pagerank(edges: Any, iterations: int = 20, damping: float = 0.85, engine: Any = None
             ) -> Any:
    """(node, r): PageRank after ``iterations`` power iterations from 1/N, as networkx's
    ``pagerank`` computes each one (dangling nodes' rank spread over every node)."""
    from pyspark.sql import functions as F

    one = edges.sparkSession.range(1)
    return _run("pagerank", "pagerank", engine, edge=_two(edges),
                iterations=one.select(F.lit(int(iterations)).alias("k")),
                damping=one.select(F.lit(float(damping)).alias("a")))


def _run(name: str, output: str, engine: Any, **inputs: Any) -> Any:
    import sparklog

    first = next(iter(inputs.values()))
    engine = engine or sparklog.Engine(first.sparkSession)
    program = sparklog.Program.from_file(path(name))
    return engine.run(program, inputs=inputs)[output]


def _two(edges: Any) -> Any:
    """The first two columns: an unweighted program's edges."""
    return edges.select(*edges.columns[:2])


def _nodes(edges: Any, values: Iterable[int]) -> Any:
    """A one-column DataFrame of ``values``, made in the JVM."""
    from pyspark.sql import functions as F

    literals = [F.lit(int(v)) for v in values]
    return edges.sparkSession.range(1).select(F.explode(F.array(*literals)).alias("node"))


def _every_node(edges: Any) -> Any:
    src, dst = edges.columns[:2]
    return edges.select(edges[src].alias("node")).union(edges.select(edges[dst])).distinct()


def main(argv: list[str] | None = None) -> int:
    """``python3 -m sparklog.programs NAME``: print the path of a program's ``.dl`` file."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in NAMES:
        print(f"usage: python3 -m sparklog.programs {{{','.join(NAMES)}}}", file=sys.stderr)
        return 2
    print(path(args[0]))
    return 0
