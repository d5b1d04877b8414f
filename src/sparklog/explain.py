"""``sparklog explain``: every representation of a program, printed deterministically."""

from __future__ import annotations

from pathlib import Path

from sparklog.ir.printer import print_plan
from sparklog.options import DEFAULTS
from sparklog.syntax.printer import print_clause, print_program


def explain(program, show: set[str], engine=None, facts_dir: Path | None = None,
            strategy: str = DEFAULTS.strategy,
            replicate: str = DEFAULTS.replicate_static) -> str:
    parts = []
    # what auto measures before a run, when there is data to measure
    shapes = engine.shapes(program, {}, facts_dir) if engine and facts_dir else {}
    plan = program.plan_for(strategy, engine.options.indexes if engine else True, shapes,
                            engine.options.inline_totals if engine else DEFAULTS.inline_totals,
                            engine.replicable(shapes) if engine else replicate == "on")
    if "ast" in show:
        parts += ["== AST ==", print_program(program.ast)]
    if "strategies" in show:
        from sparklog.rewrite.limits import notes

        text = "\n".join(filter(None, [strategies(program, strategy, shapes),
                                       *sent(plan, engine, shapes), *notes(program.checked)]))
        if text:
            parts += ["== strategies ==", text]
    if "strata" in show:
        parts.append("== strata ==")
        for s in plan.strata:
            kind = "recursive" if s.stratum.recursive else "non-recursive"
            parts.append(f"{s.stratum.index}: {', '.join(s.relations)} ({kind})")
    if "ir" in show:
        parts += ["== relational-algebra plan ==", print_plan(plan)]
    if "spark-plan" in show and engine is not None:
        parts += ["== Spark physical plan of one iteration ==",
                  iteration_plan(engine, program, facts_dir, shapes)]
    return "\n".join(parts)


def strategies(program, strategy: str, shapes=None) -> str:
    """Each transitive closure and chain program: how it is written, the strategy chosen
    and why, and the rules it is evaluated with (rewrite/closure.py, rewrite/doubling.py)."""
    from sparklog.rewrite.doubling import TRANSFER

    rewritten, choices = program.rewritten(strategy, shapes)
    lines = []
    for choice in choices:
        c = choice.closure
        if choice.strategy in ("doubling", "doubling-arity"):
            mine = set(c.relations) | {k.head.relation for k in rewritten.clauses
                                       if k.head.relation.startswith(TRANSFER)}
            what = (f"a {c.side}-linear chain program" if choice.strategy == "doubling"
                    else "a linear recursion")
            lines.append(f"{', '.join(c.relations)}: {what}; evaluated with "
                         f"{choice.strategy}: {choice.why}")
        else:
            mine = {c.relation, c.relation + "@len"}
            lines.append(f"{c.relation}: the transitive closure of {c.edge}, written "
                         f"{c.written}{'-linear' if c.written != 'nonlinear' else ''}; "
                         f"evaluated with {choice.strategy}: {choice.why}")
        lines += [f"  {print_clause(k)}" for k in rewritten.clauses
                  if k.head.relation in mine]
    return "\n".join(lines)


def sent(plan, engine, shapes) -> list[str]:
    """Under replicate_static "auto", for each measured edge relation: whether it is sent
    to the delta of the recursion that joins it, and the copies a round that decided it."""
    if engine is None or engine.options.replicate_static != "auto" or not shapes:
        return []
    from sparklog.defaults import REPLICATE_ROWS

    parts, lines = engine.options.partitions, []
    for edge, (arcs, *_) in sorted(shapes.items()):
        readers = sorted(r for r, lay in plan.layouts.items() if edge in lay.replicated)
        copies = f"{arcs:,} arcs x {parts} partitions = {arcs * parts:,} copies a round"
        if readers:
            lines.append(f"{edge}: sent to every sub-bucket of the delta of "
                         f"{', '.join(readers)} ({copies}, at most {REPLICATE_ROWS:,})")
        elif arcs * parts > REPLICATE_ROWS:
            lines.append(f"{edge}: not sent to a delta ({copies}, over {REPLICATE_ROWS:,}; "
                         "--replicate-static on sends it)")
    return lines


def iteration_plan(engine, program, facts_dir: Path | None, shapes=None) -> str:
    """The executed plan of the first recursive stratum's first loop iteration: of each
    relation it stores (its secondary indexes too), headed by the relation's name when
    there are several."""
    from sparklog.ir.presum import presummed
    from sparklog.spark.rounds import Stats, _evaluate_stratum, _plan, _round
    from sparklog.spark.storage import Database
    from sparklog.spark.load import load_inputs
    from sparklog.spark import session

    plan = program.plan_for(engine.options.strategy, engine.options.indexes, shapes,
                            engine.options.inline_totals, engine.replicable(shapes or {}))
    loop = next((sp for sp in plan.strata if sp.loop), None)
    if loop is None:
        return "(no recursive stratum)"
    previous = session.apply_required(engine.spark, engine.options.partitions)
    try:
        db = Database(engine.spark, plan, engine.options)
        if facts_dir is not None:
            load_inputs(db, program, {}, facts_dir)
        for sp in plan.strata:  # everything before the loop, as a run would have it
            if sp is loop:
                break
            _evaluate_stratum(db, sp, Stats())
        _round(db, loop, loop.preamble, Stats())
        db.iteration = 1
        # its $SUM contributions summed before they are stored, as a run's (ir/presum.py)
        db.presums = presummed(loop, plan) if engine.options.presum else {}
        steps = _plan(db, loop, loop.loop)  # planned as a run plans it, not run
        plans = [step.full._jdf.queryExecution().executedPlan().toString() for step in steps]
        if len(plans) == 1:
            return plans[0]
        return "\n".join(f"-- {step.relation} --\n{text}" for step, text in zip(steps, plans))
    finally:
        session.restore(engine.spark, previous)
