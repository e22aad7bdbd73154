"""Hook payloads as Claude Code's hooks reference documents them (docs/hooks.md#what-claude-code-sends),
and a way to run the hook against a serving process of the test's own service."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp_memory.cli.hooks import command as hook
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.server.hooks import folder as hooks
from mcp_memory.server.hooks.listener import HookSocket

COMMON = {
    "session_id": "abc123",
    "transcript_path": "/Users/ada/.claude/projects/p/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
    "cwd": "/Users/ada/my-project",
}


def session_start(source: str = "startup", **extra: Any) -> dict[str, Any]:
    return {**COMMON, "hook_event_name": "SessionStart", "source": source, "model": "claude-sonnet-4-6", **extra}


def user_prompt(prompt: str, **extra: Any) -> dict[str, Any]:
    return {**COMMON, "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra}


def stop(active: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        **COMMON,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "I've completed the refactoring.",
        **extra,
    }


def pre_compact(trigger: str = "auto", **extra: Any) -> dict[str, Any]:
    return {**COMMON, "hook_event_name": "PreCompact", "trigger": trigger, "custom_instructions": "", **extra}


def pre_tool_use(tool: str, tool_input: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """PreToolUse as Claude Code 2.1.328 sends it (its hook input schema: tool_name, tool_input, tool_use_id)."""
    return {
        **COMMON,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC123",
        **extra,
    }


def post_tool_use_failure(command: str, error: str, **extra: Any) -> dict[str, Any]:
    """PostToolUseFailure of a Bash call, as Claude Code 2.1.328 sends it for a command that exited
    non-zero (its `error` is "Exit code N" and the command's output)."""
    return {
        **COMMON,
        "permission_mode": "default",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run it"},
        "tool_use_id": "toolu_01ABC124",
        "error": error,
        "is_interrupt": False,
        "duration_ms": 18,
        **extra,
    }


def environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "d"),
        "MEMORY_DB_PATH": str(tmp_path / "m.db"),
        **extra,
    }


class Run:
    """What one hook run printed and returned."""

    def __init__(self, code: int, out: str) -> None:
        self.code = code
        self.out = out

    @property
    def json(self) -> dict[str, Any] | None:
        return json.loads(self.out) if self.out.strip() else None

    @property
    def context(self) -> str | None:
        data = self.json
        return None if data is None else data["hookSpecificOutput"]["additionalContext"]


async def run_hook(args: list[str], stdin: str | bytes, env: Mapping[str, str]) -> Run:
    """The hook in a thread (it blocks on its socket while this loop serves it)."""
    raw = stdin.encode("utf-8", "surrogatepass") if isinstance(stdin, str) else stdin
    source = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    out = io.StringIO()
    code = await asyncio.to_thread(hook.main, args, stdin=source, stdout=out, environ=env)
    return Run(code, out.getvalue())


def payload(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)


async def serving(service: Any, env: Mapping[str, str], tenant: str = "acme") -> HookSocket:
    server = HookSocket(service, Caller(tenant), NullLog(), path=hooks.socket_path(tenant, env))
    await server.start()
    assert server.listening
    return server


def reason_of(out: str) -> str:
    """A stop's reason, after checking the line is exactly the documented PreToolUse decision."""
    data = json.loads(out)
    assert set(data) == {"hookSpecificOutput"}
    decision = data["hookSpecificOutput"]
    assert set(decision) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert (decision["hookEventName"], decision["permissionDecision"]) == ("PreToolUse", "deny")
    text: str = decision["permissionDecisionReason"]
    return text


def context_of(out: str, event: str = "PreToolUse") -> str:
    """A tool hook's additional context, after checking the line holds that and nothing more."""
    data = json.loads(out)
    assert data == {
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": data["hookSpecificOutput"]["additionalContext"],
        }
    }
    text: str = data["hookSpecificOutput"]["additionalContext"]
    return text
