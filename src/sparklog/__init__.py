"""sparklog: a Datalog engine with recursive aggregates, evaluated semi-naively on Apache Spark.

>>> import sparklog
>>> program = sparklog.Program.from_text('''
...     .decl edge(x: number, y: number)
...     .decl path(x: number, y: number)
...     edge(1, 2). edge(2, 3).
...     path(x, y) :- edge(x, y).
...     path(x, z) :- path(x, y), edge(y, z).
... ''')
>>> [s.relations for s in program.plan.strata]
[('edge',), ('path',)]

``sparklog.Engine(spark=None, **options).run(program, inputs={...})`` evaluates it on Spark.
"""

from sparklog.engine import Engine, Program, Result
from sparklog.errors import (CheckError, DataError, Diagnostic, EngineError, ParseError, Span,
                             SparklogError, UsageError)

__all__ = ["Engine", "Program", "Result", "SparklogError", "ParseError", "CheckError",
           "DataError", "UsageError", "EngineError", "Diagnostic", "Span"]
__version__ = "0.1.0"
