"""The digest's rules read at 10,000 memories: every memory's tags (before) against the rules' own
keys (after), side by side in one process on one SQLite store.

    nice python -m bench.latency.digest_rules [--memories 10000] [--rules 5] [--rounds 15]

The store is filled with the benchmark corpus (perf_fill.py; random unit vectors: neither read
embeds anything), the oldest `--rules` memories tagged `rule` with their `rules/` keys. Rows,
interleaved round by round: the old read (`tags_read` below: the index a batch at a time and each
memory's tags, as the digest read its rules before), the new one (`core/digest.py read_rules`), and
the whole digest. The tenant's first digest in a process, which writes the keys of a store that had
none (`_track_rules`), is timed once on a copy without them. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.harness.perf_corpus import corpus
from bench.harness.perf_fill import TENANT, bench_memory, open_backend, unit_rows
from bench.harness.timing import percentile
from mcp_memory.core.digest import RULE_TAG, RULES_MAX, TRACK_SCAN_CAP, read_rules
from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.object_keys import WALK_BATCH, Walk, memory_keys, rules_marker


async def fill(db: Path, count: int, rules: int) -> None:
    vectors, objects = await open_backend("sqlite", db_path=str(db))
    try:
        texts = corpus(count)
        rows = unit_rows(np.random.default_rng(7), count, 384)
        for start in range(0, count, 500):
            batch = [
                bench_memory(i, texts[i], tags=(RULE_TAG,) if i < rules else ())
                for i in range(start, min(count, start + 500))
            ]
            await vectors.put_many([(m, rows[i]) for i, m in zip(range(start, start + len(batch)), batch)])
            await objects.put_many([(key, "") for m in batch for key in memory_keys(m)])
        await objects.put(rules_marker(TENANT), "")
    finally:
        await vectors.close()
        await objects.close()


async def tags_read(service, caller: Caller) -> list[Memory]:  # type: ignore[no-untyped-def]
    """The rules read before the `rules/` keys: the newest RULES_MAX memories tagged `rule`, the
    index read a batch at a time and every memory's tags with it (TRACK_SCAN_CAP keys at most)."""
    walk = Walk(service.objects, caller)
    found: list[Memory] = []
    while len(found) < RULES_MAX and walk.read < TRACK_SCAN_CAP and not walk.ended:
        ids = [e.id for e in await walk.entries(WALK_BATCH)]
        memories = {m.id: m for m in await service.vectors.get(caller.tenant, ids)} if ids else {}
        for memory_id in ids:
            memory = memories.get(memory_id)
            if memory is not None and memory.visible_to(caller.conversation) and RULE_TAG in memory.tags:
                found.append(memory)
                if len(found) >= RULES_MAX:
                    break
    return found


async def service_of(db: Path):  # type: ignore[no-untyped-def]
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings

    return await open_service(Settings.from_env({"MEMORY_DB_PATH": str(db)}))


async def measure(db: Path, untracked: Path, rounds: int) -> dict[str, list[float]]:
    caller = Caller(TENANT)
    rows: dict[str, list[float]] = {"rules read, every memory's tags (before)": [], "rules read, rules/ keys": []}
    rows["digest (with the rules/ keys)"] = []
    first = await service_of(untracked)
    try:
        started = time.perf_counter()
        result = await first.digest(caller)
        rows["first digest of a store without rules/ keys (writes them)"] = [(time.perf_counter() - started) * 1000]
        assert result.rules > 0
    finally:
        await first.close()
    service = await service_of(db)
    try:
        await service.digest(caller)  # the store opened, its caches warm, as a serving process has them
        for _ in range(rounds):
            for row in rows:
                if row.startswith("first"):
                    continue
                started = time.perf_counter()
                if row.startswith("rules read, every"):
                    found = await tags_read(service, caller)
                elif row.startswith("rules read, rules/"):
                    found = await read_rules(service.objects, service.vectors, caller, service._rules_tracked)
                else:
                    found = (await service.digest(caller)).memories
                rows[row].append((time.perf_counter() - started) * 1000)
                assert found
    finally:
        await service.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rules", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="digest-rules-"))
    try:
        db = root / "m.db"
        asyncio.run(fill(db, args.memories, args.rules))
        untracked = root / "untracked.db"
        shutil.copy(db, untracked)

        async def forget_keys() -> None:
            from mcp_memory.core.object_keys import rule_prefix

            vectors, objects = await open_backend("sqlite", db_path=str(untracked))
            await objects.delete([*await objects.list(rule_prefix(TENANT)), rules_marker(TENANT)])
            await vectors.close()
            await objects.close()

        asyncio.run(forget_keys())
        rows = asyncio.run(measure(db, untracked, args.rounds))
        print(
            f"{args.memories:,} memories (SQLite), {args.rules} of them (the oldest) tagged rule; "
            f"{args.rounds} interleaved rounds in one process.\n"
        )
        print("| read | runs | p50 ms | p95 ms |\n| --- | ---: | ---: | ---: |")
        for row, values in rows.items():
            print(f"| {row} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
