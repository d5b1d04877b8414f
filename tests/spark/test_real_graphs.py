"""Real graphs from ../shared/data: TC sizes as the data README gives them.

The small taxonomy tree runs in CI; the larger graphs (up to 26.6 million TC pairs) run
with ``python3 -m benchmarks.real_graphs``, outside the quick suite.
"""

from __future__ import annotations

import pytest

from tests.conftest import SHARED
from tests.spark.helpers import TC

DATA = SHARED / "data"


@pytest.mark.skipif(not (DATA / "greengenes-13_5-taxonomy.tsv").exists(),
                    reason="../shared/data is not beside the repository")
def test_greengenes_taxonomy_tc_size(engine, tmp_path):
    import sparklog

    program = TC.replace(".input edge", '.input edge(filename="greengenes-13_5-taxonomy.tsv")')
    result = engine.run(sparklog.Program.from_text(program), facts_dir=DATA)
    assert result.size("tc") == 16_764 == result["tc"].count()
