"""An approximate index (HNSW, usearch) for remember's duplicate check on large tenants.

Why: remember asks for the few memories nearest a new one (core/service.py `_already_known`);
on a large tenant the exact scan of every cached direction is most of remember's time
(bench/RESULTS.md, the remember-at-a-million section). An HNSW graph answers it by reading a few
thousand rows. Recall's ranking keeps the exact scan (vectors.py); only `near` comes here.

What it holds: a graph over the rows `[0, rows)` of the tenant's cached snapshot (vectors.py
`TenantVectors`), keyed by row number, as they were at `generation`. Row numbers of a snapshot
are stable while it is extended (appends go at the end; a rewrite or a delete keeps its row), so
the graph stays usable as the tenant changes:

- rows appended since (`rows` and beyond) and rows rewritten since `generation` (read by rev,
  incrementally) are scanned exactly beside the graph's answer;
- deleted rows are hidden by their visibility code (DEAD), like every scan's;
- visibility (tenant, conversation) applies before the limit: the graph is asked for more than
  wanted, its hits are kept only when visible, and when too few are visible after asking for
  `MAX_FETCH`, the caller falls back to the exact scan. The exact scan also answers while no graph
  is ready (it is built on a background thread, never on a request's).

The snapshot's ids' stable hashes over `[0, rows)` are kept with the graph: a snapshot read again
from the database (its rows may come in another order) no longer matches them, and the graph is
built again. When the rows outside the graph reach a sixty-fourth of it (at least a block), the
graph is brought up to date in the background (rewritten rows re-added, deleted ones removed,
new ones added).

Kept beside the database: the graph is saved into `<database>.vectors/` (with the snapshot files,
stores/sqlite/sidecar.py) as `<name>.hnsw` and a JSON header `<name>.hnsw.json` written after it
(tenant, rows, generation, purged, a digest of the hashes, the file's size and CRC-32); the next
process, on the building thread, copies the file into one of its own that no path names
(`GraphFile.private_copy`), checks the copy against the header and maps it (`view`: the kernel
pages in the nodes a search visits) when both agree with its snapshot, and builds it again
otherwise. No other process can write into or shorten the file a process walks (a mapped file cut
short ends its process with SIGBUS), so the file beside the database may be replaced or written
over at any time. Closing the store stops a build or a check between blocks. Every candidate is scored exactly from the database afterwards
(store.py `rerank`), so the graph only chooses which rows are looked at.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import weakref
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mcp_memory.stores.sqlite import vectors
from mcp_memory.stores.sqlite.files import DIRECTORY_MODE, FILE_MODE

log = logging.getLogger(__name__)

#: Graph neighbours per node (HNSW's M) and the search depths (efConstruction, ef).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 512
#: Hits asked of the graph at first (at least), and at most before falling back to the exact scan.
FIRST_FETCH = 32
MAX_FETCH = 4096
#: Rows outside the graph beyond which it is brought up to date: a sixty-fourth of it, at least a block.
CATCH_UP_SHARE = 64
#: The graph's element type: float16 directions, as the cache holds them.
DTYPE = "f16"
VERSION = 2
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: Rows of a saved graph compared with the tenant's own before the graph is trusted.
SAMPLE_ROWS = 32
#: How far from 1 an embedding's length may be for the graph's cosine order to be the scan's dot-product order.
UNIT_TOLERANCE = 1e-3
#: Rows added to a graph between two checks that the store is still open (a fraction of a second).
ADD_ROWS = 256
#: Bytes read at a time when a graph file's copy is checksummed (or copied by reads).
CHUNK = 1 << 20
#: Bytes the kernel copies at a time between two checks that the store is still open.
COPY_BYTES = 64 << 20


class _Closed(Exception):
    """The store was closed while a graph was built or checked: the work is dropped."""


class GraphFile:
    """The file a graph is mapped from: a copy this process made of the saved graph, which no path
    names (an unlinked file of the graphs' folder), so no other process can write into it or
    shorten it while it is walked. A mapped file written in place changed what the process walked,
    and one cut short ended it with SIGBUS on the next page read, between any check and the walk
    (docs/storage.md#large-tenants-in-sqlite; the copy's cost: bench/RESULTS.md, "The graph
    walked from a private copy")."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._closer = weakref.finalize(self, os.close, fd)

    @property
    def path(self) -> str:
        """A path that opens this very file (the library maps by path)."""
        return f"/dev/fd/{self.fd}"

    @classmethod
    def private_copy(
        cls, source: Path | int, directory: Path, check_open: Callable[[], None]
    ) -> tuple[GraphFile, int, int]:
        """A copy of `source` (a path, or a descriptor read from its start), with the copy's size and
        CRC-32: checked against the header, they vouch for the very bytes that are mapped. Copied
        by the kernel (`copy_file_range`) where it can, else by plain reads; never through a
        mapping, so a source cut short meanwhile gives a short copy, not a signal."""
        copy = cls(_unnamed_file(directory))
        try:
            fd = os.open(source, os.O_RDONLY | _NOFOLLOW) if not isinstance(source, int) else os.dup(source)
            try:
                os.lseek(fd, 0, os.SEEK_SET)
                _copy(fd, copy.fd, check_open)
            finally:
                os.close(fd)
            crc = size = 0
            while chunk := os.pread(copy.fd, CHUNK, size):
                check_open()
                crc = zlib.crc32(chunk, crc)
                size += len(chunk)
        except BaseException:
            copy.close()
            raise
        return copy, size, crc

    def close(self) -> None:
        self._closer()


def _copy(source: int, target: int, check_open: Callable[[], None]) -> None:
    """Every byte from `source`'s offset on to `target` (empty), `COPY_BYTES` at a time."""
    with contextlib.suppress(AttributeError, OSError):  # no copy_file_range here (macOS, some file systems)
        while os.copy_file_range(source, target, COPY_BYTES):
            check_open()
        return
    os.lseek(source, 0, os.SEEK_SET)
    os.ftruncate(target, 0)
    os.lseek(target, 0, os.SEEK_SET)
    while chunk := os.read(source, CHUNK):
        check_open()
        view = memoryview(chunk)
        while view:
            view = view[os.write(target, view) :]


def _unnamed_file(directory: Path) -> int:
    """A new 0600 file in `directory` that no path names: O_TMPFILE where the system has it, else
    a file created and unlinked at once."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile:
        with contextlib.suppress(OSError):  # a file system without it: EOPNOTSUPP, EISDIR
            return os.open(directory, tmpfile | os.O_RDWR, FILE_MODE)
    name = directory / f".graph.{os.getpid()}.{threading.get_ident()}.{os.urandom(6).hex()}.tmp"
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE)
    os.unlink(name)
    return fd


def _digest(hashes: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(hashes, dtype="<u8").tobytes()).hexdigest()


def _lower_priority() -> None:
    """The building thread yields to requests (Linux: per-thread niceness)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


def _index_type() -> Any:
    """usearch's Index class, imported after simsimd and onnxruntime: with usearch 2.26 loaded
    first, simsimd refuses every array ("Input tensors must have matching datatypes": the exact
    scan would break) and importing onnxruntime (the local model) ends the process with a
    segmentation fault."""
    import simsimd  # noqa: F401  (first, see above)

    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401  (first, see above)
    from usearch.index import Index

    return Index


def _new_index(dim: int) -> Any:
    return _index_type()(
        ndim=dim,
        metric="cos",
        dtype=DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def _unit_length(snapshot: vectors.TenantVectors) -> bool:
    """Whether every row of `snapshot` is an embedding of length 1 (within float32's rounding)."""
    norms = snapshot.norms[: snapshot.n]
    return bool(np.all(np.abs(norms - 1.0) <= UNIT_TOLERANCE))


def _same_vectors(index: Any, snapshot: vectors.TenantVectors, rows: int) -> bool:
    """Whether a graph over rows `[0, rows)` holds `snapshot`'s vectors, by a spread of live rows
    (a database imported again under the same ids with another model's vectors does not; a few
    rows rewritten since the graph may differ)."""
    sample = np.unique(np.linspace(0, rows - 1, min(rows, SAMPLE_ROWS)).astype(np.int64))
    sample = sample[snapshot.codes[sample] != vectors.DEAD]
    sample = sample[np.asarray(index.contains(sample.astype(np.uint64)), dtype=bool)]
    if len(sample) == 0:
        return True
    held = np.asarray(index.get(sample.astype(np.uint64)), dtype=np.float32).reshape(len(sample), -1)
    ours = _rows_of(snapshot, sample).astype(np.float32)
    lengths = np.linalg.norm(held, axis=1) * np.linalg.norm(ours, axis=1)
    cosines = (held * ours).sum(axis=1) / np.where(lengths > 0, lengths, 1)
    return float(np.mean(cosines >= 0.99)) >= 0.9


def _rows_of(snapshot: vectors.TenantVectors, rows: np.ndarray) -> np.ndarray:
    """These rows' float16 directions, stacked in their order (one gather per block touched)."""
    out = np.empty((len(rows), snapshot.blocks[0].shape[1]), vectors.HALF)
    block_nos = rows // vectors.BLOCK_ROWS
    for block_no in np.unique(block_nos).tolist():
        at = np.flatnonzero(block_nos == block_no)
        out[at] = snapshot.blocks[block_no][rows[at] % vectors.BLOCK_ROWS]
    return out


def _add(
    index: Any, snapshot: vectors.TenantVectors, start: int, stop: int, threads: int, check_open: Callable[[], None]
) -> None:
    """Add rows `[start, stop)` of `snapshot`, `ADD_ROWS` at a time (keys: row numbers); `check_open`
    before each, so a closing store does not wait for the rest of a build."""
    at = start
    while at < stop:
        check_open()
        block_no, offset = divmod(at, vectors.BLOCK_ROWS)
        take = min(stop - at, vectors.BLOCK_ROWS - offset, ADD_ROWS)
        block = np.ascontiguousarray(snapshot.blocks[block_no][offset : offset + take])
        index.add(np.arange(at, at + take, dtype=np.uint64), block, threads=threads)
        at += take


@dataclass
class Graph:
    """A searchable graph over rows `[0, rows)` of snapshots whose hashes there are `hashes`."""

    index: Any
    rows: int
    generation: int
    purged: int
    hashes: np.ndarray
    #: Rows below `rows` written since `generation`, as known at `dirty_generation`.
    dirty: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    dirty_generation: int = 0
    #: The hashes array last found equal to ours (identity: a snapshot extended in place shares it).
    checked: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The file the graph is mapped from; None while it is held in memory.
    file: GraphFile | None = None

    def matches(self, snapshot: vectors.TenantVectors) -> bool:
        if snapshot.n < self.rows or snapshot.generation < self.generation:
            return False
        if snapshot.hashes is self.checked:
            return True
        if not np.array_equal(snapshot.hashes[: self.rows], self.hashes):
            return False
        self.checked = snapshot.hashes
        return True

    def outside(self, conn: sqlite3.Connection, tenant: str, snapshot: vectors.TenantVectors) -> np.ndarray:
        """Rows the graph's vectors may not reflect: rewritten below `rows`, and all from `rows` on."""
        with self.lock:
            if snapshot.generation > self.dirty_generation:
                since = max(self.dirty_generation, self.generation)
                ids = [
                    row[0]
                    for row in conn.execute("SELECT id FROM memories WHERE tenant = ? AND rev > ?", (tenant, since))
                ]
                found = [row for row in snapshot.find(ids) if row is not None and row < self.rows]
                if found:
                    self.dirty = np.union1d(self.dirty, np.array(found, np.int64))
                self.dirty_generation = snapshot.generation
            dirty = self.dirty
        return np.concatenate([dirty, np.arange(self.rows, snapshot.n, dtype=np.int64)])


class Indexes:
    """The graphs of one database's large tenants: loaded or built in the background, used when ready."""

    def __init__(self, directory: Path, dim: int, min_rows: int) -> None:
        self.directory = directory
        self.dim = dim
        self.min_rows = min_rows
        self._graphs: dict[str, Graph] = {}
        self._pending: dict[str, Future[None]] = {}
        self._tried_file: set[str] = set()
        #: Tenants whose build failed in this process: not tried again (one warning, not one per remember).
        self._failed: set[str] = set()
        self._guard = threading.Lock()
        self._builder: ThreadPoolExecutor | None = None
        self._closed = False
        #: How many `candidates` calls the graph answered and how many fell back (tests, bench).
        self.answered = 0
        self.fell_back = 0

    def path(self, tenant: str) -> Path:
        return self.directory / (hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:32] + ".hnsw")

    # ------------------------------------------------------------------ queries

    def candidates(
        self,
        conn: sqlite3.Connection,
        tenant: str,
        snapshot: vectors.TenantVectors,
        query: np.ndarray,
        top_k: int,
        conversation: str | None,
    ) -> list[tuple[str, float]] | None:
        """Inside a read transaction: candidates for the `top_k` visible rows nearest `query`
        (at least `top_k` visible ones), or None when the exact scan must answer."""
        if self.min_rows <= 0 or snapshot.n < self.min_rows or top_k <= 0:
            return None
        graph = self._ready(tenant, snapshot)
        if graph is None:
            self.fell_back += 1
            return None
        outside = graph.outside(conn, tenant, snapshot)
        if len(outside) > max(vectors.BLOCK_ROWS, graph.rows // CATCH_UP_SHARE):
            self._schedule(tenant, snapshot, graph)
        try:
            found = self._search(graph, snapshot, query, top_k, conversation, outside)
        except (RuntimeError, ValueError, MemoryError) as exc:  # a graph the library cannot walk
            log.warning("an approximate index could not be searched (%s); it is built again", type(exc).__name__)
            with self._guard:
                if self._graphs.get(tenant) is graph:
                    del self._graphs[tenant]
            self._schedule(tenant, snapshot, None)
            found = None
        if found is None:
            self.fell_back += 1
            return None
        self.answered += 1
        return found

    def _search(
        self,
        graph: Graph,
        snapshot: vectors.TenantVectors,
        query: np.ndarray,
        top_k: int,
        conversation: str | None,
        outside: np.ndarray,
    ) -> list[tuple[str, float]] | None:
        norm = float(np.linalg.norm(query))
        direction = (query / (norm or 1.0)).astype(np.float32)
        codes = snapshot.codes
        wanted = {vectors.PROJECT}
        code = snapshot.conversations.get(conversation) if conversation else None
        if code is not None:
            wanted.add(code)
        allowed = np.array(sorted(wanted), np.int32)
        stale = outside[outside < graph.rows]
        fetch = max(FIRST_FETCH, 4 * top_k)
        while True:
            matches = graph.index.search(
                direction, count=min(fetch, graph.rows), threads=1
            )  # may raise: see candidates
            keys = np.asarray(matches.keys, dtype=np.int64)
            keys = keys[(keys >= 0) & (keys < graph.rows)]
            if len(stale):
                keys = keys[~np.isin(keys, stale)]
            keys = keys[np.isin(codes[keys], allowed)]
            if len(keys) >= top_k or fetch >= min(MAX_FETCH, graph.rows):
                break
            fetch *= 4
        # Rows outside the graph are scored here (they are few); the best of them are candidates too.
        extra = outside[np.isin(codes[outside], allowed)] if len(outside) else outside
        if len(keys) + len(extra) < top_k:
            return None
        # The graph's hits and the rows outside it, by their scan scores; only those that may be
        # among the best `top_k` given float16's bound are read from the database (vectors.py).
        rows = np.unique(np.concatenate([keys[: max(top_k, FIRST_FETCH)], extra]))
        scores = (_rows_of(snapshot, rows).astype(np.float32) @ direction) * norm * snapshot.norms[rows]
        kth = float(np.partition(scores, len(scores) - top_k)[len(scores) - top_k])
        chosen = np.flatnonzero(scores >= kth - snapshot.slack(query))
        return [(snapshot.id(int(rows[i])), float(scores[i])) for i in chosen.tolist()]

    # ----------------------------------------------------------------- building

    def _ready(self, tenant: str, snapshot: vectors.TenantVectors) -> Graph | None:
        with self._guard:
            graph = self._graphs.get(tenant)
        if graph is not None and graph.matches(snapshot):
            return graph
        self._schedule(tenant, snapshot, None)  # the file is read (and checked) there, or the graph built
        return None

    def _check_open(self) -> None:
        if self._closed:
            raise _Closed

    def _load(self, tenant: str, snapshot: vectors.TenantVectors) -> Graph | None:
        """The graph saved beside the database, mapped, when its header agrees with `snapshot` and
        the file's checksum with its header's (a file torn or changed since is built again: a graph
        the library maps without complaint may still lead its walk astray or exhaust memory)."""
        path = self.path(tenant)
        try:
            header = json.loads(path.with_name(path.name + ".json").read_text("utf-8"))
            rows, generation = int(header["rows"]), int(header["generation"])
            if (
                header.get("version") != VERSION
                or header.get("tenant") != tenant
                or header.get("dim") != self.dim
                or rows > snapshot.n
                or generation > snapshot.generation
                or header.get("digest") != _digest(snapshot.hashes[:rows])
            ):
                log.info("an approximate index file does not match its tenant's rows; it is built again")
                return None
            # The copy is checked, then mapped: what is walked is what was checked, and stays so.
            source, size, crc = GraphFile.private_copy(path, self.directory, self._check_open)
            if size != header["bytes"] or crc != header["crc32"]:
                log.warning("an approximate index file is damaged (its checksum differs); it is built again")
                source.close()
                return None
            index = _index_type().restore(source.path, view=True)
            if index is None or len(index) == 0 or index.ndim != self.dim:
                return None
            index.expansion_search = EXPANSION_SEARCH  # not in the file: a restored graph has the library's
            if len(index) != int(header["size"]):  # the header of another graph than this one
                return None
            if not _same_vectors(index, snapshot, rows):
                log.info("an approximate index file holds other vectors than its tenant's rows; it is built again")
                return None
        except (ImportError, OSError, ValueError, KeyError, TypeError, RuntimeError):
            return None
        return Graph(index, rows, generation, int(header["purged"]), snapshot.hashes[:rows].copy(), file=source)

    def _schedule(self, tenant: str, snapshot: vectors.TenantVectors, graph: Graph | None) -> None:
        with self._guard:
            if self._closed or tenant in self._failed:
                return
            pending = self._pending.get(tenant)
            if pending is not None and not pending.done():
                return
            if self._builder is None:
                self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-memory-ann")
            self._pending[tenant] = self._builder.submit(self._build, tenant, snapshot, graph)

    def _build(self, tenant: str, snapshot: vectors.TenantVectors, old: Graph | None) -> None:
        _lower_priority()
        if not _unit_length(snapshot):
            # The exact scan ranks by dot product; a cosine graph agrees with it only when every
            # embedding has length 1 (the bundled models' and Bedrock's do; an OpenAI-compatible
            # server's may not): the exact scan keeps answering this tenant.
            log.info("a tenant's embeddings are not of unit length: its duplicate check keeps the exact scan")
            with self._guard:
                self._failed.add(tenant)
                self._graphs.pop(tenant, None)  # a graph caught up no further would lag ever more
            return
        try:
            graph = None
            if old is None and tenant not in self._tried_file:  # the builder's thread only: no race
                self._tried_file.add(tenant)
                graph = self._load(tenant, snapshot)
            if graph is None and old is not None:
                graph = self._caught_up(tenant, snapshot, old)
            if graph is None:
                index = _new_index(self.dim)
                _add(index, snapshot, 0, snapshot.n, threads=1, check_open=self._check_open)
                graph = self._saved(tenant, index, snapshot)
        except _Closed:  # the store is closing: nothing is kept, the next process starts again
            return
        except Exception as exc:  # the exact scan keeps answering; say why without data, once
            log.warning("could not build an approximate index in %s: %s", self.directory, type(exc).__name__)
            with self._guard:
                self._failed.add(tenant)
            return
        with self._guard:
            if not self._closed:
                self._graphs[tenant] = graph

    def _caught_up(self, tenant: str, snapshot: vectors.TenantVectors, old: Graph) -> Graph | None:
        """`old`'s graph with the rows written and deleted since (None: build it afresh)."""
        if not old.matches(snapshot):
            return None
        path = self.path(tenant)
        try:
            header = json.loads(path.with_name(path.name + ".json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        if (
            header.get("rows") != old.rows
            or header.get("generation") != old.generation
            or header.get("digest") != _digest(old.hashes)
        ):
            return None  # the file is not (or no longer) this graph
        try:
            source, size, crc = GraphFile.private_copy(path, self.directory, self._check_open)
        except OSError:
            return None
        try:
            if size != header.get("bytes") or crc != header.get("crc32"):
                return None
            index = _index_type().restore(source.path, view=False)  # read into memory: changed here, not later
        finally:
            source.close()
        if index is None or len(index) != header.get("size"):
            return None
        index.expansion_add, index.expansion_search = EXPANSION_ADD, EXPANSION_SEARCH
        with old.lock:
            dirty = old.dirty.copy()
        dead = np.flatnonzero(snapshot.codes[: old.rows] == vectors.DEAD).astype(np.uint64)
        gone = np.union1d(dirty.astype(np.uint64), dead)
        if len(gone):
            present = gone[np.asarray(index.contains(gone), dtype=bool)]
            if len(present):
                index.remove(present)
        rewritten = np.setdiff1d(dirty, dead.astype(np.int64))
        if len(rewritten):
            index.add(rewritten.astype(np.uint64), _rows_of(snapshot, rewritten), threads=1)
        _add(index, snapshot, old.rows, snapshot.n, threads=1, check_open=self._check_open)
        return self._saved(tenant, index, snapshot)

    def _saved(self, tenant: str, index: Any, snapshot: vectors.TenantVectors) -> Graph:
        """Save `index` beside the database and map it back (the in-memory copy is freed); when
        the file cannot be written, the graph stays in memory."""
        path = self.path(tenant)
        rows = snapshot.n
        header: dict[str, Any] = {
            "version": VERSION,
            "tenant": tenant,
            "dim": self.dim,
            "rows": rows,
            "generation": snapshot.generation,
            "purged": snapshot.purged,
            "digest": _digest(snapshot.hashes[:rows]),
            "size": len(index),
        }
        graph = Graph(index, rows, snapshot.generation, snapshot.purged, snapshot.hashes[:rows].copy())
        try:
            self.directory.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
            marker = path.with_name(path.name + ".json")
            temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                with contextlib.suppress(FileNotFoundError):
                    temporary.unlink()  # a leftover (or a link planted there) is never written through
                # Created 0600 before the library writes into it, never chmod'ed after (files.py).
                os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE))
                index.save(str(temporary))
                with open(temporary, "rb") as saved:  # on disk before the header that vouches for it
                    os.fsync(saved.fileno())
                # Copied before it is renamed: the path may hold another process's graph a moment later.
                source, header["bytes"], header["crc32"] = GraphFile.private_copy(
                    temporary, self.directory, self._check_open
                )
                mapped = _index_type().restore(source.path, view=True)
                with contextlib.suppress(FileNotFoundError):
                    marker.unlink()  # a header never describes a graph other than the one beside it
                os.replace(temporary, path)
            except BaseException:  # a full disk, or the store closing: no half-written file left
                with contextlib.suppress(OSError):
                    temporary.unlink()
                raise
            staged = marker.with_name(f"{marker.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            with contextlib.suppress(FileNotFoundError):
                staged.unlink()
            fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(header, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(staged, marker)
        except OSError as exc:
            log.warning("could not write an approximate index file in %s: %s", self.directory, exc.strerror or exc)
            return graph
        if mapped is not None:
            mapped.expansion_search = EXPANSION_SEARCH
            graph.index, graph.file = mapped, source
        return graph

    def wait(self) -> None:
        """Until the builds scheduled so far are done (tests, bench)."""
        with self._guard:
            pending = list(self._pending.values())
        for future in pending:
            future.result()

    def close(self) -> None:
        with self._guard:
            self._closed = True
            builder, self._builder = self._builder, None
            self._graphs.clear()
        if builder is not None:
            builder.shutdown(wait=True)
