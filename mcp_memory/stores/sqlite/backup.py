"""A consistent copy of the embedded store while servers keep writing to it.

SQLite's online backup API (`sqlite3.Connection.backup`) copies the pages of
one read transaction, so the copy is the database as it stood at one instant:
every write committed before the copy began, nothing half-applied. Copying the
file instead can catch a write in the middle, and misses what still sits in
the `-wal` file.

The copy is made under a temporary name beside the target and renamed into
place only once it has been checked, so the target is never half-written.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from mcp_memory.core.errors import StoreError
from mcp_memory.stores.sqlite.db import BUSY_TIMEOUT_S
from mcp_memory.stores.sqlite.files import create_private_file

__all__ = ["BackupResult", "backup_sqlite"]


@dataclass(frozen=True, slots=True)
class BackupResult:
    source: Path
    target: Path
    memories: int
    bytes: int


def backup_sqlite(source: Path, target: Path) -> BackupResult:
    """Copy the database at `source` to `target` (which must not exist). Blocking.

    Raises StoreError naming the path and the reason when the source is not an
    mcp-memory database, or the copy cannot be written.
    """
    if not source.is_file():
        raise StoreError(f"there is no database at {source} (MEMORY_DB_PATH)")
    if target.exists():
        raise StoreError(f"{target} already exists; back up to a new file name")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        src = sqlite3.connect(source, timeout=BUSY_TIMEOUT_S)
        try:
            src.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            if src.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories'").fetchone() is None:
                raise StoreError(f"{source} is not an mcp-memory database (it has no memories table)")
            create_private_file(partial)  # 0600 from the start, as the store itself: it holds every memory
            dst = sqlite3.connect(partial)
            try:
                src.backup(dst)  # every page in one step: one read transaction, one instant
                # The copy is one self-contained file (the store turns WAL back on when it opens it).
                dst.execute("PRAGMA journal_mode=DELETE").fetchall()
                check = dst.execute("PRAGMA quick_check").fetchone()
                if not check or check[0] != "ok":
                    raise StoreError(f"the copy of {source} failed its integrity check: {check}")
                (memories,) = dst.execute("SELECT count(*) FROM memories").fetchone()
            finally:
                dst.close()
        finally:
            src.close()
        os.replace(partial, target)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot back up {source} to {target}: {exc}") from None
    except OSError as exc:
        raise StoreError(f"cannot write the backup {target}: {exc.strerror or exc}") from None
    finally:
        for leftover in [partial, *(partial.with_name(partial.name + end) for end in ("-journal", "-wal", "-shm"))]:
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
    return BackupResult(source, target, int(memories), target.stat().st_size)
