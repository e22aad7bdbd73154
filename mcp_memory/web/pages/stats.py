"""Stats (docs/web.md#stats): the tenant's memories by type and tag, stored per day, where they
came from (each import's `source:` tag and its record, docs/import_formats.md), and what is in use."""

from __future__ import annotations

from starlette.responses import Response

from mcp_memory.web import render
from mcp_memory.web.endpoint import Ctx, guarded

#: Stats counts tags over at most this many of the newest memories (each one is read) and draws
#: growth from at most this many index keys (no memory is read); the page says when it stopped.
TAG_SCAN = 2_000
GROWTH_SCAN = 10_000
#: Stats lists at most this many of the newest imports.
IMPORTS_SHOWN = 20
SOURCE_TAG = "source:"


@guarded()
async def stats(ctx: Ctx) -> Response:
    service = ctx.view.service
    counted = await service.stats(ctx.caller)
    times, more_times = await service.created_times(ctx.caller, cap=GROWTH_SCAN)
    tags, read, capped = await tag_counts(ctx)
    top_tags = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))[:30]
    sources = sorted(
        ((tag.removeprefix(SOURCE_TAG), n) for tag, n in tags.items() if tag.startswith(SOURCE_TAG)),
        key=lambda kv: (-kv[1], kv[0]),
    )
    imported = sum(n for _, n in sources)
    return ctx.page(
        "stats.html",
        title="Stats",
        counted=counted,
        tags=top_tags,
        tag_count=len(tags),
        sources=sources,
        remembered_here=read - imported,
        imports=await service.imports(ctx.caller, limit=IMPORTS_SHOWN),
        chart=render.growth_chart(times),
        read=read,
        tags_capped=capped,
        grown=len(times),
        growth_capped=more_times,
        about=ctx.view.about,
    )


async def tag_counts(ctx: Ctx) -> tuple[dict[str, int], int, bool]:
    """Each tag's count over the newest TAG_SCAN memories, how many were read, and whether more
    were left unread."""
    tags: dict[str, int] = {}
    read = 0
    cursor = None
    while read < TAG_SCAN:
        result = await ctx.view.service.list(ctx.caller, limit=200, cursor=cursor)
        for m in result.memories:
            for tag in m.tags:
                tags[tag] = tags.get(tag, 0) + 1
        read += len(result.memories)
        cursor = result.next_cursor
        if cursor is None:
            break
    return tags, read, cursor is not None
