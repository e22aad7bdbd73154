"""PostgreSQL + pgvector: both ports over one database (docs/storage.md).

`open_postgres(url, model=..., dim=...)` creates or checks the schema (under
an advisory lock, before anything is served), opens the connection pools and
returns a PgVectorStore and a PgObjectStore sharing them. Close both; the
pools close when the second one closes. Closing twice is harmless.

Several replicas may share the database: ETags come from one sequence and
conditional writes are single statements, and `exclusive(tenant)` is a
transaction-scoped advisory lock, so a check-then-insert in one process
excludes the same in every other (see db.py).

Queries are an exact scan within the tenant, ordered by cosine distance
(`<=>`), with visibility in the WHERE clause before the LIMIT (docs/memories.md). A tenant of
POSTGRES_HNSW_MIN_MEMORIES or more has its own HNSW index: the closeness questions (`near`) walk
it, and recall's ranking too with POSTGRES_HNSW_RECALL, with the same conditions, and by the exact
scan whenever the index walk leaves fewer than were asked for (stores/postgres/ann.py). The exact scan's statements keep the index out of their plans.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from mcp_memory.core import keywords as keyword_index
from mcp_memory.core.errors import PreconditionFailed, StartupError, StoreError
from mcp_memory.core.keywords import KeywordAnswer, TermStats
from mcp_memory.core.model import Hit, Memory, MemoryFilter
from mcp_memory.core.ports import FilteredHits, ObjectStore, VectorStore
from mcp_memory.stores.postgres import keywords
from mcp_memory.stores.postgres.ann import DEFAULT_MIN_MEMORIES, EF_SEARCH, AnnIndexes
from mcp_memory.stores.postgres.db import (
    DEFAULT_LOCK_CONNECTIONS,
    DEFAULT_POOL_SIZE,
    DEFAULT_TIMEOUT_S,
    PostgresDatabase,
    VectorParam,
    describe,
)
from mcp_memory.stores.postgres.schema import create_schema
from mcp_memory.stores.records import (
    SCAN_BATCH,
    StoredObject,
    assert_within_metadata_budget,
    from_metadata,
    to_metadata,
)

__all__ = ["PgObjectStore", "PgVectorStore", "open_postgres"]

_VISIBLE = "(scope = 'project' OR (%s::text IS NOT NULL AND scope = 'conversation' AND conversation = %s))"
#: The type (or NULL: any), any of the tags (or NULL: any), and createdAt since / until (or NULL: open).
_FILTER = (
    "AND (%s::text IS NULL OR metadata->>'memoryType' = %s) AND (%s::text[] IS NULL OR metadata->'tags' ?| %s::text[]) "
    "AND (%s::text IS NULL OR metadata->>'createdAt' >= %s) AND (%s::text IS NULL OR metadata->>'createdAt' <= %s)"
)
_NEAREST = "SELECT id, metadata, embedding <=> %b AS distance FROM memories WHERE tenant_id = %s AND {visible} {where}"


def _exact(where: str = "") -> str:
    """The nearest visible rows by an exact scan. OFFSET 0 keeps the subquery whole, so the ORDER BY
    is over its output and no HNSW index can serve it: the exact scan stays exact."""
    inner = _NEAREST.format(visible=_VISIBLE, where=where)
    return f"SELECT id, metadata, distance FROM ({inner} OFFSET 0) AS scanned ORDER BY distance LIMIT %s"


def _approximate(where: str = "") -> str:
    """The same rows through the tenant's HNSW index (an ORDER BY the index serves)."""
    return _NEAREST.format(visible=_VISIBLE, where=where) + " ORDER BY distance LIMIT %s"


_QUERY = _exact()
_FILTERED_QUERY = _exact(_FILTER)
_VECTORS = "SELECT id, embedding::real[] FROM memories WHERE tenant_id = %s AND id = ANY(%s)"
_SCAN = "SELECT id, metadata, embedding::real[] FROM memories WHERE tenant_id = %s AND id > %s ORDER BY id LIMIT %s"


