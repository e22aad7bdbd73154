"""What the hooks remember about each Claude Code session (docs/hooks.md#once-per-session).

Which memories a session has been shown (none is injected twice), how many prompts it has
sent and whether capture has asked yet. One small JSON file per store and tenant in the data
directory, mode 0600, changed under the hooks folder's lock (no lock file of its own); it holds at most SESSIONS_MAX
sessions (the least recently seen go first) of at most SHOWN_MAX ids each, and session ids
only as hashes.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from mcp_memory.server.hooks.folder import digest_hex, lock_folder, private_folder

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Iterator
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


@contextlib.contextmanager
def session(path: Path, session_id: str) -> Iterator[Session]:
    """The session's state, saved when the block ends without an error."""
    private_folder(path.parent)
    lock = lock_folder(path.parent, Path(f"{path}.lock"))
    try:
        data = _load(path)
        found = data.get("sessions")
        sessions: dict[str, Any] = found if isinstance(found, dict) else {}
        key = session_key(session_id)
        state = _session(sessions.get(key))
        yield state
        sessions[key] = {
            "shown": state.shown,
            "prompts": state.prompts,
            "asked": state.asked,
            "compacted": state.compacted,
            "seen": time.time(),
        }
        kept = sorted(sessions.items(), key=lambda kv: _seen(kv[1]), reverse=True)[:SESSIONS_MAX]
        _write(path, {"sessions": dict(kept)})
    finally:
        if lock is not None:
            os.close(lock)


def _seen(raw: Any) -> float:
    seen = raw.get("seen") if isinstance(raw, dict) else None
    return float(seen) if isinstance(seen, int | float) else 0.0


def _write(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, separators=(",", ":"))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
