"""The embedded backend: both ports over one SQLite file (docs/storage.md).

`open_sqlite(path, model=..., dim=...)` returns a SqliteVectorStore and a
SqliteObjectStore sharing one SqliteDatabase (connections and worker threads).
Close both; the file is closed when the second one closes. Closing twice is
harmless.

Several processes may share the file; see db.py for how writes stay
safe and vectors.py for how the in-process query cache stays current.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_memory.core.errors import PreconditionFailed, StoreError
from mcp_memory.core.keywords import KeywordAnswer
from mcp_memory.core.model import Hit, Memory, MemoryFilter
from mcp_memory.core.ports import FilteredHits, ObjectStore, VectorStore
from mcp_memory.runtime.batching import Batcher
from mcp_memory.stores.records import SCAN_BATCH, StoredObject, assert_within_metadata_budget, from_metadata
from mcp_memory.stores.sqlite import keywords
from mcp_memory.stores.sqlite.db import CHUNK, SYNCHRONOUS, SqliteDatabase
from mcp_memory.stores.sqlite.lock import TenantLocks
from mcp_memory.stores.sqlite.row_cache import RowCache

if TYPE_CHECKING:  # numpy and the cache load with the first vector, not before the MCP handshake
    import numpy as np

    from mcp_memory.stores.sqlite.ann import Indexes
    from mcp_memory.stores.sqlite.tagged import Row, TaggedRows
    from mcp_memory.stores.sqlite.vectors import VectorCache

__all__ = ["SqliteObjectStore", "SqliteVectorStore", "open_sqlite"]

#: Most queries searched in one pass (at 100,000 memories their scores take 400 KB each).
SEARCH_BATCH = 32

#: Deleted ids listed per tenant before the list is emptied (and older caches read the tenant again).
KEPT_DELETES = 10_000

_COLUMNS = "tenant, id, content, memory_type, category, tags, created_at, scope, conversation, trust_base"


async def open_sqlite(
    path: Path, *, model: str, dim: int, synchronous: str = SYNCHRONOUS, approximate_min_memories: int = 0
) -> tuple[SqliteVectorStore, SqliteObjectStore]:
    """Open (creating if needed) the database at `path` for embeddings of `model` with `dim` dimensions.

    `approximate_min_memories`: tenants this large answer `near` (remember's duplicate check)
    from an approximate index (stores/sqlite/ann.py); 0, the library default, never.

    Raises StartupError, naming the path and the reason, when the directory
    cannot be created, the file is not an SQLite database, or it holds
    embeddings from another model or dimension (the file is then left as it was).
    """
    db = SqliteDatabase(Path(path).expanduser(), owners=2, synchronous=synchronous)
    try:
        await db.initialise(model, dim)
    except BaseException:
        await db.close()
        raise
    return SqliteVectorStore(db, dim, approximate_min_memories), SqliteObjectStore(db)


def _chunks(items: Sequence[str]) -> list[list[str]]:
    unique = list(dict.fromkeys(items))
    return [unique[i : i + CHUNK] for i in range(0, len(unique), CHUNK)]


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


def _tags_start(tags: Sequence[str]) -> list[str]:
    """How every one of `tags` begins as the tags column stores it (a JSON list): an opening quote
    and their common prefix, escaped as JSON escapes it (also with the ASCII escapes, for a row
    an earlier writer stored so). Every row holding one of the tags contains one of these, so
    `instr` rules out the rest before json_each parses them (a scan of 10,000 rows for a file's
    `path:` tags: bench/RESULTS.md, "The tool hook's server side")."""
    common = os.path.commonprefix(list(tags))
    if not common:
        return []
    return list(dict.fromkeys([json.dumps(common, ensure_ascii=False)[:-1], json.dumps(common)[:-1]]))


def _filter_sql(tenant: str, conversation: str | None, where: MemoryFilter) -> tuple[str, list[object]]:
    """The ids of `tenant`'s rows visible to `conversation` that `where` matches."""
    sql = "SELECT id FROM memories WHERE tenant = ? AND (scope = 'project' OR (scope = 'conversation' AND conversation = ?))"
    params: list[object] = [tenant, conversation or ""]
    if where.memory_type:
        sql += " AND memory_type = ?"
        params.append(where.memory_type)
    if where.tags:
        starts = _tags_start(where.tags)
        if starts:  # a substring test first: json_each then reads only the rows that may match
            sql += " AND (" + " OR ".join("instr(tags, ?) > 0" for _ in starts) + ")"
            params.extend(starts)
        sql += f" AND EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE json_each.value IN ({_placeholders(len(where.tags))}))"
        params.extend(where.tags)
    # createdAt is stored as the service writes it (ISO, UTC, milliseconds, Z), so text order is
    # time order; `where.matches` checks each row again on its parsed time.
    if where.span.since is not None:
        sql += " AND created_at >= ?"
        params.append(where.span.since_iso)
    if where.span.until is not None:
        sql += " AND created_at <= ?"
        params.append(where.span.until_iso)
    return sql, params


def _bump_generation(conn: sqlite3.Connection, tenant: str) -> int:
    """Inside a write transaction: the tenant's next generation (caches compare against it)."""
    conn.execute(
        "INSERT INTO tenants (tenant, generation, purged) VALUES (?, 1, 0) "
        "ON CONFLICT (tenant) DO UPDATE SET generation = generation + 1",
        (tenant,),
    )
    (generation,) = conn.execute("SELECT generation FROM tenants WHERE tenant = ?", (tenant,)).fetchone()
    return int(generation)


def _record_deletes(conn: sqlite3.Connection, tenant: str, ids: Sequence[str]) -> None:
    """Inside a write transaction: the next generation, with these ids listed as deleted at it
    (caches hide their rows when they catch up). Beyond KEPT_DELETES listed ids the list is
    emptied and `purged` moves: caches older than that read the tenant again."""
    generation = _bump_generation(conn, tenant)
    conn.executemany(
        "INSERT INTO deleted (tenant, id, rev) VALUES (?, ?, ?) ON CONFLICT (tenant, id) DO UPDATE SET rev = excluded.rev",
        [(tenant, memory_id, generation) for memory_id in ids],
    )
    (listed,) = conn.execute("SELECT count(*) FROM deleted WHERE tenant = ?", (tenant,)).fetchone()
    if listed > KEPT_DELETES:
        conn.execute("DELETE FROM deleted WHERE tenant = ?", (tenant,))
        conn.execute("UPDATE tenants SET purged = generation WHERE tenant = ?", (tenant,))


def _memory(row: tuple[Any, ...], tenant: str) -> Memory | None:
    """A row read back through the shared tolerant codec; None for another tenant's or a broken row."""
    (row_tenant, memory_id, content, memory_type, category, tags, created_at, scope, conversation, trust) = row
    try:
        tag_list = json.loads(tags) if isinstance(tags, str) else None
    except ValueError:
        tag_list = None
    metadata = {
        "tenantId": row_tenant,
        "memoryType": memory_type,
        "category": category,
        "scope": scope,
        "conversation": conversation,
        "content": content,
        "createdAt": created_at,
        "tags": tag_list,
        "trustBase": trust,
    }
    return from_metadata(memory_id, metadata, tenant)


def _fetch(conn: sqlite3.Connection, tenant: str, ids: Sequence[str]) -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    for chunk in _chunks(ids):
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE tenant = ? AND id IN ({_placeholders(len(chunk))})",
            (tenant, *chunk),
        ).fetchall()
        for row in rows:
            memory = _memory(row, tenant)
            if memory is not None:
                found[memory.id] = memory
    return found


