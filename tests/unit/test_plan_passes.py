"""The plan passes (rewrite/layouts.py, rewrite/indexes.py): program in, printed plan out,
with and without secondary indexes (golden files; ``pytest --update-golden``). No Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparklog.engine import Program
from sparklog.ir.printer import print_plan

GOLDEN = Path(__file__).parent.parent / "golden" / "plans"


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.dl")))
@pytest.mark.parametrize("indexes", [True, False], ids=["indexed", "unindexed"])
def test_golden_plans(name, indexes, update_golden):
    """What `sparklog explain --show ir --strategy asis` prints (``--indexes off``: the
    plan without the index pass)."""
    program = Program.from_file(GOLDEN / f"{name}.dl")
    got = print_plan(program.plan_for("asis", indexes=indexes)) + "\n"
    path = GOLDEN / f"{name}.{'indexed' if indexes else 'unindexed'}.out"
    if update_golden:
        path.write_text(got)
    assert path.exists(), f"{path} missing: run pytest --update-golden"
    assert got == path.read_text()
