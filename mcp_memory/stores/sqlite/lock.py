"""Per-tenant mutual exclusion across tasks and processes, for `exclusive(tenant)`.

Why two layers: an `asyncio.Lock` per tenant queues this process's tasks
cheaply and fairly; a file lock (`filelock`: flock on Unix, msvcrt locking on
Windows) on a per-tenant lock file beside the database excludes other processes
(and other store instances in this process: each holds its own descriptor). The
wait for the file lock runs in a thread, so the event loop never blocks; a
waiter that gives up (is cancelled) stops waiting and never keeps the lock. One
file per tenant (named by a hash of the tenant) means tenants never wait for
each other. The lock files are kept (never unlinked); they hold nothing, and their
directory is the owner's alone (files.py).

The uncontended case is taken on the event loop with one non-blocking `flock` on a
descriptor of our own, a small share of filelock's bookkeeping plus a thread hop on every
remember (bench/RESULTS.md#where-remembers-time-went-between-e011de9-and-main-and-two-cuts-issue-15-latency-2026-12-01):
filelock's Unix lock is the same `flock`, so the two exclude each other.
Only when that attempt finds the lock held (or flock is unavailable: Windows, a filesystem without
it) does the wait go through filelock in a thread, as described above.

The SQLite write lock is not involved, so the store's own writes inside an
exclusive block cannot deadlock with it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_memory.core.errors import StoreError

try:
    import fcntl
except ImportError:  # Windows: every hold goes through filelock
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from filelock import FileLock

#: How often a waiting thread retries the file lock (filelock polls a non-blocking attempt).
POLL_S = 0.005
#: The length of one bounded wait; the thread retries until it has the lock or is cancelled.
WAIT_SLICE_S = 1.0


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
            path = self.path(tenant)
            fd = _try_flock(path)
            if fd is not None:
                try:
                    yield
                finally:
                    os.close(fd)  # closing our only descriptor releases the flock
                return
            file_lock = await _acquire(path)
            try:
                yield
            finally:
                file_lock.release()


def _try_flock(path: Path) -> int | None:
    """The lock at once, on this thread, when nobody holds it: our descriptor, else None (held,
    or no flock here: the caller waits through filelock, which also handles every error)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


async def _acquire(path: Path) -> FileLock:
    """Take the file lock at `path`, waiting in a thread; cancelling the wait stops it."""
    # Imported here, at the first exclusive section, not while serve-stdio starts.
    from filelock import FileLock, Timeout

    file_lock = FileLock(path, thread_local=False, preserve_lock_file=True, poll_interval=POLL_S)
    given_up = threading.Event()

    def attempt() -> bool:
        # A bounded wait, retried: filelock refuses an unbounded one while another store
        # instance in this process holds the same file (it would deadlock a single thread;
        # here the holder runs on the event loop and releases it).
        try:
            file_lock.acquire(timeout=WAIT_SLICE_S, cancel_check=given_up.is_set)
        except Timeout:
            return False
        return True

    def wait() -> None:
        try:
            while not attempt():
                if given_up.is_set():
                    raise Timeout(str(path))
        except FileNotFoundError:  # the lock directory was removed after open
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            wait()

    waiting = asyncio.ensure_future(asyncio.to_thread(wait))
    try:
        await asyncio.shield(waiting)
    except asyncio.CancelledError:
        given_up.set()
        # The thread may have got the lock just before it saw the flag: release it then.
        waiting.add_done_callback(lambda done: _release_if_taken(file_lock, done))
        raise
    except OSError as exc:
        raise StoreError(f"cannot open the lock file {path}: {exc.strerror or exc}") from exc
    return file_lock


def _release_if_taken(file_lock: FileLock, waiting: asyncio.Future[None]) -> None:
    if waiting.cancelled():
        return
    if waiting.exception() is None:  # retrieved either way, so asyncio does not report it as lost
        file_lock.release()