def _cosines(conn: sqlite3.Connection, tenant: str, vector: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
    """The dot product of `vector` with each of these memories' stored embeddings (primary-key
    reads: a few dozen rows cost less than finding them among 100,000 cached ones)."""
    import numpy as np

    out: dict[str, float] = {}
    for chunk in _chunks(ids):
        for memory_id, blob in conn.execute(
            f"SELECT id, embedding FROM memories WHERE tenant = ? AND id IN ({_placeholders(len(chunk))})",
            (tenant, *chunk),
        ):
            if isinstance(blob, bytes) and len(blob) == 4 * len(vector):
                out[memory_id] = float(np.dot(np.frombuffer(blob, dtype="<f4"), vector))
    return out


class SqliteVectorStore(VectorStore):
    """Memories in real columns, exact cosine search through the in-process cache."""

    def __init__(self, db: SqliteDatabase, dim: int, approximate_min_memories: int = 0) -> None:
        self._db = db
        self._dim = dim
        self._cache_instance: VectorCache | None = None
        self._approximate_min = approximate_min_memories
        self._indexes_instance: Indexes | None = None
        self._rows = RowCache()
        self._tagged_instance: TaggedRows | None = None
        self._locks = TenantLocks(db.lock_dir)
        self._searches: Batcher[tuple[str, np.ndarray, int, str | None], list[Hit]] = Batcher(
            self._search, SEARCH_BATCH, parallel=min(2, os.cpu_count() or 1)
        )
        self._closed = False

    @property
    def _cache(self) -> VectorCache:
        if self._cache_instance is None:
            from mcp_memory.stores.sqlite import sidecar
            from mcp_memory.stores.sqlite.vectors import VectorCache

            files = self._db.path.with_name(self._db.path.name + ".vectors")
            self._cache_instance = VectorCache(self._dim, sidecars=sidecar.Sidecars(files, self._dim, sidecar.MIN_ROWS))
        return self._cache_instance

    @property
    def _tagged(self) -> TaggedRows:
        """The rows tag filters start from (tagged.py), made at the first filter: not before the handshake."""
        if self._tagged_instance is None:
            from mcp_memory.stores.sqlite.tagged import TaggedRows

            self._tagged_instance = TaggedRows()
        return self._tagged_instance

    @property
    def _indexes(self) -> Indexes:
        if self._indexes_instance is None:
            from mcp_memory.stores.sqlite.ann import Indexes

            files = self._db.path.with_name(self._db.path.name + ".vectors")
            self._indexes_instance = Indexes(files, self._dim, self._approximate_min)
        return self._indexes_instance

    def _vector(self, embedding: np.ndarray) -> np.ndarray:
        import numpy as np

        vector = np.asarray(embedding, dtype=np.float32)
        if vector.ndim != 1 or vector.shape[0] != self._dim:
            raise StoreError(
                f"the embedding has shape {vector.shape} but this database holds {self._dim}-dimensional embeddings"
            )
        if not np.all(np.isfinite(vector)):
            raise StoreError("the embedding contains non-finite values")
        return vector

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        await self.put_many([(memory, embedding)])

    async def put_many(self, items: Sequence[tuple[Memory, np.ndarray]]) -> None:
        """One transaction for them all (memories and their keyword index), one generation
        bump per tenant."""
        if not items:
            return
        write = self._writer(items)
        await self._db.write(write, "put memory" if len(items) == 1 else "put memories")

    async def put_with_index(self, memory: Memory, embedding: np.ndarray, objects: ObjectStore, key: str) -> None:
        """The memory and its index entry in one transaction when `objects` lives in this same
        database file, so one commit, one sync under synchronous=FULL, makes both durable;
        written one after the other into any other object store."""
        if not (isinstance(objects, SqliteObjectStore) and objects._db is self._db):
            await super().put_with_index(memory, embedding, objects, key)
            return
        write_memory = self._writer([(memory, embedding)])

        def write(conn: sqlite3.Connection) -> None:
            write_memory(conn)
            _put_object(conn, key, "")

        await self._db.write(write, "put memory")

    def _writer(self, items: Sequence[tuple[Memory, np.ndarray]]) -> Callable[[sqlite3.Connection], None]:
        """Check every budget now; the returned function writes them inside a write transaction."""
        rows = []
        for memory, embedding in items:
            assert_within_metadata_budget(memory)
            rows.append(
                (
                    memory.tenant,
                    memory.id,
                    memory.content,
                    memory.memory_type,
                    memory.category or None,
                    json.dumps(list(memory.tags), ensure_ascii=False),
                    memory.created_at,
                    "conversation" if memory.scope == "conversation" else "project",
                    memory.conversation or None,
                    float(memory.trust_base),
                    self._vector(embedding).astype("<f4").tobytes(),
                )
            )

        def write(conn: sqlite3.Connection) -> None:
            revs = {tenant: _bump_generation(conn, tenant) for tenant in dict.fromkeys(r[0] for r in rows)}
            conn.executemany(
                f"INSERT INTO memories ({_COLUMNS}, embedding, rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant, id) DO UPDATE SET content = excluded.content, "
                "memory_type = excluded.memory_type, category = excluded.category, tags = excluded.tags, "
                "created_at = excluded.created_at, scope = excluded.scope, "
                "conversation = excluded.conversation, trust_base = excluded.trust_base, "
                "embedding = excluded.embedding, rev = excluded.rev",
                [(*row, revs[row[0]]) for row in rows],
            )
            for memory, _ in items:  # a repeated id replaces its entry (keywords.write)
                visibility = keywords.visibility_key(memory.scope, memory.conversation or None)
                keywords.write(conn, memory.tenant, memory.id, memory.content, visibility)

        return write

    async def scan(self, tenant: str, batch: int = SCAN_BATCH) -> AsyncIterator[list[tuple[Memory, np.ndarray]]]:
        """Pages in id order, each read in its own short transaction (keyset paging)."""
        import numpy as np

        size = max(1, batch)
        after = ""
        while True:

            def read(conn: sqlite3.Connection, after: str = after) -> list[tuple[Any, ...]]:
                return conn.execute(
                    f"SELECT {_COLUMNS}, embedding FROM memories WHERE tenant = ? AND id > ? ORDER BY id LIMIT ?",
                    (tenant, after, size),
                ).fetchall()

            rows = await self._db.read(read, "scan memories")
            page = []
            for row in rows:
                memory = _memory(row[:-1], tenant)
                blob = row[-1]
                if memory is not None and isinstance(blob, bytes) and len(blob) == 4 * self._dim:
                    page.append((memory, np.frombuffer(blob, dtype="<f4").astype(np.float32)))
            if page:
                yield page
            if len(rows) < size:
                return
            after = rows[-1][1]

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """Nearest visible memories: visibility is a mask applied before the top-k (docs/memories.md).

        Queries that arrive while others are being searched are searched together
        (runtime/batching.py): one pass over a tenant's embeddings for all of them.
        """
        vector = self._vector(embedding)
        if top_k <= 0:
            return []
        return await self._searches.submit((tenant, vector, top_k, conversation))

    async def _search(self, batch: list[tuple[str, np.ndarray, int, str | None]]) -> list[list[Hit]]:
        from mcp_memory.stores.sqlite.vectors import rerank

        def read(conn: sqlite3.Connection) -> list[list[Hit]]:
            answers: list[list[Hit]] = [[] for _ in batch]
            by_tenant: dict[str, list[int]] = {}
            for i, (tenant, _, _, _) in enumerate(batch):
                by_tenant.setdefault(tenant, []).append(i)
            for tenant, positions in by_tenant.items():
                snapshot = self._cache.current(conn, tenant)
                candidates = snapshot.nearest_many([batch[i][1:] for i in positions])
                nearest = [
                    rerank(near, partial(_cosines, conn, tenant, batch[i][1]), batch[i][2])
                    for i, near in zip(positions, candidates)
                ]
                memories = self._read_rows(
                    conn,
                    tenant,
                    (snapshot.generation, snapshot.purged),
                    [memory_id for near in nearest for memory_id, _ in near],
                )
                for i, near in zip(positions, nearest):
                    conversation = batch[i][3]
                    answers[i] = [
                        Hit(memories[memory_id], similarity)
                        for memory_id, similarity in near
                        if memory_id in memories and memories[memory_id].visible_to(conversation)
                    ]
            return answers

        return await self._db.read(read, "query")

    async def near(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """`query` for remember's duplicate check: on a tenant of `approximate_min_memories` or
        more, its candidates come from the approximate index once it is ready (ann.py), scored
        exactly like `query`'s; the exact scan answers while it is not, or when visibility leaves
        too few of its hits."""
        vector = self._vector(embedding)
        if top_k <= 0:
            return []
        if self._approximate_min <= 0:
            return await self.query(tenant, vector, top_k, conversation)
        from mcp_memory.stores.sqlite.vectors import rerank

        def read(conn: sqlite3.Connection) -> list[Hit] | None:
            snapshot = self._cache.current(conn, tenant)
            candidates = self._indexes.candidates(conn, tenant, snapshot, vector, top_k, conversation)
            if candidates is None:
                return None
            nearest = rerank(candidates, partial(_cosines, conn, tenant, vector), top_k)
            memories = self._read_rows(conn, tenant, (snapshot.generation, snapshot.purged), [i for i, _ in nearest])
            return [
                Hit(memories[i], similarity)
                for i, similarity in nearest
                if i in memories and memories[i].visible_to(conversation)
            ]

        hits = await self._db.read(read, "near query")
        if hits is None:  # the exact scan, batched with the searches that arrive with it, as `query`'s are
            return await self.query(tenant, vector, top_k, conversation)
        return hits

    async def vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """These ids' embeddings as stored (float32; primary-key reads)."""
        import numpy as np

        def read(conn: sqlite3.Connection) -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            for chunk in _chunks(ids):
                for memory_id, blob in conn.execute(
                    f"SELECT id, embedding FROM memories WHERE tenant = ? AND id IN ({_placeholders(len(chunk))})",
                    (tenant, *chunk),
                ):
                    if isinstance(blob, bytes) and len(blob) == 4 * self._dim:
                        out[memory_id] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
            return out

        return await self._db.read(read, "vectors")

    async def filtered_query(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter
    ) -> FilteredHits:
        """`query` over the rows SQL selects for `where` (type, any of the tags, visibility):
        the filter applies before the limit; the vector cache's scan scores choose the candidates
        and the stored embeddings score them exactly (stores/sqlite/vectors.py)."""
        from mcp_memory.stores.sqlite.vectors import within

        vector = self._vector(embedding)
        if top_k <= 0:
            return FilteredHits([])

        def read(conn: sqlite3.Connection) -> FilteredHits:
            snapshot = self._cache.current(conn, tenant)
            ids = self._filtered_ids(conn, tenant, conversation, where, (snapshot.generation, snapshot.purged))
            candidates = within(snapshot.similarities(vector, ids), top_k, snapshot.slack(vector))
            cosines = _cosines(conn, tenant, vector, candidates)
            nearest = sorted(cosines, key=lambda i: cosines[i], reverse=True)[:top_k]
            memories = self._read_rows(conn, tenant, (snapshot.generation, snapshot.purged), nearest)
            return FilteredHits(
                [
                    Hit(memories[i], cosines[i])
                    for i in nearest
                    if i in memories and memories[i].visible_to(conversation) and where.matches(memories[i])
                ]
            )

        return await self._db.read(read, "filtered query")

    def _filtered_ids(
        self,
        conn: sqlite3.Connection,
        tenant: str,
        conversation: str | None,
        where: MemoryFilter,
        version: tuple[int, int],
    ) -> list[str]:
        """The ids `_filter_sql` selects; for a tag filter, from the rows holding its tags' common
        start at this version (tagged.py: a tool hook's `path:` tags, read once per write)."""
        from mcp_memory.stores.sqlite.tagged import matching

        starts = _tags_start(where.tags) if where.tags else []
        if starts:
            rows = self._tag_rows(conn, tenant, starts, version)
            ids = matching(rows, conversation, where) if rows is not None else None
            if ids is not None:
                return ids
        sql, params = _filter_sql(tenant, conversation, where)
        return [row[0] for row in conn.execute(sql, params)]

    def _tag_rows(
        self, conn: sqlite3.Connection, tenant: str, starts: Sequence[str], version: tuple[int, int]
    ) -> list[Row] | None:
        """The rows whose tags hold one of `starts` at this version, kept or read (tagged.py)."""
        from mcp_memory.stores.sqlite.tagged import COLUMNS

        conditions = " OR ".join("instr(tags, ?) > 0" for _ in starts)
        sql = f"SELECT {COLUMNS} FROM memories WHERE tenant = ? AND ({conditions})"
        limit = self._tagged.rows_max + 1
        return self._tagged.rows(tenant, starts, version, lambda: conn.execute(sql, (tenant, *starts)).fetchmany(limit))

    def _read_rows(
        self, conn: sqlite3.Connection, tenant: str, version: tuple[int, int], ids: list[str]
    ) -> dict[str, Memory]:
        """The rows of `ids`, from the row cache where it holds them at this version (row_cache.py)."""
        memories, missing = self._rows.get_many(tenant, version, ids)
        if missing:
            fetched = _fetch(conn, tenant, missing)
            self._rows.put_many(tenant, version, fetched.values())
            memories.update(fetched)
        return memories

    async def warm(self, tenant: str) -> None:
        """Load `tenant`'s vectors into the cache now rather than at its first query."""

        def load(conn: sqlite3.Connection) -> None:
            self._cache.current(conn, tenant)

        await self._db.read(load, "load vectors")

    async def warm_tags(self, tenant: str, prefixes: Sequence[str]) -> None:
        """Read the rows a filter by tags beginning with one of `prefixes` starts from, at the
        tenant's version now (tagged.py): serve-stdio's first file question then reads none."""

        def load(conn: sqlite3.Connection) -> None:
            row = conn.execute("SELECT generation, purged FROM tenants WHERE tenant = ?", (tenant,)).fetchone()
            version = (int(row[0]), int(row[1])) if row else (0, 0)  # the version its snapshot has (vectors.py)
            for prefix in prefixes:
                starts = _tags_start([prefix])
                if starts:
                    self._tag_rows(conn, tenant, starts, version)

        await self._db.read(load, "read tagged rows")

    async def keyword_query(
        self, tenant: str, embedding: np.ndarray, terms: Sequence[str], top_k: int, conversation: str | None
    ) -> KeywordAnswer:
        """Memories holding the query's rarer terms, from the FTS5 index (stores/sqlite/keywords.py),
        each with its cosine; document counts are the tenant's own."""
        vector = self._vector(embedding)

        def read(conn: sqlite3.Connection) -> KeywordAnswer:
            index = keywords.Index(conn, tenant, terms)
            ids = index.search(index.stats.searchable(terms), top_k, conversation)
            if not ids:
                return KeywordAnswer([], index.stats)
            snapshot = self._cache.current(conn, tenant)
            memories = self._read_rows(conn, tenant, (snapshot.generation, snapshot.purged), ids)
            cosines = _cosines(conn, tenant, vector, ids)
            hits = [
                Hit(memories[i], cosines.get(i, 0.0))
                for i in ids
                if i in memories and memories[i].visible_to(conversation)
            ]
            return KeywordAnswer(hits, index.stats)

        return await self._db.read(read, "keyword query")

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        found = await self._db.read(lambda conn: _fetch(conn, tenant, ids), "get memories")
        return [found[memory_id] for memory_id in dict.fromkeys(ids) if memory_id in found]

    async def same_text(self, tenant: str, contents: Sequence[str]) -> list[Memory]:
        """Through the `memories_by_text` index (db.py), 500 texts a statement."""

        def read(conn: sqlite3.Connection) -> list[Memory]:
            found: list[Memory] = []
            for chunk in _chunks(contents):
                rows = conn.execute(
                    f"SELECT {_COLUMNS} FROM memories WHERE tenant = ? AND content IN ({_placeholders(len(chunk))})",
                    (tenant, *chunk),
                ).fetchall()
                found.extend(m for m in (_memory(row, tenant) for row in rows) if m is not None)
            return found

        if not contents:
            return []
        return await self._db.read(read, "find memories by text")

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        if not ids:
            return

        def write(conn: sqlite3.Connection) -> None:
            gone: list[str] = []
            for chunk in _chunks(ids):
                gone += [
                    row[0]
                    for row in conn.execute(
                        f"SELECT id FROM memories WHERE tenant = ? AND id IN ({_placeholders(len(chunk))})",
                        (tenant, *chunk),
                    )
                ]
                conn.execute(
                    f"DELETE FROM memories WHERE tenant = ? AND id IN ({_placeholders(len(chunk))})",
                    (tenant, *chunk),
                )
                keywords.remove(conn, tenant, chunk)
            if gone:
                _record_deletes(conn, tenant, gone)

        await self._db.write(write, "delete memories")

    @asynccontextmanager
    async def exclusive(self, tenant: str) -> AsyncIterator[None]:
        """Serialise a check-then-insert for `tenant` across tasks and processes.

        Not re-entrant. The store's own reads and writes inside the block do not
        take this lock, so they cannot deadlock with it.
        """
        async with self._locks.hold(tenant):
            yield

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._indexes_instance is not None:
                self._indexes_instance.close()
            if self._cache_instance is not None:
                self._cache_instance.clear()
            self._rows.clear()
            await self._db.release()


def _put_object(conn: sqlite3.Connection, key: str, body: str) -> str:
    """Inside a write transaction: `key` holds `body` with the next ETag, which is returned."""
    conn.execute("UPDATE etag_sequence SET value = value + 1 WHERE id = 1")
    (etag,) = conn.execute("SELECT value FROM etag_sequence WHERE id = 1").fetchone()
    conn.execute(
        "INSERT INTO objects (key, body, etag) VALUES (?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET body = excluded.body, etag = excluded.etag",
        (key, body, etag),
    )
    return str(etag)


class SqliteObjectStore(ObjectStore):
    """Keys to bodies with ETags from a sequence that never repeats; byte-ordered listing."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        self._closed = False

    async def get(self, key: str) -> StoredObject | None:
        def read(conn: sqlite3.Connection) -> StoredObject | None:
            row = conn.execute("SELECT body, etag FROM objects WHERE key = ?", (key,)).fetchone()
            return StoredObject(row[0], str(row[1])) if row else None

        return await self._db.read(read, "get object")

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        def write(conn: sqlite3.Connection) -> str:
            row = conn.execute("SELECT etag FROM objects WHERE key = ?", (key,)).fetchone()
            if if_none_match and row is not None:
                raise PreconditionFailed(f"conditional write did not apply for {key}")
            if if_match is not None and (row is None or str(row[0]) != if_match):
                raise PreconditionFailed(f"conditional write did not apply for {key}")
            return _put_object(conn, key, body)

        return await self._db.write(write, "put object")

    async def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        """Unconditional writes in one transaction, each with an ETag of its own."""
        if not items:
            return

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE etag_sequence SET value = value + ? WHERE id = 1", (len(items),))
            (last,) = conn.execute("SELECT value FROM etag_sequence WHERE id = 1").fetchone()
            first = int(last) - len(items) + 1
            conn.executemany(
                "INSERT INTO objects (key, body, etag) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET body = excluded.body, etag = excluded.etag",
                [(key, body, first + i) for i, (key, body) in enumerate(items)],
            )

        await self._db.write(write, "put objects")

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        """Literal prefix as a key range (no LIKE: `_` and `%` occur in keys), BINARY = byte order."""
        if limit <= 0:
            return []
        clauses, params = ["key > ?"], [start_after or ""]
        if prefix:
            clauses.append("key >= ?")
            params.append(prefix)
            upper = prefix_upper_bound(prefix)
            if upper is not None:
                clauses.append("key < ?")
                params.append(upper)
        sql = f"SELECT key FROM objects WHERE {' AND '.join(clauses)} ORDER BY key LIMIT ?"

        def read(conn: sqlite3.Connection) -> list[str]:
            return [row[0] for row in conn.execute(sql, (*params, limit))]

        return await self._db.read(read, "list objects")

    async def delete(self, keys: Sequence[str]) -> None:
        if not keys:
            return

        def write(conn: sqlite3.Connection) -> None:
            for chunk in _chunks(keys):
                conn.execute(f"DELETE FROM objects WHERE key IN ({_placeholders(len(chunk))})", chunk)

        await self._db.write(write, "delete objects")

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._db.release()


def prefix_upper_bound(prefix: str) -> str | None:
    """The least string greater than every string starting with `prefix` (in code point,
    hence UTF-8 byte, order); None when there is none (a prefix of only U+10FFFF)."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        if last == 0x10FFFF:
            continue
        following = last + 1
        if 0xD800 <= following <= 0xDFFF:  # surrogates cannot be stored; skip past them
            following = 0xE000
        return "".join(chars) + chr(following)
    return None
