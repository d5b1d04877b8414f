"""A long recursion: linear TC of chain(N) (N iterations), recording Spark's storage memory.

    python3 -m benchmarks.long_run [--n 1000] [--every 100]
    python3 -m benchmarks.long_run --counter 3000 [--no-pipelined]

Checks that released versions keep block storage flat while full grows: writes
results/long_run.json with (iteration, cached RDDs, storage bytes, full size, seconds).
With --counter N it runs `c(x + 1) :- c(x), x < N.` (N rounds over tiny relations) and
records what each round's job carries of the past (RDDs reached before a checkpoint, the
largest serialized partition), which must stay constant: results/lineage.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--every", type=int, default=100)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    p.add_argument("--counter", type=int, help="run an N-round counter, tracing lineage")
    p.add_argument("--no-pipelined", dest="pipelined", action="store_false")
    args = p.parse_args()
    if args.counter:
        return counter(args)

    import sparklog
    from sparklog import gen

    engine = sparklog.Engine(master="local[2]", partitions=2, strategy="asis")
    sc = engine.spark.sparkContext
    samples = []
    started = time.perf_counter()

    def record(r):
        if r["iteration"] % args.every == 0 or r["delta"] == 0:
            infos = sc._jsc.sc().getRDDStorageInfo()
            samples.append(dict(iteration=r["iteration"], cached_rdds=len(infos),
                                storage_bytes=sum(i.memSize() + i.diskSize() for i in infos),
                                full=r["full"], seconds=round(time.perf_counter() - started, 1),
                                spark_jobs=r["spark_jobs"]))
            print(json.dumps(samples[-1]), flush=True)

    engine.on_record = record
    edges = engine.spark.createDataFrame(list(gen.chain(args.n)), "x long, y long")
    program = sparklog.Program.from_text(
        ".decl edge(x:number, y:number)\n.decl tc(x:number, y:number)\n"
        "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n")
    result = engine.run(program, inputs={"edge": edges})
    assert result.size("tc") == args.n * (args.n + 1) // 2
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "long_run.json").write_text(json.dumps(samples, indent=1) + "\n")


def counter(args) -> None:
    import platform

    import sparklog

    engine = sparklog.Engine(master="local[2]", partitions=2, trace_lineage=True, strategy="asis",
                             pipelined=args.pipelined)
    seconds = []
    engine.on_record = lambda r: seconds.append(r["seconds"])
    started = time.perf_counter()
    result = engine.run(f".decl c(x:number)\nc(0).\nc(x + 1) :- c(x), x < {args.counter}.")
    wall = time.perf_counter() - started
    assert result.size("c") == args.counter + 1
    trace = result.lineage
    samples = [dict(round=i + 1, **t, seconds=seconds[i + 1] if i + 1 < len(seconds) else None)
               for i, t in enumerate(trace) if (i + 1) % args.every == 0 or i < 3]
    for s in samples:
        print(json.dumps(s), flush=True)
    tail = trace[3:]
    summary = dict(rounds=len(trace), pipelined=args.pipelined, wall_seconds=round(wall, 1),
                   rdds=sorted({t["rdds"] for t in tail}),
                   partition_bytes=[min(t["partition_bytes"] for t in tail),
                                    max(t["partition_bytes"] for t in tail)],
                   machine=f"{platform.machine()}, {__import__('os').cpu_count()} cores",
                   samples=samples)
    args.out.mkdir(parents=True, exist_ok=True)
    name = "lineage.json" if args.pipelined else "lineage_serial.json"
    (args.out / name).write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "samples"}))


if __name__ == "__main__":
    main()
