"""What SQLite's `synchronous=FULL` costs per `remember`, against NORMAL, side by side.

    .venv/bin/python -m bench.latency.sqlite_synchronous [--rounds 6] [--per-round 100] [--embedder fake|local]

Two SQLite files in one temporary directory on the same disk, one per setting,
each behind a real MemoryService (dedup query, insert, index key: every write a
remember makes). The rounds alternate NORMAL, FULL, NORMAL, FULL…, each round
`--per-round` remembers of new sentences, so drift of a shared, noisy machine
falls on both alike. With the fake embedder (default) the numbers are the
storage alone; with `local` they are what a user waits for.

WAL + NORMAL: a commit survives a crash of the process, not necessarily of the
OS (the WAL is fsynced only at checkpoints). WAL + FULL: every commit fsyncs the
WAL, so it survives both.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
from pathlib import Path

from bench.harness.service import service_on
from bench.harness.timing import Stopwatch, percentile
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.stores.sqlite.store import open_sqlite

SETTINGS = ("NORMAL", "FULL")


def embedder_for(name: str):
    if name == "local":
        from mcp_memory.embedders.local.embedder import LocalEmbedder

        return LocalEmbedder()
    from mcp_memory.embedders.fake import FakeEmbedder

    return FakeEmbedder()


async def open_one(path: Path, synchronous: str, embedder) -> MemoryService:
    vectors, objects = await open_sqlite(path, model=embedder.model, dim=embedder.dim, synchronous=synchronous)
    return service_on(vectors, objects, embedder)


def sentence(setting: str, i: int) -> str:
    return f"{setting} fact {i}: deploy step {i * 7919 % 10007} runs after check {i * 104729 % 99991} passes"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--per-round", type=int, default=100)
    parser.add_argument("--embedder", choices=("fake", "local"), default="fake")
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (default: a temporary directory)")
    args = parser.parse_args()

    embedder = embedder_for(args.embedder)
    caller = Caller("bench")
    times: dict[str, list[float]] = {s: [] for s in SETTINGS}
    with tempfile.TemporaryDirectory(prefix="sqlite-sync-", dir=args.dir) as tmp:
        services = {s: await open_one(Path(tmp) / f"{s.lower()}.db", s, embedder) for s in SETTINGS}
        try:
            for s in SETTINGS:  # warm-up: the first writes create pages and the WAL
                for i in range(10):
                    await services[s].remember(caller, content=sentence(s, -1 - i))
            count = 0
            for _ in range(args.rounds):
                for s in SETTINGS:
                    for _ in range(args.per_round):
                        count += 1
                        with Stopwatch() as remembering:
                            await services[s].remember(caller, content=sentence(s, count))
                        times[s].append(remembering.last * 1000)
        finally:
            for service in services.values():
                await service.close()
            await embedder.close()
        where = tmp

    print(f"python {platform.python_version()}, sqlite {__import__('sqlite3').sqlite_version}, {platform.machine()}")
    print(f"files in {where} (filesystem of {os.path.dirname(where) or '/'}), load {os.getloadavg()[0]:.2f}")
    print(f"embedder {args.embedder}, {args.rounds} rounds x {args.per_round} remembers per setting, alternating")
    print("| synchronous | remember p50 | p95 | mean | n |")
    print("| --- | --- | --- | --- | --- |")
    for s in SETTINGS:
        ms = sorted(times[s])
        p95 = percentile(ms, 95)
        print(f"| {s} | {statistics.median(ms):.2f} ms | {p95:.2f} ms | {statistics.fmean(ms):.2f} ms | {len(ms)} |")
    extra = statistics.median(times["FULL"]) - statistics.median(times["NORMAL"])
    print(f"FULL - NORMAL, median: {extra:+.2f} ms per remember")


if __name__ == "__main__":
    asyncio.run(main())