async def open_postgres(
    url: str,
    *,
    model: str,
    dim: int,
    pool_size: int = DEFAULT_POOL_SIZE,
    lock_connections: int = DEFAULT_LOCK_CONNECTIONS,
    timeout: float = DEFAULT_TIMEOUT_S,
    hnsw_min_memories: int = DEFAULT_MIN_MEMORIES,
    hnsw_ef_search: int = EF_SEARCH,
    hnsw_recall: bool = False,
) -> tuple[PgVectorStore, PgObjectStore]:
    """Open the database at `url` for embeddings of `model` with `dim` dimensions.

    A tenant of `hnsw_min_memories` or more (0: none) is searched through an HNSW index of its
    own, built in the background (stores/postgres/ann.py); which are valid is read here. Its walk
    keeps `hnsw_ef_search` candidates. The index answers the closeness questions (`near`: the
    duplicate check); recall's ranking (`query`, `filtered_query`) goes through it only with
    `hnsw_recall`, else stays exact.

    Raises StartupError, naming the redacted URL and the reason, when the
    database cannot be reached, pgvector is missing and cannot be created, or
    the stored embeddings have another width or model (the data is left as it was).
    """
    db = PostgresDatabase(url, pool_size=pool_size, lock_connections=lock_connections, timeout=timeout)
    try:
        conn = await db.connect_once()
        try:
            vector_schema = await create_schema(conn, model=model, dim=dim, where=db.where)
            cursor = await conn.execute(
                "SELECT t.oid, current_schema() FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                "WHERE t.typname = 'vector' AND n.nspname = %s",
                (vector_schema,),
            )
            row = await cursor.fetchone()
        finally:
            await conn.close()
        assert row is not None
        await db.open_pools(int(row[0]), str(row[1]))
        ann = AnnIndexes(db, vector_schema, hnsw_min_memories, hnsw_ef_search, hnsw_recall)
        await ann.start()
    except psycopg.Error as exc:
        await db.close()
        raise StartupError(
            f"cannot set up mcp-memory's tables in PostgreSQL at {db.where}: {describe(exc, url)}"
        ) from None
    except BaseException:
        await db.close()
        raise
    return PgVectorStore(db, dim, vector_schema, ann), PgObjectStore(db)


def _with_operator_of(statement: str, vector_schema: str) -> str:
    """`statement` with pgvector's `<=>` named by the schema the extension is in."""
    quoted = '"' + vector_schema.replace('"', '""').replace("%", "%%") + '"'
    assert statement.count("<=>") == 1
    return statement.replace("<=>", f"OPERATOR({quoted}.<=>)")


def _similarity(distance: Any) -> float:
    """1 − cosine distance; a distance that is missing or not finite means no similarity."""
    try:
        value = float(distance)
    except (TypeError, ValueError):
        return 0.0
    return 1.0 - value if math.isfinite(value) else 0.0


def _texts(metadata: dict[str, Any]) -> list[str]:
    """Every string in a metadata record (values and tag elements)."""
    texts = [value for value in metadata.values() if isinstance(value, str)]
    return texts + [tag for tag in metadata.get("tags", ()) if isinstance(tag, str)]


def _memory(row_id: str, metadata: Any, tenant: str) -> Memory | None:
    if isinstance(metadata, str):  # a driver configured to leave jsonb undecoded
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return None
    return from_metadata(row_id, metadata, tenant)


