"""Fill one tenant of a store with the benchmark corpus, as `remember` would leave it.

Each memory is written through the store's public `put` with its real
embedding, then its recency index key (`keys.index_key`) through the object
store, exactly the two writes `MemoryService.remember` makes; only the model
call and the dedup query per memory are skipped (the embeddings come from the
batch API, perf_corpus.py). `fill_to` tops a store up to N memories, so one
store grows 1,000 → 10,000 → 100,000 during a run.

Memories: ULIDs minted one millisecond apart in corpus order, type "project"
(every 7th "decision"), 10 % conversation-scoped over 20 conversations (not
visible to the benchmark's callers, who have no conversation: the visibility
mask works on every query, as in a real tenant).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness.timing import Stopwatch
from mcp_memory.core.ids import iso, ulid
from mcp_memory.core.model import Memory, MemoryType
from mcp_memory.core.object_keys import index_key

TENANT = "bench"
#: 2026-01-01T00:00:00Z: the first memory's time; each next one is 1 ms later.
EPOCH_MS = 1_767_225_600_000
CONCURRENCY = 64


def bench_memory(i: int, text: str, *, every_7th: MemoryType = "decision", tags: tuple[str, ...] = ()) -> Memory:
    """Memory `i` of the corpus: its id and time from `i`, every 7th of type `every_7th`, every
    10th conversation-scoped (bench/scale/million.py makes its large tenant of the same memories,
    with patterns and one of 50 tags each)."""
    at = EPOCH_MS + i
    scoped = i % 10 == 9
    return Memory(
        id=ulid(at, i.to_bytes(16, "big")),
        tenant=TENANT,
        content=text,
        memory_type=every_7th if i % 7 == 3 else "project",
        tags=tags,
        created_at=iso(at),
        scope="conversation" if scoped else "project",
        conversation=f"conv-{i % 20}" if scoped else None,
    )


def unit_rows(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    """`count` random unit vectors: for the scripts that time the scan, which costs the same for any."""
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def numbered_memory(i: int) -> Memory:
    """Memory `i` of a store of random vectors ("memory number i"): every 10th conversation-scoped."""
    scoped = i % 10 == 0
    return Memory(
        id=f"m{i:07d}",
        tenant=TENANT,
        content=f"memory number {i}",
        created_at="2026-01-01T00:00:00.000Z",
        scope="conversation" if scoped else "project",
        conversation=f"conv-{i % 20}" if scoped else None,
    )


async def _write(vectors: Any, objects: Any, memory: Memory, embedding: np.ndarray) -> None:
    await vectors.put(memory, embedding)
    await objects.put(index_key(memory), "")


async def fill_range(
    vectors: Any, objects: Any, texts: list[str], embeddings: np.ndarray, start: int, stop: int
) -> float:
    """Write memories `start..stop-1`; returns the seconds it took."""
    with Stopwatch() as filling:
        for first in range(start, stop, CONCURRENCY):
            last = min(stop, first + CONCURRENCY)
            await asyncio.gather(
                *(_write(vectors, objects, bench_memory(i, texts[i]), embeddings[i]) for i in range(first, last))
            )
    return filling.last


async def open_backend(backend: str, *, db_path: str | None = None, database_url: str | None = None):
    """The two stores of `backend` ("sqlite" or "postgres") for the local model's 384 dimensions."""
    from mcp_memory.embedders.local.embedder import DIM, MODEL_NAME

    if backend == "sqlite":
        from pathlib import Path

        from mcp_memory.stores.sqlite.store import open_sqlite

        return await open_sqlite(Path(db_path), model=MODEL_NAME, dim=DIM)
    from mcp_memory.stores.postgres.store import open_postgres

    return await open_postgres(database_url, model=MODEL_NAME, dim=DIM, pool_size=16)


async def count_memories(vectors: Any, backend: str) -> int:
    """How many rows the tenant has (for topping up; remember calls add some)."""
    if backend == "sqlite":
        return await vectors._db.read(
            lambda conn: conn.execute("SELECT count(*) FROM memories WHERE tenant = ?", (TENANT,)).fetchone()[0],
            "count",
        )
    rows = await vectors._db.fetch("count", "SELECT count(*) FROM memories WHERE tenant_id = %s", (TENANT,))
    return int(rows[0][0])


async def fill_to(
    backend: str, target: int, texts: list[str], embeddings: np.ndarray, written: int, **where: str
) -> tuple[int, float]:
    """Top the tenant up with corpus memories `written..target-1`. Returns (corpus rows
    written so far, seconds). Memories written by timed `remember` calls come on top."""
    vectors, objects = await open_backend(backend, **where)
    try:
        seconds = await fill_range(vectors, objects, texts, embeddings, written, target) if target > written else 0.0
        return max(target, written), seconds
    finally:
        await vectors.close()
        await objects.close()


def repeated_vectors(texts: list[str], vectors_from: int | None, cache: Path) -> np.ndarray:
    """The local model's vectors for the first `vectors_from` texts (all when None), memory i given
    text i % N's: a store of any size for the scripts that time its scan, which costs the same for
    any vectors (embedding 10,000 texts on a busy machine takes most of an hour)."""
    from bench.harness.perf_corpus import embeddings

    real = min(vectors_from or len(texts), len(texts))
    vectors, _ = asyncio.run(embeddings(texts[:real], cache))
    return vectors if real == len(texts) else np.stack([vectors[i % real] for i in range(len(texts))])


def fill_sqlite(db: Path, count: int, vectors_from: int | None, cache: str | None) -> list[str]:
    """A new SQLite store at `db` of corpus memories 0..count-1, their vectors `repeated_vectors`
    (cached in `cache`, else beside `db`); returns the corpus texts."""
    from bench.harness.perf_corpus import corpus

    texts = corpus(count)
    vectors = repeated_vectors(texts, vectors_from, Path(cache) if cache else db.parent / "cache")
    asyncio.run(fill_to("sqlite", count, texts, vectors, 0, db_path=str(db)))
    return texts
