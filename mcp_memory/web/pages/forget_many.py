"""Forget many (docs/web.md#curate): what Browse's filter keeps, previewed, then forgotten, at most
FORGET_MANY_MAX at a time."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from mcp_memory.core.errors import InvalidArgument
from mcp_memory.web.endpoint import Ctx, guarded
from mcp_memory.web.pages.browse import chosen_filters, described, filter_query, filters_of

#: Forget-many acts on at most this many memories at a time (the preview says when more match).
FORGET_MANY_MAX = 1000


@guarded()
async def preview(ctx: Ctx) -> Response:
    found, more = await matching(ctx)
    return ctx.page(
        "forget_many.html",
        title="Forget many",
        count=len(found),
        more=more,
        sample=found[:5],
        chosen=chosen_filters(ctx),
        described=described(ctx),
        limit=FORGET_MANY_MAX,
        browse_url=f"{ctx.base}/?{filter_query(ctx)}",
    )


@guarded("ui.forget_many")
async def forget_many(ctx: Ctx) -> Response:
    found, more = await matching(ctx)
    deleted = await ctx.view.service.forget_many(ctx.caller, [m.id for m in found])
    left = " More match the filter: run it again for the next ones." if more else ""
    noun = "memory" if len(deleted) == 1 else "memories"
    return ctx.message(200, "Forgotten", f"{len(deleted)} {noun} forgotten.{left}", back=True)


async def matching(ctx: Ctx) -> tuple[list[Any], bool]:
    """Up to FORGET_MANY_MAX memories the filter keeps, and whether more match."""
    where = filters_of(ctx)
    if not any(where.values()):
        raise InvalidArgument("Choose at least one filter (type, tag, scope, or a time) to forget by.")
    found: list[Any] = []
    cursor = None
    while True:
        result = await ctx.view.service.list(ctx.caller, limit=200, cursor=cursor, **where)
        found.extend(result.memories)
        if len(found) > FORGET_MANY_MAX:
            return found[:FORGET_MANY_MAX], True
        if result.next_cursor is None:
            return found, False
        cursor = result.next_cursor
