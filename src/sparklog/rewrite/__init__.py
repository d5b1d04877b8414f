"""IR-to-IR passes: program rewrites (each a module), then plan rewrites.

``PASSES`` run in order on the checked program, each taking the program the one before
made (checked again); :func:`planned` then lowers it (lower.py) and rewrites the plan:
placement (layouts.py), then secondary indexes (indexes.py) when asked for. Program.plan_for
applies the plan rewrites a run's options ask for between the two: totals.py, replicate.py.
"""

from __future__ import annotations

from sparklog.ir.nodes import Plan
from sparklog.lower import lower
from sparklog.rewrite import arity, closure, doubling, indexes, layouts
from sparklog.semantics.checks import Checked

# closures first: a linear closure to double is left to the chain pass; a linear stratum
# that is no chain program is doubled at twice its arity (Theorem 3.2) only on request
PASSES = (closure.rewrite, doubling.rewrite, arity.rewrite)


def planned(checked: Checked, with_indexes: bool = True) -> Plan:
    """The plan of a checked (already rewritten) program: lowered, placed, and indexed
    if ``with_indexes``."""
    placed = layouts.place(lower(checked), checked)
    return indexes.add_indexes(placed) if with_indexes else placed
