"""The SQLite file both embedded stores share: connections, worker threads,
transactions with busy retries, the schema, and the embedding-model check.

Why it looks like this:

- sqlite3 blocks, the service is async: every statement runs on a small
  dedicated thread pool, one connection per worker thread (a connection is not
  shared between threads while in use).
- Several processes may share the file (two servers and a CLI command). WAL
  lets readers and one writer proceed together; every write transaction starts
  with `BEGIN IMMEDIATE`, so it takes the write lock up front and sqlite's busy
  handler (10 s) can wait for it. Where the busy handler does not apply (WAL
  recovery, a lock taken during open) the transaction is rolled back and retried
  with backoff, so "database is locked" never reaches a caller; only a lock held
  for minutes ends in a StoreError that says so.
- Writes from this process are serialised by a thread lock, so our own worker
  threads never spin in sqlite's busy handler against each other.
- `synchronous=FULL`: a write transaction is on disk (the WAL fsynced) when its
  COMMIT returns, so an acknowledged remember survives a crash of the process
  and of the machine. NORMAL survives a process crash but may lose the last
  transactions on an OS crash or power loss; FULL costs more per remember, as
  bench/latency/sqlite_synchronous.py measures
  (bench/RESULTS.md#sqlite-synchronousfull-against-normal-per-remember-benchlatencysqlite_synchronouspy).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TypeVar

from mcp_memory.core.errors import MemoryServerError, StartupError, StoreError
from mcp_memory.stores.sqlite import keywords
from mcp_memory.stores.sqlite.files import create_private_file, make_private_directories

T = TypeVar("T")

#: 2 added the keyword index (stores/sqlite/keywords.py); 3 counts it per tenant; 4 ranks its
#: candidates from the postings' rowids. A file of an older schema gains (or rebuilds) it at start.
SCHEMA_VERSION = 4
BUSY_TIMEOUT_S = 10.0
#: sqlite's `synchronous` setting for every connection (see the module notes).
SYNCHRONOUS = "FULL"
#: How long a transaction keeps retrying SQLITE_BUSY before giving up with a StoreError.
BUSY_DEADLINE_S = 120.0
WORKER_THREADS = 4
#: Ids per statement; far below SQLite's host-parameter limit (999 on old builds).
CHUNK = 500

_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS memories (
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        content TEXT NOT NULL,
        memory_type TEXT NOT NULL,
        category TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('project', 'conversation')),
        conversation TEXT,
        trust_base REAL NOT NULL,
        embedding BLOB NOT NULL,
        rev INTEGER NOT NULL,
        PRIMARY KEY (tenant, id)
    )""",
    # Incremental cache refresh: the rows a tenant gained since generation N.
    "CREATE INDEX IF NOT EXISTS memories_by_tenant_rev ON memories (tenant, rev)",
    # A text looked up as it is (VectorStore.same_text: an import's rerun). SQL has no hash
    # function here, and SQLite takes a key of any length; a file made before it gains it at start.
    "CREATE INDEX IF NOT EXISTS memories_by_text ON memories (tenant, content)",
    # Per-tenant write generation (bumped by every put/delete) and `purged`: caches older than it
    # must read the tenant again (its deletes before then are no longer listed in `deleted`).
    """CREATE TABLE IF NOT EXISTS tenants (
        tenant TEXT PRIMARY KEY,
        generation INTEGER NOT NULL,
        purged INTEGER NOT NULL
    )""",
    # The ids each delete removed, at the generation it made: a cache catches up on a delete by
    # hiding those rows, as it catches up on writes, instead of reading the whole tenant again.
    """CREATE TABLE IF NOT EXISTS deleted (
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        rev INTEGER NOT NULL,
        PRIMARY KEY (tenant, id)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS deleted_by_tenant_rev ON deleted (tenant, rev)",
    # TEXT keys use the BINARY collation: memcmp over UTF-8, i.e. byte order.
    "CREATE TABLE IF NOT EXISTS objects (key TEXT PRIMARY KEY, body TEXT NOT NULL, etag INTEGER NOT NULL)",
    # One row; never decremented, so an ETag is never issued twice (even after reopen).
    """CREATE TABLE IF NOT EXISTS etag_sequence (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        value INTEGER NOT NULL
    )""",
    "INSERT OR IGNORE INTO etag_sequence (id, value) VALUES (1, 0)",
)


def is_busy(exc: BaseException) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED (any extended code), by code or, failing that, by message."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    message = str(exc).lower()
    return "locked" in message or "busy" in message


class SqliteDatabase:
    """One SQLite file, shared by the vector store and the object store.

    Ownership: it is opened with a count of owners (the two stores); each
    store's `close()` releases its share once, and the last release closes the
    worker threads and every connection.
    """

    def __init__(self, path: Path, owners: int = 2, *, synchronous: str = SYNCHRONOUS) -> None:
        if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, got {synchronous!r}")
        self.path = path
        self.synchronous = synchronous
        self.lock_dir = path.with_name(path.name + ".locks")
        self._owners = owners
        self._closed = False
        self._executor = ThreadPoolExecutor(WORKER_THREADS, thread_name_prefix="mcp-memory-sqlite")
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._write_lock = threading.Lock()

    # ------------------------------------------------------------------ opening

    async def initialise(self, model: str, dim: int) -> None:
        """Create directories and the schema (idempotent), then check the recorded model.

        Any failure is a StartupError naming the path and the reason.
        """
        try:
            await asyncio.to_thread(self._make_directories)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if isinstance(exc, (FileExistsError, NotADirectoryError)):
                reason = "a file is in the way where a directory is needed"
            raise StartupError(
                f"cannot create the directory for the database at {self.path}: {reason}; "
                "set MEMORY_DB_PATH to a writable location"
            ) from None
        await self._run(self._enable_wal, None, "open", StartupError)
        await self._run(partial(_create_schema, model=model, dim=dim), "BEGIN IMMEDIATE", "open", StartupError)

    def _make_directories(self) -> None:
        make_private_directories(self.path, self.lock_dir)
        with contextlib.suppress(OSError):  # unwritable: SQLite's own open reports it, as before
            create_private_file(self.path)

    @staticmethod
    def _enable_wal(conn: sqlite3.Connection) -> None:
        """Persistent in the file. Where WAL is unsupported sqlite keeps its journal mode,
        which is slower for concurrent readers but still safe with BEGIN IMMEDIATE."""
        conn.execute("PRAGMA journal_mode=WAL").fetchall()

    # ------------------------------------------------------------------ running work

    async def read(self, fn: Callable[[sqlite3.Connection], T], op: str) -> T:
        """Run `fn(conn)` in one read transaction (a consistent snapshot) on a worker thread."""
        return await self._run(fn, "BEGIN", op, StoreError)

    async def write(self, fn: Callable[[sqlite3.Connection], T], op: str) -> T:
        """Run `fn(conn)` in one `BEGIN IMMEDIATE` transaction; all of it commits or none of it.

        `fn` may raise one of our own errors (e.g. PreconditionFailed) to roll back.
        It may be re-run after a rollback when the database was busy, so it must
        not have side effects outside the transaction.
        """
        return await self._run(fn, "BEGIN IMMEDIATE", op, StoreError)

    async def _run(
        self,
        fn: Callable[[sqlite3.Connection], T],
        begin: str | None,
        op: str,
        error: type[MemoryServerError],
    ) -> T:
        if self._closed:
            raise StoreError("the SQLite store is closed")
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self._executor, self._attempt, fn, begin)
        except RuntimeError as exc:  # the executor was shut down under us
            raise StoreError("the SQLite store is closed") from exc
        try:
            return await future
        except MemoryServerError:
            raise
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise error(
                    f"the database at {self.path} stayed locked by another process for "
                    f"{BUSY_DEADLINE_S:g} s during {op}"
                ) from exc
            if error is StartupError:
                raise StartupError(
                    f"cannot open the database at {self.path}: {exc}; point MEMORY_DB_PATH at an "
                    "mcp-memory SQLite file or at a new path"
                ) from exc
            raise error(f"the SQLite store failed during {op}: {exc}") from exc

    def _attempt(self, fn: Callable[[sqlite3.Connection], T], begin: str | None) -> T:
        """On a worker thread: run `fn` in a transaction, retrying while the database is busy."""
        conn = self._connection()
        deadline = time.monotonic() + BUSY_DEADLINE_S
        delay = 0.005
        while True:
            try:
                if begin == "BEGIN IMMEDIATE":
                    with self._write_lock:
                        return self._transaction(conn, fn, begin)
                return self._transaction(conn, fn, begin)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, 0.25)

    @staticmethod
    def _transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T], begin: str | None) -> T:
        if begin is None:
            return fn(conn)
        conn.execute(begin)
        try:
            result = fn(conn)
            conn.execute("COMMIT")
            return result
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            # isolation_level=None: we issue BEGIN/COMMIT ourselves. check_same_thread
            # is off only so close() can close it from another thread; in use it stays
            # on its worker thread.
            conn = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            with self._connections_lock:
                self._connections.append(conn)
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            self._local.conn = conn
        return conn

    # ------------------------------------------------------------------ closing

    async def release(self) -> None:
        """Give up one owner's share; the last one closes threads and connections."""
        self._owners -= 1
        if self._owners <= 0:
            await self.close()

    async def close(self) -> None:
        """Close now, whoever still holds a share (used when opening fails)."""
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        self._executor.shutdown(wait=True)
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()


