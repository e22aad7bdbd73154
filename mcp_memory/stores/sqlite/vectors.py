"""The in-process vector cache behind SqliteVectorStore.query.

Why: reading 100,000 embeddings out of SQLite costs far more than searching
them, so each process keeps, per tenant, the ids, a visibility code and the
embeddings in memory, and answers a query with matrix-vector products and
`np.argpartition`.

Staying correct when other processes write: every put/delete bumps the
tenant's `generation` in the same transaction (a delete also records it as
`purged`). A query first reads that row; when it moved, the cache fetches only
the rows written since (`rev > generation`, indexed), or reloads the tenant when
something was deleted. Snapshots are immutable views: a refresh that only
appends writes beyond the old snapshot's length; anything else copies what it
changes. So a query never needs a lock while it computes.

Memory (at 100,000 memories the embeddings alone are 154 MB): the embeddings
live in blocks of BLOCK_ROWS rows, so a tenant holds at most one partly used
block of spare room, and growing never copies the whole matrix (nor holds two
of them at once). Ids are kept as one array of UTF-8 bytes and matched through
an array of their hashes: a list of 100,000 str plus a dict from id to row
costs about 15 MB, these about 4 MB.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from mcp_memory.runtime import blas, heap

#: Visibility code of a project-scope row (visible to every request).
PROJECT = -1
#: Code of a conversation-scoped row without a conversation (visible to nobody).
NOBODY = -2
#: Evict least-recently-used tenants beyond this many bytes of cached embeddings.
DEFAULT_CACHE_BYTES = 1 << 30
#: Rows per embedding block (6 MB at 384 dimensions); also the rows decoded at a time on a load.
BLOCK_ROWS = 4096

#: Tenants of at least this many blocks have their scans split in two (see `_multiply`).
SPLIT_BLOCKS = 4

_ROW = "id, scope, conversation, embedding"
#: Held while the scan helper thread works for one search; others scan alone meanwhile.
_helper = threading.Lock()


@functools.cache
def _helper_thread() -> ThreadPoolExecutor:
    """One thread that takes half of a large scan (created at the first large one)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-memory-scan")


