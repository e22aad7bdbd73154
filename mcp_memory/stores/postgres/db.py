"""The PostgreSQL connection layer both stores share: pools, error translation,
the binary vector adapter, and the per-tenant exclusive section.

Why it looks like this:

- Two async pools. The main pool serves every statement; statements run in
  autocommit, so each one commits on its own. `exclusive(tenant)` takes its
  connection from a second, small pool and holds a transaction-scoped advisory
  lock on it while the caller works. The caller's statements inside the block
  take main-pool connections and give them back at once, so however many
  exclusive holders (and waiters) there are, they can never starve the
  statements they are waiting for: a holder never waits for the lock pool, and
  nothing waits while holding a main-pool connection.
- Same-tenant waiters queue on an asyncio.Lock first, so one busy tenant
  occupies at most one lock-pool connection per process and other tenants
  still get theirs.
- Every connection is checked when it leaves the pool, so after a database
  restart the dead ones are dropped and replaced instead of failing the next
  call; a call made while the database is down fails after `timeout` seconds
  with a StoreError that says so.
- psycopg errors become StoreError / StartupError here, at the boundary, with
  the URL shown as `redact_url` prints it and every form of the password
  scrubbed from the driver's text. A server error contributes only its primary
  message (never DETAIL, which can quote stored values).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import numpy as np
import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from mcp_memory.core.echo import SECRET_MARKER, SECRET_PIECE, strip_echoes
from mcp_memory.core.errors import MemoryServerError, StartupError, StoreError
from mcp_memory.core.redact import redact_url

__all__ = ["PostgresDatabase", "VectorParam", "scrub"]

#: Statements in flight at once per process (the main pool's size).
DEFAULT_POOL_SIZE = 10
#: Tenants that can be inside `exclusive()` at once per process (the lock pool's size).
DEFAULT_LOCK_CONNECTIONS = 4
#: How long a call waits for a connection before it fails (the database is down or saturated).
DEFAULT_TIMEOUT_S = 10.0
#: Used when the URL does not set connect_timeout.
CONNECT_TIMEOUT_S = 10
#: How long the pool keeps retrying one lost connection (with backoff) before it gives up and
#: lets the next call start a fresh attempt. Short, so that after a restart of the database the
#: next retry is never more than about two seconds away (psycopg_pool's default is 5 minutes,
#: by when its backoff has grown to a minute between attempts).
RECONNECT_GIVE_UP_S = 2.0

_PASSWORD_QUERY = re.compile(r"[?&]password=([^&]*)", re.IGNORECASE)
_PASSWORD_KV = re.compile(r"""password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)""", re.IGNORECASE)

# The pool reports replaced connections through `logging`; with no handler configured Python
# would print them on stderr as bare text. Callers see the failures as StoreErrors instead.
logging.getLogger("psycopg").addHandler(logging.NullHandler())


# --------------------------------------------------------------------------- errors


def _secrets(url: str) -> set[str]:
    """Every spelling of the password `url` may carry (userinfo, query, key=value)."""
    found: set[str] = set()
    try:
        parts = urlsplit(url)
        if parts.password and url.count("@") == parts.netloc.count("@"):
            found.update({parts.password, unquote(parts.password)})
        for key, value in parse_qsl(parts.query, keep_blank_values=False):
            if key.lower() == "password" and value:
                found.add(value)
    except ValueError:
        pass
    for match in _PASSWORD_QUERY.finditer(url):  # as written, even when a raw '&' or '#' cut it short
        found.update({match.group(1), unquote(match.group(1))})
    if "://" in url and "@" in url:
        # A password holding '/', '?', '#' or '@' moves urlsplit's split: cut at the last '@'.
        userinfo = url.partition("://")[2].rpartition("@")[0]
        if ":" in userinfo:
            secret = userinfo.split(":", 1)[1]
            found.update({secret, unquote(secret)})
    for match in _PASSWORD_KV.finditer(url):
        value = match.group(1)
        unquoted = value[1:-1] if len(value) > 1 and value[0] == value[-1] == "'" else value
        found.update({value, unquoted, re.sub(r"\\(.)", r"\1", unquoted)})
    try:
        password = psycopg.conninfo.conninfo_to_dict(url).get("password")
        if password:
            found.add(str(password))
    except (psycopg.Error, ValueError):  # ValueError: a %-escape that is not UTF-8
        pass
    return {s for s in found if s}


def scrub(message: str, url: str) -> str:
    """`message` with the URL redacted and every spelling of its password, and every
    piece of one 4 characters or longer, replaced by `***`: libpq quotes the part of a
    URL it could not parse, e.g. `invalid integer value "hunter2secret" for connection
    option "port"` for a password holding a `/` (core/echo.py). A very short password
    is replaced only where it stands alone, or every word would lose letters."""
    if url and url in message:
        message = message.replace(url, redact_url(url))
    message = " ".join(message.split())  # libpq's multi-line messages on one line
    return strip_echoes(message, _secrets(url), min_piece=SECRET_PIECE, marker=SECRET_MARKER)


def describe(exc: BaseException, url: str) -> str:
    """What went wrong, fit for a user: the server's primary message, or the driver's, scrubbed."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    text = primary or str(exc) or type(exc).__name__
    return scrub(text, url)


