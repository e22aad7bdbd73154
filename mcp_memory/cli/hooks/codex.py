"""Codex CLI's hook payloads, read as the Claude Code ones the hook answers (docs/hooks.md#codex).

Codex's hook inputs carry the fields the hook reads under Claude Code's names (session_id, cwd,
source, prompt, stop_hook_active, tool_name, tool_input) and its outputs take the same
hookSpecificOutput.additionalContext and decision/reason (codex-rs/hooks/schema/generated/); only
an edit differs: `apply_patch`, whose tool_input.command is the patch, its file headers naming the
files it touches (the apply_patch grammar of openai/codex). Imported only with
`--client codex`, and standard library only: it runs before every Codex tool call.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: The patch grammar's file headers, each followed by a path.
PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def patched_path(patch: str) -> str | None:
    """The first file a Codex patch adds, updates, deletes or moves to; None when it names none."""
    for line in patch.splitlines():
        for header in PATCH_HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip()
                if path:
                    return path
    return None


def as_claude_code(event: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The payload as the events read it: an `apply_patch` call becomes an Edit of the first file
    its patch touches (relative paths taken from the payload's cwd, as Codex applies them); a
    patch naming no file, no tool call to go on. Everything else is read as sent."""
    data = dict(payload)
    if event != "PreToolUse" or data.get("tool_name") != "apply_patch":
        return data
    given = data.get("tool_input")
    patch = given.get("command") if isinstance(given, dict) else None
    path = patched_path(patch) if isinstance(patch, str) else None
    if path is None:
        data.pop("tool_input", None)
        return data
    cwd = data.get("cwd")
    if not path.startswith("/") and isinstance(cwd, str) and cwd.strip():
        path = cwd.rstrip("/") + "/" + path
    data["tool_name"] = "Edit"
    data["tool_input"] = {"file_path": path}
    return data
