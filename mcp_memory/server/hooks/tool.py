"""serve-stdio's `claude_code_hook` tool: a Claude Code hook of type `mcp_tool` asks the running
server directly, without a process start or a socket (docs/hooks.md#hooks-as-tool-calls).

The tool answers an event the way the socket hook does, with the same code: events.handle
(the gate, the budget, the per-session state in the hooks folder, the output JSON) asking
answers.answer (what the socket's listener runs). The tenant and conversation are the
server's own (the transport's), never an argument. Claude Code substitutes the hook's JSON
input into the arguments (`${prompt}`, `${tool_input.file_path}`), an absent field as "".

MCP has no hidden tool: the model sees this one in tools/list. It reads only what recall
would show this caller, renders memories as quoted data, and writes nothing but which
memories a session id has been shown.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from mcp_memory.core.arguments import Terms
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.answers import answer
from mcp_memory.server.hooks.events import Options, handle
from mcp_memory.server.hooks.wire import CALL_FIELDS, TOOL_EVENTS, Ask
from mcp_memory.server.protocol.catalogue import READ_ONLY, Answer, ToolSpec

NAME = "claude_code_hook"
#: The events the tool answers: those an `mcp_tool` hook can serve once the server is connected.
#: SessionStart (run before Claude Code has an MCP connection: it skips an mcp_tool hook there),
#: PreCompact and Stop stay command hooks.
EVENTS = ("UserPromptSubmit", *TOOL_EVENTS)
#: The hook input's fields an argument may carry, besides the event: the payload's own, and the
#: tool input's fields a tool question reads (wire.py CALL_FIELDS).
PAYLOAD_FIELDS = ("session_id", "cwd", "prompt", "tool_name", "error")
FIELDS = ("hook_event_name", *PAYLOAD_FIELDS, *CALL_FIELDS)

DESCRIPTION = (
    "Not for you: the mcp-memory plugin's Claude Code hooks call this tool for the memories they add "
    "to the context before a prompt or a tool call. To search memories, call recall; this tool gives "
    "no more than recall would, as a hook's JSON output."
)

_TEXT = {"type": "string"}
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hook_event_name": {"type": "string", "enum": list(EVENTS)},
        **{name: _TEXT for name in (*PAYLOAD_FIELDS, *CALL_FIELDS)},
    },
    "required": ["hook_event_name"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hookSpecificOutput": {
            "type": "object",
            # a PreToolUse stop answers with the decision instead of the context (docs/hooks.md#stopped-before-it-runs)
            "properties": {
                "hookEventName": _TEXT,
                "additionalContext": _TEXT,
                "permissionDecision": {"type": "string", "enum": ["deny"]},
                "permissionDecisionReason": _TEXT,
            },
        }
    },
}


def payload_of(args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the event, the hook input as events.handle reads it); InvalidArgument names a wrong field."""
    unknown = sorted(set(args) - set(FIELDS))
    if unknown:
        raise InvalidArgument(
            f"{{field}} is not an argument of {NAME} (it takes {', '.join(FIELDS)})", field=unknown[0]
        )
    event = args.get("hook_event_name")
    if event not in EVENTS:
        raise InvalidArgument(f"{{field}} must be one of {', '.join(EVENTS)}", field="hook_event_name")
    for name in FIELDS:
        if name in args and not isinstance(args[name], str):
            raise InvalidArgument("{field} must be a string", field=name)
    payload: dict[str, Any] = {"hook_event_name": event}
    payload.update({name: args[name] for name in PAYLOAD_FIELDS if args.get(name)})
    tool_input = {name: args[name] for name in CALL_FIELDS if args.get(name)}
    if tool_input:
        payload["tool_input"] = tool_input
    return event, payload


def hook_tool(log: JsonLog, warm: Callable[[], bool], environ: Mapping[str, str] | None = None) -> ToolSpec:
    """The tool, for a serve-stdio whose model is loaded once `warm()` is true."""
    env = os.environ if environ is None else environ

    def say(event: str, hook: str | None, **context: Any) -> None:
        log.warn(event, "hook tool", hook=hook, **context)

    async def run(service: MemoryService, caller: Caller, args: Mapping[str, Any], terms: Terms) -> Answer:
        event, payload = payload_of(args)
        loop = asyncio.get_running_loop()
        #: Set when Claude Code gave up on the call (its hook timed out): no memory is then recorded
        #: as shown to a session that never saw it.
        abandoned = threading.Event()

        def ask(
            question: Ask, hook: str, environ: Mapping[str, str], seconds: float, starting: float | None = None
        ) -> tuple[str | None, list[str]]:
            """answers.answer on the server's loop, waited for as the socket hook waits for it."""
            future = asyncio.run_coroutine_threadsafe(answer(service, caller, question), loop)
            wait = seconds if warm() else max(seconds, starting or 0.0)
            try:
                found = future.result(wait)
            except concurrent.futures.TimeoutError:
                future.cancel()
                say("hook_timed_out", hook, seconds=wait)
                return None, []
            return (None, []) if abandoned.is_set() else found

        try:  # handle's state file is read and written under a lock: off the loop
            result = await asyncio.to_thread(
                handle, Options(event), payload, env, ask, say, caller=(caller.tenant, caller.conversation)
            )
        except asyncio.CancelledError:
            abandoned.set()
            raise
        except folder.NotOurs as exc:
            say("hook_folder_refused", event, reason=exc.reason)
            result = None
        except (OSError, ValueError) as exc:
            say("hook_failed", event, reason=type(exc).__name__)
            result = None
        if result is None:  # nothing qualifies: a hook output with no field changes nothing
            return Answer("{}", {})
        return Answer(json.dumps(result, separators=(",", ":")), result)  # as the hook command prints it

    return ToolSpec(
        NAME, "Claude Code hook (not for the model)", DESCRIPTION, INPUT_SCHEMA, OUTPUT_SCHEMA, run, READ_ONLY
    )
