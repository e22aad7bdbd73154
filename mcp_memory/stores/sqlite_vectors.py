"""The in-process vector cache behind SqliteVectorStore.query.

Why: reading 100,000 embeddings out of SQLite costs far more than searching
them, so each process keeps, per tenant, the ids, a visibility code and the
embedding matrix in memory, and answers a query with one matrix-vector product
and `np.argpartition`.

Staying correct when other processes write: every put/delete bumps the
tenant's `generation` in the same transaction (a delete also records it as
`purged`). A query first reads that row; when it moved, the cache fetches only
the rows written since (`rev > generation`, indexed), or reloads the tenant when
something was deleted. Snapshots are immutable views: a refresh that only
appends reuses the buffers beyond the old snapshot's length; anything else
copies. So a query never needs a lock while it computes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

#: Visibility code of a project-scope row (visible to every request).
PROJECT = -1
#: Code of a conversation-scoped row without a conversation (visible to nobody).
NOBODY = -2
#: Evict least-recently-used tenants beyond this many bytes of cached embeddings.
DEFAULT_CACHE_BYTES = 1 << 30

_ROW = "id, scope, conversation, embedding"
#: Rows decoded at a time when a tenant is loaded (about 6 MB of embeddings).
_CHUNK_ROWS = 4096


@dataclass(frozen=True, slots=True)
class TenantVectors:
    """One tenant's searchable rows at one generation. Rows `[:n]` of the buffers are ours."""

    generation: int
    purged: int
    n: int
    ids: list[str]
    codes: np.ndarray  # int32 visibility codes
    matrix: np.ndarray  # float32 (capacity, dim)
    index: dict[str, int] = field(repr=False)
    conversations: dict[str, int] = field(repr=False)

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    def nearest(self, query: np.ndarray, top_k: int, conversation: str | None) -> list[tuple[str, float]]:
        """The `top_k` visible rows nearest `query` as (id, dot product); visibility before the limit."""
        if top_k <= 0 or self.n == 0:
            return []
        codes = self.codes[: self.n]
        visible = codes == PROJECT
        code = self.conversations.get(conversation) if conversation else None
        if code is not None:
            visible |= codes == code
        count = int(np.count_nonzero(visible))
        if count == 0:
            return []
        scores = self.matrix[: self.n] @ query
        if count < self.n:
            np.putmask(scores, ~visible, -np.inf)
        k = min(top_k, count)
        if k < self.n:
            chosen = np.argpartition(scores, self.n - k)[self.n - k :]
        else:
            chosen = np.arange(self.n)
        return [(self.ids[i], float(scores[i])) for i in chosen.tolist()]


def empty(dim: int) -> TenantVectors:
    return TenantVectors(0, 0, 0, [], np.empty(0, np.int32), np.empty((0, dim), np.float32), {}, {})


def _code(scope: str, conversation: str | None, conversations: dict[str, int]) -> int:
    if scope != "conversation":
        return PROJECT
    if not conversation:
        return NOBODY
    return conversations.setdefault(conversation, len(conversations))


def _decode(blobs: list[bytes], dim: int) -> np.ndarray:
    """One join and one frombuffer for the whole batch (no per-row numpy work)."""
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)


def _usable(rows: list[tuple], dim: int) -> list[tuple]:
    """Rows whose embedding has the database's dimension (others are unsearchable, not fatal)."""
    width = dim * 4
    return [row for row in rows if isinstance(row[3], bytes) and len(row[3]) == width]


