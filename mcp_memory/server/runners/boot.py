"""What both runners share: the boot lines that say which storage, embedder and documentation
serve this process (docs/operations.md), and the orderly close."""

from __future__ import annotations

from typing import Any

from mcp_memory.server.protocol.tools import ToolLayer


async def close_service(tools: ToolLayer | None, service: Any, hooks: Any = None) -> None:
    """Stop answering hooks, close the tool layer (its docs client), then the service (counters
    flushed once, store)."""
    try:
        if hooks is not None:
            await hooks.close()
        if tools is not None:
            await tools.close()
    finally:
        await service.close()


def storage_line(settings: Any) -> str:
    """Which storage serves this process, where, and why it was chosen (docs/storage.md)."""
    from mcp_memory.app import storage_where

    return f"storage: {settings.store.backend} {storage_where(settings)} — {settings.store.backend_reason}"


def describe_docs(knowledge_base_id: str | None) -> str:
    """The boot line saying whether search_docs is offered (docs/operations.md)."""
    if knowledge_base_id:
        return f"docs: bedrock-kb://{knowledge_base_id} (search_docs offered)"
    return "docs: no KNOWLEDGE_BASE_ID — memories only, search_docs not offered"


def describe_setup(settings: Any, tools: ToolLayer) -> list[str]:
    """Which storage (and why), which embedder, whether search_docs is offered."""
    return [
        storage_line(settings),
        f"embedder: {tools.service.describe_embedder()}",
        describe_docs(settings.store.knowledge_base_id),
    ]
