"""Per-tenant mutual exclusion across tasks and processes, for `exclusive(tenant)`.

Why two layers: an `asyncio.Lock` per tenant queues this process's tasks
cheaply and fairly; an OS lock (`flock`) on a per-tenant lock file beside the
database excludes other processes (and other store instances in this process,
since flock locks belong to an open file). The flock wait runs in a thread, so
the event loop never blocks. One file per tenant (named by a hash of the tenant)
means tenants never wait for each other.

The SQLite write lock is not involved, so the store's own writes inside an
exclusive block cannot deadlock with it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

from mcp_memory.core.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: only the in-process lock applies
    fcntl = None  # type: ignore[assignment]


class TenantLocks:
    """`hold(tenant)`: held by at most one task in any process sharing `lock_dir`."""

    def __init__(self, lock_dir: Path) -> None:
        self._lock_dir = lock_dir
        self._locks: dict[str, asyncio.Lock] = {}

    def path(self, tenant: str) -> Path:
        digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:32]
        return self._lock_dir / f"{digest}.lock"

    @asynccontextmanager
    async def hold(self, tenant: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(tenant, asyncio.Lock())
        async with lock:
            fd = await _lock_file(self.path(tenant))
            try:
                yield
            finally:
                if fd is not None:
                    os.close(fd)  # closing the only descriptor releases the flock


async def _lock_file(path: Path) -> int | None:
    """Open `path` and take an exclusive flock on it (waiting in a thread). The
    descriptor is returned; closing it releases the lock."""
    if fcntl is None:
        return None
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # the lock directory was removed after open
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(f"cannot open the lock file {path}: {exc.strerror or exc}") from exc
    waiting = asyncio.ensure_future(asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX))
    try:
        await asyncio.shield(waiting)
    except asyncio.CancelledError:
        # The thread may still get the lock later: close the file when it finishes,
        # which releases whatever it got.
        waiting.add_done_callback(partial(_close_when_done, fd))
        raise
    except BaseException:
        os.close(fd)
        raise
    return fd


def _close_when_done(fd: int, waiting: asyncio.Future[None]) -> None:
    if not waiting.cancelled():
        waiting.exception()  # retrieved, so asyncio does not report it as lost
    os.close(fd)
