"""Where the embedded database lives when MEMORY_DB_PATH does not say (docs/backends.md#where-the-embedded-store-lives).

The platform's user data directory (platformdirs: XDG on Linux, ~/Library/Application Support
on macOS, %LOCALAPPDATA% on Windows) / mcp-tenant-memory / memory.db. A database at the old
default place is still used, never replaced: with a notice saying where it is and how to move it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_memory.core.version import DISTRIBUTION

#: The data directory's name under the platform's user data directory (platformdirs); no peer uses it.
DATA_DIR_NAME = DISTRIBUTION
DB_FILE_NAME = "memory.db"
#: Where the database was kept before: $XDG_DATA_HOME (else ~/.local/share) / mcp-memory, a
#: directory another memory server (mcp-memory-service) also uses.
LEGACY_DATA_DIR_NAME = "mcp-memory"


def database_place(raw: Callable[[str], str | None], data_dir: Path) -> dict[str, Any]:
    """`db_path` and `db_path_notice` (one line for stderr when it is not the default place),
    from MEMORY_DB_PATH, HOME and XDG_DATA_HOME as `raw` gives them (trimmed, None when unset)
    and `data_dir`, the user data directory / DATA_DIR_NAME those variables give (stores.user_data_dir)."""
    given = raw("MEMORY_DB_PATH")
    if given is not None:
        return {"db_path": Path(given).expanduser(), "db_path_notice": None}
    new = data_dir / DB_FILE_NAME
    legacy = _legacy_path(raw)
    notice = None
    if new.exists() or new == legacy or not legacy.is_file():
        if new != legacy and legacy.is_file():
            notice = f"note: an older database at {legacy} is not used; this one is {new}"
        return {"db_path": new, "db_path_notice": notice}
    notice = (
        f"note: using the database at {legacy}, the old default place; the default is now {new}. "
        f"To move it, stop every mcp-memory process, then: mkdir -p '{new.parent}' && "
        f"mv '{legacy}'* '{new.parent}/' (or set MEMORY_DB_PATH={legacy} to keep it there)"
    )
    return {"db_path": legacy, "db_path_notice": notice}


def _legacy_path(raw: Callable[[str], str | None]) -> Path:
    data_home = raw("XDG_DATA_HOME")
    if data_home is None:
        home = raw("HOME") or str(Path.home())
        data_home = str(Path(home) / ".local" / "share")
    return Path(data_home).expanduser() / LEGACY_DATA_DIR_NAME / DB_FILE_NAME
