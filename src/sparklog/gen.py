"""Deterministic generators of the papers' graph workloads, written as Soufflé facts files.

Every generator returns an iterator of tuples of ints: edges ``(src, dst)``, or
``(src, dst, w)`` after :func:`weighted`. Arguments are checked eagerly (a bad call raises
:class:`~sparklog.errors.UsageError` at once, not on first iteration). Randomness comes
only from ``random.Random(seed)``, so a kind, its arguments and a seed fix the output.

Node numbering, per kind:

* ``chain(n)``: 0..n, edges i -> i+1.
* ``tree(depth)``: heap order from 1 (children of k are 2k and 2k+1).
* ``bowtie(W, L)``: sources 0..W-1, chain W..W+L-1, sinks W+L..2W+L-1.
* ``ladder(rungs)``: consecutive from 0, rung by rung.
* ``paired_trees(h)``: left tree in heap order 1..2^(h+1)-1 (its leaves are the shared
  leaves); the right tree's internal node with heap index k is 2^(h+1)-1+k.
* ``rmat``/``gnm``: 0..2^scale-1 and 0..n-1.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import os
import random
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from sparklog.errors import OutputError, UsageError

Row = tuple[int, ...]


def _require(ok: bool, message: str) -> None:
    """Raise a UsageError with ``message`` unless ``ok``."""
    if not ok:
        raise UsageError(message)


# --------------------------------------------------------------------------- generators


def chain(n: int) -> Iterator[Row]:
    """A path of n edges i -> i+1 over nodes 0..n; TC size n(n+1)/2."""
    _require(n >= 0, f"chain: n must be >= 0, got {n}")
    return ((i, i + 1) for i in range(n))


def tree(depth: int, direction: str = "down") -> Iterator[Row]:
    """Complete binary tree with ``depth`` levels, heap-numbered from 1, edges down or up."""
    _require(depth >= 1, f"tree: depth (number of levels) must be >= 1, got {depth}")
    _require(direction in ("down", "up"), f"tree: direction must be 'up' or 'down', got {direction!r}")
    inner = range(1, 2 ** (depth - 1))
    if direction == "down":
        return ((k, c) for k in inner for c in (2 * k, 2 * k + 1))
    return ((c, k) for k in inner for c in (2 * k, 2 * k + 1))


def bowtie(width: int, length: int) -> Iterator[Row]:
    """W sources -> first of a chain of L nodes, last chain node -> W sinks (2W+L-1 edges)."""
    _require(width >= 1, f"bowtie: width must be >= 1, got {width}")
    _require(length >= 1, f"bowtie: length must be >= 1, got {length}")
    first, last = width, width + length - 1
    return itertools.chain(((s, first) for s in range(width)),
                           ((v, v + 1) for v in range(first, last)),
                           ((last, last + 1 + t) for t in range(width)))


def ladder(rungs: Sequence[int]) -> Iterator[Row]:
    """Afrati-Ullman ladder (S2.2): rung i has rungs[i] = m_i nodes, each -> every node of rung i+1."""
    sizes = list(rungs)
    _require(len(sizes) >= 1, "ladder: give at least one rung size")
    _require(all(m >= 1 for m in sizes), f"ladder: every rung size m_i must be >= 1, got {sizes}")
    starts = list(itertools.accumulate(sizes, initial=0))
    return ((starts[i] + a, starts[i + 1] + b)
            for i in range(len(sizes) - 1) for a in range(sizes[i]) for b in range(sizes[i + 1]))


def ladder_smart(r: int, m: int) -> Iterator[Row]:
    """Example 2.4 ladder (Smart's worst): 2^r - 1 rungs; rungs 2^r - 2^s, 1 <= s <= r, have m nodes."""
    _require(r >= 1, f"ladder_smart: r must be >= 1, got {r}")
    _require(m >= 1, f"ladder_smart: m must be >= 1, got {m}")
    wide = {2 ** r - 2 ** s for s in range(1, r + 1)}
    return ladder([m if i in wide else 1 for i in range(2 ** r - 1)])


def ladder_balance(n: int, m: int) -> Iterator[Row]:
    """Example 2.4's other ladder (bad for Balance): n rungs; rungs 0, 3, 6, ... have m nodes."""
    _require(n >= 1, f"ladder_balance: n must be >= 1, got {n}")
    _require(m >= 1, f"ladder_balance: m must be >= 1, got {m}")
    return ladder([m if i % 3 == 0 else 1 for i in range(n)])


def paired_trees(h: int) -> Iterator[Row]:
    """Afrati-Ullman Fig. 2: two complete binary trees of height h sharing leaves, arcs rightward."""
    _require(h >= 1, f"paired_trees: h must be >= 1, got {h}")
    leaves, size = 2 ** h, 2 ** (h + 1) - 1

    def right(k: int) -> int:
        """Node id of heap index k in the right tree (leaves are shared with the left tree)."""
        return k if k >= leaves else size + k

    return itertools.chain(((k, c) for k in range(1, leaves) for c in (2 * k, 2 * k + 1)),
                           ((right(c), right(c // 2)) for c in range(2, size + 1)))


def rmat(scale: int, edge_factor: int, seed: int,
         a: float = 0.57, b: float = 0.19, c: float = 0.19) -> Iterator[Row]:
    """R-MAT, 2^scale nodes, edge_factor*2^scale draws; duplicates and self-loops are removed."""
    _require(scale >= 0, f"rmat: scale must be >= 0, got {scale}")
    _require(edge_factor >= 0, f"rmat: edge_factor must be >= 0, got {edge_factor}")
    _require(min(a, b, c) >= 0 and a + b + c <= 1,
             f"rmat: need a, b, c >= 0 and a+b+c <= 1, got {a}, {b}, {c}")
    return _rmat(scale, edge_factor * 2 ** scale, random.Random(seed), a, a + b, a + b + c)


def _rmat(scale: int, draws: int, rng: random.Random,
          pa: float, pab: float, pabc: float) -> Iterator[Row]:
    """The R-MAT draws (quadrant thresholds a, a+b, a+b+c), first occurrences only, no self-loops."""
    seen: set[Row] = set()
    for _ in range(draws):
        u = v = 0
        for _ in range(scale):
            x = rng.random()
            u, v = 2 * u + (x >= pab), 2 * v + (pa <= x < pab or x >= pabc)
        if u != v and (u, v) not in seen:
            seen.add((u, v))
            yield (u, v)


def gnm(n: int, m: int, seed: int) -> Iterator[Row]:
    """Uniform random directed G(n, m): exactly m distinct edges, no self-loops."""
    _require(n >= 0, f"gnm: n must be >= 0, got {n}")
    _require(0 <= m <= n * (n - 1), f"gnm: m must be in 0..n(n-1) = {max(n * (n - 1), 0)}, got {m}")
    picks = random.Random(seed).sample(range(n * (n - 1)), m) if m else []
    return ((i // (n - 1), _skip(i // (n - 1), i % (n - 1))) for i in picks)


def _skip(u: int, r: int) -> int:
    """The r-th node other than u."""
    return r if r < u else r + 1


def weighted(edges: Iterable[Row], seed: int, low: int = 1, high: int = 100) -> Iterator[Row]:
    """Append to the i-th edge the i-th draw of Random(seed).randint(low, high)."""
    _require(low <= high, f"weighted: need low <= high, got {low} > {high}")
    rng = random.Random(seed)
    return ((*e, rng.randint(low, high)) for e in edges)


WORKLOADS: dict[str, Callable[..., Iterator[Row]]] = {
    "chain": chain,
    "tree": tree,
    "bowtie": bowtie,
    "ladder": ladder,
    "ladder_smart": ladder_smart,
    "ladder_balance": ladder_balance,
    "paired_trees": paired_trees,
    "rmat": rmat,
    "gnm": gnm,
}


# --------------------------------------------------------------------------- files


def write_facts(rows: Iterable[Row], path: str | os.PathLike[str]) -> int:
    """Write rows tab-separated, one per line, atomically (temp file + os.replace); return the count.

    The file gets the mode any new file gets (0666 less the umask), not mkstemp's 0600.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise OutputError(f"gen: cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            count = 0
            for row in rows:
                out.write("\t".join(map(str, row)) + "\n")
                count += 1
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"gen: cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


# --------------------------------------------------------------------------- argument parsing


def _params(kind: str) -> list[inspect.Parameter]:
    """The user-given parameters of a kind (``seed`` comes from the --seed option)."""
    return [p for p in inspect.signature(WORKLOADS[kind]).parameters.values() if p.name != "seed"]


def usage(kind: str) -> str:
    """One-line usage of a kind, e.g. ``tree DEPTH [DIRECTION=down]``."""
    words = [kind]
    for p in _params(kind):
        name = p.name.upper()
        if p.annotation == "Sequence[int]":
            words.append(f"{name[:-1]}...")
        else:
            words.append(name if p.default is p.empty else f"[{name}={p.default}]")
    return " ".join(words)


def _convert(kind: str, p: inspect.Parameter, text: object) -> object:
    """Parse one argument by its annotation (int, float or str)."""
    kinds = {"int": int, "float": float, "str": str}
    try:
        if p.annotation == "Sequence[int]":
            return [int(x) for x in (text if isinstance(text, (list, tuple)) else [text])]
        return kinds[p.annotation](text)
    except (TypeError, ValueError):
        raise UsageError(f"gen {kind}: {p.name} must be {p.annotation}, got {text!r}"
                         f" (usage: {usage(kind)})") from None


def _bind(kind: str, args: Sequence[str] | dict[str, object], seed: int) -> dict[str, object]:
    """Keyword arguments for WORKLOADS[kind] from positional strings or a dict."""
    params = _params(kind)
    if isinstance(args, dict):
        unknown = set(args) - {p.name for p in params} - {"seed"}
        _require(not unknown,
                 f"gen {kind}: unknown parameter(s) {sorted(unknown)} (usage: {usage(kind)})")
        given = {p.name: args[p.name] for p in params if p.name in args}
    elif params and params[-1].annotation == "Sequence[int]":
        given = {params[-1].name: list(args)} if args else {}
    else:
        _require(len(args) <= len(params), f"gen {kind}: too many arguments (usage: {usage(kind)})")
        given = dict(zip((p.name for p in params), args))
    missing = [p.name for p in params if p.default is p.empty and p.name not in given]
    _require(not missing, f"gen {kind}: missing {', '.join(missing)} (usage: {usage(kind)})")
    bound = {p.name: _convert(kind, p, given[p.name]) for p in params if p.name in given}
    if "seed" in inspect.signature(WORKLOADS[kind]).parameters:
        bound["seed"] = int(args.get("seed", seed)) if isinstance(args, dict) else seed
    return bound


def _generate(kind: str, args: Sequence[str] | dict[str, object], out_dir: str | os.PathLike[str],
              name: str, weights: bool, seed: int) -> tuple[Path, int]:
    """Generate, write ``out_dir/name.facts``; return its path and row count."""
    kind = kind.replace("-", "_")
    _require(kind in WORKLOADS, f"gen: unknown kind {kind!r}; kinds: {', '.join(WORKLOADS)}")
    _require(bool(name) and "/" not in name and os.sep not in name, f"gen: bad relation name {name!r}")
    rows = WORKLOADS[kind](**_bind(kind, args, seed))
    if weights:
        rows = weighted(rows, seed)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(f"gen: -o {out}: not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"gen: cannot create directory {out}: {exc.strerror or exc}") from None
    path = out / f"{name}.facts"
    return path, write_facts(rows, path)


def generate(kind: str, args: Sequence[str] | dict[str, object], out_dir: str | os.PathLike[str],
             name: str = "edge", weighted: bool = False, seed: int = 0) -> Path:
    """Write workload ``kind`` with ``args`` to ``out_dir/name.facts`` and return the path."""
    return _generate(kind, args, out_dir, name, weighted, seed)[0]


# --------------------------------------------------------------------------- CLI


def _kinds_help() -> str:
    """The epilog listing every kind with its parameters."""
    notes = {
        "chain": "n edges 0->1->...->n",
        "tree": "complete binary tree, DEPTH levels, edges down or up",
        "bowtie": "W sources -> chain of L nodes -> W sinks",
        "ladder": "Afrati-Ullman ladder; one size m_i per rung",
        "ladder_smart": "Example 2.4: 2^r-1 rungs, rungs 2^r-2^s have m nodes",
        "ladder_balance": "Example 2.4: n rungs, rungs 0,3,6,... have m nodes",
        "paired_trees": "Afrati-Ullman Fig. 2, two height-h trees sharing leaves",
        "rmat": "R-MAT, 2^scale nodes, edge_factor*2^scale draws minus dups/self-loops (uses --seed)",
        "gnm": "random directed G(n, m), no dups or self-loops (uses --seed)",
    }
    lines = ["kinds:"] + [f"  {usage(k):50} {notes[k]}" for k in WORKLOADS]
    return "\n".join(lines)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``gen`` sub-command to ``subparsers``; its handler is ``run_cli``."""
    parser = subparsers.add_parser(
        "gen", help="generate a graph workload as a .facts file",
        description="Generate a deterministic graph workload as a Soufflé .facts file.",
        epilog=_kinds_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", help="workload kind (see below)")
    parser.add_argument("args", nargs="*", help="the kind's parameters")
    parser.add_argument("-o", "--out", required=True, help="output directory")
    parser.add_argument("--name", default="edge", help="relation name (file NAME.facts; default edge)")
    parser.add_argument("--weighted", action="store_true", help="add an integer weight column (1..100)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.set_defaults(func=run_cli)
    return parser


def run_cli(args: argparse.Namespace) -> int:
    """Run ``sparklog gen`` from parsed arguments; UsageError propagates to the caller."""
    path, count = _generate(args.kind, args.args, args.out, args.name, args.weighted, args.seed)
    print(f"wrote {count} rows to {path}")
    return 0
