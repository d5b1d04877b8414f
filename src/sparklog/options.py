"""The knobs of a run: one frozen, validated value that ``Engine(**options)`` and the CLI
both build, each default written once (here, or in defaults.py for the measured ones)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from sparklog.defaults import (BALANCE_EVERY, BALANCE_RATIO, BALANCE_ROWS, BROADCAST_ROWS,
                               CODEGEN_ROWS, COMBINE, JOIN_PLANNING, REPLICATE, RUN_ROWS,
                               STORED)
from sparklog.errors import UsageError

CHECKPOINTS = ("local", "reliable")
STORED_FORMS = ("columnar", "compressed", "deserialized", "serialized")  # see Options.stored
PLAN_REUSE = ("executed", "optimized", "off")  # how loop rounds after the first are planned
# How a transitive closure is evaluated (rewrite/closure.py): "auto" chooses, "asis" runs
# the rules as written, the others are Afrati & Ullman's length partitions; "doubling"
# rewrites every chain program by their Theorem 3.1 (rewrite/doubling.py).
STRATEGIES = ("auto", "asis", "linear", "right", "left", "smart", "balance", "thirds",
              "doubling")


@dataclass(frozen=True)
class Options:
    """How the driver runs a program; every mechanism can be switched."""

    # Partitions per stored relation; None: the session's default parallelism, at least 2.
    partitions: int | None = None
    checkpoint: str = "local"  # "local" (localCheckpoint) or "reliable" (checkpoint_dir)
    checkpoint_dir: str | None = None
    # Rounds per recursive stratum, at most; a lattice still improving then is an error.
    max_iterations: int | None = None
    # Inputs, the first version of a recursive stratum and the versions of non-recursive
    # strata are stored by the job that first reads them, not by jobs of their own: see
    # Database.defer.
    deferred: bool = True
    # Round k+1 is planned while round k's job runs (local checkpoints only).
    pipelined: bool = True
    # A loop round skips the relations none of whose kernels has a delta to read: they keep
    # their stored runs, with no job and nothing rewritten (rounds._prune).
    skip_idle: bool = True
    # In a staged recursion (ir/stages.py: PageRank's iteration counter) the stored runs
    # wholly below every delta's stage are retired: the stratum's rounds stop reading them.
    retire_stages: bool = True
    # A Smart closure stops after the round that found no path whose length is a power of
    # two: the next round would derive nothing (ir/smart.py).
    smart_end: bool = True
    # The rules of a stratum that read its $SUM/$COUNT relation read the total of its
    # contributions where it is summed, a round earlier (rewrite/totals.py). Off: the
    # totals are stored by a round of their own, and read the round after.
    inline_totals: bool = True
    # In a staged recursion, a $SUM whose contributions are each derived once (PageRank's
    # shares) stores each round's contributions summed per key, not one row each
    # (ir/presum.py); a run where that fails is evaluated again without it.
    presum: bool = True
    # A recursive stratum's rule that crosses a lower stratum's relation of at most one row
    # (a parameter: PageRank's ``iterations(k)``, ``damping(a)``, ``size(c)``) reads its
    # values as literals, read once per stratum, not through a cross join every round
    # (Database.constant_rows).
    inline_constants: bool = True
    # A recursive stratum's join that sends a lower stratum's relation to every sub-bucket
    # of the rows so far (translate._replicated: the edges of a linear closure) reads a
    # copy placed there once per stratum, not one shuffled there every round
    # (Database.copy_view).
    stored_copies: bool = True
    # Rounds reading at least this many stored rows use whole-stage code generation, the
    # others run without it (see Database.use_codegen). None: no round uses it; 0: every round
    # does, as the session would by default.
    codegen_rows: int | None = CODEGEN_ROWS
    # A round whose job runs no task for this long has stalled (see _Job); None: wait on.
    stall_seconds: float | None = 300.0
    # Record lineage() of every loop round's job in Database.lineage (for tests, benchmarks).
    trace_lineage: bool = False
    # How a loop round after the first is planned (see rounds._plan): "executed" runs the
    # executed plan of the round before over the new stored versions; "optimized" plans it
    # from the optimized plan of the round before; "off" from the kernels' SQL. True and
    # False are accepted as "executed" and "off".
    reuse_plans: str = "executed"
    # Rounds reading fewer stored rows are tiny: their tasks make projections without
    # generating code, and a rerun stores its versions serialized (see Database.use_codegen).
    tiny_rows: int = 10_000
    # Which side of a join that is not partition-local moves (PARALAGG's dynamic join
    # planning), from sizes already known: "replicate" sends a stored side whose copies
    # are fewer than the rows it meets to every sub-bucket of theirs, or those rows to
    # every sub-bucket of a stored side they are fewer than, by the round's shuffle
    # (translate._replicated, _spread); "dynamic" also broadcasts a delta of at most
    # ``broadcast_rows`` rows (Database.broadcast_delta); "off" does neither. Off by
    # default: on two local cores neither paid (the replicated copies are one more stage,
    # 0.94-1.06x the time on PageRank, CC and BFS; shuffling the stored side costs less than
    # broadcasting the delta and re-planning the round, as a broadcast plan is not rerun);
    # README, "Benchmarks".
    join_planning: str = "off"
    broadcast_rows: int = BROADCAST_ROWS
    # A round's candidates combined inside their partition before its one shuffle (a
    # combiner: duplicates of a set relation, all but each key's best value of a $MIN/$MAX
    # relation stay behind), wherever they are still placed by a stored relation: "auto"
    # while the relation's last round derived at least COMBINE_RATIO times what it kept
    # (Database.combine), "on" always, "off" never.
    combine: str = "auto"
    # A set relation is stored as runs (storage.Database.merges): the newest takes new
    # tuples until it holds this many rows, then it is sealed and runs of like size merge,
    # so a round never rewrites all of full. 0: one run, rewritten every round.
    run_rows: int = RUN_ROWS
    # Spatial balance (Kumar & Gilray §3.2, spark/balance.py): every ``balance_every``
    # loop rounds, a bucket of a stratum's relation whose heaviest sub-bucket holds more
    # than ``balance_ratio`` times the mean sub-bucket (and at least ``balance_rows`` rows)
    # gets four times the sub-buckets; buckets are consolidated again when most are
    # refined. Off: one sub-bucket per bucket throughout.
    # Iteration roll-over (Kumar & Gilray §3.2, Fig. 9): a loop round whose join output is
    # estimated over this many tuples runs as inner iterations, each over a slice of the
    # delta's partitions and each shuffled and deduplicated before the next. 0: off.
    rollover_rows: int = 0
    balance: bool = True
    balance_every: int = BALANCE_EVERY
    balance_ratio: float = BALANCE_RATIO
    balance_rows: int = BALANCE_ROWS
    # Secondary indexes (rewrite/indexes.py): a relation read by a join on columns its
    # placement does not serve gets a copy placed by them, so no round reshuffles a
    # stored side. Off: such a join shuffles the stored side every round.
    indexes: bool = True
    # A linear recursion whose rounds join its delta to relations of lower strata alone
    # (a closure's edges) placed by the columns its head keeps from the delta, those
    # relations sent to every sub-bucket of it each round: no derived tuple crosses a
    # shuffle (rewrite/replicate.py). The copies are the small side times the sub-buckets,
    # which pays only where that side is small: "auto" sends a closure's edges when auto's
    # measurement found at most REPLICATE_ROWS copies a round (arcs times partitions),
    # "on" sends every side of a recursion in the shape, "off" none. True and False are
    # accepted as "on" and "off".
    replicate_static: str = "auto"
    # The rows going into each join of a rule drop the variables nothing after it reads,
    # and the duplicates that leaves, inside their partition (translate._distinct_before):
    # a rule's later joins then run once per distinct binding they need. Off: every
    # binding of the earlier atoms goes on.
    join_dedup: bool = True
    # How stored versions sit in block storage (local checkpoints), one of STORED_FORMS:
    # "columnar", Spark's column batches, plain (jvm.columnar_of: 24 bytes per stored
    # tuple of two numbers and its two stamps); "compressed", the same batches encoded by
    # Spark's compression schemes (a few bytes a tuple, about three times the seconds to
    # build); "deserialized", row objects (about 100 bytes; what Spark's localCheckpoint
    # keeps); "serialized", rows serialized (about 8 bytes), read back row by row every
    # round: with Kryo as the session's serializer (what `sparklog run --stored
    # serialized` sets) about 1.3 times as slow as deserialized, with Spark's Java
    # serialization 2-3 times.
    stored: str = STORED
    # How each transitive closure is evaluated (rewrite/closure.py, Afrati & Ullman §2):
    # one of STRATEGIES; a relation's `.pragma r(strategy=...)` overrides it.
    strategy: str = "auto"

    def __post_init__(self) -> None:
        reuse = {True: "executed", False: "off"}.get(self.reuse_plans, self.reuse_plans)
        object.__setattr__(self, "reuse_plans", reuse)
        replicate = {True: "on", False: "off"}.get(self.replicate_static,
                                                   self.replicate_static)
        object.__setattr__(self, "replicate_static", replicate)
        _one_of("checkpoint", self.checkpoint, CHECKPOINTS)
        _one_of("reuse_plans", self.reuse_plans, PLAN_REUSE)
        _one_of("join_planning", self.join_planning, JOIN_PLANNING)
        _one_of("combine", self.combine, COMBINE)
        _one_of("replicate_static", self.replicate_static, REPLICATE)
        _one_of("strategy", self.strategy, STRATEGIES)
        _one_of("stored", self.stored, STORED_FORMS)
        if self.checkpoint == "reliable" and not self.checkpoint_dir:
            raise UsageError("checkpoint='reliable' needs checkpoint_dir (a directory every "
                             "executor can reach, e.g. on HDFS or S3)")
        for name, low in (("partitions", 1), ("max_iterations", 1), ("codegen_rows", 0),
                          ("broadcast_rows", 0), ("tiny_rows", 0), ("run_rows", 0),
                          ("balance_every", 1), ("balance_rows", 0), ("rollover_rows", 0)):
            value = getattr(self, name)
            if value is None and name in ("partitions", "max_iterations", "codegen_rows"):
                continue
            if not isinstance(value, int) or value < low:
                raise UsageError(f"{name} must be at least {low}, not {value!r}")
        for name in ("balance", "indexes", "skip_idle", "retire_stages",
                     "smart_end", "join_dedup", "inline_totals", "presum",
                     "inline_constants", "stored_copies"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, not {getattr(self, name)!r}")
        if not isinstance(self.balance_ratio, (int, float)) or not self.balance_ratio >= 1:
            raise UsageError(f"balance_ratio must be at least 1, not {self.balance_ratio!r}")
        if self.stall_seconds is not None and not self.stall_seconds > 0:
            raise UsageError(f"stall_seconds must be None or more than 0, not "
                             f"{self.stall_seconds!r}")

    @property
    def serialized(self) -> bool:
        return self.stored == "serialized" and self.checkpoint == "local"

    @property
    def columnar(self) -> bool:
        return self.stored in ("columnar", "compressed") and self.checkpoint == "local"

    @property
    def compressed(self) -> bool:
        return self.stored == "compressed"

    @property
    def defers(self) -> bool:
        # A reliable checkpoint is written only by its own job (a later job stops at the
        # checkpointed RDD it finishes with), so only local checkpoints are deferred.
        return self.deferred and self.checkpoint == "local"


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UsageError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")


DEFAULTS = Options()
NAMES = tuple(f.name for f in fields(Options))
