"""The in-process vector cache behind SqliteVectorStore.query.

Why: reading 1,000,000 embeddings out of SQLite costs seconds, far more than searching them, so
each process keeps, per tenant, the ids, a visibility code, each row's norm and its direction in
float16, and answers a query with one SIMD pass over them (simsimd) and `np.argpartition`.

Exact answers from a half-size scan: a float16 direction is within 2^-11 of the float32 one per
component, so the scan's score of a row is within `bound()` of its exact dot product (Cauchy-Schwarz,
with the float32 sum's own error). The scan keeps every visible row scoring at least the k-th best
minus twice that bound: the true k nearest are always among them. The store then scores those few
candidates exactly from the float32 embeddings in the database (primary-key reads) and keeps the
best k. So an answer is the exact scan's; only rows tied within the bound may come in another
order. At 1,000,000 memories of 384 dimensions the cache holds 0.77 GB instead of 1.54.

Staying correct when other processes write: every put/delete bumps the tenant's `generation` in
the same transaction (a delete also lists the ids it removed in `deleted`, at that generation).
A query first reads that row; when it moved, the cache fetches only the rows written since
(`rev > generation`, indexed) and the ids deleted since, whose rows it hides (code DEAD); it reads
the whole tenant again only when it is older than the tenant's `purged` (the deleted list was
emptied since, stores/sqlite/store.py). Snapshots are immutable views: a refresh that only appends
writes beyond the old snapshot's length; anything else copies what it changes. So a query never
needs a lock while it computes.

Opening a large tenant without reading it (stores/sqlite/sidecar.py): a full load writes the
snapshot to a file beside the database, which the next process maps instead of reading every row;
it is checked against the database (generation, count, sampled rows) and brought up to date the
same way as a snapshot in memory. The database stays the source of truth.

Memory: the directions live in blocks of BLOCK_ROWS rows, so a tenant holds at most one partly
used block of spare room, and growing never copies the whole matrix. Ids are kept as one array of
UTF-8 bytes and matched through an array of stable hashes of them.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from mcp_memory.runtime import blas, heap

if TYPE_CHECKING:
    from mcp_memory.stores.sqlite.sidecar import Sidecars

#: Visibility code of a project-scope row (visible to every request).
PROJECT = -1
#: Code of a conversation-scoped row without a conversation (visible to nobody).
NOBODY = -2
#: Code of a row deleted since the snapshot was read (visible to nobody; its id may come back).
DEAD = -3
#: Evict least-recently-used tenants beyond this many bytes of cached embeddings.
DEFAULT_CACHE_BYTES = 1 << 30
#: Rows per embedding block (3 MB at 384 dimensions); also the rows decoded at a time on a load.
BLOCK_ROWS = 4096
#: Tenants of at least this many blocks have their scans split in two (see `_multiply`).
SPLIT_BLOCKS = 4
#: The float16 type of the cached directions.
HALF = np.float16

_ROW = "id, scope, conversation, embedding"
#: Held while the scan helper thread works for one search; others scan alone meanwhile.
_helper = threading.Lock()
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@functools.cache
def _helper_thread() -> ThreadPoolExecutor:
    """One thread that takes half of a large scan (created at the first large one)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-memory-scan")


def bound(dim: int) -> float:
    """How far a scan score may be from the exact dot product, per unit of query norm times row
    norm: two float16 roundings (2^-11 each, relative), the float32 sum of `dim` products, and
    float16's subnormal spacing (2^-24) for the smallest components."""
    return 2.0**-10 + 2.0**-21 + (dim + 2) * 2.0**-24 + dim**0.5 * 2.0**-24


def stable_hashes(ids: np.ndarray) -> np.ndarray:
    """FNV-1a of each id's bytes up to its terminator (an `S` array as TenantVectors holds it):
    the same in every process and whatever width the array has."""
    n = len(ids)
    if n == 0:
        return np.empty(0, np.uint64)
    width = ids.dtype.itemsize
    matrix = np.ascontiguousarray(ids).view(np.uint8).reshape(n, width)
    lengths = width - np.argmax(matrix[:, ::-1] != 0, axis=1)
    h = np.full(n, _FNV_OFFSET, np.uint64)
    for j in range(width):
        live = lengths > j
        if not live.any():
            break
        h = np.where(live, (h ^ matrix[:, j].astype(np.uint64)) * _FNV_PRIME, h)
    return h


