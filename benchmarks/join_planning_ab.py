"""In-process A/B of which side of a join that is not partition-local moves
(Options.join_planning, ``replicate`` against ``off``): benchmarks/option_ab.py with that
option.

    python3 -m benchmarks.join_planning_ab [--pairs 3] [--graphs rmat:14,rmat:16]
        [--algos pagerank,cc,bfs]

Writes results/join_planning_ab.json and results/join_planning_ab.md.
"""

from __future__ import annotations

from .option_ab import main

if __name__ == "__main__":
    main(option="join_planning", sides="replicate,off")
