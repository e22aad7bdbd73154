"""What the second stage costs a whole recall in a large SQLite tenant, side by side in one run:
the store filled to 10,000 then 100,000 corpus memories (bench/harness/perf_fill.py), each question
asked through `MemoryService.recall` (limit 10, the local model embedding the question each time)
with the second stage on and off in turn, the order swapped every round (issue 34's latency row).

    nice python -m bench.latency.judgment_scale [--sizes 10000 100000] [--questions 40] [--rounds 3]

`--vectors-from N` gives memory i the embedding of text i % N (the scan costs the same); the
embeddings are cached in `--cache`. `--db FILE --as-is` times one tree's recall untouched on a
store kept between runs: run it from two trees in turn for an A/B against a commit from before the
second stage.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from bench.harness.perf_corpus import corpus, queries
from bench.harness.perf_fill import TENANT, count_memories, fill_to, open_backend, repeated_vectors
from bench.harness.timing import Stopwatch


async def timed_recalls(db: Path, asked: list[str], rounds: int, stages: tuple[str, ...]) -> dict[str, Stopwatch]:
    """Each question with the second stage on and off, alternating which goes first ("as is": the
    service untouched, for a tree from before the second stage)."""
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    service = await open_service(Settings.from_env({"MEMORY_DB_PATH": str(db), "HOME": str(db.parent)}))
    model = getattr(service, "judge", None)
    caller = Caller(TENANT)
    watches = {name: Stopwatch() for name in stages}
    try:
        for question in asked[:10]:  # warm-up: the model loaded, the snapshot read
            await service.recall(caller, question, limit=10)
        for round_ in range(rounds):
            for question in asked[10:]:
                for name in stages if round_ % 2 == 0 else stages[::-1]:
                    if name != "as is":
                        service.judge = model if name == "on" else None
                    with watches[name]:
                        await service.recall(caller, question, limit=10)
    finally:
        if "as is" not in stages:
            service.judge = model
        await service.close()
    return watches


async def first_recalls(db: Path, asked: list[str]) -> list[float]:
    """A fresh process's first recalls: the service warmed up as serve-stdio warms it after the
    handshake (the model and the tenant's vectors, no recall), then each question timed once."""
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    service = await open_service(Settings.from_env({"MEMORY_DB_PATH": str(db), "HOME": str(db.parent)}))
    caller = Caller(TENANT)
    watch = Stopwatch()
    try:
        await service.warm_up(TENANT)
        for question in asked:
            with watch:
                await service.recall(caller, question, limit=10)
    finally:
        await service.close()
    return watch.seconds


async def stored(db: Path) -> int:
    """How many corpus memories a reused store holds already."""
    vectors, objects = await open_backend("sqlite", db_path=str(db))
    try:
        return await count_memories(vectors, "sqlite")
    finally:
        await vectors.close()
        await objects.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vectors-from", type=int, default=2_000)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--db", default=None, help="a store to reuse (topped up to each size)")
    parser.add_argument("--as-is", action="store_true", help="time recall as the tree ships it, no on/off")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="judgment-scale-"))
    db = Path(args.db) if args.db else root / "m.db"
    stages = ("as is",) if args.as_is else ("on", "off")
    largest = max(args.sizes)
    texts = corpus(largest)
    vectors = repeated_vectors(texts, args.vectors_from, Path(args.cache) if args.cache else root / "cache")
    asked = queries(10 + args.questions)
    written = asyncio.run(stored(db)) if db.exists() else 0
    print("| memories | second stage | recalls | p50 ms | p95 ms |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for size in sorted(args.sizes):
        written, _ = asyncio.run(fill_to("sqlite", size, texts, vectors, written, db_path=str(db)))
        if size < written:
            continue
        watches = asyncio.run(timed_recalls(db, asked, args.rounds, stages))
        for name, watch in watches.items():
            print(f"| {size:,} | {name} | {len(watch.seconds)} | {watch.p(50):.1f} | {watch.p(95):.1f} |", flush=True)


if __name__ == "__main__":
    main()
