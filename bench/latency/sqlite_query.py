"""How long SqliteVectorStore.query takes at N memories in one tenant.

    python -m bench.latency.sqlite_query [N] [DIM]       (defaults: 100000 384)

Fills a fresh database in a temporary directory through the public `put`
(random unit vectors, 10% conversation-scoped notes spread over 20
conversations), then times: the first query in a new process (cold: loads the
tenant into the cache), warm queries (top_k=10, with and without a
conversation), and the first query after one more put (incremental refresh).
Not part of the test suite; results go in bench/RESULTS.md.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench.harness.perf_fill import numbered_memory, unit_rows
from bench.harness.timing import Stopwatch, percentile
from mcp_memory.stores.sqlite.store import open_sqlite

TENANT = "bench"


async def fill(path: Path, count: int, dim: int) -> None:
    vectors, _ = await open_sqlite(path, model="bench", dim=dim)
    rng = np.random.default_rng(7)
    embeddings = unit_rows(rng, count, dim)
    batch = 64
    with Stopwatch() as filling:
        for start in range(0, count, batch):
            await asyncio.gather(
                *(vectors.put(numbered_memory(i), embeddings[i]) for i in range(start, min(count, start + batch)))
            )
    print(f"filled {count} memories in {filling.last:.1f} s")
    await vectors.close()
    await _.close()


async def measure(path: Path, dim: int) -> None:
    vectors, objects = await open_sqlite(path, model="bench", dim=dim)
    queries = unit_rows(np.random.default_rng(11), 60, dim)
    with Stopwatch() as cold:
        await vectors.query(TENANT, queries[0], 10, None)
    print(f"cold first query (loads the cache): {cold.last * 1000:.0f} ms")
    for label, conversation in (("no conversation", None), ("conversation conv-3", "conv-3")):
        watch = Stopwatch()
        for q in queries[1:51]:
            with watch:
                hits = await vectors.query(TENANT, q, 10, conversation)
            assert len(hits) == 10
        times = sorted(watch.ms())
        print(
            f"warm query, top_k=10, {label}: median {statistics.median(times):.1f} ms, "
            f"p90 {percentile(times, 90):.1f} ms, max {times[-1]:.1f} ms"
        )
    await vectors.put(numbered_memory(10**6), queries[55])
    with Stopwatch() as refresh:
        await vectors.query(TENANT, queries[56], 10, None)
    print(f"first query after one put (incremental refresh): {refresh.last * 1000:.1f} ms")
    await vectors.close()
    await objects.close()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    dim = int(sys.argv[2]) if len(sys.argv) > 2 else 384
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        asyncio.run(fill(path, count, dim))
        asyncio.run(measure(path, dim))


if __name__ == "__main__":
    main()
