"""A long recursion: linear TC of chain(N) (N iterations), recording Spark's storage memory.

    python3 -m benchmarks.long_run [--n 1000] [--every 100]

Checks that released versions keep block storage flat while full grows: writes
results/long_run.json with (iteration, cached RDDs, storage bytes, full size, seconds).
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
    args = p.parse_args()

    import sparklog
    from sparklog import gen

    engine = sparklog.Engine(master="local[2]", partitions=2)
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


if __name__ == "__main__":
    main()
