"""The serving process's side of a tool hook at 10,000 memories: `MemoryService.concerning` for a
file read, then an edit of the same file, with and without this issue's two changes, side by side.

    nice python -m bench.latency.tool_question [--memories 10000] [--rounds 15]

One SQLite store of the benchmark corpus (perf_fill.py's memories, random unit vectors), 5 of
them tagged `rule`; the question is embedded by the local model. Rows, interleaved round by round,
each a fresh file path (so nothing is reused across rounds):

- the `path:` tag lookup alone (`_filtered_nearest` with the file's tags), as before (json_each
  reads every row's tags) and with the substring pre-test (`stores/sqlite/store.py` `_tags_start`);
- `concerning` for the Read, then for the Edit of the same file (the Edit reuses the Read's
  embedding: `ACTION_EMBEDDINGS`).

Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from bench.harness.perf_fill import TENANT
from bench.harness.timing import percentile
from bench.latency.digest_rules import fill, service_of
from mcp_memory.core import actions
from mcp_memory.core.model import Caller, MemoryFilter
from mcp_memory.stores.sqlite import store as sqlite_store

ROWS = (
    "path: tag lookup, json_each alone (before)",
    "path: tag lookup, substring pre-test first",
    "concerning: Read of a new file (embeds)",
    "concerning: Edit of the same file (embedding reused)",
)


async def measure(db: Path, rounds: int) -> dict[str, list[float]]:
    caller = Caller(TENANT)
    service = await service_of(db)
    rows: dict[str, list[float]] = {row: [] for row in ROWS}
    shipped = sqlite_store._tags_start
    try:
        warm = actions.action_of("PreToolUse", "Read", {"file_path": "/p/warm/up.py"}, "/p")
        assert warm is not None
        await service.concerning(caller, warm)  # the model loaded, the store's caches warm
        for i in range(rounds):
            path = f"/p/services/billing{i}/refund_{i}.py"
            reading = actions.action_of("PreToolUse", "Read", {"file_path": path}, "/p")
            editing = actions.action_of("PreToolUse", "Edit", {"file_path": path}, "/p")
            assert reading is not None and editing is not None
            embedding = await service._embed(actions.query_of(reading))
            where = MemoryFilter(tags=tuple(actions.path_tags(reading.paths[0])))
            for row, pre_test in ((ROWS[0], False), (ROWS[1], True)):
                sqlite_store._tags_start = shipped if pre_test else (lambda tags: [])  # type: ignore[assignment]
                started = time.perf_counter()
                await service._filtered_nearest(caller, embedding, 10, where)
                rows[row].append((time.perf_counter() - started) * 1000)
            sqlite_store._tags_start = shipped
            for row, action in ((ROWS[2], reading), (ROWS[3], editing)):
                started = time.perf_counter()
                await service.concerning(caller, action)
                rows[row].append((time.perf_counter() - started) * 1000)
    finally:
        sqlite_store._tags_start = shipped
        await service.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tool-question-"))
    try:
        db = root / "m.db"
        asyncio.run(fill(db, args.memories, 5))
        rows = asyncio.run(measure(db, args.rounds))
        print(f"{args.memories:,} memories (SQLite); {args.rounds} interleaved rounds in one process.\n")
        print("| step | runs | p50 ms | p95 ms |\n| --- | ---: | ---: | ---: |")
        for row, values in rows.items():
            print(f"| {row} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