def encode_ids(memory_ids: Sequence[str]) -> list[bytes]:
    """Each id as TenantVectors stores it: its UTF-8 and b"\xff" (never in UTF-8)."""
    return [memory_id.encode("utf-8") + b"\xff" for memory_id in memory_ids]


def _scan(block: np.ndarray, operand: np.ndarray, out: np.ndarray) -> None:
    """`out = operand @ block.T` for float16 `operand` (k, dim) into float32 `out` (k, rows)."""
    import simsimd

    # Not cdist's `out=`: simsimd 6.5 returns None from it without a reference, which ends the
    # process at exit ("deallocating None").
    out[...] = np.asarray(simsimd.cdist(operand, block, metric="dot", out_dtype="float32"))


@dataclass(frozen=True, slots=True)
class TenantVectors:
    """One tenant's searchable rows at one generation. Rows `[:n]` of the buffers are ours:
    row i is `blocks[i // BLOCK_ROWS][i % BLOCK_ROWS]` (its direction) times `norms[i]`."""

    generation: int
    purged: int
    n: int
    ids: np.ndarray  # bytes: each id's UTF-8 and b"\xff" (never in UTF-8; keeps NULs at the end)
    hashes: np.ndarray  # uint64 stable_hashes per row
    codes: np.ndarray  # int32 visibility codes
    norms: np.ndarray  # float32 norm of each row's embedding
    blocks: tuple[np.ndarray, ...]  # float16 unit directions (≤ BLOCK_ROWS, dim); all but the last are full
    conversations: dict[str, int] = field(repr=False)
    #: Rows written into these buffers so far, shared by the snapshots that share them.
    tip: list[int] = field(repr=False, default_factory=lambda: [0])

    def id(self, row: int) -> str:
        return bytes(self.ids[row])[:-1].decode("utf-8")

    @property
    def nbytes(self) -> int:
        return sum(int(block.nbytes) for block in self.blocks)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Every row's scan score with `query` (float32, length n; within `bound` of exact)."""
        return np.ascontiguousarray(self.scores_many(query[None, :])[:, 0])

    def scores_many(self, queries: np.ndarray) -> np.ndarray:
        """Every row's scan score with each of `queries` (k × dim): an (n, k) float32 array, the
        blocks read once for all k."""
        norms = np.linalg.norm(queries, axis=1).astype(np.float32)
        directions = (queries / np.where(norms > 0, norms, 1)[:, None]).astype(HALF)
        out = np.empty((len(queries), self.n), np.float32)
        self._multiply(directions, out)
        out *= norms[:, None]
        out *= self.norms[None, : self.n]
        return out.T

    def _multiply(self, operand: np.ndarray, out: np.ndarray) -> None:
        """`out[:, start:stop]` for every block. A large tenant's blocks are shared with the scan
        helper thread when it is free (simsimd releases the GIL), so a lone search still uses two
        cores' memory bandwidth."""
        spans = [(start, min(self.n, start + BLOCK_ROWS)) for start in range(0, self.n, BLOCK_ROWS)]
        scratch_rows = min(self.n, BLOCK_ROWS)

        def run(part: list[tuple[int, int]]) -> None:
            scratch = np.empty((len(operand), scratch_rows), np.float32)
            for start, stop in part:
                view = scratch[:, : stop - start]
                _scan(self.blocks[start // BLOCK_ROWS][: stop - start], operand, view)
                out[:, start:stop] = view

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

    def slack(self, query: np.ndarray) -> float:
        """Twice the most any scan score with `query` may be off (the candidates' margin)."""
        top = float(self.norms[: self.n].max()) if self.n else 0.0
        return 2.0 * float(np.linalg.norm(query)) * top * bound(self.blocks[0].shape[1] if self.blocks else 1)

    def nearest(self, query: np.ndarray, top_k: int, conversation: str | None) -> list[tuple[str, float]]:
        """The candidates for the `top_k` visible rows nearest `query`, as (id, scan score):
        every row that may be among them (visibility before the limit); `rerank` picks them."""
        if top_k <= 0 or self.n == 0:
            return []
        return self._top(self.scores(query), top_k, conversation, self.slack(query))

    def nearest_many(self, queries: list[tuple[np.ndarray, int, str | None]]) -> list[list[tuple[str, float]]]:
        """`nearest` for several (query, top_k, conversation) at once, with one pass over the rows."""
        if len(queries) == 1 or self.n == 0:
            return [self.nearest(*query) for query in queries]
        scores = self.scores_many(np.stack([vector for vector, _, _ in queries]))
        return [
            self._top(np.ascontiguousarray(scores[:, i]), top_k, conversation, self.slack(vector)) if top_k > 0 else []
            for i, (vector, top_k, conversation) in enumerate(queries)
        ]

    def visible(self, conversation: str | None) -> np.ndarray:
        codes = self.codes[: self.n]
        visible = codes == PROJECT
        code = self.conversations.get(conversation) if conversation else None
        if code is not None:
            visible |= codes == code
        return visible

    def _top(self, scores: np.ndarray, top_k: int, conversation: str | None, slack: float) -> list[tuple[str, float]]:
        visible = self.visible(conversation)
        count = int(np.count_nonzero(visible))
        if count == 0:
            return []
        if count < self.n:
            np.putmask(scores, ~visible, -np.inf)
        k = min(top_k, count)
        kth = float(np.partition(scores, self.n - k)[self.n - k]) if k < self.n else float(scores[visible].min())
        chosen = np.flatnonzero(scores >= kth - slack)
        chosen = chosen[np.isfinite(scores[chosen])]
        return [(self.id(i), float(scores[i])) for i in chosen.tolist()]

    def similarities(self, query: np.ndarray, memory_ids: Sequence[str]) -> dict[str, float]:
        """The scan score of `query` with each of these ids' rows (ids not held are left out)."""
        out: dict[str, float] = {}
        found = [(memory_id, row) for memory_id, row in zip(memory_ids, self.find(memory_ids)) if row is not None]
        if not found:
            return out
        norm = float(np.linalg.norm(query))
        direction = (query / (norm or 1.0)).astype(np.float32)
        for memory_id, row in found:
            vector = self.blocks[row // BLOCK_ROWS][row % BLOCK_ROWS].astype(np.float32)
            out[memory_id] = float(np.dot(vector, direction)) * norm * float(self.norms[row])
        return out

    def find(self, memory_ids: Sequence[str]) -> list[int | None]:
        """The row of each id, None for ids this snapshot does not hold."""
        if not memory_ids or self.n == 0:
            return [None] * len(memory_ids)
        wanted = stable_hashes(np.array(encode_ids(memory_ids), dtype=bytes))
        held = self.hashes[: self.n]
        maybe = np.isin(wanted, held) if len(memory_ids) > 8 else [bool((held == h).any()) for h in wanted]
        rows: list[int | None] = []
        for memory_id, h, present in zip(memory_ids, wanted, maybe):
            found = None
            if present:  # equal hashes: compare the ids themselves
                found = next((int(i) for i in np.flatnonzero(held == h) if self.id(int(i)) == memory_id), None)
            rows.append(found)
        return rows


def rerank(
    candidates: list[tuple[str, float]], exact: Callable[[list[str]], dict[str, float]], top_k: int
) -> list[tuple[str, float]]:
    """The `top_k` of `candidates` by their exact scores (`exact`: id -> dot product in float32)."""
    if not candidates:
        return []
    scored = exact([memory_id for memory_id, _ in candidates])
    return sorted(scored.items(), key=lambda item: -item[1])[:top_k]


def within(scores: dict[str, float], top_k: int, slack: float) -> list[str]:
    """The ids whose scan score may put them in the `top_k` best (see the module notes)."""
    if not scores or top_k <= 0:
        return []
    ordered = sorted(scores.values(), reverse=True)
    kth = ordered[min(top_k, len(ordered)) - 1]
    return [memory_id for memory_id, score in scores.items() if score >= kth - slack]


def empty(dim: int) -> TenantVectors:
    return TenantVectors(
        0, 0, 0, np.empty(0, "S1"), np.empty(0, np.uint64), np.empty(0, np.int32), np.empty(0, np.float32), (), {}
    )


def deleted_since(conn: sqlite3.Connection, tenant: str, generation: int) -> list[str]:
    """The ids deleted from `tenant` after `generation` (stores/sqlite/store.py lists them)."""
    return [row[0] for row in conn.execute("SELECT id FROM deleted WHERE tenant = ? AND rev > ?", (tenant, generation))]


def _code(scope: str, conversation: str | None, conversations: dict[str, int]) -> int:
    if scope != "conversation":
        return PROJECT
    if not conversation:
        return NOBODY
    return conversations.setdefault(conversation, len(conversations))


def _decode(blobs: list[bytes], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The batch's float16 directions and float32 norms (one join and one frombuffer for it all)."""
    vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)
    norms = np.linalg.norm(vectors, axis=1).astype(np.float32)
    directions = (vectors / np.where(norms > 0, norms, 1)[:, None]).astype(HALF)
    return directions, norms


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
        self.norms = old.norms if not fresh_buffers else old.norms.copy()
        self.blocks = list(old.blocks)
        self.conversations = old.conversations if not fresh_buffers else dict(old.conversations)
        self.tip = old.tip if not fresh_buffers else [old.n]

    def append(self, rows: list[tuple], expected: int = 0) -> None:
        """Add rows at the end; the last block grows (by copy) until it is full, then new ones follow."""
        if not rows:
            return
        end = self.n + len(rows)
        encoded = encode_ids([row[0] for row in rows])
        width = max(self.ids.dtype.itemsize, *(len(e) for e in encoded))
        room = max(end, expected)
        self.ids = _grown(self.ids, self.n, room, np.dtype(f"S{width}"))
        self.ids[self.n : end] = encoded
        self.hashes = _grown(self.hashes, self.n, room)
        self.codes = _grown(self.codes, self.n, room)
        self.norms = _grown(self.norms, self.n, room)
        self.hashes[self.n : end] = stable_hashes(self.ids[self.n : end])
        self.codes[self.n : end] = [_code(row[1], row[2], self.conversations) for row in rows]
        directions, norms = _decode([row[3] for row in rows], self.dim)
        self.norms[self.n : end] = norms
        done = 0
        while done < len(rows):
            at = self.n + done
            block_no, offset = divmod(at, BLOCK_ROWS)
            take = min(len(rows) - done, BLOCK_ROWS - offset)
            if block_no == len(self.blocks):  # a new block, sized to what is coming (at most full)
                size = min(BLOCK_ROWS, max(16, room - at))
                self.blocks.append(np.empty((size, self.dim), HALF))
            block = self.blocks[block_no]
            if offset + take > len(block):  # the last block is too small: copy it into a bigger one
                grown = np.empty((min(BLOCK_ROWS, max(offset + take, 2 * len(block))), self.dim), HALF)
                grown[:offset] = block[:offset]
                self.blocks[block_no] = block = grown
            block[offset : offset + take] = directions[done : done + take]
            done += take
        self.n = self.tip[0] = end

    def replace(self, row_no: int, row: tuple) -> None:
        """Overwrite one row; its block is copied first (older snapshots keep theirs)."""
        block_no, offset = divmod(row_no, BLOCK_ROWS)
        block = np.array(self.blocks[block_no], dtype=HALF)
        directions, norms = _decode([row[3]], self.dim)
        block[offset] = directions[0]
        self.blocks[block_no] = block
        self.norms[row_no] = norms[0]
        self.codes[row_no] = _code(row[1], row[2], self.conversations)

    def snapshot(self, generation: int, purged: int) -> TenantVectors:
        return TenantVectors(
            generation,
            purged,
            self.n,
            self.ids,
            self.hashes,
            self.codes,
            self.norms,
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


def extend(
    old: TenantVectors,
    rows: list[tuple],
    generation: int,
    dim: int,
    deleted: Sequence[str] = (),
    purged: int | None = None,
) -> TenantVectors:
    """`old` plus rows written since and less the ids `deleted` since (those not written again):
    appended in place when only new ids arrived, else copied."""
    rows = _usable(rows, dim)
    found = old.find([row[0] for row in rows])
    fresh = [row for row, at in zip(rows, found) if at is None]
    replaced = [(at, row) for row, at in zip(rows, found) if at is not None]
    written = {row[0] for row in rows}
    dead = [at for at in old.find([i for i in deleted if i not in written]) if at is not None]
    # Another refresh already appended to these buffers (its snapshot is newer): copy, never overwrite.
    shared = old.tip[0] != old.n
    buffers = _Rows(old, dim, fresh_buffers=bool(replaced) or bool(dead) or shared)
    if shared and buffers.blocks:  # the last block holds rows beyond old.n: copy it too
        buffers.blocks[-1] = np.array(buffers.blocks[-1], dtype=HALF)
    for at, row in replaced:
        buffers.replace(at, row)
    if dead:
        buffers.codes[dead] = DEAD
    buffers.append(fresh)
    return buffers.snapshot(generation, old.purged if purged is None else purged)


class VectorCache:
    """Per-tenant snapshots, refreshed against the database's generation counters.

    `sidecars`: the snapshot files (stores/sqlite/sidecar.py `Sidecars`), None for none.
    """

    def __init__(self, dim: int, max_bytes: int = DEFAULT_CACHE_BYTES, *, sidecars: Sidecars | None = None) -> None:
        heap.limit_growth()  # a batch of searches' scores must not stay resident after a burst
        self.dim = dim
        self.max_bytes = max_bytes
        self._tenants: OrderedDict[str, TenantVectors] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._sidecars = sidecars

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
            if self._sidecars is not None:
                self._sidecars.keep(tenant, fresh)
            return fresh

    def _refresh(self, conn: sqlite3.Connection, tenant: str) -> TenantVectors:
        with self._guard:
            cached = self._tenants.get(tenant)
        row = conn.execute("SELECT generation, purged FROM tenants WHERE tenant = ?", (tenant,)).fetchone()
        generation, purged = row if row else (0, 0)
        if cached is None and self._sidecars is not None:
            cached = self._sidecars.load(conn, tenant, generation, purged, _ROW)
        if cached is not None and cached.generation == generation and cached.purged == purged:
            return cached
        if cached is None or cached.generation < purged or cached.generation > generation:
            # Drop the old snapshot first: at 100,000 memories it is 150 MB that the new
            # one would otherwise sit beside while it is built (queries in flight keep theirs).
            with self._guard:
                self._tenants.pop(tenant, None)
            del cached
            (count,) = conn.execute("SELECT count(*) FROM memories WHERE tenant = ?", (tenant,)).fetchone()
            cursor = conn.execute(f"SELECT {_ROW} FROM memories WHERE tenant = ?", (tenant,))
            snapshot = build(iter(lambda: cursor.fetchmany(BLOCK_ROWS), []), count, generation, purged, self.dim)
            if count >= BLOCK_ROWS:
                heap.trim()  # the rows' blobs, freed (runtime/heap.py)
            if self._sidecars is not None:
                self._sidecars.built(tenant, snapshot, skipped=int(count) - snapshot.n)
            return snapshot
        rows = conn.execute(
            f"SELECT {_ROW} FROM memories WHERE tenant = ? AND rev > ?", (tenant, cached.generation)
        ).fetchall()
        return extend(cached, rows, generation, self.dim, deleted_since(conn, tenant, cached.generation), purged)

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
        if self._sidecars is not None:
            self._sidecars.close()
