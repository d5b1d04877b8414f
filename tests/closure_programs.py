"""Random programs around the recursions sparklog rewrites, with their input facts.

The random programs of tests/strategies.py almost never draw a transitive closure in one of
the shapes rewrite/closure.py recognizes, nor a chain program (rewrite/doubling.py), so
they never test a rewrite. ``generate_closure(seed)`` draws one on purpose:

- a closure of an edge relation (input, or derived in a lower stratum), written
  right-linear, left-linear or nonlinear, with zero to two parameter columns at any place,
  over numbers or symbols;
- or a chain program (Definition 3.1: several relations, each rule an edge atom and at most
  one relation of the program), or a same-generation recursion (Theorem 3.2);
- then, half the time, mutations that keep the program valid but may take it out of the
  recognized shape: a filter or a negation in a rule, a constant, a repeated variable, the
  head's ends swapped, the base rule reading another relation or reversed, a parameter
  that changes along the path, a wildcard, one more rule or fact, one more atom;
- and rules that read the result (a diagonal, a negation of it, a count).

An unmutated recursion sometimes carries a ``.pragma`` choosing its strategy (a length
partition of its own too). The oracle is the reference evaluator on the program as
written: every strategy must derive exactly its facts (tests/unit/test_closure.py without
Spark, tests/spark/test_reference_agreement.py and ``tests.campaign --closures`` on it).
"""

from __future__ import annotations

import random

from sparklog.syntax.nodes import Program
from sparklog.syntax.parser import parse

NODES = 6
SYMBOLS = ("a", "b", "c", "d", "e", "f")
PRAGMAS = ("smart", "balance", "thirds", "left", "right", "linear", "asis")
SPLITS = ("(l + 1) / 2", "l - 1", "1", "max(1, l / 3)", "min(l - 1, 2)")
MUTATIONS = ("filter-step", "filter-base", "other-base", "reverse-base", "extra-rule",
             "extra-fact", "constant", "repeat", "swap-head", "extra-atom", "changing-param",
             "wildcard-param", "negation", "second-step")


def generate_closure(seed: int, prefix: str = "") -> tuple[Program, dict[str, set[tuple]]]:
    """The program and ``.input`` facts of a seed; relation names get ``prefix``."""
    rng = random.Random(f"closure {seed}")
    draw = _Draw(rng, prefix, "symbol" if rng.random() < 0.2 else "number")
    family = rng.choices(("closure", "chain", "same-generation"), (6, 2, 1))[0]
    if family == "closure":
        draw.closure()
    elif family == "chain":
        draw.chain()
    else:
        draw.same_generation()
    draw.consumers()
    text = "\n".join(draw.decls + draw.lines) + "\n"
    return parse(text, f"closure-{seed}.dl"), draw.facts


