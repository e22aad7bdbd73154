"""The AWS backend: memories in S3 Vectors, what changes in an ordinary S3 bucket (docs/storage.md).

`open_s3(store, dim)` checks the vector index and the state bucket before
anything is served and returns an S3VectorStore and an S3ObjectStore
(objects.py). It is the layout the reference server uses, so an existing
deployment points mcp-memory at its buckets and keeps working:

    vector key   <tenant>#<ulid>                       (the id is everything after the first '#')
    metadata     tenantId, memoryType, category?, scope?, conversation?   filterable
                 content, createdAt, tags?, trustBase                     non-filterable

The body rides in the vector's metadata, so a recall is QueryVectors and
nothing else. Visibility is applied before the limit (docs/memories.md): one query for the
tenant's project memories and, in a conversation, one for that conversation's
notes, merged to the nearest `top_k`. Every filter is built by `tenant_filter`,
which puts the tenant first and is the only way to make the `TenantFilter`
that `_query` insists on — so no query can be issued without it.

The AWS SDK (the `aws` extra) is imported by this module's s3_* helpers only,
and they are imported only when the S3 backend is selected.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from operator import methodcaller
from typing import TYPE_CHECKING, Any

import numpy as np

from mcp_memory.core.errors import StoreError
from mcp_memory.core.keywords import KeywordAnswer, pool_answer
from mcp_memory.core.model import Hit, Memory, MemoryFilter
from mcp_memory.core.ports import FilteredHits, VectorStore
from mcp_memory.stores.records import SCAN_BATCH, assert_within_metadata_budget, from_metadata, to_metadata
from mcp_memory.stores.s3.errors import s3_calls
from mcp_memory.stores.s3.objects import S3ObjectStore

if TYPE_CHECKING:
    from mcp_memory.runtime.aws import AwsClient
    from mcp_memory.stores.section import StoreSection

__all__ = [
    "DELETE_BATCH",
    "GET_BATCH",
    "TOP_K_MAX",
    "S3ObjectStore",
    "S3VectorStore",
    "TenantFilter",
    "open_s3",
    "tenant_filter",
    "vector_key",
]

#: S3 Vectors' ceilings: results per QueryVectors, keys per GetVectors and per DeleteVectors.
TOP_K_MAX = 100
GET_BATCH = 100
DELETE_BATCH = 500
#: Vector candidates the keywords are scored within, where there is no keyword index.
KEYWORD_POOL = 100
#: Vectors per PutVectors call, and per ListVectors page.
PUT_BATCH = 500
LIST_BATCH = 1000


#: Filterable metadata beside the reference record: its text's hash, so `same_text` can find a
#: stored text with a filter and no embedding. 43 bytes, within the 48 that the budget
#: (records.FILTERABLE_MAX_BYTES, 2,000) leaves below the service's 2 KB of filterable metadata.
TEXT_HASH_KEY = "contentHash"


def text_hash(content: str) -> str:
    """The first 128 bits of the text's SHA-256, in hex."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:32]


def vector_key(tenant: str, memory_id: str) -> str:
    return f"{tenant}#{memory_id}"


class TenantFilter:
    """A QueryVectors filter whose first condition is the tenant. Made only by `tenant_filter`."""

    __slots__ = ("document", "tenant")

    def __init__(self, tenant: str, document: dict[str, Any], *, _token: object = None) -> None:
        if _token is not _TOKEN:
            raise TypeError("build a TenantFilter with tenant_filter(tenant, ...)")
        self.tenant = tenant
        self.document = document


_TOKEN = object()


def tenant_filter(tenant: str, *conditions: dict[str, Any]) -> TenantFilter:
    """`{"$and": [{"tenantId": {"$eq": tenant}}, *conditions]}` — the tenant always first.

    The tenant is the isolation boundary; refusing an empty one here means a
    bug upstream cannot turn into a query across every tenant.
    """
    if not isinstance(tenant, str) or not tenant:
        raise ValueError("a vector query needs a tenant")
    document = {"$and": [{"tenantId": {"$eq": tenant}}, *conditions]}
    return TenantFilter(tenant, document, _token=_TOKEN)


