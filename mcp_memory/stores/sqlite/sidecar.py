"""Snapshot files of large tenants' vector caches, so a process opens them without reading them.

Why: reading a tenant's 1,000,000 embeddings out of SQLite takes seconds (every row of the wide
`memories` table); mapping a file of their float16 directions takes none, and the kernel pages
it in as the first scan reads it (docs/performance.md).

One file per tenant in `<database>.vectors/` (0700; files 0600), named by a hash of the tenant:
a header (JSON: the tenant, the generation and `purged` it reflects, the row count, the offsets)
then the ids, their stable hashes, the visibility codes, the norms and the directions, exactly as
TenantVectors holds them. The database stays the source of truth, and a file is used only when it agrees with it:

- its generation is not behind the tenant's `purged` (the deletes since it are still listed) nor
  ahead of the tenant's generation (a database restored from an older copy): else the file is
  ignored and rebuilt;
- the rows the database holds with `rev` up to the file's generation are exactly the file's live
  rows less those rewritten or deleted since (one count over the (tenant, rev) index);
- a sample of rows, spread over the file, match the database's embeddings and visibility.

Then the rows written and the ids deleted since the file's generation are applied as for any
cached snapshot (vectors.py). A file is written after a full load and again when the tenant has grown by an
eighth (at least a block) since: by a background thread, to a temporary file that is fsynced and
renamed over the old one, so a crash leaves either the old file or the new one, never a torn one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import sqlite3
import struct
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from mcp_memory.stores.sqlite import vectors
from mcp_memory.stores.sqlite.files import DIRECTORY_MODE, FILE_MODE

log = logging.getLogger(__name__)

#: Tenants smaller than this load from the database quickly enough: no file
#: (bench/RESULTS.md#snapshot-files-only-for-large-tenants).
MIN_ROWS = 20_000
#: Rows compared with the database when a file is opened.
SAMPLE_ROWS = 16
MAGIC = b"MCPMVEC\x02"
_ALIGN = 4096


def _name(tenant: str) -> str:
    return hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:32] + ".vectors"


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def write(path: Path, tenant: str, snapshot: vectors.TenantVectors, skipped: int) -> None:
    """Write `snapshot` to `path` atomically (a temporary file, fsynced, then renamed)."""
    n, dim = snapshot.n, snapshot.blocks[0].shape[1] if snapshot.blocks else 0
    ids = np.ascontiguousarray(snapshot.ids[:n])
    width = ids.dtype.itemsize
    offsets: dict[str, int] = {}
    at = _ALIGN
    for name, size in (
        ("ids", n * width),
        ("hashes", n * 8),
        ("codes", n * 4),
        ("norms", n * 4),
        ("vectors", n * dim * 2),
    ):
        at = _aligned(at)
        offsets[name] = at
        at += size
    header: dict[str, Any] = {
        "tenant": tenant,
        "dim": dim,
        "n": n,
        "width": width,
        "generation": snapshot.generation,
        "purged": snapshot.purged,
        "skipped": skipped,
        "conversations": snapshot.conversations,
        "offsets": offsets,
        "size": at,
    }
    encoded = json.dumps(header).encode("utf-8")
    if len(encoded) + 16 > _ALIGN:  # many conversations: the header takes more pages
        grow = _aligned(len(encoded) + 16)
        header["offsets"] = {k: v + grow for k, v in offsets.items()}
        header["size"] = at + grow
        encoded = json.dumps(header).encode("utf-8")
    path.parent.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(encoded)) + encoded)
            parts = [
                ("ids", [ids.tobytes()]),
                ("hashes", [snapshot.hashes[:n].astype("<u8").tobytes()]),
                ("codes", [snapshot.codes[:n].astype("<i4").tobytes()]),
                ("norms", [snapshot.norms[:n].astype("<f4").tobytes()]),
            ]
            for name, chunks in parts:
                out.seek(header["offsets"][name])
                for chunk in chunks:
                    out.write(chunk)
            out.seek(header["offsets"]["vectors"])
            left = n
            for block in snapshot.blocks:
                take = min(left, len(block))
                out.write(np.ascontiguousarray(block[:take], dtype="<f2").tobytes())
                left -= take
            out.truncate(header["size"])
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def read(path: Path, tenant: str, dim: int) -> tuple[dict, vectors.TenantVectors] | None:
    """The file's header and snapshot (its directions mapped copy-on-write), or None when it is
    missing, another tenant's, of another dimension, or not whole."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            start = handle.read(16)
            if len(start) < 16 or start[:8] != MAGIC:
                return None
            (length,) = struct.unpack("<Q", start[8:])
            header = json.loads(handle.read(length))
            if header.get("tenant") != tenant or header.get("dim") != dim or header.get("size") != size:
                return None
            n, width, offsets = int(header["n"]), int(header["width"]), header["offsets"]
            handle.seek(offsets["ids"])
            ids = np.frombuffer(handle.read(n * width), dtype=f"S{width}").copy()
            handle.seek(offsets["hashes"])
            hashes = np.frombuffer(handle.read(n * 8), dtype="<u8").astype(np.uint64)
            handle.seek(offsets["codes"])
            codes = np.frombuffer(handle.read(n * 4), dtype="<i4").astype(np.int32)
            handle.seek(offsets["norms"])
            norms = np.frombuffer(handle.read(n * 4), dtype="<f4").astype(np.float32)
        if len(ids) != n or len(hashes) != n or len(codes) != n or len(norms) != n:
            return None
        blocks: tuple[np.ndarray, ...] = ()
        if n:
            mapped = np.memmap(path, dtype="<f2", mode="c", offset=offsets["vectors"], shape=(n, dim))
            blocks = tuple(mapped[i : i + vectors.BLOCK_ROWS] for i in range(0, n, vectors.BLOCK_ROWS))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    snapshot = vectors.TenantVectors(
        int(header["generation"]),
        int(header["purged"]),
        n,
        ids,
        hashes,
        codes,
        norms,
        blocks,
        {str(k): int(v) for k, v in header["conversations"].items()},
        [n],
    )
    return header, snapshot