# --------------------------------------------------------------------------- vectors


class VectorParam:
    """An embedding already in pgvector's binary wire format (uint16 dim, uint16 0, float4 BE…)."""

    __slots__ = ("data",)

    def __init__(self, vector: np.ndarray) -> None:
        self.data = struct.pack(">HH", vector.shape[0], 0) + vector.astype(">f4").tobytes()


class _VectorBinaryDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: VectorParam) -> bytes:
        return obj.data


def _tenant_lock_key(namespace: str, tenant: str) -> int:
    """A stable signed 64-bit advisory-lock key for `tenant` (namespaced by schema)."""
    digest = hashlib.sha256(f"mcp-memory/exclusive/{namespace}/{tenant}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


# --------------------------------------------------------------------------- the database


class PostgresDatabase:
    """One database behind both stores. Opened with a count of owners (the two stores);
    each store's `close()` releases its share once and the last one closes the pools."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
        lock_connections: int = DEFAULT_LOCK_CONNECTIONS,
        timeout: float = DEFAULT_TIMEOUT_S,
        owners: int = 2,
    ) -> None:
        self.url = url
        self.where = redact_url(url)
        self.timeout = timeout
        self._pool_size = pool_size
        self._lock_connections = lock_connections
        self._owners = owners
        self._closed = False
        self._pool: AsyncConnectionPool | None = None
        self._lock_pool: AsyncConnectionPool | None = None
        self._vector_dumper: type[Dumper] | None = None
        self._namespace = ""
        self._tenant_locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def _connect_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"autocommit": True}
        try:
            given = psycopg.conninfo.conninfo_to_dict(self.url)
        except (psycopg.Error, ValueError):  # reported, scrubbed, when connecting
            given = {}
        if "connect_timeout" not in given:
            kwargs["connect_timeout"] = CONNECT_TIMEOUT_S
        return kwargs

    # ------------------------------------------------------------------ opening

    async def connect_once(self) -> psycopg.AsyncConnection[Any]:
        """A single connection outside the pools (start-up work); StartupError if it fails."""
        try:
            return await psycopg.AsyncConnection.connect(self.url, **self._connect_kwargs())
        except (psycopg.Error, ValueError) as exc:  # ValueError: e.g. a %-escape that is not UTF-8
            raise StartupError(f"cannot connect to PostgreSQL at {self.where}: {describe(exc, self.url)}") from None

    async def open_pools(self, vector_oid: int, namespace: str) -> None:
        """Open both pools; every pooled connection sends embeddings in binary."""
        self._vector_dumper = type("VectorBinaryDumper", (_VectorBinaryDumper,), {"oid": vector_oid})
        self._namespace = namespace
        kwargs = self._connect_kwargs()
        self._pool = AsyncConnectionPool(
            self.url,
            kwargs=kwargs,
            min_size=1,
            max_size=self._pool_size,
            open=False,
            configure=self._configure,
            check=AsyncConnectionPool.check_connection,
            timeout=self.timeout,
            reconnect_timeout=RECONNECT_GIVE_UP_S,
            name="mcp-memory",
        )
        self._lock_pool = AsyncConnectionPool(
            self.url,
            kwargs=kwargs,
            min_size=0,
            max_size=self._lock_connections,
            open=False,
            check=AsyncConnectionPool.check_connection,
            timeout=self.timeout,
            reconnect_timeout=RECONNECT_GIVE_UP_S,
            name="mcp-memory-locks",
        )
        try:
            await self._pool.open(wait=True, timeout=self.timeout)
            await self._lock_pool.open()
        except (psycopg.Error, PoolTimeout) as exc:
            await self.close()
            raise StartupError(
                f"cannot open a connection pool to PostgreSQL at {self.where}: {describe(exc, self.url)}"
            ) from None

    async def _configure(self, conn: psycopg.AsyncConnection[Any]) -> None:
        assert self._vector_dumper is not None
        conn.adapters.register_dumper(VectorParam, self._vector_dumper)

    @property
    def namespace(self) -> str:
        """The schema the tables are in (advisory-lock keys are namespaced by it)."""
        return self._namespace

    # ------------------------------------------------------------------ running work

    @asynccontextmanager
    async def connection(self, op: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A main-pool connection (autocommit) for `op`; driver errors become StoreError."""
        if self._closed or self._pool is None:
            raise StoreError("the PostgreSQL store is closed")
        async with self._translated(op):
            async with self._pool.connection() as conn:
                yield conn

    async def fetch(
        self, op: str, sql: str, params: tuple[Any, ...] = (), *, prepare: bool | None = None
    ) -> list[tuple[Any, ...]]:
        """Run one parameterised statement and return its rows (empty when it returns none).
        `prepare=False` plans it for these values every time (psycopg otherwise prepares a
        statement run often, and PostgreSQL may then plan it once for any value)."""
        async with self.connection(op) as conn:
            cursor = await conn.execute(sql, params, prepare=prepare)
            return await cursor.fetchall() if cursor.description is not None else []

    @asynccontextmanager
    async def _translated(self, op: str) -> AsyncIterator[None]:
        try:
            yield
        except MemoryServerError:
            raise
        except PoolTimeout:
            raise StoreError(
                f"no connection to PostgreSQL at {self.where} within {self.timeout:g} s during {op}; "
                "is the database running and reachable?"
            ) from None
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"lost the connection to PostgreSQL at {self.where} during {op}: {describe(exc, self.url)}"
            ) from None
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL refused {op}: {describe(exc, self.url)}") from None

    @asynccontextmanager
    async def exclusive(self, tenant: str) -> AsyncIterator[None]:
        """Held by at most one task in every process sharing the database (see the module note).

        Not re-entrant. Statements inside the block run on other connections and
        commit on their own, so the next holder sees them.
        """
        if self._closed or self._lock_pool is None:
            raise StoreError("the PostgreSQL store is closed")
        lock, users = self._tenant_locks.get(tenant, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._tenant_locks[tenant] = (lock, users + 1)
        try:
            async with lock:
                async with self._translated("exclusive"):
                    async with self._lock_pool.connection() as conn:
                        async with conn.transaction():
                            key = _tenant_lock_key(self._namespace, tenant)
                            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
                            yield
        finally:
            lock, users = self._tenant_locks[tenant]
            if users <= 1:
                del self._tenant_locks[tenant]
            else:
                self._tenant_locks[tenant] = (lock, users - 1)

    # ------------------------------------------------------------------ closing

    async def release(self) -> None:
        """Give up one owner's share; the last one closes the pools."""
        self._owners -= 1
        if self._owners <= 0:
            await self.close()

    async def close(self) -> None:
        """Close now, whoever still holds a share (used when opening fails)."""
        if self._closed:
            return
        self._closed = True
        for pool in (self._lock_pool, self._pool):
            if pool is not None:
                await pool.close()
