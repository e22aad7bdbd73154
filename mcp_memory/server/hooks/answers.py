"""A hook's question answered by the service: the same code whether the serving process
answers it on its socket (listener.py) or the hook's own process does (cli/hooks/command.py)."""

from __future__ import annotations

import re
import unicodedata

from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.invisible import tidy
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.server.budget import query_of
from mcp_memory.server.hooks.wire import Ask
from mcp_memory.server.protocol import context

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _readable(text: str) -> str:
    """The prompt as a query recall takes: control characters and lone surrogates become spaces,
    what recall refuses (a tag character, a stray variation selector: core/invisible.py) is
    dropped, the other unprintable characters but the joiners and marks kept become spaces (a
    prompt is not refused for them, only read without them)."""
    text = tidy(_CONTROL.sub(" ", text), show_hidden=False)
    return "".join(ch if ch.isprintable() or ch in "\n\t" or unicodedata.category(ch) == "Cf" else " " for ch in text)


async def answer(service: MemoryService, caller: Caller, ask: Ask) -> tuple[str | None, list[str]]:
    """(the text to inject or None, the ids of the memories in it)."""
    if ask.kind == "digest":
        return context.digest_text(await service.digest(caller), ask.budget, ask.exclude)
    if ask.kind == "tool":
        return await _tool(service, caller, ask)
    query = _readable(query_of(ask.prompt)).strip()
    if not query:
        return None, []
    try:
        result = await service.recall(caller, query, mode="precision")
    except InvalidArgument:  # whatever recall refuses, the prompt goes on without memories
        return None, []
    return context.prompt_text(result, ask.budget, ask.limit, ask.min_confidence, ask.exclude)


async def _tool(service: MemoryService, caller: Caller, ask: Ask) -> tuple[str | None, list[str]]:
    """A tool call's memories (docs/hooks.md#at-the-moment-of-action); nothing for a call with
    nothing to go on, or whatever recall refuses."""
    from mcp_memory.core import actions  # when a tool hook first asks: the handshake loads no more

    call = ask.call or {}
    error = _readable(call.get("error", ""))
    action = actions.action_of(
        call.get("event", ""), call.get("tool", ""), call.get("input"), call.get("cwd", ""), error
    )
    if action is None:
        return None, []
    try:
        result = await service.concerning(caller, action)
    except InvalidArgument:
        return None, []
    stop = ask.stop if action.kind != "failure" else "off"  # a failed command has run: nothing to stop
    return context.tool_text(result, ask.budget, ask.limit, ask.min_confidence, ask.exclude, stop)
