"""sparklog benchmark harness (not part of the package, never run in CI).

Run ``python -m benchmarks --help``; see benchmarks/README.md.
"""
