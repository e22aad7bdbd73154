"""The ports the service is written against: two stores and an embedder, as base classes.

VectorStore holds memories with their embeddings; ObjectStore is a key/value store with
compare-and-swap and byte-ordered prefix listing (what ordinary S3 gives); Embedder turns
texts into unit vectors. Backends and providers subclass them (stores/, embedders/) and
the service, the counters and the calibration use only these names. What a backend may do
better than the rest is a method with a working default here, which the backend overrides
(as httpx's transports override `BaseTransport`): the service calls it on every store and
never asks which store it has.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_memory.core.keywords import KeywordAnswer
from mcp_memory.core.model import Hit, Memory, MemoryFilter
from mcp_memory.core.ranking import CANDIDATE_CAP

if TYPE_CHECKING:  # numpy loads with the first vector, not before the MCP handshake
    import numpy as np

__all__ = [
    "Embedder",
    "FilteredHits",
    "ObjectStore",
    "SCAN_BATCH",
    "StoredObject",
    "VectorStore",
    "describe",
]


#: Memories per page of `VectorStore.scan` unless the caller asks for another size.
SCAN_BATCH = 500
#: Writes in flight at once in the default `ObjectStore.put_many`.
KEY_WRITES = 16


@dataclass(frozen=True, slots=True)
class FilteredHits:
    hits: list[Hit]
    #: False when the store filtered a bounded pool of nearest candidates (S3 Vectors cannot
    #: filter on tags) and that pool was full: matching memories may lie beyond it.
    complete: bool = True


@dataclass(frozen=True, slots=True)
class StoredObject:
    body: str
    etag: str


class ObjectStore:
    """Keys to bodies with ETags, conditional writes and byte-ordered listing."""

    async def get(self, key: str) -> StoredObject | None:
        """The body and ETag under `key`, or None."""
        raise NotImplementedError

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        """Write `body`; returns the new ETag. A failed condition raises PreconditionFailed.

        `if_match`: only replace the object whose ETag is this. `if_none_match`:
        only create. Writing different content always yields a new ETag. Writing
        identical content may yield the same one (on S3 the ETag is the body's
        MD5); that is safe for compare-and-swap, since an equal ETag then means
        equal content, so whatever was computed from it is still current.
        """
        raise NotImplementedError

    async def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        """Write each (key, body) as `put` without conditions would (import's index keys).
        By default KEY_WRITES at a time; a store that can do it in fewer round trips overrides it."""
        for start in range(0, len(items), KEY_WRITES):
            await asyncio.gather(*(self.put(key, body) for key, body in items[start : start + KEY_WRITES]))

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        """Up to `limit` keys starting with `prefix` and greater than `start_after`, in byte order."""
        raise NotImplementedError

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete these keys; missing keys are ignored."""
        raise NotImplementedError

    async def close(self) -> None:
        """Release connections and files."""


class VectorStore:
    """Memories and their embeddings, always within one tenant."""

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        """Store one memory (ids are unique; a repeated id replaces)."""
        raise NotImplementedError

    async def put_with_index(self, memory: Memory, embedding: np.ndarray, objects: ObjectStore, key: str) -> None:
        """`put(memory, embedding)`, then the empty object `key` in `objects` (remember's recency
        index entry): the memory first, since an index entry without its memory would list
        something unreadable. A store that shares a database with `objects` commits both at once
        (one durable commit, not two) and overrides this."""
        await self.put(memory, embedding)
        await objects.put(key, "")

    async def put_many(self, items: Sequence[tuple[Memory, np.ndarray]]) -> None:
        """Store several memories as `put` stores each one, in as few writes as the backend
        allows (import's write path). Every budget is checked before anything is written."""
        raise NotImplementedError

    def scan(self, tenant: str, batch: int = SCAN_BATCH) -> AsyncIterator[list[tuple[Memory, np.ndarray]]]:
        """Every memory of `tenant` with its embedding, at most `batch` a page, in no promised
        order (export's read path). Memories written while it runs may or may not appear."""
        raise NotImplementedError

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """The `top_k` nearest memories of `tenant` *visible* to `conversation`.

        Visibility is applied before the limit. No order is promised.
        """
        raise NotImplementedError

    async def near(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """`query` for a closeness question (remember's duplicate check, a memory's neighbours):
        what matters is every memory close to `embedding`, not how the farther ones rank. By
        default `query` itself; a store with an approximate index answers from it where that is
        measured to find the close memories the exact scan finds (PostgreSQL's HNSW index,
        docs/storage.md#large-tenants; SQLite's, #large-tenants-in-sqlite)."""
        return await self.query(tenant, embedding, top_k, conversation)

    async def filtered_query(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter
    ) -> FilteredHits:
        """The `top_k` nearest visible memories of `tenant` that `where` matches, filtered before
        the limit; no order is promised. By default recall's CANDIDATE_CAP nearest, filtered afterwards
        (so marked incomplete); a store that can filter in its search overrides it."""
        pool = await self.query(tenant, embedding, CANDIDATE_CAP, conversation)
        return FilteredHits([h for h in pool if where.matches(h.memory)], complete=False)

    async def scored(self, tenant: str, embedding: np.ndarray, ids: Sequence[str]) -> list[Hit] | None:
        """These ids' memories of `tenant` with their cosine to `embedding` (missing ids dropped),
        which completes an incomplete `filtered_query`; None by default: this store cannot."""
        return None

    async def vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray] | None:
        """These ids' stored embeddings in `tenant`, missing ids left out (recall compares its
        results with each other, core/supersede.py); None by default: the service embeds the texts."""
        return None

    async def warm(self, tenant: str) -> None:
        """Load `tenant`'s vectors before its first query; a failure only means the first query
        loads them. Nothing by default (a store that loads nothing ahead)."""

    async def warm_tags(self, tenant: str, prefixes: Sequence[str]) -> None:
        """Read ahead what a filter by tags that begin with one of `prefixes` reads (serve-stdio's
        tool hooks: `path:`); a failure only means the first such filter reads it. Nothing by
        default (a store that keeps nothing between filters)."""

    async def keyword_query(
        self, tenant: str, embedding: np.ndarray, terms: Sequence[str], top_k: int, conversation: str | None
    ) -> KeywordAnswer:
        """Up to `top_k` memories of `tenant` visible to `conversation` that hold any of `terms`
        (tokens of core/keywords.py), best keyword match first, each with its cosine to `embedding`;
        and the document counts of `terms` the store scores them with.

        Visibility and the tenant apply before the limit, exactly as in `query`.
        """
        raise NotImplementedError

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """The memories of `tenant` with these ids; missing ids are dropped, no order promised."""
        raise NotImplementedError

    async def same_text(self, tenant: str, contents: Sequence[str]) -> list[Memory] | None:
        """The memories of `tenant` whose text is exactly one of `contents`, found without an
        embedding (a rerun of an import recognises what it stored before embedding it again,
        docs/import_formats.md#running-it-again). A memory it misses is found the usual way
        (embedded, then `near`), so a store may answer with fewer; None: this store cannot look
        text up at all. No order promised."""
        return None

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete these ids of `tenant`; unknown ids are ignored."""
        raise NotImplementedError

    def exclusive(self, tenant: str) -> AbstractAsyncContextManager[None]:
        """Serialise a check-then-insert for `tenant` across every process sharing the store."""
        raise NotImplementedError

    async def close(self) -> None:
        """Release connections, files and threads."""


class Embedder:
    """Turns texts into unit-length vectors of a fixed dimension."""

    provider: str
    model: str
    dim: int
    #: The Unicode scripts the model was trained to read ("Latin", "Hangul", "Han", ...); None
    #: reads every script (a multilingual model). Recall weighs the cosine by the share of a
    #: query's letters in these scripts (core/fusion.py).
    scripts: frozenset[str] | None = None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, shape (len(texts), dim), float32, every row checked."""
        raise NotImplementedError

    async def warm_up(self) -> None:
        """Load the model before the first `embed` (idempotent); a failure is reported again,
        with its reason, by the first `embed`. Nothing by default (nothing to load)."""

    async def close(self) -> None:
        """Release sessions, threads and files."""


def describe(embedder: Embedder) -> str:
    """`provider:model, <dim>d` for the boot log."""
    return f"{embedder.provider}:{embedder.model}, {embedder.dim}d"
