"""What the hooks remember about each Claude Code session (docs/hooks.md#once-per-session).

Which memories a session has been shown (none is injected twice), how many prompts it has
sent and whether capture has asked yet. One small JSON file per store and tenant in the data
directory, mode 0600, changed under the hooks folder's lock (no lock file of its own); it holds at most SESSIONS_MAX
sessions (the least recently seen go first) of at most SHOWN_MAX ids each, and session ids
only as hashes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mcp_memory.server.hooks.folder import digest_hex, lock_folder, private_folder

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from typing import Any

SESSIONS_MAX = 64
SHOWN_MAX = 2000


class Session:
    """One session's state (a plain class: the hook does not import dataclasses)."""

    def __init__(
        self, shown: list[str] | None = None, prompts: int = 0, asked: bool = False, compacted: bool = False
    ) -> None:
        self.shown: list[str] = shown if shown is not None else []
        self.prompts = prompts
        self.asked = asked
        self.compacted = compacted

    def show(self, ids: list[str]) -> None:
        known = set(self.shown)
        self.shown.extend(i for i in ids if i not in known)
        del self.shown[:-SHOWN_MAX]


def session_key(session_id: str) -> str:
    return digest_hex(session_id.encode("utf-8", "surrogatepass"), 32)


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _session(raw: Any) -> Session:
    if not isinstance(raw, dict):
        return Session()
    shown = raw.get("shown")
    prompts = raw.get("prompts")
    return Session(
        shown=[i for i in shown if isinstance(i, str)][-SHOWN_MAX:] if isinstance(shown, list) else [],
        prompts=prompts if isinstance(prompts, int) else 0,
        asked=raw.get("asked") is True,
        compacted=raw.get("compacted") is True,
    )


def session(path: Path, session_id: str) -> Held:
    """The session's state, for a `with` block: held under the hooks folder's lock, saved when
    the block ends without an error."""
    return Held(path, session_id)


class Held:
    """One session's state under the folder's lock (a class, not contextlib's generator: the hook
    process does not import contextlib)."""

    def __init__(self, path: Path, session_id: str) -> None:
        self.path = path
        self.key = session_key(session_id)
        self.lock: int | None = None
        self.sessions: dict[str, Any] = {}

    def __enter__(self) -> Session:
        private_folder(self.path.parent)
        self.lock = lock_folder(self.path.parent, Path(f"{self.path}.lock"))
        try:
            found = _load(self.path).get("sessions")
            self.sessions = found if isinstance(found, dict) else {}
            self.state = _session(self.sessions.get(self.key))
        except BaseException:
            self._unlock()
            raise
        return self.state

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            if kind is None:
                state = self.state
                self.sessions[self.key] = {
                    "shown": state.shown,
                    "prompts": state.prompts,
                    "asked": state.asked,
                    "compacted": state.compacted,
                    "seen": time.time(),
                }
                kept = sorted(self.sessions.items(), key=lambda kv: _seen(kv[1]), reverse=True)[:SESSIONS_MAX]
                _write(self.path, {"sessions": dict(kept)})
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def _seen(raw: Any) -> float:
    seen = raw.get("seen") if isinstance(raw, dict) else None
    return float(seen) if isinstance(seen, int | float) else 0.0


def _write(path: Path, data: dict[str, Any]) -> None:
    """Rewrite the file where it is, under the folder's lock, 0600. A new file renamed over it
    (or one truncated to nothing) makes ext4 flush it to disk at once, milliseconds of every
    prompt's hook, twice (bench/RESULTS.md, "The hook's command line, imports and time"). A
    write cut short leaves JSON that does not parse, read as no state (_load): at worst a memory
    is shown once more."""
    raw = json.dumps(data, separators=(",", ":")).encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        if os.fstat(fd).st_mode & 0o777 != 0o600:
            os.fchmod(fd, 0o600)
        done = 0
        while done < len(raw):
            done += os.pwrite(fd, raw[done:], done)
        os.ftruncate(fd, len(raw))
    finally:
        os.close(fd)
