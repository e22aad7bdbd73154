"""`mcp-memory hook EVENT`, the Claude Code hooks' command (docs/hooks.md): command.py parses the
event and asks the serving process on its socket, codex.py reads Codex CLI's payloads, and
fallback.py answers in this process when nothing listens.

HOOK below is the `hook` command's event and options as cli/app.py declares them to Typer, written
by `python -m mcp_memory.cli.quick_table` (do not edit; tests/cli/test_quick_options.py fails
while it is stale): the hook process reads its command line with it (command.py parse), without
importing Typer or another module. The keys are cli/quick_options.py's, and `usage`, the line a
refused command line is logged with.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from typing import Any

HOOK: dict[str, Any] = {
    "valued": {
        "--tenant": "tenant",
        "-t": "tenant",
        "--conversation": "conversation",
        "-c": "conversation",
        "--client": "client",
    },
    "flags": {"--conversation-from-session": "conversation_from_session"},
    "arguments": ["event"],
    "multiple": [],
    "integers": [],
    "choices": {
        "event": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUseFailure", "PreCompact", "Stop"],
        "client": ["claude-code", "codex"],
    },
    "defaults": {
        "event": None,
        "tenant": None,
        "conversation": None,
        "conversation_from_session": False,
        "client": "claude-code",
    },
    "usage": "usage: mcp-memory hook {SessionStart,UserPromptSubmit,PreToolUse,PostToolUseFailure,PreCompact,Stop} [--tenant NAME] [--conversation KEY] [--conversation-from-session] [--client {claude-code,codex}]",
}
