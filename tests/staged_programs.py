"""Random staged recursions: relations with a counter column that rules move forward.

Neither tests/strategies.py nor tests/closure_programs.py draws a recursive rule whose head
computes ``i + 1`` from a counter, the shape of PageRank's iterations, hop-bounded paths and
stage-indexed analyses, for which the engine retires the stored runs of passed stages
(ir/stages.py). ``generate_staged(seed)`` draws one on purpose:

- one to three relations, each with a counter column at a random place among one or two
  node columns, some of them ``$MIN``/``$MAX`` lattices over an extra value column, or a
  ``$SUM`` over distinct contributions;
- seeds at stage 0, at other small stages, or from facts of an input;
- recursive rules that step along an edge or join two of the stratum's relations at one
  stage and derive at ``i``, ``i + 1`` or ``i + 2`` (bounded by ``i < K``), with filters and
  negations of lower relations;
- half the time a mutation that takes the stratum out of the staged shape or tests the
  analysis's edges: a rule that moves the counter back (``i - 1``, bounded below), one that
  reads two stages, one whose head counter is a constant, a counter of a wider type;
- and rules of a later stratum that read the relations whole (every stage);
- a third of the programs (drawn apart, so the others stay as they were) give each ``$SUM``
  the shape that is summed before it is stored (ir/presum.py): recursive rules that move
  up a stage and read one atom of the stratum, whose value they add when it is a ``$MAX``'s
  or a ``$SUM``'s (PageRank's shares), so that a key improved twice refutes the presum; a
  third of those rules read the ``$SUM`` itself a stage below (walks counted by length, a
  rank kept in one relation), its contributions' delta and each key's total, and in a
  quarter of those programs (drawn apart) the second relation is a ``$SUM`` too, whose
  totals the last one reads;
- a quarter of the others (drawn apart too) fork: two relations derived a stage up from a
  third in one round are joined again at their stage into it, PageRank's shares and lost
  mass, so that one kernel of the join (the old side with the other's new tuples) meets
  nothing and is left out of the round (rounds._empty); half of those have no other
  recursive rule, which might otherwise put later stages on the old side;
- half of all programs (drawn apart as well) bound the counter by a parameter, a relation
  ``lim(k)`` of a lower stratum, instead of a number (``i < k``: PageRank's
  ``iterations(k)``), which the engine reads as a literal where it holds at most one row
  (Database.constant_rows): one fact, an input fact, an aggregate of a lower stratum, no
  row at all (nothing moves up), or two rows (still a join).

The oracle is the reference evaluator on the program as written.
"""

from __future__ import annotations

import random

from sparklog.syntax.nodes import Program
from sparklog.syntax.parser import parse

NODES = 5
MUTATIONS = ("back", "two-stages", "constant-head", "unstaged-extra", "none", "none")


