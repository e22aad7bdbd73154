"""Where a store's hooks meet its serving process: the data directory's hooks/ folder, the socket
of each (store, tenant), the marker of a process still starting, and the sessions' state file;
and whether that folder is this user's own (docs/hooks.md#how-it-is-fast).

The hook process imports this module, so it imports only the standard library, the settings'
reader of the environment (config/__init__.py), the backends' table (stores/__init__.py, which loads
no backend) and platformdirs off Linux, to find the data directory.
"""

from __future__ import annotations

import json
import os
import stat  # loaded with os already
import sys
from pathlib import Path

from mcp_memory.config import Env
from mcp_memory.stores import store_variables, user_data_dir

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

try:  # the C hash module itself (3.11; 3.12 calls it _sha2): hashlib would load OpenSSL's on every hook
    _SHA256: Any = __import__("_sha256" if sys.version_info < (3, 12) else "_sha2").sha256
except ImportError:  # pragma: no cover - a build without it
    from hashlib import sha256 as _SHA256


def digest_hex(data: bytes, length: int) -> str:
    """The first `length` hex digits of data's SHA-256."""
    return str(_SHA256(data).hexdigest()[:length])


#: The tenant of a hook with neither --tenant nor MEMORY_TENANT, as for every command
#: (core/identity.py DEFAULT_TENANT; tests/cli/test_local_entry_points.py holds the two equal).
DEFAULT_TENANT = "local"
#: The data directory's name (stores/sqlite/location.py DATA_DIR_NAME, the distribution's name).
DATA_DIR_NAME = "mcp-tenant-memory"
#: Where the data directory's hook sockets live, and the longest path a Unix socket may have.
SOCKET_DIR_NAME = "hooks"
SOCKET_PATH_MAX = 100


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user data directory, where the hook files live: the default database's, by the same
    rule (stores.user_data_dir)."""
    return user_data_dir(Env(os.environ if environ is None else environ).raw, DATA_DIR_NAME)


def store_key(tenant: str, environ: Mapping[str, str] | None = None) -> str:
    """A short name for (store, tenant): the same in every process that would open the same store,
    by the variables the backends' table says choose it (stores.store_variables)."""
    env = os.environ if environ is None else environ
    # the values as given, not as the settings trim them: the key of every version so far
    chosen = [[name, env.get(name)] for name in store_variables()]
    raw = json.dumps([tenant, chosen], separators=(",", ":"))
    return digest_hex(raw.encode("ascii"), 20)


