"""The fields beside the text: each tool's `outputSchema` and the `structuredContent`
that conforms to it, so a client reads ids, similarity and confidence instead of
parsing prose.

Only successful results carry structured content; an error result is its text and
`isError`. The schemas are kept short (they travel in every tools/list) and leave
`additionalProperties` open, so a field added later does not break a client that
validates against an older listing.
"""

from __future__ import annotations

from typing import Any

from mcp_memory.core.model import MEMORY_TYPES, Memory, Ranked
from mcp_memory.core.paging import ListResult
from mcp_memory.core.service import ForgetResult, RecallResult, RememberResult, StatsResult

_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}

MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "type": _STRING,
        "content": _STRING,
        "createdAt": _STRING,
        "scope": _STRING,
        "category": _STRING,
        "tags": _STRINGS,
    },
    "required": ["id", "type", "content", "createdAt", "scope", "tags"],
}

#: A recall result: the memory, its cosine similarity to the query, its relevance (the cosine
#: with the keyword evidence: what the first stage ranks by), `probability` (0-1: how likely it
#: is to answer the question, what the confidence bands read; absent under dense or keyword
#: retrieval), its standing against the top result (0-1, what the text prints as "% of the top
#: result"), and `supersededBy`, a newer near memory.
_RANKED_SCHEMA: dict[str, Any] = {
    **MEMORY_SCHEMA,
    "properties": {
        **MEMORY_SCHEMA["properties"],
        "similarity": {"type": "number"},
        "relevance": {"type": "number"},
        "probability": {"type": "number"},
        "standing": {"type": "number"},
        "supersededBy": _STRING,
    },
    "required": [*MEMORY_SCHEMA["required"], "similarity", "relevance", "standing"],
}

RECALL_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": _STRING,
        "mode": _STRING,
        "confidence": {"enum": ["high", "medium", "low", "none"]},
        "probability": {"type": "number"},
        "answered": {"type": "boolean"},
        "results": {"type": "array", "items": _RANKED_SCHEMA},
        "gated": {"type": "integer"},
        "filteredOut": {"type": "integer"},
    },
    "required": ["query", "mode", "confidence", "results", "gated"],
}

#: `replaced`: the ids `replaces` removed; `notRemoved`: those still stored; `near`: a
#: close memory the new one may correct (nothing was done to it).
REMEMBER_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "created": {"type": "boolean"},
        "memory": MEMORY_SCHEMA,
        "replaced": _STRINGS,
        "notRemoved": _STRINGS,
        "near": {"type": "object", "properties": {"id": _STRING, "content": _STRING}, "required": ["id", "content"]},
    },
    "required": ["created", "memory", "replaced"],
}

LIST_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"memories": {"type": "array", "items": MEMORY_SCHEMA}, "nextCursor": _STRING},
    "required": ["memories"],
}

FORGET_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"id": _STRING, "deleted": {"type": "boolean"}},
    "required": ["id", "deleted"],
}

STATS_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "total": {"type": "integer"},
        "byType": {"type": "object", "additionalProperties": {"type": "integer"}},
        "lowerBound": {"type": "boolean"},
    },
    "required": ["total", "byType", "lowerBound"],
}


def memory_data(memory: Memory) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": memory.id,
        "type": memory.memory_type,
        "content": memory.content,
        "createdAt": memory.created_at,
        "scope": memory.scope,
        "tags": list(memory.tags),
    }
    if memory.category:
        data["category"] = memory.category
    return data


def recall_data(result: RecallResult) -> dict[str, Any]:
    return {
        "query": result.query,
        "mode": result.mode,
        "confidence": result.confidence,
        **({"probability": round(result.probability, 4)} if result.probability is not None else {}),
        "answered": bool(result.results),
        "results": [ranked_data(r) for r in result.results],
        "gated": result.gated,
        **({"filteredOut": result.filtered_out} if result.filtered_out else {}),
    }


def ranked_data(ranked: Ranked) -> dict[str, Any]:
    """One recall result as the tools (and the CLI's --json) give it."""
    data: dict[str, Any] = {
        **memory_data(ranked.memory),
        "similarity": round(ranked.similarity, 4),
        "relevance": round(ranked.relevance, 4),
        **({"probability": round(ranked.probability, 4)} if ranked.probability is not None else {}),
        "standing": round(ranked.standing, 4),
    }
    if ranked.superseded_by:
        data["supersededBy"] = ranked.superseded_by
    return data


def remember_data(result: RememberResult) -> dict[str, Any]:
    data: dict[str, Any] = {
        "created": result.created,
        "memory": memory_data(result.memory),
        "replaced": list(result.replaced),
    }
    if result.not_removed:
        data["notRemoved"] = list(result.not_removed)
    if result.near is not None:
        data["near"] = memory_data(result.near)
    return data


def list_data(result: ListResult) -> dict[str, Any]:
    """The page's memories, and `nextCursor` when more follow (absent on the last page)."""
    data: dict[str, Any] = {"memories": [memory_data(m) for m in result.memories]}
    if result.next_cursor is not None:
        data["nextCursor"] = result.next_cursor
    return data


def forget_data(result: ForgetResult) -> dict[str, Any]:
    return {"id": result.id, "deleted": result.deleted}


def stats_data(result: StatsResult) -> dict[str, Any]:
    by_type = {t: result.by_type[t] for t in MEMORY_TYPES if result.by_type.get(t)}
    return {"total": result.total, "byType": by_type, "lowerBound": result.lower_bound}
