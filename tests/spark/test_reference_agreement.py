"""Random programs over random facts: the engine agrees with the reference evaluator."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

import sparklog
from tests import reference
from tests.spark.helpers import rows
from tests.strategies import programs


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(programs(max_inputs=2, max_derived=3))
def test_engine_agrees_with_reference(engine, spark, drawn):
    program, facts = drawn
    expected = reference.evaluate(program, facts)
    inputs = {}
    for name, tuples in facts.items():
        arity = program.decl(name).arity
        schema = ", ".join(f"a{i} long" for i in range(arity))
        inputs[name] = spark.createDataFrame(sorted(tuples), schema)
    result = engine.run(sparklog.Program(program), inputs=inputs)
    for decl in program.decls:
        assert rows(result[decl.name]) == expected.get(decl.name, set()), decl.name
