"""Recall in a large SQLite tenant from two trees side by side in one run (issue 34's latency row,
before/after a change): the same stores (bench/latency/judgment_scale.py's, one per size, filled
beforehand with `judgment_scale --db FILE`), each tree's `MemoryService.recall` timed as it ships
in its own process, the trees taking turns round by round (A, B, then B, A) so background load
falls on both alike; the seconds of every turn pooled per tree.

    nice python -m bench.latency.judgment_ab BEFORE_TREE AFTER_TREE --db 10000=a.db 100000=b.db [--turns 4]

A tree is a directory holding an `mcp_memory` package (`git archive <commit> mcp_memory | tar -x`);
each turn runs from inside it with this tree's `bench/` copied beside it, so the package imported
is the tree's own (a checkout on the path first would shadow it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.harness.timing import percentile

HERE = Path(__file__).resolve().parents[2]


def turn(tree: Path, db: str, questions: int) -> list[float]:
    """One process of `tree` timing `questions` recalls on `db` (after judgment_scale's warm-up)."""
    if not (tree / "bench").exists():
        shutil.copytree(HERE / "bench", tree / "bench")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import sys; from bench.latency.judgment_ab import one; one(sys.argv[1], int(sys.argv[2]))"
    out = subprocess.run(
        [sys.executable, "-c", code, db, str(questions)], cwd=tree, env=env, check=True, capture_output=True, text=True
    )
    seconds: list[float] = json.loads(out.stdout.strip().splitlines()[-1])
    return seconds


def one(db: str, questions: int) -> None:
    """In a turn's process: the recalls' seconds, as one JSON line."""
    from bench.harness.perf_corpus import queries
    from bench.latency.judgment_scale import timed_recalls

    watches = asyncio.run(timed_recalls(Path(db), queries(10 + questions), 1, ("as is",)))
    print(json.dumps(watches["as is"].seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--db", nargs="+", required=True, help="SIZE=FILE, one store per size")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args()
    print("| memories | tree | recalls | p50 ms | p95 ms |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for pair in args.db:
        size, db = pair.split("=", 1)
        pooled: dict[str, list[float]] = {"before": [], "after": []}
        for i in range(args.turns):
            for name in ("before", "after") if i % 2 == 0 else ("after", "before"):
                pooled[name] += turn(getattr(args, name).resolve(), db, args.questions)
        for name, seconds in pooled.items():
            p50, p95 = percentile(seconds, 50) * 1000, percentile(seconds, 95) * 1000
            print(f"| {int(size):,} | {name} | {len(seconds)} | {p50:.1f} | {p95:.1f} |", flush=True)


if __name__ == "__main__":
    main()
