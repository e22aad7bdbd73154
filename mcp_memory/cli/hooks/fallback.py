"""A hook's answer from its own process, when no serving process listens (docs/hooks.md#how-it-is-fast).

The digest needs the store only; a prompt also loads the embedding model, which takes longer
than a hook waits on most machines (cli/hooks/command.py FALLBACK_SECONDS), so it usually injects
nothing: the serving process is what makes prompt injection fast.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_memory.core.identity import parse_conversation
from mcp_memory.core.model import Caller
from mcp_memory.server.hooks.wire import Ask


async def answer_here(ask: Ask, environ: Mapping[str, str]) -> tuple[str | None, list[str]]:
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.server.hooks.answers import answer

    caller = Caller(ask.tenant, parse_conversation(ask.conversation, "conversation"))
    service = await open_service(Settings.from_env(environ))
    try:
        return await answer(service, caller, ask)
    finally:
        await service.close()
