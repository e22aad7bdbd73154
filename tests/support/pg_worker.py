"""A separate OS process working on a shared PostgreSQL (used by test_postgres.py).

    python -m tests.support.pg_worker <database url> <mode> <count>

It prepares, prints "ready", and waits for one line on stdin before it
starts, so the test can release several workers at the same moment. Modes:

- open: (released before anything touches the database) open the stores,
  creating the schema if this process gets there first; close them.
- remember: (released with the stores already open) make `count` identical
  `remember` calls at once for tenant "shared" through a MemoryService (fake
  embedder, 64 dimensions); report how many of them stored a new memory. The
  vector store's query is slowed by WINDOW_S, which widens the gap between the
  duplicate check and the insert: without a lock across processes, both
  processes' first calls would pass the check and both would store.

It prints "done <n>" at the end. Any exception ends the process with a
non-zero status and the error on stderr.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.stores.postgres.store import open_postgres

FACT = "Staging is restored from the nightly snapshot every Monday at six"
WINDOW_S = 0.2


class SlowQueries:
    """The real store, with every query answered WINDOW_S late."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def query(self, *args: Any) -> Any:
        hits = await self._inner.query(*args)
        await asyncio.sleep(WINDOW_S)
        return hits


async def go() -> None:
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)


async def main(url: str, mode: str, count: int) -> None:
    embedder = FakeEmbedder()
    if mode == "open":
        await go()
        vectors, objects = await open_postgres(url, model=embedder.model, dim=embedder.dim)
        await vectors.close()
        await objects.close()
        print("done 0", flush=True)
        return
    if mode != "remember":
        raise SystemExit(f"unknown mode {mode}")
    vectors, objects = await open_postgres(url, model=embedder.model, dim=embedder.dim)
    counters = AccessCounters(objects, pod_id="worker", log=NullLog())
    service = MemoryService(SlowQueries(vectors), objects, embedder, counters, floor=0.3)
    try:
        await embedder.embed([FACT])  # nothing left to warm up after the release
        await go()
        results = await asyncio.gather(*(service.remember(Caller("shared"), FACT) for _ in range(count)))
    finally:
        await service.close()
    print(f"done {sum(r.created for r in results)}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