def _create_schema(conn: sqlite3.Connection, *, model: str, dim: int) -> None:
    """Inside BEGIN IMMEDIATE: tables, then record or check the embedding model.

    A mismatch raises StartupError and the transaction rolls back, so a refused
    open changes nothing in the file.
    """
    for statement in _SCHEMA:
        conn.execute(statement)
    recorded = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    version = int(recorded.get("schema_version") or 0)
    if version > SCHEMA_VERSION:
        raise StartupError(
            f"the database at {conn_path(conn)} was written by a newer mcp-memory (schema {version}, "
            f"this one reads {SCHEMA_VERSION}); upgrade mcp-memory or point MEMORY_DB_PATH at another file"
        )
    if not recorded.get("embedding_model"):
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [("schema_version", str(SCHEMA_VERSION)), ("embedding_model", model), ("embedding_dim", str(dim))],
        )
    else:
        old_model, old_dim = recorded["embedding_model"], recorded.get("embedding_dim", "?")
        if old_model != model or old_dim != str(dim):
            raise StartupError(
                f'this database holds embeddings from "{old_model}" ({old_dim} dimensions) but the configured '
                f'embedder is "{model}" ({dim} dimensions); embeddings from different models cannot be '
                f"compared. Configure the original model again (EMBEDDING_PROVIDER, EMBEDDING_MODEL, "
                f"EMBEDDING_DIM), or point MEMORY_DB_PATH at a new file to start a fresh memory "
                f"(database: {conn_path(conn)})"
            )
    if keywords.missing(conn) or version == 3:  # a new file or an older index: once, under the lock
        keywords.build(conn)
    if recorded.get("embedding_model") and version < SCHEMA_VERSION:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


def conn_path(conn: sqlite3.Connection) -> str:
    """The file behind a connection (for messages)."""
    row = conn.execute("PRAGMA database_list").fetchone()
    return row[2] if row and row[2] else "<memory>"
