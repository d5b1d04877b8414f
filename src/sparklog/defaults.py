"""Defaults that the CLI, Engine and the driver's Options share, each written once here."""

# Whole-stage code generation from this many rows a round reads (Options.codegen_rows):
# rounds of the 12-level trees (under 41,000 stored rows) ran faster without it, connected
# components of R-MAT 14 (rounds over 470,000 rows) 1.5-2.6x faster with it (README,
# "Benchmarks"); the threshold sits between the two on a log scale.
CODEGEN_ROWS = 150_000

# Classes Spark keeps compiled (its spark.sql.codegen.cache.maxEntries, 100 by default): room
# for every class a long run compiles, which Spark otherwise compiles again and again.
CODEGEN_CACHE_ENTRIES = 4096

# Dynamic join planning (Options.join_planning): a round whose delta holds at most this many
# rows broadcasts it to the joins that are not partition-local, instead of shuffling both
# sides (the stored side is the larger one). Spark's own broadcast threshold is 10 MB; a
# delta row takes some 30-60 bytes, so this stays well under it.
BROADCAST_ROWS = 50_000
JOIN_PLANNING = ("replicate", "dynamic", "off")

# A closure's edges sent to every sub-bucket of its delta (Options.replicate_static) under
# "auto" while the copies a round makes, the measured arcs times the partitions, are at
# most this many. Cold `sparklog run`s on two local cores (README, "Benchmarks";
# benchmarks/results/replicate-static.md), off over auto: email-Eu-core, 48,000 copies a
# round, 1.14; Lederberg, 82,000, 1.08; chain(1000) left-linear, 2,000, 1.11; the 17-level
# tree, 262,000 copies a round for 2 derivations a delta row, 0.93 (1.03 the stop before):
# the bound lies between the wins and the tree.
REPLICATE_ROWS = 200_000
REPLICATE = ("auto", "on", "off")

# Partition-local combine (Options.combine): "auto" combines a relation's candidates inside
# their partition before the round's one shuffle while its last counted round derived at
# least this many times the tuples it kept; "on" always, "off" never. On two local cores a
# shuffled row costs little, and the measured effect is mostly within noise except where
# the combine drops most rows (connected components of R-MAT 14: 0.54x the time);
# README, "Benchmarks".
COMBINE_RATIO = 2.0
COMBINE = ("auto", "on", "off")

# How stored versions sit in block storage (Options.stored): as Spark's column batches,
# plain, 24 bytes a stored two-number tuple with its stamps against about 100 as row
# objects. Compressed batches take a few bytes a tuple but cost about three times the
# seconds to build (2.4 million rows: 0.99 s against 0.29), which whole runs pay at every
# store and merge (benchmarks/results/stored-compression.md).
STORED = "columnar"

# A set relation's newest run is sealed once it holds this many rows (Options.run_rows, see
# storage.Database.merges): below it a round rewrites the run, which costs less than a
# Spark job's fixed share, and a small relation stays one run.
RUN_ROWS = 100_000

# Spatial balance (Options.balance_*): the paper checks for refinement every 2 iterations
# (§3.2; it saw little difference with 10) and refines a bucket whose heaviest sub-bucket
# holds over 3 times the mean sub-bucket. A sub-bucket under BALANCE_ROWS rows is never
# refined: moving it costs more than the imbalance.
BALANCE_EVERY = 2
BALANCE_RATIO = 3.0
BALANCE_ROWS = 10_000
