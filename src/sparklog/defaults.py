"""Defaults that the CLI, Engine and the driver's Options share, each written once here."""

# Whole-stage code generation from this many rows a round reads (Options.codegen_rows):
# rounds of the 12-level trees (under 41,000 stored rows) ran faster without it, connected
# components of R-MAT 14 (rounds over 470,000 rows) 1.5-2.6x faster with it (README,
# "Benchmarks"); the threshold sits between the two on a log scale.
CODEGEN_ROWS = 150_000
