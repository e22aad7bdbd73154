"""Search (docs/web.md#search): `recall` itself, with why each result matched and what it gated out."""

from __future__ import annotations

import time
from typing import Any

from starlette.responses import Response

from mcp_memory.core import arguments
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.model import MEMORY_TYPES, MODES
from mcp_memory.web.endpoint import Ctx, guarded


@guarded()
async def search(ctx: Ctx) -> Response:
    query = ctx.one("q")
    values: dict[str, Any] = {
        "title": "Search",
        "query": query,
        "modes": MODES,
        "types": MEMORY_TYPES,
        "chosen": {"mode": ctx.one("mode"), "type": ctx.one("type"), "tag": ctx.one("tag")},
    }
    if not query.strip():
        return ctx.page("search.html", **values)
    arguments.check_text("query", query)
    arguments.check_query(query)
    mode = ctx.one("mode") or None
    if mode is not None and mode not in MODES:
        raise InvalidArgument(f"{{field}} must be one of {', '.join(MODES)}.", field="mode")
    memory_type = ctx.one("type") or None
    if memory_type is not None and memory_type not in MEMORY_TYPES:
        raise InvalidArgument(f"{{field}} must be one of {', '.join(MEMORY_TYPES)}.", field="type")
    started = time.perf_counter()
    result = await ctx.view.service.recall(ctx.caller, query, mode=mode, memory_type=memory_type, tags=ctx.many("tag"))
    values.update(
        result=result,
        rows=[why(r.similarity, r.keyword, r.relevance) for r in result.results],
        gated=[(c, why(c.similarity, c.keyword, c.relevance)) for c in result.gated_out],
        ms=round((time.perf_counter() - started) * 1000),
    )
    return ctx.page("search.html", **values)


def why(similarity: float, keyword: float, relevance: float) -> dict[str, float]:
    """How much of a result's relevance the embedding gave and how much the keywords did."""
    embedding = max(min(similarity, relevance), 0.0)
    words = max(relevance - embedding, 0.0)
    total = embedding + words
    return {"embedding": embedding / total if total else 0.0, "keywords": words / total if total else 0.0}
