"""Recall in a large SQLite tenant from two or more trees side by side in one run (issue 34's
latency row, before/after a change): the same stores (bench/latency/judgment_scale.py's, one per
size, filled beforehand with `judgment_scale --db FILE`), each tree's `MemoryService.recall` timed
as it ships in its own process, the trees taking turns round by round (A, B, then B, A; with three,
each turn's order rotated) so background load falls on all alike; the seconds of every turn
pooled per tree.

    nice python -m bench.latency.judgment_ab BEFORE_TREE AFTER_TREE [MORE_TREES] --db 10000=a.db 100000=b.db [--turns 4]

Two ways to time a turn's process:

- warm (the default): 10 recalls first (the model loaded, the snapshot read), then `--questions`
  timed: a server that has been answering for a while;
- `--fresh`: the process warms up as serve-stdio does after its handshake (`warm_up(tenant)`: the
  model and the tenant's vectors, no recall), then its first `--questions` recalls are timed: what
  a new serve-stdio session's first questions or a CLI call pay, every text met for the first time.

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


def turn(tree: Path, db: str, questions: int, fresh: bool = False) -> list[float]:
    """One process of `tree` timing `questions` recalls on `db` (warm or fresh, see the module notes)."""
    if not (tree / "bench").exists():
        shutil.copytree(HERE / "bench", tree / "bench")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = (
        "import sys; from bench.latency.judgment_ab import one; one(sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, db, str(questions), "1" if fresh else "0"],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds: list[float] = json.loads(out.stdout.strip().splitlines()[-1])
    return seconds


def one(db: str, questions: int, fresh: bool = False) -> None:
    """In a turn's process: the recalls' seconds, as one JSON line."""
    from bench.harness.perf_corpus import queries
    from bench.latency.judgment_scale import first_recalls, timed_recalls

    if fresh:
        seconds = asyncio.run(first_recalls(Path(db), queries(10 + questions)[10:]))
    else:
        seconds = asyncio.run(timed_recalls(Path(db), queries(10 + questions), 1, ("as is",)))["as is"].seconds
    print(json.dumps(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", type=Path, nargs="+", help="two or more trees, the first the baseline")
    parser.add_argument("--db", nargs="+", required=True, help="SIZE=FILE, one store per size")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--fresh", action="store_true", help="time a fresh process's first recalls")
    args = parser.parse_args()
    if len(args.trees) < 2:
        parser.error("give two trees or more")
    trees = [tree.resolve() for tree in args.trees]
    names = [str(tree) for tree in args.trees]
    print("| memories | tree | recalls | p50 ms | p95 ms |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for pair in args.db:
        size, db = pair.split("=", 1)
        pooled: dict[int, list[float]] = {i: [] for i in range(len(trees))}
        for t in range(args.turns):
            order = list(range(len(trees)))
            if len(trees) == 2:
                order = order if t % 2 == 0 else order[::-1]
            else:
                order = order[t % len(order) :] + order[: t % len(order)]
            for i in order:
                pooled[i] += turn(trees[i], db, args.questions, args.fresh)
        for i, seconds in pooled.items():
            p50, p95 = percentile(seconds, 50) * 1000, percentile(seconds, 95) * 1000
            print(f"| {int(size):,} | {names[i]} | {len(seconds)} | {p50:.1f} | {p95:.1f} |", flush=True)


if __name__ == "__main__":
    main()
