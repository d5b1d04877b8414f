"""Deterministic text of a plan, for ``sparklog explain`` and golden tests."""

from __future__ import annotations

from sparklog.ir.nodes import (AggregateJoin, AntiJoin, Bind, Filter, Kernel, Layout, Plan, Scan,
                               Step, Total)
from sparklog.ir.presum import presummed
from sparklog.ir.stages import stages
from sparklog.syntax.printer import print_literal, print_term


def print_plan(plan: Plan) -> str:
    lines = []
    for sp in plan.strata:
        s = sp.stratum
        lines.append(f"stratum {s.index} {{{', '.join(s.relations)}}}"
                     + (" recursive" if s.recursive else ""))
        for r in s.relations:
            lay = plan.layouts[r]
            lines.append(f"  layout {r}: bucket by {_cols(lay.key)}, "
                         f"sub-buckets by {_cols(lay.hashed)}{_lattice(lay)}"
                         + (f"; {', '.join(lay.replicated)} sent to every sub-bucket of its "
                            "delta each round" if lay.replicated else ""))
        read = {r for k in sp.preamble + sp.loop for r in k.reads()}
        for r in sorted(r for r in read | set(sp.indexes) if plan.layouts[r].index_of):
            lay = plan.layouts[r]
            how = (f"one round behind {lay.index_of} (its old version), from each round's delta"
                   if lay.lagging else f"built once from {lay.index_of}")
            lines.append(f"  index {r} of {lay.index_of}: bucket by {_cols(lay.key)}, {how}")
        staged = stages(sp, plan)
        if staged:
            lines.append("  staged: " + ", ".join(f"{r} by c{c}" for r, c in staged.items())
                         + " (the runs of stages every delta has passed retire)")
        for r, sources in presummed(sp, plan).items():
            lines.append(f"  presummed {r}: a loop round's contributions summed per key before "
                         "they are stored" + (f", while no key of {', '.join(sources)} improves "
                                              "twice" if sources else ""))
        for k in sp.preamble:
            lines.append("  once  " + print_kernel(k))
        for k in sp.loop:
            lines.append("  loop  " + print_kernel(k))
    return "\n".join(lines)


def _lattice(lay: Layout) -> str:
    if lay.lattice is None:
        return ""
    if lay.lattice == "contribution":
        return (f", one tuple per contribution, told apart by {_cols(lay.detail)} (not "
                f"hashed): c{lay.dependent} is its newest value")
    how = (f"{lay.lattice[5:]}<>" if lay.lattice.startswith("user:")
           else f"${lay.lattice.upper()}")
    return f", one tuple per key: c{lay.dependent} is {how}"


def _cols(key: tuple[int, ...]) -> str:
    return "(" + ", ".join(f"c{i}" for i in key) + ")"


def print_kernel(k: Kernel) -> str:
    head = f"{k.relation}({', '.join(print_term(t) for t in k.head)})"
    return f"{head} <- " + " ; ".join(print_step(s) for s in k.steps)


def print_step(step: Step) -> str:
    match step:
        case Scan(relation=r, version=v, args=args, exists=exists, summed=summed):
            total = f" summing c{summed} per key" if summed is not None else ""
            return (f"{'exists' if exists else 'scan'} {v} "
                    f"{r}({', '.join(print_term(a) for a in args)}){total}")
        case Bind(var=var, expr=expr):
            return f"bind {var} = {print_term(expr)}"
        case Filter(literal=lit):
            return f"filter {print_literal(lit)}"
        case AntiJoin(atom=atom):
            return f"antijoin {print_literal(atom)}"
        case AggregateJoin(var=var, aggregate=agg, group=group, body=body):
            inner = " ; ".join(print_step(s) for s in body)
            return f"aggregate {var} = {agg.func} by ({', '.join(group)}) [{inner}]"
        case Total(relation=r, args=args, value=value, var=var):
            keys = ", ".join(print_term(a) for a in args)
            return f"total {var} = sum c{value} of full {r} by ({keys})"
        case _:
            raise AssertionError(step)