class _Draw:
    def __init__(self, rng: random.Random, prefix: str, kind: str) -> None:
        self.rng, self.prefix, self.kind = rng, prefix, kind
        self.decls: list[str] = []
        self.lines: list[str] = []
        self.facts: dict[str, set[tuple]] = {}
        self.result: tuple[str, int] | None = None  # the recursive relation and its arity

    # -- helpers -----------------------------------------------------------------------

    def name(self, base: str) -> str:
        return self.prefix + base

    def node(self) -> object:
        i = self.rng.randrange(NODES)
        return SYMBOLS[i] if self.kind == "symbol" else i

    def constant(self) -> str:
        v = self.node()
        return f'"{v}"' if self.kind == "symbol" else str(v)

    def declare(self, base: str, arity: int, given: bool = False) -> str:
        rel = self.name(base)
        cols = ", ".join(f"c{i}:{self.kind}" for i in range(arity))
        self.decls.append(f".decl {rel}({cols})")
        if given:
            self.decls.append(f".input {rel}")
            rows = self.rng.randrange(0, 16)
            self.facts[rel] = {tuple(self.node() if i < 2 or arity == 1 else
                                     (SYMBOLS[self.rng.randrange(2)] if self.kind == "symbol"
                                      else self.rng.randrange(2))
                                     for i in range(arity)) for _ in range(rows)}
        return rel

    def mutate(self) -> set[str]:
        if self.rng.random() < 0.5:
            return set()
        return set(self.rng.sample(MUTATIONS, self.rng.choice((1, 1, 2, 3))))

    # -- families ------------------------------------------------------------------------

    def closure(self) -> None:
        rng = self.rng
        params = rng.choice((0, 0, 0, 1, 1, 2))
        arity = 2 + params
        ends = sorted(rng.sample(range(arity), 2))
        if rng.random() < 0.3:
            ends.reverse()  # the path runs from the later column to the earlier one
        edge = self.declare("e", arity, given=True)
        if rng.random() < 0.3:  # an edge relation derived in a lower stratum
            derived = self.declare("d", arity)
            args = _args(arity, ends, "x", "y", params)
            self.lines.append(f"{_show(derived, args)} :- {_show(edge, args)}, "
                              f"x != {self.constant()}.")
            edge = derived
        p = self.declare("p", arity)
        self.result = (p, arity)
        form = rng.choice(("right", "left", "nonlinear"))
        mutations = self.mutate()

        def atom(rel: str, a: str, b: str, ps: list[str] | None = None) -> tuple[str, list[str]]:
            return rel, _args(arity, ends, a, b, params, ps)

        base_edge = self.declare("b", arity, given=True) if "other-base" in mutations else edge
        base = [atom(base_edge, "y", "x") if "reverse-base" in mutations else
                atom(base_edge, "x", "y")]
        filters = [f"x != {self.constant()}"] if "filter-base" in mutations else []
        self.rule(atom(p, "x", "y"), base, filters)

        step_params = None
        if "changing-param" in mutations and params:
            step_params = [f"k{i}" for i in range(params)]
        elif "wildcard-param" in mutations and params:
            step_params = ["_"] * params
        head = atom(p, "y", "x") if "swap-head" in mutations else atom(p, "x", "y")
        body = {"right": [atom(edge, "x", "z", step_params), atom(p, "z", "y")],
                "left": [atom(p, "x", "z"), atom(edge, "z", "y", step_params)],
                "nonlinear": [atom(p, "x", "z"), atom(p, "z", "y")]}[form]
        if "constant" in mutations:  # one end of one atom becomes a constant
            rel, args = body[rng.randrange(len(body))]
            args[ends[rng.randrange(2)]] = self.constant()
        if "repeat" in mutations:  # one end of one atom repeats the other
            rel, args = body[rng.randrange(len(body))]
            args[ends[1]] = args[ends[0]]
        filters = []
        if "filter-step" in mutations:
            filters.append(rng.choice(("x != y", f"y != {self.constant()}", "z != x")))
        if "extra-atom" in mutations:
            body.append((self.declare("n", 1, given=True), [rng.choice("xyz")]))
        negated = []
        if "negation" in mutations:
            negated.append((self.declare("m", 2, given=True), ["x", "y"]))
        self.rule(head, body, filters, negated, fallback=atom(edge, "x", "y"))
        if "second-step" in mutations:
            other = self.declare("s", arity, given=True)
            self.rule(atom(p, "x", "y"), [atom(p, "x", "z"), atom(other, "z", "y")])
        if "extra-rule" in mutations:
            self.rule(atom(p, "x", "x"), [atom(edge, "x", "y")])
        if "extra-fact" in mutations:
            self.lines.append(f"{p}({', '.join(self.constant() for _ in range(arity))}).")
        if not mutations and rng.random() < 0.4:
            strategy = rng.choice(PRAGMAS + ("split",))
            first = f', first="{rng.choice(SPLITS)}"' if strategy == "split" else ""
            self.lines.append(f".pragma {p}(strategy={strategy}{first})")

    def rule(self, head: tuple[str, list[str]], body: list[tuple[str, list[str]]],
             filters: list[str] = (), negated: list[tuple[str, list[str]]] = (),
             fallback: tuple[str, list[str]] | None = None) -> None:
        """A rule, made range-restricted: a head, filter or negated variable no positive
        atom binds gets ``fallback`` (an edge atom binding the ends) added to the body."""
        bound = {a for _, args in body for a in args if a.isidentifier() and a != "_"}
        used = {a for _, args in [head, *negated] for a in args if a.isidentifier()}
        used |= {w for f in filters for w in f.split() if w.isidentifier()}
        if not used <= bound and fallback is not None:
            body = [*body, fallback]
            bound |= set(fallback[1])
        filters = [f for f in filters if {w for w in f.split() if w.isidentifier()} <= bound]
        parts = [_show(*a) for a in body] + list(filters) + ["!" + _show(*a) for a in negated]
        self.lines.append(f"{_show(*head)} :- {', '.join(parts)}.")

    def chain(self) -> None:
        """A chain program (Definition 3.1): relations p0..pk, rules ``p(x, y) :- e(x, y)``,
        ``p(x, y) :- e(x, z), q(z, y)`` (right) or ``p(x, y) :- q(x, z), e(z, y)`` (left)."""
        rng = self.rng
        count = rng.choice((1, 2, 2, 3))
        rels = [self.declare(f"p{i}", 2) for i in range(count)]
        edges = [self.declare(f"e{i}", 2, given=True) for i in range(rng.choice((1, 2)))]
        self.result = (rels[0], 2)
        side = rng.choice(("right", "left"))
        mutations = self.mutate()
        for i, rel in enumerate(rels):
            self.lines.append(f"{rel}(x, y) :- {rng.choice(edges)}(x, y).")
            for j in range(rng.choice((1, 1, 2))):  # the first reads the next: one cycle
                q, e = rels[(i + 1) % count] if j == 0 else rng.choice(rels), rng.choice(edges)
                body = [f"{e}(x, z)", f"{q}(z, y)"] if side == "right" else \
                    [f"{q}(x, z)", f"{e}(z, y)"]
                if "filter-step" in mutations and i == 0:
                    body.append(f"y != {self.constant()}")
                if "repeat" in mutations and i == 0:
                    body[0] = body[0].replace("(x, z)", "(z, z)")
                    head = f"{rel}(z, y)"
                else:
                    head = f"{rel}(x, y)"
                self.lines.append(f"{head} :- {', '.join(body)}.")
        if not mutations and rng.random() < 0.5:
            self.lines.append(f".pragma {rels[0]}(strategy=doubling)")

    def same_generation(self) -> None:
        rng = self.rng
        e = self.declare("e", 2, given=True)
        sg = self.declare("sg", 2)
        self.result = (sg, 2)
        self.lines.append(f"{sg}(x, y) :- {e}(p, x), {e}(p, y).")
        self.lines.append(f"{sg}(x, y) :- {e}(x, a), {sg}(a, b), {e}(y, b).")
        if rng.random() < 0.6:
            self.lines.append(f".pragma {sg}(strategy=doubling)")

    def consumers(self) -> None:
        """Rules that read the recursive relation: its diagonal, pairs not mirrored, a
        count per node."""
        assert self.result is not None
        p, arity = self.result
        rest = ", _" * (arity - 2)
        if self.rng.random() < 0.5:
            q = self.declare("q", 1)
            self.lines.append(f"{q}(x) :- {p}(x, x{rest}).")
        if self.rng.random() < 0.4:
            r = self.declare("r", 2)
            self.lines.append(f"{r}(x, y) :- {p}(x, y{rest}), !{p}(y, x{rest}).")
        if self.rng.random() < 0.3 and self.kind == "number":
            c = self.declare("k", 2)
            self.lines.append(f"{c}(x, n) :- {p}(x, _{rest}), n = count : {{ {p}(x, _{rest}) }}.")


def _args(arity: int, ends: list[int], a: str, b: str, params: int,
          names: list[str] | None = None) -> list[str]:
    """Arguments of an atom: ``a`` and ``b`` at the ends' columns, the parameter variables
    (``c0``, ``c1``, or ``names``) in the others."""
    others = iter(names or [f"c{i}" for i in range(params)])
    return [a if i == ends[0] else b if i == ends[1] else next(others) for i in range(arity)]


def _show(relation: str, args: list[str]) -> str:
    return f"{relation}({', '.join(args)})"