def _chunks(items: Sequence[str], size: int) -> list[list[str]]:
    unique = list(dict.fromkeys(items))
    return [unique[i : i + size] for i in range(0, len(unique), size)]


def _memory_id(key: Any) -> str:
    return key.split("#", 1)[1] if isinstance(key, str) and "#" in key else ""


class S3VectorStore(VectorStore):
    """Memories as vectors in one S3 Vectors index, keyed `<tenant>#<ulid>`."""

    def __init__(self, client: Any, bucket: str, index: str, dim: int) -> None:
        self._client = client
        self._aws = s3_calls(client, "s3vectors")
        self._bucket = bucket
        self._index = index
        self._dim = dim
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    @property
    def bucket(self) -> str:
        return self._bucket

    @property
    def index(self) -> str:
        return self._index

    @property
    def aws(self) -> AwsClient:
        """How this store calls S3 Vectors (the start-up checks call through it too)."""
        return self._aws

    def _where(self) -> dict[str, str]:
        return {"vectorBucketName": self._bucket, "indexName": self._index}

    def _vector(self, embedding: np.ndarray) -> list[float]:
        vector = np.asarray(embedding, dtype=np.float32)
        if vector.ndim != 1 or vector.shape[0] != self._dim:
            raise StoreError(
                f"the embedding has shape {vector.shape} but the S3 Vectors index {self._index} holds "
                f"{self._dim}-dimensional vectors (EMBEDDING_DIM)"
            )
        if not np.all(np.isfinite(vector)):
            raise StoreError("the embedding contains non-finite values")
        return vector.tolist()

    def _entry(self, memory: Memory, embedding: np.ndarray) -> dict[str, Any]:
        assert_within_metadata_budget(memory)
        data = self._vector(embedding)
        # S3 Vectors refuses an empty array and would fail the whole write.
        metadata = {k: v for k, v in to_metadata(memory).items() if not (isinstance(v, list) and not v)}
        metadata[TEXT_HASH_KEY] = text_hash(memory.content)
        return {"key": vector_key(memory.tenant, memory.id), "data": {"float32": data}, "metadata": metadata}

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        """PutVectors one memory; the budget is checked before anything is sent."""
        await self.put_many([(memory, embedding)])

    async def put_many(self, items: Sequence[tuple[Memory, np.ndarray]]) -> None:
        """PutVectors, up to 500 vectors a call; every budget is checked before the first call."""
        entries = [self._entry(memory, embedding) for memory, embedding in items]
        for start in range(0, len(entries), PUT_BATCH):
            batch = entries[start : start + PUT_BATCH]
            await self._aws.call("PutVectors", methodcaller("put_vectors", **self._where(), vectors=batch))

    async def scan(self, tenant: str, batch: int = SCAN_BATCH) -> AsyncIterator[list[tuple[Memory, np.ndarray]]]:
        """ListVectors over the whole index, keeping this tenant's keys (`<tenant>#…`).

        S3 Vectors lists every tenant's vectors together; a page may hold none of
        this tenant's, and the order is the service's own.
        """
        prefix, size = f"{tenant}#", max(1, batch)
        token: str | None = None
        while True:
            options: dict[str, Any] = {"maxResults": min(size, LIST_BATCH)}
            if token:
                options["nextToken"] = token
            response = await self._aws.call(
                "ListVectors",
                methodcaller("list_vectors", **self._where(), returnData=True, returnMetadata=True, **options),
            )
            page = []
            for item in response.get("vectors", []) or []:
                key = item.get("key")
                if not isinstance(key, str) or not key.startswith(prefix):
                    continue
                memory = from_metadata(_memory_id(key), item.get("metadata"), tenant)
                data = (item.get("data") or {}).get("float32")
                if memory is not None and isinstance(data, list) and len(data) == self._dim:
                    page.append((memory, np.asarray(data, dtype=np.float32)))
            for start in range(0, len(page), size):  # a service may answer more than maxResults
                yield page[start : start + size]
            token = response.get("nextToken")
            if not token:
                return

    async def _query(self, where: TenantFilter, vector: list[float], top_k: int) -> list[Hit]:
        """The one QueryVectors call site; it takes nothing but a tenant-first filter."""
        if not isinstance(where, TenantFilter):
            raise TypeError("QueryVectors needs a TenantFilter from tenant_filter()")
        params = {
            **self._where(),
            "topK": min(top_k, TOP_K_MAX),
            "queryVector": {"float32": vector},
            "filter": where.document,
            "returnMetadata": True,
            "returnDistance": True,
        }
        # Spelled as an attribute, not methodcaller's string, so a test can see this is the only call site.
        response = await self._aws.call("QueryVectors", lambda client: client.query_vectors(**params))
        hits = []
        for item in response.get("vectors", []) or []:
            memory = from_metadata(_memory_id(item.get("key")), item.get("metadata"), where.tenant)
            if memory is None:
                continue
            distance = item.get("distance")
            distance = 1.0 if isinstance(distance, bool) or not isinstance(distance, (int, float)) else distance
            hits.append(Hit(memory, 1.0 - float(distance)))
        return hits

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """The nearest `top_k` (at most 100) memories visible to `conversation`.

        Project memories and this conversation's notes are asked for separately,
        so a busy thread cannot crowd project memories out (docs/memories.md); the two answers
        are merged and cut to the nearest `top_k`. No order is promised.
        """
        vector = self._vector(embedding)
        if top_k <= 0:
            return []
        return await self._nearest(tenant, vector, top_k, conversation, ())

    async def filtered_query(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter
    ) -> FilteredHits:
        """The memory type is a QueryVectors filter (filterable metadata); the tags and createdAt
        are not filterable here, so with tags or a time span the nearest TOP_K_MAX of the type are
        fetched and post-filtered, and the answer says whether that pool was full (`complete` False)."""
        vector = self._vector(embedding)
        if top_k <= 0:
            return FilteredHits([])
        conditions = ({"memoryType": {"$eq": where.memory_type}},) if where.memory_type else ()
        post = bool(where.tags or where.span)
        pool = await self._nearest(tenant, vector, TOP_K_MAX if post else top_k, conversation, conditions)
        hits = [h for h in pool if where.matches(h.memory)]
        return FilteredHits(hits[:top_k], complete=not post or len(pool) < TOP_K_MAX or len(hits) >= top_k)

    async def vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """GetVectors with the vectors, 100 keys a call."""
        out: dict[str, np.ndarray] = {}
        for item in await self._get_vectors(tenant, ids, with_data=True):
            key = item.get("key")
            data = (item.get("data") or {}).get("float32")
            if isinstance(key, str) and isinstance(data, list) and len(data) == self._dim:
                out[_memory_id(key)] = np.asarray(data, dtype=np.float32)
        return out

    async def scored(self, tenant: str, embedding: np.ndarray, ids: Sequence[str]) -> list[Hit]:
        """GetVectors with the vectors, 100 keys a call, and each one's cosine to `embedding`."""
        query = np.asarray(self._vector(embedding), dtype=np.float32)
        hits: list[Hit] = []
        for item in await self._get_vectors(tenant, ids, with_data=True):
            memory = from_metadata(_memory_id(item.get("key")), item.get("metadata"), tenant)
            data = (item.get("data") or {}).get("float32")
            if memory is not None and isinstance(data, list) and len(data) == self._dim:
                hits.append(Hit(memory, float(np.dot(query, np.asarray(data, dtype=np.float32)))))
        return hits

    async def _nearest(
        self, tenant: str, vector: list[float], top_k: int, conversation: str | None, conditions: tuple
    ) -> list[Hit]:
        wanted = [tenant_filter(tenant, {"scope": {"$exists": False}}, *conditions)]
        if conversation:
            wanted.append(
                tenant_filter(
                    tenant, {"scope": {"$eq": "conversation"}}, {"conversation": {"$eq": conversation}}, *conditions
                )
            )
        answers = await asyncio.gather(*(self._query(where, vector, top_k) for where in wanted))
        merged: dict[str, Hit] = {}
        for hit in (h for answer in answers for h in answer):
            if hit.memory.visible_to(conversation) and hit.memory.id not in merged:
                merged[hit.memory.id] = hit
        nearest = sorted(merged.values(), key=lambda h: h.similarity, reverse=True)
        return nearest[: min(top_k, TOP_K_MAX)]

    async def keyword_query(
        self, tenant: str, embedding: np.ndarray, terms: Sequence[str], top_k: int, conversation: str | None
    ) -> KeywordAnswer:
        """No keyword index here: the keywords are scored within the nearest KEYWORD_POOL
        memories by cosine (docs/how_recall_works.md: what that can and cannot find)."""
        pool = await self.query(tenant, embedding, KEYWORD_POOL, conversation)
        return pool_answer(pool, terms, top_k)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """GetVectors, 100 keys a call; missing ids and other tenants' records are dropped."""
        found: dict[str, Memory] = {}
        for item in await self._get_vectors(tenant, ids, with_data=False):
            memory = from_metadata(_memory_id(item.get("key")), item.get("metadata"), tenant)
            if memory is not None:
                found[memory.id] = memory
        return [found[memory_id] for memory_id in dict.fromkeys(ids) if memory_id in found]

    async def same_text(self, tenant: str, contents: Sequence[str]) -> list[Memory]:
        """QueryVectors filtered to the tenant and the texts' hashes (TOP_K_MAX hashes a call; the
        query vector only orders what the filter lets through), then the texts compared. A memory
        written before the hash was kept has none and is not found here (the caller embeds)."""
        wanted = set(contents)
        probe = [1.0] + [0.0] * (self._dim - 1)
        hashes = list(dict.fromkeys(text_hash(text) for text in wanted))
        answers = await asyncio.gather(
            *(
                self._query(
                    tenant_filter(tenant, {TEXT_HASH_KEY: {"$in": hashes[i : i + TOP_K_MAX]}}), probe, TOP_K_MAX
                )
                for i in range(0, len(hashes), TOP_K_MAX)
            )
        )
        return [hit.memory for answer in answers for hit in answer if hit.memory.content in wanted]

    async def _get_vectors(self, tenant: str, ids: Sequence[str], *, with_data: bool) -> list[dict[str, Any]]:
        """The GetVectors items for `ids`, 100 keys a call, with their metadata (and vectors)."""
        data = {"returnData": True} if with_data else {}
        items: list[dict[str, Any]] = []
        for chunk in _chunks(ids, GET_BATCH):
            keys = [vector_key(tenant, memory_id) for memory_id in chunk]
            response = await self._aws.call(
                "GetVectors",
                methodcaller("get_vectors", **self._where(), keys=keys, returnMetadata=True, **data),
            )
            items.extend(response.get("vectors", []) or [])
        return items

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        """DeleteVectors, 500 keys a call (unknown keys are not an error)."""
        for chunk in _chunks(ids, DELETE_BATCH):
            keys = [vector_key(tenant, memory_id) for memory_id in chunk]
            await self._aws.call("DeleteVectors", methodcaller("delete_vectors", **self._where(), keys=keys))

    @asynccontextmanager
    async def exclusive(self, tenant: str) -> AsyncIterator[None]:
        """Serialise a check-then-insert for `tenant` within this process.

        S3 has no lock to take across replicas. Two replicas remembering the same
        fact at the same instant can both store it: the reference tolerates that
        on purpose, because the failure left is a duplicate, never a lost memory.
        """
        lock = self._locks.setdefault(tenant, asyncio.Lock())
        async with lock:
            yield

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._aws.close()


async def open_s3(
    settings: StoreSection, dim: int, *, session: Any = None, endpoint_url: str | None = None
) -> tuple[S3VectorStore, S3ObjectStore]:
    """Check the index and the state bucket, then return the two stores (close both).

    Credentials come from the standard AWS chain; the endpoint from AWS's own
    `AWS_ENDPOINT_URL` (or `endpoint_url`/`session`, which tests inject).
    Raises StartupError, naming what to change, when the index does not fit.
    """
    from mcp_memory.stores.s3.startup import check_index, check_state_bucket, make_clients

    vectors_client, s3_client = make_clients(settings.aws_region, session=session, endpoint_url=endpoint_url)
    vectors = S3VectorStore(vectors_client, settings.vector_bucket or "", settings.vector_index, dim)
    objects = S3ObjectStore(s3_client, settings.state_bucket or "")
    try:
        await check_index(vectors.aws, settings, dim)
        await check_state_bucket(objects.aws, settings)
    except BaseException:
        await vectors.close()
        await objects.close()
        raise
    return vectors, objects
