"""The database's directory and file, private from the start.

The directory is made 0700 and the file 0600 as they are created (`mkdir` and
`os.open` with those modes), never chmod'ed afterwards, so there is no moment
at which another user could open them. SQLite gives its -wal and -shm files the
mode of the database file, so they are 0600 too. Directories and files that
already exist keep their mode: `exposure_warning` says when others can read one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def make_private_directories(db_path: Path, lock_dir: Path) -> None:
    """The database's own directory (0700) and its lock directory (0700); any missing
    parents above them get the usual mode (they are not ours alone, e.g. ~/.local/share)."""
    parent = db_path.parent
    if not parent.is_dir():
        parent.parent.mkdir(parents=True, exist_ok=True)
        parent.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
    lock_dir.mkdir(mode=DIRECTORY_MODE, exist_ok=True)


def create_private_file(path: Path) -> None:
    """Create `path` empty with mode 0600 unless it exists (SQLite takes an empty file as a
    new database); an existing file is left as it is."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def exposure_warning(path: Path) -> str | None:
    """A warning when the database file exists and its group or others may read it."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    if os.name != "posix" or not mode & (stat.S_IRGRP | stat.S_IROTH):
        return None
    return (
        f"warning: the database {path} can be read by other users (mode {mode:04o}); "
        f"to keep its memories private: chmod 600 '{path}'"
    )
