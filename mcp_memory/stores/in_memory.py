"""In-memory reference implementations of both ports.

They document the contract and are the test fakes. The vector store returns
hits worst-first on purpose, so no caller can come to rely on an order the
port does not promise. It also refuses empty arrays in metadata, as S3 Vectors
does, so a caller that would send one fails here first.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np

from mcp_memory.core import keywords
from mcp_memory.core.errors import PreconditionFailed, StoreError
from mcp_memory.core.model import Hit, Memory, MemoryFilter
from mcp_memory.core.ports import FilteredHits, ObjectStore, VectorStore
from mcp_memory.stores.records import (
    SCAN_BATCH,
    StoredObject,
    assert_within_metadata_budget,
    from_metadata,
    to_metadata,
)


class InMemoryVectorStore(VectorStore):
    """Memories in a dict, exact dot-product search (cosine for unit vectors)."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], tuple[dict[str, Any], np.ndarray]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def size(self) -> int:
        return len(self._records)

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        assert_within_metadata_budget(memory)
        md = to_metadata(memory)
        for key, value in md.items():
            if isinstance(value, list) and not value:
                raise StoreError(f"metadata key {key!r} is an empty array")
        vector = np.asarray(embedding, dtype=np.float32).copy()
        self._records[(memory.tenant, memory.id)] = (md, vector)

    async def put_many(self, items: Sequence[tuple[Memory, np.ndarray]]) -> None:
        for memory, _ in items:
            assert_within_metadata_budget(memory)
        for memory, embedding in items:
            await self.put(memory, embedding)

    async def scan(self, tenant: str, batch: int = SCAN_BATCH) -> AsyncIterator[list[tuple[Memory, np.ndarray]]]:
        keys = [key for key in self._records if key[0] == tenant]
        for start in range(0, len(keys), max(1, batch)):
            page = []
            for key in keys[start : start + max(1, batch)]:
                record = self._records.get(key)
                memory = from_metadata(key[1], record[0], tenant) if record is not None else None
                if record is not None and memory is not None:
                    page.append((memory, record[1].copy()))
            if page:
                yield page

    async def vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {i: self._records[(tenant, i)][1].copy() for i in ids if (tenant, i) in self._records}

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        return self._nearest(tenant, embedding, top_k, conversation, None)

    async def filtered_query(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter
    ) -> FilteredHits:
        """`query` over only the memories `where` matches: the filter applies before the limit."""
        return FilteredHits(self._nearest(tenant, embedding, top_k, conversation, where))

    def _nearest(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter | None
    ) -> list[Hit]:
        query = np.asarray(embedding, dtype=np.float32)
        hits: list[Hit] = []
        for (rec_tenant, rec_id), (md, vector) in self._records.items():
            if rec_tenant != tenant:
                continue
            memory = from_metadata(rec_id, md, tenant)
            if memory is None or not memory.visible_to(conversation) or (where and not where.matches(memory)):
                continue
            hits.append(Hit(memory, float(np.dot(query, vector))))
        hits.sort(key=lambda h: h.similarity, reverse=True)
        return list(reversed(hits[: max(0, top_k)]))

    async def keyword_query(
        self, tenant: str, embedding: np.ndarray, terms: Sequence[str], top_k: int, conversation: str | None
    ) -> keywords.KeywordAnswer:
        """Exact: every memory of the tenant is tokenised; document counts are the tenant's own."""
        query = np.asarray(embedding, dtype=np.float32)
        wanted = set(terms)
        frequency: dict[str, int] = {}
        docs = 0
        holding: list[Hit] = []
        for (rec_tenant, rec_id), (md, vector) in self._records.items():
            if rec_tenant != tenant:
                continue
            memory = from_metadata(rec_id, md, tenant)
            if memory is None:
                continue
            docs += 1
            held = wanted.intersection(keywords.tokens(memory.content))
            for term in held:
                frequency[term] = frequency.get(term, 0) + 1
            if held and memory.visible_to(conversation):
                holding.append(Hit(memory, float(np.dot(query, vector))))
        stats = keywords.TermStats(docs, frequency)
        searched = stats.searchable(terms)
        holding = [h for h in holding if set(searched).intersection(keywords.tokens(h.memory.content))]
        scores = keywords.bm25_scores(searched, {h.memory.id: h.memory.content for h in holding}, stats)
        holding.sort(key=lambda h: scores[h.memory.id], reverse=True)
        return keywords.KeywordAnswer(list(reversed(holding[: max(0, top_k)])), stats)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        found = []
        for memory_id in ids:
            record = self._records.get((tenant, memory_id))
            if record is None:
                continue
            memory = from_metadata(memory_id, record[0], tenant)
            if memory is not None:
                found.append(memory)
        return found

    async def same_text(self, tenant: str, contents: Sequence[str]) -> list[Memory]:
        wanted = set(contents)
        found = []
        for (record_tenant, memory_id), (md, _) in self._records.items():
            if record_tenant == tenant and md.get("content") in wanted:
                memory = from_metadata(memory_id, md, tenant)
                if memory is not None:
                    found.append(memory)
        return found

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        for memory_id in ids:
            self._records.pop((tenant, memory_id), None)

    @asynccontextmanager
    async def exclusive(self, tenant: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(tenant, asyncio.Lock())
        async with lock:
            yield

    async def close(self) -> None:
        return None


_etags = itertools.count(1)


class InMemoryObjectStore(ObjectStore):
    """Objects in a dict; ETags `v<n>` from one process-wide counter (never reissued)."""

    def __init__(self) -> None:
        self._objects: dict[str, StoredObject] = {}
        #: Every key written, in order (tests read it).
        self.writes: list[str] = []

    @property
    def size(self) -> int:
        return len(self._objects)

    async def get(self, key: str) -> StoredObject | None:
        return self._objects.get(key)

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        current = self._objects.get(key)
        if if_none_match and current is not None:
            raise PreconditionFailed(f"conditional write did not apply for {key}")
        if if_match is not None and (current is None or current.etag != if_match):
            raise PreconditionFailed(f"conditional write did not apply for {key}")
        etag = f"v{next(_etags)}"
        self._objects[key] = StoredObject(body, etag)
        self.writes.append(key)
        return etag

    async def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        for key, body in items:
            await self.put(key, body)

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        after = (start_after or "").encode("utf-8")
        keys = sorted(
            (k for k in self._objects if k.startswith(prefix) and k.encode("utf-8") > after),
            key=lambda k: k.encode("utf-8"),
        )
        return keys[: max(0, limit)]

    async def delete(self, keys: Sequence[str]) -> None:
        for key in keys:
            self._objects.pop(key, None)

    async def close(self) -> None:
        return None
