"""The ports the service is written against: two stores and an embedder.

VectorStore holds memories with their embeddings; ObjectStore is a key/value
store with compare-and-swap and byte-ordered prefix listing (what ordinary S3
gives); Embedder turns texts into unit vectors. Backends and providers
implement them (stores/, embedders/); the service, the counters and the
calibration use only these names. Two optional abilities are declared too:
an embedder that can load its model ahead of the first call (`WarmsUp`) and a
vector store that can load one tenant's vectors ahead (`PreloadsTenant`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from mcp_memory.core.keywords import KeywordAnswer
from mcp_memory.core.model import Hit, Memory, MemoryFilter

if TYPE_CHECKING:  # numpy loads with the first vector, not before the MCP handshake
    import numpy as np

__all__ = [
    "Embedder",
    "FilteredHits",
    "FiltersQuery",
    "ScoresMemories",
    "ObjectStore",
    "PreloadsTenant",
    "PutsMany",
    "PutsWithObject",
    "ReadsScripts",
    "ReadsVectors",
    "SCAN_BATCH",
    "StoredObject",
    "VectorStore",
    "WarmsUp",
    "describe",
    "scripts_of",
]


#: Memories per page of `VectorStore.scan` unless the caller asks for another size.
SCAN_BATCH = 500


@runtime_checkable
class VectorStore(Protocol):
    """Memories and their embeddings, always within one tenant."""

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        """Store one memory (ids are unique; a repeated id replaces)."""

    async def put_many(self, items: Sequence[tuple[Memory, np.ndarray]]) -> None:
        """Store several memories as `put` stores each one, in as few writes as the backend
        allows (import's write path). Every budget is checked before anything is written."""

    def scan(self, tenant: str, batch: int = SCAN_BATCH) -> AsyncIterator[list[tuple[Memory, np.ndarray]]]:
        """Every memory of `tenant` with its embedding, at most `batch` a page, in no promised
        order (export's read path). Memories written while it runs may or may not appear."""

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """The `top_k` nearest memories of `tenant` *visible* to `conversation`.

        Visibility is applied before the limit. No order is promised.
        """

    async def keyword_query(
        self, tenant: str, embedding: np.ndarray, terms: Sequence[str], top_k: int, conversation: str | None
    ) -> KeywordAnswer:
        """Up to `top_k` memories of `tenant` visible to `conversation` that hold any of `terms`
        (tokens of core/keywords.py), best keyword match first, each with its cosine to `embedding`;
        and the document counts of `terms` the store scores them with.

        Visibility and the tenant apply before the limit, exactly as in `query`.
        """

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """The memories of `tenant` with these ids; missing ids are dropped, no order promised."""

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete these ids of `tenant`; unknown ids are ignored."""

    def exclusive(self, tenant: str) -> AbstractAsyncContextManager[None]:
        """Serialise a check-then-insert for `tenant` across every process sharing the store."""

    async def close(self) -> None:
        """Release connections, files and threads."""


@dataclass(frozen=True, slots=True)
class FilteredHits:
    hits: list[Hit]
    #: False when the store filtered a bounded pool of nearest candidates (S3 Vectors cannot
    #: filter on tags) and that pool was full: matching memories may lie beyond it.
    complete: bool = True


@runtime_checkable
class FiltersQuery(Protocol):
    """Optional for a VectorStore: `query` restricted by a MemoryFilter, applied before the limit."""

    async def filtered_query(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter
    ) -> FilteredHits:
        """The `top_k` nearest visible memories of `tenant` that `where` matches. No order is promised."""


@runtime_checkable
class ScoresMemories(Protocol):
    """Optional for a VectorStore: the cosine of `embedding` to each memory of a list of ids."""

    async def scored(self, tenant: str, embedding: np.ndarray, ids: Sequence[str]) -> list[Hit]:
        """These ids' memories of `tenant` with their cosine; missing ids are dropped."""


@runtime_checkable
class ReadsVectors(Protocol):
    """Optional for a VectorStore: the stored embeddings of some memories (recall compares its
    results with each other, core/supersede.py; without it the service embeds their texts)."""

    async def vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """These ids' embeddings in `tenant`; missing ids are left out."""


@runtime_checkable
class PreloadsTenant(Protocol):
    """Optional for a VectorStore: load one tenant's vectors before its first query."""

    async def warm(self, tenant: str) -> None:
        """Load `tenant`'s vectors now; a failure only means the first query loads them."""


@dataclass(frozen=True, slots=True)
class StoredObject:
    body: str
    etag: str


@runtime_checkable
class ObjectStore(Protocol):
    """Keys to bodies with ETags, conditional writes and byte-ordered listing."""

    async def get(self, key: str) -> StoredObject | None:
        """The body and ETag under `key`, or None."""

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        """Write `body`; returns the new ETag. A failed condition raises PreconditionFailed.

        `if_match`: only replace the object whose ETag is this. `if_none_match`:
        only create. Writing different content always yields a new ETag. Writing
        identical content may yield the same one (on S3 the ETag is the body's
        MD5); that is safe for compare-and-swap, since an equal ETag then means
        equal content, so whatever was computed from it is still current.
        """

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        """Up to `limit` keys starting with `prefix` and greater than `start_after`, in byte order."""

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete these keys; missing keys are ignored."""

    async def close(self) -> None:
        """Release connections and files."""


@runtime_checkable
class PutsWithObject(Protocol):
    """Optional for a VectorStore whose ObjectStore lives in the same database: a memory and one
    unconditional object write (remember's index key) in one transaction, both or neither, with
    one commit to make durable instead of two."""

    def shares_writes_with(self, objects: ObjectStore) -> bool:
        """Whether `put_with_object` writes into `objects` itself."""

    async def put_with_object(self, memory: Memory, embedding: np.ndarray, key: str, body: str) -> None:
        """`put(memory, embedding)`, then `objects.put(key, body)`, committed together."""


@runtime_checkable
class PutsMany(Protocol):
    """Optional for an ObjectStore: many unconditional writes at once (import's index keys)."""

    async def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        """Write each (key, body) as `put` without conditions would, in as few round trips as possible."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension."""

    provider: str
    model: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, shape (len(texts), dim), float32, every row checked."""

    async def close(self) -> None:
        """Release sessions, threads and files."""


@runtime_checkable
class ReadsScripts(Protocol):
    """Optional for an Embedder: the Unicode scripts it was trained to read ("Latin", "Hangul",
    "Han", ...); None, or no such attribute, reads every script (a multilingual model). Recall
    weighs the cosine by the share of a query's letters in these scripts (core/fusion.py)."""

    scripts: frozenset[str] | None


def scripts_of(embedder: Embedder) -> frozenset[str] | None:
    """The scripts `embedder` declares it reads, or None when it reads every script."""
    return embedder.scripts if isinstance(embedder, ReadsScripts) else None


@runtime_checkable
class WarmsUp(Protocol):
    """Optional for an Embedder: load the model before the first `embed` (idempotent)."""

    async def warm_up(self) -> None:
        """Load now; a failure is reported again, with its reason, by the first `embed`."""


def describe(embedder: Embedder) -> str:
    """`provider:model, <dim>d` for the boot log."""
    return f"{embedder.provider}:{embedder.model}, {embedder.dim}d"
