"""Browse (docs/web.md#browse): every memory the caller can see, newest first, a page at a time,
with the filters that forget-many reuses."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.responses import Response

from mcp_memory.core import arguments
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.model import MEMORY_TYPES, SCOPES
from mcp_memory.core.paging import PAGE_DEFAULT
from mcp_memory.web.endpoint import Ctx, guarded

FILTER_FIELDS = ("type", "tag", "scope", "since", "until")


def filters_of(ctx: Ctx) -> dict[str, Any]:
    """The filter bar's fields as `MemoryService.list`'s arguments."""
    tags = ctx.many("tag")
    if len(tags) > arguments.TAGS_MAX:
        raise InvalidArgument(f"{{field}} may name at most {arguments.TAGS_MAX} tags.", field="tags")
    return {
        "memory_type": ctx.one("type") or None,
        "tags": tags,
        "scope": ctx.one("scope") or None,
        "since": ctx.one("since").strip() or None,
        "until": ctx.one("until").strip() or None,
    }


def filter_query(ctx: Ctx, **extra: str) -> str:
    """The filter bar's fields (and `extra`) as a query string."""
    pairs = [(name, ctx.one(name)) for name in FILTER_FIELDS if ctx.one(name)]
    pairs += [(k, v) for k, v in extra.items() if v]
    return urlencode(pairs)


def described(ctx: Ctx) -> str:
    """The filter in words, as forget-many's preview restates it: `tag scratch, created from 2026-07-01`."""
    parts = []
    if ctx.one("type"):
        parts.append(f"type {ctx.one('type')}")
    tags = ctx.many("tag")
    if tags:
        parts.append(("tag " if len(tags) == 1 else "tags ") + " or ".join(tags))
    if ctx.one("scope"):
        parts.append(f"scope {ctx.one('scope')}")
    since, until = ctx.one("since").strip(), ctx.one("until").strip()
    if since or until:
        parts.append("created" + (f" from {since}" if since else "") + (f" to {until}" if until else ""))
    return ", ".join(parts)


def chosen_filters(ctx: Ctx) -> dict[str, str]:
    return {name: ctx.one(name) for name in FILTER_FIELDS}


@guarded()
async def browse(ctx: Ctx) -> Response:
    where = filters_of(ctx)
    cursor = ctx.one("cursor") or None
    result = await ctx.view.service.list(ctx.caller, limit=PAGE_DEFAULT, cursor=cursor, **where)
    base = ctx.base
    next_url = f"{base}/?{filter_query(ctx, cursor=result.next_cursor)}" if result.next_cursor else None
    return ctx.page(
        "browse.html",
        title="Browse",
        memories=result.memories,
        scanned=result.scanned,
        next_url=next_url,
        first_url=f"{base}/?{filter_query(ctx)}" if cursor else None,
        chosen=chosen_filters(ctx),
        types=MEMORY_TYPES,
        scopes=SCOPES,
        forget_url=f"{base}/forget?{filter_query(ctx)}" if any(where.values()) else None,
    )
