"""Recall latency at N memories in one tenant: PostgreSQL next to SQLite, in one run.

    python -m bench.latency.recall_backends [N] [DIM]       (defaults: 10000 384)

PostgreSQL is BENCH_DATABASE_URL when set (an empty database or schema), else a throwaway pgserver
(PostgreSQL 16 + pgvector 0.6, unix socket) started by this script. SQLite is a
fresh file in a temporary directory.

Each backend gets the same N random unit vectors (10 % conversation-scoped
notes over 20 conversations), written through the public `put`. Then, per
backend: `MemoryService.recall` (balanced mode: 30 candidates from the store,
counters load, ranking) with an embedder that returns a precomputed vector
near one of the stored memories (so the path is the full one, not the "nothing
matched" shortcut), and the bare `VectorStore.query(top_k=30)`; 10 warm-up
rounds, then 200 timed rounds, each round calling both backends in turn (so a
shared machine's background load falls on both alike), measured around the
awaited call.
Not part of the test suite; results go in bench/RESULTS.md.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from bench.harness.perf_fill import numbered_memory, unit_rows
from bench.harness.service import service_on
from bench.harness.timing import Stopwatch, percentile
from mcp_memory.core.model import Caller
from mcp_memory.core.ports import Embedder

TENANT = "bench"
WARM_UP = 10
TIMED = 200


class PrecomputedEmbedder(Embedder):
    """Maps "q<i>" to the i-th precomputed query vector (no model in the measurement)."""

    provider, model = "bench", "precomputed"

    def __init__(self, queries: np.ndarray) -> None:
        self.queries = queries
        self.dim = queries.shape[1]

    async def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.queries[int(text[1:])] for text in texts])

    async def close(self) -> None:
        return None


async def fill(name: str, vectors, embeddings: np.ndarray) -> None:
    with Stopwatch() as filling:
        for start in range(0, len(embeddings), 64):
            await asyncio.gather(
                *(
                    vectors.put(numbered_memory(i), embeddings[i])
                    for i in range(start, min(len(embeddings), start + 64))
                )
            )
    print(f"{name}: filled {len(embeddings)} memories in {filling.last:.1f} s", flush=True)


async def main(count: int, dim: int, database_url: str) -> None:
    from mcp_memory.stores.postgres.store import open_postgres
    from mcp_memory.stores.sqlite.store import open_sqlite

    rng = np.random.default_rng(7)
    embeddings = unit_rows(rng, count, dim)
    # Each query lies near one stored project memory (cosine ≈ 0.9), so recall ranks real matches.
    targets = [i for i in range(count) if i % 10][:60]
    queries = embeddings[targets] + 0.5 * unit_rows(rng, len(targets), dim)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    with tempfile.TemporaryDirectory() as tmp:
        backends = {
            "sqlite": await open_sqlite(Path(tmp) / "bench.db", model="bench", dim=dim),
            "postgres": await open_postgres(database_url, model="bench", dim=dim),
        }
        services = {}
        for name, (vectors, objects) in backends.items():
            await fill(name, vectors, embeddings)
            services[name] = service_on(vectors, objects, PrecomputedEmbedder(queries), floor=0.1)
        caller = Caller(TENANT)
        times: dict[tuple[str, str], list[float]] = {(b, c): [] for b in services for c in ("recall", "query")}
        # Interleaved, so both backends see the same background load on a shared machine.
        for i in range(WARM_UP + TIMED):
            q = i % len(queries)
            for name, service in services.items():
                with Stopwatch() as recalling:
                    result = await service.recall(caller, f"q{q}")
                recall_ms = recalling.last * 1000
                assert result.results, "a query near a stored memory found nothing"
                with Stopwatch() as querying:
                    hits = await service.vectors.query(TENANT, queries[q], 30, None)
                query_ms = querying.last * 1000
                assert len(hits) == 30
                if i >= WARM_UP:
                    times[(name, "recall")].append(recall_ms)
                    times[(name, "query")].append(query_ms)
        for service in services.values():
            await service.close()

    print(f"\n{count} memories, {dim} dimensions, one tenant; {TIMED} timed calls each, interleaved (ms)")
    print(f"{'backend':<10} {'call':<8} {'p50':>8} {'p90':>8} {'max':>8}")
    for (name, call), values in times.items():
        values.sort()
        print(
            f"{name:<10} {call:<8} {statistics.median(values):>8.2f} {percentile(values, 90):>8.2f} {values[-1]:>8.2f}"
        )
    for call in ("recall", "query"):
        ratio = statistics.median(times[("postgres", call)]) / statistics.median(times[("sqlite", call)])
        print(f"p50 ratio postgres / sqlite, {call}: {ratio:.1f}x")


def run() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    dim = int(sys.argv[2]) if len(sys.argv) > 2 else 384
    url = os.environ.get("BENCH_DATABASE_URL", "").strip()
    server = None
    if not url:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

            server = pgserver.get_server(tempfile.mkdtemp(prefix="mcp-memory-bench-pg-"), cleanup_mode="delete")
        url = server.get_uri()
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    try:
        asyncio.run(main(count, dim, url))
    finally:
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    run()
