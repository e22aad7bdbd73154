"""One memory (docs/web.md#a-memory): its fields, its use and its neighbours, and the edits on it
(edit as a replacing remember, forget after a confirmation)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.responses import RedirectResponse, Response

from mcp_memory.core import arguments
from mcp_memory.core.model import MEMORY_TYPES
from mcp_memory.core.requests import RememberRequest
from mcp_memory.web.endpoint import TERMS, Ctx, guarded


@guarded()
async def memory(ctx: Ctx) -> Response:
    memory_id = ctx.request.path_params["memory_id"]
    service = ctx.view.service
    detail = await service.detail(ctx.caller, memory_id) if arguments.MEMORY_ID.fullmatch(memory_id) else None
    if detail is None:
        return missing(ctx, memory_id)
    return ctx.page(
        "memory.html",
        title="Memory",
        detail=detail,
        types=MEMORY_TYPES,
        replaced=ctx.one("replaced"),
        known=ctx.one("known"),
    )


@guarded("ui.edit")
async def edit(ctx: Ctx) -> Response:
    """Store the form as a new memory that replaces this one (remember's `replaces`)."""
    memory_id, detail = await visible(ctx)
    if detail is None:
        return missing(ctx, memory_id)
    sent = {
        "content": ctx.one("content"),
        "type": ctx.one("type") or None,
        "category": ctx.one("category") or None,
        "tags": ctx.many("tags"),
        "scope": detail.memory.scope,
        "replaces": [memory_id],
    }
    request = RememberRequest.parse(sent, caller=ctx.caller, no_conversation=TERMS.no_conversation)
    result = await ctx.view.service.remember_request(ctx.caller, request)
    if result.not_removed:
        return ctx.message(500, "Partly done", f"Stored {result.memory.id}, but {memory_id} could not be removed.")
    flag = "replaced" if result.created else "known"
    return RedirectResponse(f"{ctx.base}/m/{result.memory.id}?{urlencode({flag: memory_id})}", 303)


@guarded()
async def forget_confirm(ctx: Ctx) -> Response:
    memory_id, detail = await visible(ctx)
    if detail is None:
        return missing(ctx, memory_id)
    return ctx.page("forget.html", title="Forget", memory=detail.memory)


@guarded("ui.forget")
async def forget(ctx: Ctx) -> Response:
    memory_id = ctx.request.path_params["memory_id"]
    if len(memory_id) > arguments.MEMORY_ID_LENGTH:
        return missing(ctx, memory_id)
    result = await ctx.view.service.forget(ctx.caller, memory_id)
    if not result.deleted:
        return missing(ctx, memory_id)
    return ctx.message(200, "Forgotten", f"Memory {memory_id} is forgotten.", back=True)


async def visible(ctx: Ctx) -> tuple[str, Any]:
    """The path's memory id, and the memory if the caller can see it (else None)."""
    memory_id = ctx.request.path_params["memory_id"]
    detail = (
        await ctx.view.service.detail(ctx.caller, memory_id, near=0)
        if arguments.MEMORY_ID.fullmatch(memory_id)
        else None
    )
    return memory_id, detail


def missing(ctx: Ctx, memory_id: str) -> Response:
    shown = memory_id if len(memory_id) <= arguments.MEMORY_ID_LENGTH else memory_id[:26] + "…"
    return ctx.message(404, "Not found", f"No memory with id {shown} exists for this project.")