def socket_path(tenant: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the serving process of this (store, tenant) answers hooks: the data directory's
    hooks/ folder, or, when that path is too long for a Unix socket, a private folder of the
    user's in the temporary directory."""
    name = f"{store_key(tenant, environ)}.sock"
    folder = data_dir(environ) / SOCKET_DIR_NAME
    path = folder / name
    if len(os.fsencode(str(path))) <= SOCKET_PATH_MAX:
        return path
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"mcp-tenant-memory-{uid}" / name


def state_path(tenant: str, environ: Mapping[str, str] | None = None) -> Path:
    """The per-session state of this (store, tenant)'s hooks (server/hooks/state.py)."""
    return data_dir(environ) / SOCKET_DIR_NAME / f"{store_key(tenant, environ)}.sessions.json"


def starting_path(socket: Path) -> Path:
    """The marker a serving process keeps beside its socket from the moment it listens until its
    model is loaded: a hook that finds it waits longer (cli/hooks/command.py STARTING_WAIT_MS)."""
    return socket.with_name(socket.name.removesuffix(".sock") + ".starting")


#: The marker serve-stdio wrote at its very start (cli/entry.py), before its app loaded: its hook
#: socket (server/hooks/listener.py) takes it over, or removes it when it will not listen there.
EARLY_MARKER: Path | None = None


class NotOurs(OSError):
    """A hooks folder that is not this user's own directory: a symbolic link, not a directory, or
    another user's (anyone may make the temporary directory's folder first). Nothing is written
    there and nothing found there is believed (docs/hooks.md#how-it-is-fast)."""

    def __init__(self, folder: Path, reason: str) -> None:
        super().__init__(f"the hooks folder {folder} is {reason}, not this user's own: no socket or marker there")
        #: Fixed words, for a hook's log line.
        self.reason = reason


def own_folder(folder: Path) -> bool:
    """True when `folder` is this user's own directory (not followed through a symbolic link),
    made 0700 if its mode was another; False when it is missing; NotOurs when it is anything else."""
    try:
        found = os.lstat(folder)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(found.st_mode):
        raise NotOurs(folder, "a symbolic link")
    if not stat.S_ISDIR(found.st_mode):
        raise NotOurs(folder, "not a directory")
    if hasattr(os, "getuid") and found.st_uid != os.getuid():
        raise NotOurs(folder, "another user's")
    if stat.S_IMODE(found.st_mode) != 0o700:
        os.chmod(folder, 0o700)  # ours: the socket and marker need it private
    return True


def private_folder(folder: Path) -> None:
    """Make the hooks' `folder` 0700 (as it is created, or at once when it is ours with another
    mode), and the data directory above it too when that is missing: it is also the default
    database's directory, private from its creation (stores/sqlite/files.py), and serve-stdio's
    socket and a hook's state may come before any store. The folders above it get the usual mode;
    existing ones keep theirs. NotOurs when `folder` is not this user's own directory."""
    if own_folder(folder):
        return
    folder.parent.parent.mkdir(parents=True, exist_ok=True)
    folder.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:  # made meanwhile, or a dangling symbolic link: looked at below
        pass
    if not own_folder(folder):  # pragma: no cover - removed again at once
        raise NotOurs(folder, "gone")


def _holder(marker: Path) -> int:
    """The process id a marker holds; 0 when there is none."""
    try:
        with open(marker, "rb") as found:
            return int(found.read(32).strip() or b"0")
    except (OSError, ValueError):
        return 0


def _running(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's (cannot happen in a 0700 folder, but it is alive)
        return True
    return True


def lock_folder(folder: Path, legacy: Path | None = None) -> int | None:
    """An exclusive lock on the hooks folder itself (flock on its directory), held until the
    returned descriptor is closed; None without flock. Changing a marker or the sessions' state
    takes it: a lock file of its own per store and tenant was left behind forever. `legacy`, a
    lock file an earlier version left beside what is changed, is removed under the lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows, where serve-stdio drops its marker anyway
        return None
    lock = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
    except BaseException:
        os.close(lock)
        raise
    if legacy is not None:
        try:
            legacy.unlink()
        except OSError:
            pass
    return lock


def _lock(marker: Path) -> int | None:
    """The folder's lock, for changing `marker`."""
    return lock_folder(marker.parent, Path(f"{marker}.lock"))


def mark_starting(socket: Path, take_over: bool = False) -> Path:
    """Write this process's marker beside `socket` (0600, in a 0700 folder); returns its path.

    A marker of another process still running is left in place unless `take_over` (the process
    about to listen on `socket`): of two serve-stdio starting together, the one that finds the
    other listening must not leave that one's warm-up unmarked (docs/hooks.md#a-sessions-first-seconds).
    NotOurs when the folder is not this user's own."""
    marker = starting_path(socket)
    private_folder(marker.parent)
    lock = _lock(marker)
    try:
        holder = _holder(marker)
        if not take_over and holder != os.getpid() and _running(holder):
            return marker
        written = marker.with_name(f"{marker.name}.{os.getpid()}")
        previous = os.umask(0o177)
        try:
            written.write_text(str(os.getpid()), encoding="ascii")
        finally:
            os.umask(previous)
        os.replace(written, marker)  # whole or absent: a hook never reads it half written
    finally:
        if lock is not None:
            os.close(lock)
    return marker


def unmark_starting(marker: Path) -> None:
    """Remove `marker` if it is this process's (another process may have written it since)."""
    try:
        if not own_folder(marker.parent) or _holder(marker) != os.getpid():
            return
        lock = _lock(marker)
        try:
            if _holder(marker) == os.getpid():  # looked at again under the lock: a take-over may have come
                marker.unlink()
        finally:
            if lock is not None:
                os.close(lock)
    except OSError:
        pass


def server_starting(socket: Path) -> bool:
    """True when the marker beside `socket`, in this user's own folder, names a process that is still running."""
    try:
        if not own_folder(socket.parent):
            return False
    except OSError:
        return False
    return _running(_holder(starting_path(socket)))