def generate_staged(seed: int, prefix: str = "") -> tuple[Program, dict[str, set[tuple]]]:
    """The program and ``.input`` facts of a seed; relation names get ``prefix``."""
    rng = random.Random(f"staged {seed}")
    bias = random.Random(f"presum {seed}")
    presum = bias.random() < 1 / 3
    forking = random.Random(f"fork {seed}")
    fork = not presum and forking.random() < 1 / 4
    bare = fork and forking.random() < 1 / 2  # the fork alone: no other recursive rule
    own = random.Random(f"own total {seed}")
    other_sum = presum and random.Random(f"other total {seed}").random() < 1 / 4
    p = prefix
    limit = rng.randint(2, 5)
    lines = [f".decl {p}e(x:number, y:number)", f".input {p}e",
             f".decl {p}start(x:number, s:number)", f".input {p}start"]
    edges = {(rng.randrange(NODES), rng.randrange(NODES)) for _ in range(rng.randint(3, 9))}
    starts = {(rng.randrange(NODES), rng.choice((0, 0, 1, 2))) for _ in range(rng.randint(1, 3))}
    facts = {f"{p}e": edges, f"{p}start": starts}
    bounding = random.Random(f"param {seed}")
    param = bounding.choice(("fact", "input", "derived", "empty", "two")) \
        if bounding.random() < 1 / 2 else None
    if param is not None:  # the bound a parameter of a lower stratum: lim(k), i < k
        lines.append(f".decl {p}lim(k:number)")
        if param == "input":
            lines.append(f".input {p}lim")
            facts[f"{p}lim"] = {(limit,)}
        elif param == "empty":
            lines.append(f".input {p}lim")
            facts[f"{p}lim"] = set()
        elif param == "derived":  # counted after the inputs are read: a deferred version
            lines.append(f"{p}lim(m + {limit - 2}) :- m = count : {{ {p}e(_, _) }}, m > 0.")
        else:
            lines += [f"{p}lim({limit})."] + ([f"{p}lim({limit - 1})."] if param == "two" else [])
    count = rng.randint(1, 3)
    if presum:  # a $SUM after one or two relations it reads
        count = max(count, 3 if other_sum else 2)
    if fork:
        count = 3
    rels = []  # (name, kind, stage column, node columns, arity)
    value_type: dict[str, str] = {}  # a lattice relation's value column's type
    for k in range(count):
        kind = rng.choice(("set", "set", "min", "max", "sum")) if k else \
            rng.choice(("set", "set", "min"))
        if presum and k == count - 1:
            kind = "sum"
        elif presum and k == 1:
            kind = "sum" if other_sum else bias.choice(("max", "max", "set"))
        nodes = rng.choice((1, 1, 2))
        arity = nodes + 1 + (kind != "set")
        stage = rng.randrange(nodes + 1)
        name = f"{p}r{k}"
        cols = []
        node_i = 0
        for c in range(nodes + 1):
            if c == stage:
                cols.append("i:number")
            else:
                cols.append(f"n{node_i}:number")
                node_i += 1
        if kind != "set":
            value_type[name] = "float" if kind == "sum" and rng.random() < 0.3 else "number"
            cols.append(f"v:{value_type[name]}")
        lines.append(f".decl {name}({', '.join(cols)})")
        rels.append((name, kind, stage, nodes, arity))

    def atom(rel, stage_term, node_terms, value=None, head=False):
        name, kind, stage, nodes, arity = rel
        args, it = [], iter(node_terms)
        for c in range(nodes + 1):
            args.append(stage_term if c == stage else next(it))
        if kind != "set":
            if head:
                func = {"min": "$MIN", "max": "$MAX", "sum": "$SUM"}[kind]
                args.append(f"{func}({value})")
            else:
                args.append(value or "_")
        return f"{name}({', '.join(args)})"

    def nodes_of(rel, a, b="b"):
        return [a] + [b] * (rel[3] - 1)

    clauses = []

    def rule(rel, stage, nodes, value, body):
        clauses.append(f"{atom(rel, stage, nodes, value, True)} :- {body}.")

    for rel in rels:  # seeds
        for _ in range(rng.randint(1, 2)):
            how = rng.choice(("zero", "start", "fact"))
            value = "1" if rel[1] != "sum" or how == "fact" else rng.choice(("1", "x + 1"))
            if how == "zero":
                rule(rel, "0", nodes_of(rel, "x", "x"), value, f"{p}e(x, _)")
            elif how == "start":
                rule(rel, "s", nodes_of(rel, "x", "x"), value, f"{p}start(x, s)")
            else:
                a, s = rng.randrange(NODES), rng.choice((0, 1))
                rule(rel, str(s), nodes_of(rel, str(a), str(a)), value, f"{p}e({a}, _)")
    for rel in rels:  # recursive rules
        for _ in range(0 if bare else rng.randint(1, 2)):
            src = rng.choice(rels)
            step = rng.choice(("0", "1", "1", "2"))
            head_i = "i" if step == "0" else f"i + {step}"
            shape = rng.choice(("edge", "edge", "join", "copy"))
            src_value = "d" if src[1] != "set" else None
            # a value flows only within one lattice ($MIN into $MAX is not monotone)
            value = {"set": None, "min": "d + 1", "max": "d", "sum": "1"}[rel[1]] \
                if src[1] == rel[1] else {"set": None, "min": "1", "max": "1", "sum": "1"}[rel[1]]
            guard = f"{p}lim(k), i < k" if param else f"i < {limit}"
            if presum and rel[1] == "sum":
                # read a relation that is not a $SUM, a $MAX most of all, whose value it
                # adds; or, drawn apart, the $SUM itself a stage below (its delta and
                # the total of each key it holds: one read, guarded by the $SUM)
                others = [r for r in rels if r[1] != "sum"]
                if others:
                    src = bias.choice([r for r in others if r[1] == "max"] * 2 + others)
                    src_value = "d" if src[1] != "set" else None
                if own.random() < 1 / 3:
                    src, src_value = rel, "d"
                elif other_sum and rel is not rels[1] and \
                        value_type[rels[1][0]] == value_type[rel[0]]:
                    src, src_value = rels[1], "d"  # another $SUM's total, of its type
                head_i = "i + 2" if step == "2" else "i + 1"
                shape = "edge" if shape == "join" else shape
                value = "d" if src[1] in ("max", "sum") else "1"
            if shape == "edge":
                body = [atom(src, "i", nodes_of(src, "x"), src_value), f"{p}e(x, y)", guard]
                head_nodes = nodes_of(rel, "y", "x")
            elif shape == "join":
                other = rng.choice(rels)
                other_value = "d2" if other[1] != "set" else None
                body = [atom(src, "i", nodes_of(src, "x"), src_value),
                        atom(other, "i", nodes_of(other, "x", "c"), other_value), guard]
                head_nodes = nodes_of(rel, "x", "x")
            else:
                body = [atom(src, "i", nodes_of(src, "x"), src_value), guard]
                head_nodes = nodes_of(rel, "x", "x")
                if step == "0" and src is rel:
                    head_i = "i + 1"  # a copy onto itself at the same stage derives nothing
            if rng.random() < 0.3:
                body.append(f"!{p}start(x, i)")
            if rng.random() < 0.2:
                body.append("x != 3")
            rule(rel, head_i, head_nodes, value, ", ".join(body))
    if fork:  # r1 and r2 a stage up from r0, joined again at their stage into r0
        hub, left, right = rels
        value = {"set": None, "min": "1", "max": "1", "sum": "1"}
        guard = f"{p}lim(k), i < k" if param else f"i < {limit}"
        rule(left, "i + 1", nodes_of(left, "y", "x"), value[left[1]],
             f"{atom(hub, 'i', nodes_of(hub, 'x'))}, {p}e(x, y), {guard}")
        rule(right, "i + 1", nodes_of(right, "y", "y"), value[right[1]],
             f"{atom(hub, 'i', nodes_of(hub, 'x'))}, {p}e(y, x), {guard}")
        rule(hub, "i", nodes_of(hub, "x", "x"), value[hub[1]],
             f"{atom(left, 'i', nodes_of(left, 'x'))}, "
             f"{atom(right, 'i', nodes_of(right, 'x', 'c'))}")
    mutation = rng.choice(MUTATIONS)
    if presum and bias.random() < 0.5 or bare or other_sum:
        mutation = "none"
    rel = rng.choice(rels)
    value = {"set": None, "min": "1", "max": "1", "sum": "1"}[rel[1]]
    read = atom(rel, "i", nodes_of(rel, "x"))
    if mutation == "back":
        rule(rel, "i - 1", nodes_of(rel, "x", "x"), value, f"{read}, i > 1")
    elif mutation == "two-stages":
        other = rng.choice(rels)
        rule(rel, "i + 1", nodes_of(rel, "x", "x"), value,
             f"{read}, {atom(other, 'j', nodes_of(other, 'x', 'c'))}, j < i, i < {limit}")
    elif mutation == "constant-head":
        rule(rel, "1", nodes_of(rel, "x", "x"), value, f"{read}, i = {limit}")
    elif mutation == "unstaged-extra":
        rule(rel, "i", nodes_of(rel, "y", "x"), value, f"{read}, {p}e(x, y), i < {limit}")
    outputs = []
    for rel in rels:  # a later stratum reads every stage
        out = f"{rel[0]}_all"
        lines.append(f".decl {out}(x:number, i:number)")
        clauses.append(f"{out}(x, i) :- {atom(rel, 'i', nodes_of(rel, 'x'))}.")
        outputs.append(out)
    lines.append(f".decl {p}last(i:number)")
    first = f"{rels[0][0]}_all"
    clauses.append(f"{p}last(m) :- {first}(_, _), m = max i : {{ {first}(_, i) }}.")
    text = "\n".join(lines + clauses) + "\n"
    return parse(text, f"staged-{seed}.dl"), facts