class PgVectorStore(VectorStore):
    """Memories as reference records (jsonb) beside a fixed-width pgvector column."""

    def __init__(
        self, db: PostgresDatabase, dim: int, vector_schema: str = "public", ann: AnnIndexes | None = None
    ) -> None:
        self._db = db
        self._dim = dim
        self._closed = False
        self.ann = ann or AnnIndexes(db, vector_schema, 0)
        # pgvector's distance operator named by its schema (see schema.create_schema)
        self._query = _with_operator_of(_QUERY, vector_schema)
        self._filtered_query = _with_operator_of(_FILTERED_QUERY, vector_schema)
        self._approximate = _with_operator_of(_approximate(), vector_schema)
        self._filtered_approximate = _with_operator_of(_approximate(_FILTER), vector_schema)
        self._keyword_search = _with_operator_of(keywords.SEARCH, vector_schema)

    def _vector(self, embedding: np.ndarray) -> VectorParam:
        vector = np.asarray(embedding, dtype=np.float32)
        if vector.ndim != 1 or vector.shape[0] != self._dim:
            raise StoreError(
                f"the embedding has shape {vector.shape} but this database holds {self._dim}-dimensional embeddings"
            )
        if not np.all(np.isfinite(vector)):
            raise StoreError("the embedding contains non-finite values")
        return VectorParam(vector)

    def _row(self, memory: Memory, embedding: np.ndarray) -> tuple[Any, ...]:
        assert_within_metadata_budget(memory)
        vector = self._vector(embedding)
        metadata = to_metadata(memory)
        if any("\x00" in text for text in _texts(metadata)) or "\x00" in memory.id:
            raise StoreError(
                "the memory contains the NUL character (U+0000), which PostgreSQL cannot store in text; remove it"
            )
        index = keyword_index.index_text(memory.content)
        return (memory.tenant, memory.id, vector, Jsonb(metadata), index)

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        await self._write("put memory", [self._row(memory, embedding)])
        self.ann.wrote(memory.tenant, 1)

    async def put_many(self, items: Sequence[tuple[Memory, np.ndarray]]) -> None:
        """One transaction, the statements pipelined (executemany)."""
        rows = [self._row(memory, embedding) for memory, embedding in items]
        if not rows:
            return
        await self._write("put memories", rows)
        for tenant, count in Counter(memory.tenant for memory, _ in items).items():
            self.ann.wrote(tenant, count)

    async def _write(self, op: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """The rows (`_row`'s) in one transaction that holds their tenants' write locks first, with
        the term counts moved in the same statements (stores/postgres/keywords.py)."""
        named = [dict(zip(("tenant", "id", "embedding", "metadata", "keywords"), row)) for row in rows]
        async with self._db.connection(op) as conn:
            async with conn.transaction():
                await conn.execute(keywords.WRITE_LOCK, (sorted({row["tenant"] for row in named}),))
                async with conn.cursor() as cursor:
                    await cursor.executemany(keywords.PUT, named)

    async def scan(self, tenant: str, batch: int = SCAN_BATCH) -> AsyncIterator[list[tuple[Memory, np.ndarray]]]:
        """Pages in id order (keyset paging); embeddings come back in binary as float4 arrays."""
        size = max(1, batch)
        after = ""
        while True:
            async with self._db.connection("scan memories") as conn:
                async with conn.cursor(binary=True) as cursor:
                    await cursor.execute(_SCAN, (tenant, after, size))
                    rows = await cursor.fetchall()
            page = []
            for row_id, metadata, embedding in rows:
                memory = _memory(row_id, metadata, tenant)
                if memory is not None and embedding is not None and len(embedding) == self._dim:
                    page.append((memory, np.asarray(embedding, dtype=np.float32)))
            if page:
                yield page
            if len(rows) < size:
                return
            after = rows[-1][0]

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """By the exact scan, or through the tenant's index when recall ranks through it
        (POSTGRES_HNSW_RECALL, stores/postgres/ann.py)."""
        return await self._hits(tenant, embedding, top_k, conversation, self.ann.ranks)

    async def near(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """Through the tenant's HNSW index whenever it has one: the walk finds the close memories
        the exact scan finds (docs/storage.md#large-tenants), whether or not recall ranks through it."""
        return await self._hits(tenant, embedding, top_k, conversation, True)

    async def _hits(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, indexed: bool
    ) -> list[Hit]:
        vector = self._vector(embedding)
        if top_k <= 0:
            return []
        params = (vector, tenant, conversation, conversation, top_k)
        approximate = self._approximate if indexed and self.ann.ready(tenant) else None
        rows = await self._nearest("query", approximate, self._query, params, top_k)
        hits = []
        for row_id, metadata, distance in rows:
            memory = _memory(row_id, metadata, tenant)
            if memory is not None:
                hits.append(Hit(memory, _similarity(distance)))
        return hits

    async def vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """These ids' embeddings, read in binary."""
        if not ids:
            return {}
        async with self._db.connection("read vectors") as conn:
            async with conn.cursor(binary=True) as cursor:
                await cursor.execute(_VECTORS, (tenant, list(ids)))
                rows = await cursor.fetchall()
        return {
            row_id: np.asarray(embedding, dtype=np.float32)
            for row_id, embedding in rows
            if embedding is not None and len(embedding) == self._dim
        }

    async def filtered_query(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter
    ) -> FilteredHits:
        """`query` with the type, any-of-the-tags and time conditions in SQL, before the limit
        (createdAt is stored as ISO UTC text with milliseconds, so text order is time order)."""
        vector = self._vector(embedding)
        if top_k <= 0:
            return FilteredHits([])
        tags = list(where.tags) or None
        since, until = where.span.since_iso, where.span.until_iso
        params = (
            *(vector, tenant, conversation, conversation, where.memory_type, where.memory_type, tags, tags),
            *(since, since, until, until, top_k),
        )
        approximate = self._filtered_approximate if self.ann.ranks and self.ann.ready(tenant) else None
        rows = await self._nearest("query", approximate, self._filtered_query, params, top_k)
        hits = []
        for row_id, metadata, distance in rows:
            memory = _memory(row_id, metadata, tenant)
            if memory is not None and where.matches(memory):
                hits.append(Hit(memory, _similarity(distance)))
        return FilteredHits(hits)

    async def _nearest(
        self, op: str, approximate: str | None, exact: str, params: tuple[Any, ...], top_k: int
    ) -> list[tuple[Any, ...]]:
        """Through the `approximate` statement (the tenant's HNSW index) when given and the walk
        fills `top_k`; else the exact scan."""
        if approximate is not None:
            async with self._db.connection(op) as conn:
                async with conn.transaction():
                    await conn.execute(self.ann.settings)
                    cursor = await conn.execute(approximate, params, prepare=False)
                    rows = await cursor.fetchall()
            if len(rows) >= top_k:
                return rows
        return await self._db.fetch(op, exact, params)

    async def keyword_query(
        self, tenant: str, embedding: np.ndarray, terms: Sequence[str], top_k: int, conversation: str | None
    ) -> KeywordAnswer:
        """Memories holding the query's rarer terms, through the GIN index (stores/postgres/keywords.py),
        each with its cosine; document counts are the tenant's own."""
        vector = self._vector(embedding)
        if not terms:
            return KeywordAnswer([], TermStats(0, {}))
        terms = list(terms)
        rows = await self._db.fetch(
            "keyword query",
            keywords.STATS,
            (tenant, ["", *terms]),
        )
        total = next((int(n) for term, n in rows if term == ""), 0)
        # past the search limit a term counts as held by one more memory (stores/postgres/keywords.py)
        cap = keyword_index.search_limit(total) + 1
        stats = TermStats(total, {term: min(int(n), cap) for term, n in rows if term != ""})
        searched = stats.searchable(terms)
        if not searched or top_k <= 0:
            return KeywordAnswer([], stats)
        rows = await self._db.fetch(
            "keyword query",
            self._keyword_search,
            (
                vector,
                tenant,
                conversation,
                conversation,
                keywords.any_of(searched),
                [keywords.lexeme(t) for t in searched],
                [stats.idf(t) for t in searched],
                top_k,
            ),
        )
        hits = []
        for row_id, metadata, distance in rows:
            memory = _memory(row_id, metadata, tenant)
            if memory is not None and memory.visible_to(conversation):
                hits.append(Hit(memory, _similarity(distance)))
        return KeywordAnswer(hits, stats)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        wanted = list(dict.fromkeys(ids))
        rows = await self._db.fetch(
            "get memories",
            "SELECT id, metadata FROM memories WHERE tenant_id = %s AND id = ANY(%s::text[])",
            (tenant, wanted),
        )
        found = {m.id: m for m in (_memory(row_id, md, tenant) for row_id, md in rows) if m is not None}
        return [found[memory_id] for memory_id in wanted if memory_id in found]

    async def same_text(self, tenant: str, contents: Sequence[str]) -> list[Memory]:
        """Through the `memories_by_text` index (schema.py): the md5 of each text, then the text
        itself compared, so two texts of one md5 never pass for each other."""
        wanted = list(dict.fromkeys(contents))
        if not wanted:
            return []
        digests = [hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest() for text in wanted]
        rows = await self._db.fetch(
            "find memories by text",
            "SELECT id, metadata FROM memories WHERE tenant_id = %s AND md5(metadata->>'content') = ANY(%s::text[]) "
            "AND metadata->>'content' = ANY(%s::text[])",
            (tenant, digests, wanted),
        )
        return [m for m in (_memory(row_id, md, tenant) for row_id, md in rows) if m is not None]

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        async with self._db.connection("delete memories") as conn:
            async with conn.transaction():
                await conn.execute(keywords.WRITE_LOCK, ([tenant],))
                await conn.execute(keywords.DELETE, {"tenant": tenant, "ids": list(dict.fromkeys(ids))})

    @asynccontextmanager
    async def exclusive(self, tenant: str) -> AsyncIterator[None]:
        """Serialise a check-then-insert for `tenant` across tasks, processes and replicas.

        Not re-entrant. The store's own statements inside the block use other
        connections, so they cannot deadlock with it.
        """
        async with self._db.exclusive(tenant):
            yield

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                await self.ann.close()
            finally:
                await self._db.release()


class PgObjectStore(ObjectStore):
    """Keys to bodies; the ETag is the row's version from one global sequence (docs/storage.md)."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._closed = False

    async def get(self, key: str) -> StoredObject | None:
        rows = await self._db.fetch("get object", "SELECT body, version::text FROM objects WHERE key = %s", (key,))
        return StoredObject(rows[0][0], rows[0][1]) if rows else None

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        if if_match is not None and if_none_match:
            # Only-create and only-replace-this-version never both hold.
            raise PreconditionFailed(f"conditional write did not apply for {key}")
        if if_match is not None:
            rows = await self._db.fetch(
                "put object",
                "UPDATE objects SET body = %s, version = nextval('objects_version'), updated_at = now() "
                "WHERE key = %s AND version::text = %s RETURNING version::text",
                (body, key, if_match),
            )
        elif if_none_match:
            rows = await self._db.fetch(
                "put object",
                "INSERT INTO objects (key, body, version) VALUES (%s, %s, nextval('objects_version')) "
                "ON CONFLICT (key) DO NOTHING RETURNING version::text",
                (key, body),
            )
        else:
            rows = await self._db.fetch(
                "put object",
                "INSERT INTO objects (key, body, version) VALUES (%s, %s, nextval('objects_version')) "
                "ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, version = EXCLUDED.version, "
                "updated_at = now() RETURNING version::text",
                (key, body),
            )
        if not rows:
            raise PreconditionFailed(f"conditional write did not apply for {key}")
        return str(rows[0][0])

    async def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        """Unconditional writes in one transaction, pipelined, each with a version of its own."""
        if not items:
            return
        async with self._db.connection("put objects") as conn:
            async with conn.transaction():
                async with conn.cursor() as cursor:
                    await cursor.executemany(
                        "INSERT INTO objects (key, body, version) VALUES (%s, %s, nextval('objects_version')) "
                        "ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, version = EXCLUDED.version, "
                        "updated_at = now()",
                        list(items),
                    )

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        """`starts_with`, not LIKE (`_` and `%` occur in keys); the "C" collation is byte order."""
        if limit <= 0:
            return []
        rows = await self._db.fetch(
            "list objects",
            "SELECT key FROM objects WHERE starts_with(key, %s) AND key > %s ORDER BY key LIMIT %s",
            (prefix, start_after or "", limit),
        )
        return [row[0] for row in rows]

    async def delete(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        await self._db.fetch(
            "delete objects", "DELETE FROM objects WHERE key = ANY(%s::text[])", (list(dict.fromkeys(keys)),)
        )

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._db.release()