def capacity_for(n: int) -> int:
    """Rows to allocate for `n`: a little room to grow in place (a copy of the matrix
    every n/16 appends is cheap; a quarter more memory per tenant is not)."""
    return max(16, n + n // 16)


def build(chunks: Iterable[list[tuple]], count: int, generation: int, purged: int, dim: int) -> TenantVectors:
    """A snapshot from scratch, from the tenant's rows in chunks (`count` of them expected).

    Decoded chunk by chunk into a matrix allocated once: the rows' blobs are never all
    in memory at the same time as the matrix (at 100,000 memories that would double
    the peak, and the freed blobs stay in the heap as resident memory).
    """
    conversations: dict[str, int] = {}
    ids: list[str] = []
    codes = np.empty(capacity_for(count), np.int32)
    matrix = np.empty((len(codes), dim), np.float32)
    n = 0
    for chunk in chunks:
        rows = _usable(chunk, dim)
        if n + len(rows) > len(codes):  # more rows than counted: grow (copies)
            codes = np.concatenate([codes[:n], np.empty(capacity_for(n + len(rows)) - n, np.int32)])
            matrix = np.concatenate([matrix[:n], np.empty((len(codes) - n, dim), np.float32)])
        if rows:
            codes[n : n + len(rows)] = [_code(row[1], row[2], conversations) for row in rows]
            matrix[n : n + len(rows)] = _decode([row[3] for row in rows], dim)
            ids.extend(row[0] for row in rows)
            n += len(rows)
    index = {memory_id: i for i, memory_id in enumerate(ids)}
    return TenantVectors(generation, purged, n, ids, codes, matrix, index, conversations)


def extend(old: TenantVectors, rows: list[tuple], generation: int, dim: int) -> TenantVectors:
    """`old` plus rows written since: appended in place when only new ids arrived, else copied."""
    rows = _usable(rows, dim)
    fresh = [row for row in rows if row[0] not in old.index]
    replaced = [row for row in rows if row[0] in old.index]
    n = old.n + len(fresh)
    ids, codes, matrix, index = old.ids, old.codes, old.matrix, old.index
    if replaced or n > len(codes) or len(ids) != old.n:
        # Copy: never change rows an older snapshot can still see.
        capacity = max(len(codes), capacity_for(n))
        ids = list(ids[: old.n])
        codes = np.empty(capacity, np.int32)
        codes[: old.n] = old.codes[: old.n]
        matrix = np.empty((capacity, dim), np.float32)
        matrix[: old.n] = old.matrix[: old.n]
        index = {memory_id: i for i, memory_id in enumerate(ids)}
    conversations = old.conversations
    for row in replaced:
        i = index[row[0]]
        codes[i] = _code(row[1], row[2], conversations)
        matrix[i] = _decode([row[3]], dim)[0]
    if fresh:
        codes[old.n : n] = [_code(row[1], row[2], conversations) for row in fresh]
        matrix[old.n : n] = _decode([row[3] for row in fresh], dim)
        for offset, row in enumerate(fresh):
            ids.append(row[0])
            index[row[0]] = old.n + offset
    return TenantVectors(generation, old.purged, n, ids, codes, matrix, index, conversations)


class VectorCache:
    """Per-tenant snapshots, refreshed against the database's generation counters."""

    def __init__(self, dim: int, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.dim = dim
        self.max_bytes = max_bytes
        self._tenants: OrderedDict[str, TenantVectors] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def current(self, conn: sqlite3.Connection, tenant: str) -> TenantVectors:
        """On a worker thread, inside a read transaction: the tenant's up-to-date snapshot."""
        with self._guard:
            lock = self._locks.setdefault(tenant, threading.Lock())
        with lock:
            fresh = self._refresh(conn, tenant)
            with self._guard:
                self._tenants[tenant] = fresh
                self._tenants.move_to_end(tenant)
                self._evict(keep=tenant)
            return fresh

    def _refresh(self, conn: sqlite3.Connection, tenant: str) -> TenantVectors:
        with self._guard:
            cached = self._tenants.get(tenant)
        row = conn.execute("SELECT generation, purged FROM tenants WHERE tenant = ?", (tenant,)).fetchone()
        generation, purged = row if row else (0, 0)
        if cached is not None and cached.generation == generation and cached.purged == purged:
            return cached
        if cached is None or cached.purged != purged or cached.generation > generation:
            # Drop the old snapshot first: at 100,000 memories it is 150 MB that the new
            # one would otherwise sit beside while it is built (queries in flight keep theirs).
            with self._guard:
                self._tenants.pop(tenant, None)
            del cached
            (count,) = conn.execute("SELECT count(*) FROM memories WHERE tenant = ?", (tenant,)).fetchone()
            cursor = conn.execute(f"SELECT {_ROW} FROM memories WHERE tenant = ?", (tenant,))
            return build(iter(lambda: cursor.fetchmany(_CHUNK_ROWS), []), count, generation, purged, self.dim)
        rows = conn.execute(
            f"SELECT {_ROW} FROM memories WHERE tenant = ? AND rev > ?", (tenant, cached.generation)
        ).fetchall()
        return extend(cached, rows, generation, self.dim)

    def _evict(self, keep: str) -> None:
        total = sum(snapshot.nbytes for snapshot in self._tenants.values())
        for tenant in list(self._tenants):
            if total <= self.max_bytes:
                break
            if tenant != keep:
                total -= self._tenants.pop(tenant).nbytes

    def clear(self) -> None:
        with self._guard:
            self._tenants.clear()