def agrees(conn: sqlite3.Connection, tenant: str, header: dict, snapshot: vectors.TenantVectors) -> bool:
    """Inside a read transaction: the file's rows are the database's at the file's generation
    (see the module notes)."""
    generation = snapshot.generation
    (held,) = conn.execute(
        "SELECT count(*) FROM memories WHERE tenant = ? AND rev <= ?", (tenant, generation)
    ).fetchone()
    since = [
        row[0] for row in conn.execute("SELECT id FROM memories WHERE tenant = ? AND rev > ?", (tenant, generation))
    ]
    touched = list(dict.fromkeys([*since, *vectors.deleted_since(conn, tenant, generation)]))
    codes = snapshot.codes[: snapshot.n]
    gone = sum(1 for row in snapshot.find(touched) if row is not None and codes[row] != vectors.DEAD)
    live = snapshot.n - int(np.count_nonzero(codes == vectors.DEAD))
    if int(held) != live + int(header["skipped"]) - gone:
        return False
    if snapshot.n == 0:
        return True
    rows = sorted({round(i * (snapshot.n - 1) / max(1, SAMPLE_ROWS - 1)) for i in range(SAMPLE_ROWS)})
    if not np.array_equal(vectors.stable_hashes(snapshot.ids[rows]), snapshot.hashes[rows]):
        return False
    for row in rows:
        found = conn.execute(
            "SELECT scope, conversation, embedding, rev FROM memories WHERE tenant = ? AND id = ?",
            (tenant, snapshot.id(row)),
        ).fetchone()
        if int(snapshot.codes[row]) == vectors.DEAD:  # deleted before the file: gone, or written again since
            if found is not None and found[3] <= generation:
                return False
            continue
        if found is None:
            return False
        scope, conversation, blob, rev = found
        if rev > generation:
            continue  # rewritten since: the refresh replaces it
        if not isinstance(blob, bytes) or len(blob) != 4 * snapshot.blocks[0].shape[1]:
            return False
        directions, norms = vectors._decode([blob], snapshot.blocks[0].shape[1])
        block = snapshot.blocks[row // vectors.BLOCK_ROWS][row % vectors.BLOCK_ROWS]
        if not np.array_equal(directions[0], block) or norms[0] != snapshot.norms[row]:
            return False
        if vectors._code(scope, conversation, dict(snapshot.conversations)) != int(snapshot.codes[row]):
            return False
    return True


class Sidecars:
    """The snapshot files of one database: loaded when they agree with it, written as tenants grow."""

    def __init__(self, directory: Path, dim: int, min_rows: int) -> None:
        self.directory = directory
        self.dim = dim
        self.min_rows = min_rows
        self._written: dict[str, tuple[int, int]] = {}  # tenant -> (purged, rows) of its file
        self._skipped: dict[str, int] = {}
        self._pending: dict[str, Future[None]] = {}
        self._guard = threading.Lock()
        self._writer: ThreadPoolExecutor | None = None
        self._closed = False

    def path(self, tenant: str) -> Path:
        return self.directory / _name(tenant)

    def load(
        self, conn: sqlite3.Connection, tenant: str, generation: int, purged: int, _columns: str
    ) -> vectors.TenantVectors | None:
        """The tenant's file as a snapshot when it agrees with the database, else None."""
        found = read(self.path(tenant), tenant, self.dim)
        if found is None:
            return None
        header, snapshot = found
        if (
            snapshot.generation < purged
            or snapshot.generation > generation
            or not agrees(conn, tenant, header, snapshot)
        ):
            log.info("a vector snapshot file is stale; the tenant is read from the database")
            return None
        with self._guard:
            self._written[tenant] = (snapshot.purged, snapshot.n)
            self._skipped[tenant] = int(header["skipped"])
        return snapshot

    def built(self, tenant: str, snapshot: vectors.TenantVectors, skipped: int) -> None:
        """A full load: write it (when large enough) at the next `keep`."""
        with self._guard:
            self._written.pop(tenant, None)
            self._skipped[tenant] = skipped

    def keep(self, tenant: str, snapshot: vectors.TenantVectors) -> None:
        """Write `snapshot` in the background when the tenant's file is missing or far behind."""
        if snapshot.n < self.min_rows:
            return
        with self._guard:
            if self._closed:
                return
            written = self._written.get(tenant)
            if written is not None and written[0] == snapshot.purged:
                if snapshot.n - written[1] < max(vectors.BLOCK_ROWS, written[1] // 8):
                    return
            pending = self._pending.get(tenant)
            if pending is not None and not pending.done():
                return
            self._written[tenant] = (snapshot.purged, snapshot.n)
            skipped = self._skipped.get(tenant, 0)
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-memory-sidecar")
            # The conversations dict is shared with the buffers later refreshes append to (under
            # the tenant's lock, which the writer thread does not hold): the file gets a copy.
            frozen = dataclasses.replace(snapshot, conversations=dict(snapshot.conversations))
            self._pending[tenant] = self._writer.submit(self._write, tenant, frozen, skipped)

    def _write(self, tenant: str, snapshot: vectors.TenantVectors, skipped: int) -> None:
        try:
            write(self.path(tenant), tenant, snapshot, skipped)
        except OSError as exc:  # a cache: the database still answers; say why once per write
            log.warning("could not write a vector snapshot file in %s: %s", self.directory, exc.strerror or exc)
            with self._guard:
                self._written.pop(tenant, None)
        except Exception as exc:  # a bug, not the disk: still said (its type only, never data), not lost in the future
            log.warning("could not write a vector snapshot file in %s: %s", self.directory, type(exc).__name__)
            with self._guard:
                self._written.pop(tenant, None)

    def wait(self) -> None:
        """Until the writes scheduled so far are on disk (tests, close)."""
        with self._guard:
            pending = list(self._pending.values())
        for future in pending:
            future.result()

    def close(self) -> None:
        with self._guard:
            self._closed = True
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)