@dataclass(frozen=True, slots=True)
class TenantVectors:
    """One tenant's searchable rows at one generation. Rows `[:n]` of the buffers are ours:
    row i is `blocks[i // BLOCK_ROWS][i % BLOCK_ROWS]`."""

    generation: int
    purged: int
    n: int
    ids: np.ndarray  # bytes: each id's UTF-8 and b"\xff" (never in UTF-8; keeps NULs at the end)
    hashes: np.ndarray  # int64 hash(id) per row
    codes: np.ndarray  # int32 visibility codes
    blocks: tuple[np.ndarray, ...]  # float32 (≤ BLOCK_ROWS, dim); all but the last are full
    conversations: dict[str, int] = field(repr=False)
    #: Rows written into these buffers so far, shared by the snapshots that share them.
    tip: list[int] = field(repr=False, default_factory=lambda: [0])

    def id(self, row: int) -> str:
        return bytes(self.ids[row])[:-1].decode("utf-8")

    @property
    def nbytes(self) -> int:
        return sum(int(block.nbytes) for block in self.blocks)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """The dot product of every row with `query` (float32, length n)."""
        out = np.empty(self.n, np.float32)
        self._multiply(query, out)
        return out

    def scores_many(self, queries: np.ndarray) -> np.ndarray:
        """Every row's dot product with each of `queries` (k × dim): an (n, k) float32 array,
        the embeddings read once for all k. (rows × dim) @ (dim × k) per block is the fast
        shape for OpenBLAS: at 100,000 rows, 16 queries take 43 ms against 272 ms one by one.)"""
        out = np.empty((self.n, len(queries)), np.float32)
        self._multiply(np.ascontiguousarray(queries.T), out)
        return out

    def _multiply(self, operand: np.ndarray, out: np.ndarray) -> None:
        """`out[start:stop] = block @ operand` for every block. A large tenant's blocks are
        shared with the scan helper thread when it is free: numpy's BLAS runs one thread
        (blas.py), so this is how a lone search still uses two cores' memory bandwidth
        (at 100,000 rows about 8 ms instead of 16)."""
        spans = [(start, min(self.n, start + BLOCK_ROWS)) for start in range(0, self.n, BLOCK_ROWS)]

        def run(part: list[tuple[int, int]]) -> None:
            for start, stop in part:
                np.matmul(self.blocks[start // BLOCK_ROWS][: stop - start], operand, out=out[start:stop])

        if len(spans) < SPLIT_BLOCKS or not _helper.acquire(blocking=False):
            run(spans)
            return
        try:
            half = len(spans) // 2
            other = _helper_thread().submit(run, spans[half:])
            run(spans[:half])
            other.result()
        finally:
            _helper.release()

    def nearest(self, query: np.ndarray, top_k: int, conversation: str | None) -> list[tuple[str, float]]:
        """The `top_k` visible rows nearest `query` as (id, dot product); visibility before the limit."""
        if top_k <= 0 or self.n == 0:
            return []
        return self._top(self.scores(query), top_k, conversation)

    def nearest_many(self, queries: list[tuple[np.ndarray, int, str | None]]) -> list[list[tuple[str, float]]]:
        """`nearest` for several (query, top_k, conversation) at once, with one pass over the rows."""
        if len(queries) == 1 or self.n == 0:
            return [self.nearest(*query) for query in queries]
        scores = self.scores_many(np.stack([vector for vector, _, _ in queries]))
        return [
            self._top(np.ascontiguousarray(scores[:, i]), top_k, conversation) if top_k > 0 else []
            for i, (_, top_k, conversation) in enumerate(queries)
        ]

    def _top(self, scores: np.ndarray, top_k: int, conversation: str | None) -> list[tuple[str, float]]:
        codes = self.codes[: self.n]
        visible = codes == PROJECT
        code = self.conversations.get(conversation) if conversation else None
        if code is not None:
            visible |= codes == code
        count = int(np.count_nonzero(visible))
        if count == 0:
            return []
        if count < self.n:
            np.putmask(scores, ~visible, -np.inf)
        k = min(top_k, count)
        if k < self.n:
            chosen = np.argpartition(scores, self.n - k)[self.n - k :]
        else:
            chosen = np.arange(self.n)
        return [(self.id(i), float(scores[i])) for i in chosen.tolist()]

    def similarities(self, query: np.ndarray, memory_ids: Sequence[str]) -> dict[str, float]:
        """The dot product of `query` with each of these ids' rows (ids not held are left out)."""
        out: dict[str, float] = {}
        for memory_id, row in zip(memory_ids, self.find(memory_ids)):
            if row is not None:
                out[memory_id] = float(np.dot(self.blocks[row // BLOCK_ROWS][row % BLOCK_ROWS], query))
        return out

    def rows(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """These ids' embeddings (copies; ids not held are left out)."""
        return {
            memory_id: self.blocks[row // BLOCK_ROWS][row % BLOCK_ROWS].copy()
            for memory_id, row in zip(memory_ids, self.find(memory_ids))
            if row is not None
        }

    def find(self, memory_ids: Sequence[str]) -> list[int | None]:
        """The row of each id, None for ids this snapshot does not hold."""
        if not memory_ids or self.n == 0:
            return [None] * len(memory_ids)
        wanted = np.fromiter((hash(i) for i in memory_ids), np.int64, len(memory_ids))
        held = self.hashes[: self.n]
        maybe = np.isin(wanted, held) if len(memory_ids) > 8 else [bool((held == h).any()) for h in wanted]
        rows: list[int | None] = []
        for memory_id, h, present in zip(memory_ids, wanted, maybe):
            found = None
            if present:  # equal hashes: compare the ids themselves
                found = next((int(i) for i in np.flatnonzero(held == h) if self.id(int(i)) == memory_id), None)
            rows.append(found)
        return rows


def empty(dim: int) -> TenantVectors:
    return TenantVectors(0, 0, 0, np.empty(0, "S1"), np.empty(0, np.int64), np.empty(0, np.int32), (), {})


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


def _grown(array: np.ndarray, used: int, needed: int, dtype: np.dtype | None = None) -> np.ndarray:
    """`array` if it has room for `needed` entries (of `dtype`), else a copy of its first
    `used` with room."""
    dtype = np.dtype(dtype or array.dtype)
    if needed <= len(array) and dtype == array.dtype:
        return array
    bigger = np.empty(max(16, needed + needed // 4), dtype)
    bigger[:used] = array[:used]
    return bigger


class _Rows:
    """Mutable buffers for building the next snapshot: appends go after row `n`."""

    def __init__(self, old: TenantVectors, dim: int, *, fresh_buffers: bool) -> None:
        self.dim = dim
        self.n = old.n
        self.ids = old.ids if not fresh_buffers else old.ids.copy()
        self.hashes = old.hashes if not fresh_buffers else old.hashes.copy()
        self.codes = old.codes if not fresh_buffers else old.codes.copy()
        self.blocks = list(old.blocks)
        self.conversations = old.conversations
        self.tip = old.tip if not fresh_buffers else [old.n]

    def append(self, rows: list[tuple], expected: int = 0) -> None:
        """Add rows at the end; the last block grows (by copy) until it is full, then new ones follow."""
        if not rows:
            return
        end = self.n + len(rows)
        encoded = [row[0].encode("utf-8") + b"\xff" for row in rows]
        width = max(self.ids.dtype.itemsize, *(len(e) for e in encoded))
        self.ids = _grown(self.ids, self.n, max(end, expected), np.dtype(f"S{width}"))
        self.ids[self.n : end] = encoded
        self.hashes = _grown(self.hashes, self.n, max(end, expected))
        self.codes = _grown(self.codes, self.n, max(end, expected))
        self.hashes[self.n : end] = np.fromiter((hash(row[0]) for row in rows), np.int64, len(rows))
        self.codes[self.n : end] = [_code(row[1], row[2], self.conversations) for row in rows]
        vectors = _decode([row[3] for row in rows], self.dim)
        done = 0
        while done < len(rows):
            at = self.n + done
            block_no, offset = divmod(at, BLOCK_ROWS)
            take = min(len(rows) - done, BLOCK_ROWS - offset)
            if block_no == len(self.blocks):  # a new block, sized to what is coming (at most full)
                size = min(BLOCK_ROWS, max(16, max(end, expected) - at))
                self.blocks.append(np.empty((size, self.dim), np.float32))
            block = self.blocks[block_no]
            if offset + take > len(block):  # the last block is too small: copy it into a bigger one
                grown = np.empty((min(BLOCK_ROWS, max(offset + take, 2 * len(block))), self.dim), np.float32)
                grown[:offset] = block[:offset]
                self.blocks[block_no] = block = grown
            block[offset : offset + take] = vectors[done : done + take]
            done += take
        self.n = self.tip[0] = end

    def replace(self, row_no: int, row: tuple) -> None:
        """Overwrite one row; its block is copied first (older snapshots keep theirs)."""
        block_no, offset = divmod(row_no, BLOCK_ROWS)
        block = self.blocks[block_no].copy()
        block[offset] = _decode([row[3]], self.dim)[0]
        self.blocks[block_no] = block
        self.codes[row_no] = _code(row[1], row[2], self.conversations)

    def snapshot(self, generation: int, purged: int) -> TenantVectors:
        return TenantVectors(
            generation,
            purged,
            self.n,
            self.ids,
            self.hashes,
            self.codes,
            tuple(self.blocks),
            self.conversations,
            self.tip,
        )


def build(chunks: Iterable[list[tuple]], count: int, generation: int, purged: int, dim: int) -> TenantVectors:
    """A snapshot from scratch, from the tenant's rows in chunks (`count` of them expected).

    Decoded chunk by chunk into blocks allocated as they fill: the rows' blobs are
    never all in memory at once (at 100,000 memories that would double the peak,
    and the freed blobs would stay in the heap as resident memory).
    """
    rows = _Rows(empty(dim), dim, fresh_buffers=False)
    for chunk in chunks:
        rows.append(_usable(chunk, dim), expected=count)
    return rows.snapshot(generation, purged)


def extend(old: TenantVectors, rows: list[tuple], generation: int, dim: int) -> TenantVectors:
    """`old` plus rows written since: appended in place when only new ids arrived, else copied."""
    rows = _usable(rows, dim)
    found = old.find([row[0] for row in rows])
    fresh = [row for row, at in zip(rows, found) if at is None]
    replaced = [(at, row) for row, at in zip(rows, found) if at is not None]
    # Another refresh already appended to these buffers (its snapshot is newer): copy, never overwrite.
    shared = old.tip[0] != old.n
    buffers = _Rows(old, dim, fresh_buffers=bool(replaced) or shared)
    if shared and buffers.blocks:  # the last block holds rows beyond old.n: copy it too
        buffers.blocks[-1] = buffers.blocks[-1].copy()
    for at, row in replaced:
        buffers.replace(at, row)
    buffers.append(fresh)
    return buffers.snapshot(generation, old.purged)


class VectorCache:
    """Per-tenant snapshots, refreshed against the database's generation counters."""

    def __init__(self, dim: int, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        heap.limit_growth()  # a batch of searches' scores must not stay resident after a burst
        self.dim = dim
        self.max_bytes = max_bytes
        self._tenants: OrderedDict[str, TenantVectors] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def current(self, conn: sqlite3.Connection, tenant: str) -> TenantVectors:
        """On a worker thread, inside a read transaction: the tenant's up-to-date snapshot."""
        blas.use_one_thread()
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
            snapshot = build(iter(lambda: cursor.fetchmany(BLOCK_ROWS), []), count, generation, purged, self.dim)
            if count >= BLOCK_ROWS:
                heap.trim()  # the rows' blobs, freed: about 20 MB at 100,000 memories
            return snapshot
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
