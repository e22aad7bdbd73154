"""The memory record codec every backend shares: a Memory to the metadata a store keeps and back,
within the metadata budgets (the ports it serves are core/ports.py's, re-exported here).

Backends store and fetch; ranking, dedup, ids, timestamps and the visibility re-check live
once, in the service.
"""

from __future__ import annotations

import json
import math
from typing import Any

from mcp_memory.core.errors import BudgetExceeded, PreconditionFailed
from mcp_memory.core.ids import parse_iso
from mcp_memory.core.invisible import tidy
from mcp_memory.core.model import MEMORY_TYPES, Memory, MemoryType
from mcp_memory.core.ports import SCAN_BATCH, ObjectStore, StoredObject, VectorStore
from mcp_memory.core.sizes import CONTENT_MAX_BYTES, content_overflow

__all__ = [
    "CONTENT_MAX_BYTES",
    "FILTERABLE_MAX_BYTES",
    "METADATA_MAX_BYTES",
    "NON_FILTERABLE_KEYS",
    "ObjectStore",
    "PreconditionFailed",
    "SCAN_BATCH",
    "StoredObject",
    "VectorStore",
    "assert_within_metadata_budget",
    "from_metadata",
    "to_metadata",
]

FILTERABLE_MAX_BYTES = 2_000
METADATA_MAX_BYTES = 40_000
#: Where the body and its provenance live; everything else is filterable.
NON_FILTERABLE_KEYS = ("content", "createdAt", "tags", "trustBase")
EPOCH_ISO = "1970-01-01T00:00:00.000Z"


# --------------------------------------------------------------------------- the record codec


def _json_number(value: float) -> float | int:
    """JavaScript prints integral numbers without a fraction; so do we (byte budgets)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def to_metadata(memory: Memory) -> dict[str, Any]:
    """The reference metadata record, in the reference key order (docs/storage.md).

    Optional keys are omitted rather than empty: S3 Vectors rejects empty arrays.
    """
    md: dict[str, Any] = {"tenantId": memory.tenant, "memoryType": memory.memory_type}
    if memory.category:
        md["category"] = memory.category
    if memory.scope == "conversation":
        md["scope"] = "conversation"
    if memory.conversation:
        md["conversation"] = memory.conversation
    md["content"] = memory.content
    md["createdAt"] = memory.created_at
    if memory.tags:
        md["tags"] = list(memory.tags)
    md["trustBase"] = _json_number(memory.trust_base)
    return md


def metadata_bytes(value: Any) -> int:
    """What a record costs against S3 Vectors' metadata limits: the UTF-8 bytes of its keys
    and values as stored, strings unescaped and lists by their items (docs/storage.md).

    Counting the JSON text instead would charge a line break, a quote or a backslash twice,
    and refuse content the documented 32,000-byte limit accepts.
    """
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, dict):
        return sum(metadata_bytes(k) + metadata_bytes(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(metadata_bytes(item) for item in value)
    return len(json.dumps(value))  # a number or a boolean: its printed digits


def assert_within_metadata_budget(memory: Memory) -> None:
    """Refuse, before any write, a memory that would not fit S3 Vectors' metadata limits.

    Every backend applies it, so a memory one backend accepts fits them all. The arguments'
    own limits (content 32,000 bytes, 20 tags of 64, a category of 128) always fit; what is
    refused here is a record made some other way. The refusal is the caller's input error.
    """
    content_bytes = content_overflow(memory.content)
    if content_bytes is not None:
        raise BudgetExceeded(
            f"the content is {content_bytes} bytes; the maximum a single memory may hold is "
            f"{CONTENT_MAX_BYTES}. Store the essential fact and leave the detail where it lives."
        )
    md = to_metadata(memory)
    filterable = {k: v for k, v in md.items() if k not in NON_FILTERABLE_KEYS}
    filterable_bytes = metadata_bytes(filterable)
    if filterable_bytes > FILTERABLE_MAX_BYTES:
        raise BudgetExceeded(
            f"the filterable metadata is {filterable_bytes} bytes against a {FILTERABLE_MAX_BYTES} "
            "byte limit. Shorten the category."
        )
    total = metadata_bytes(md)
    if total > METADATA_MAX_BYTES:
        # Content is at most 32,000 bytes and the filterable keys 2,000 by now: only tags can
        # carry a record past 40,000.
        raise BudgetExceeded(
            f"the memory's metadata (content, tags and the rest, in UTF-8 bytes) is {total} bytes against a "
            f"{METADATA_MAX_BYTES} byte limit. Shorten the tags, or store a shorter fact."
        )


def from_metadata(memory_id: str, md: Any, tenant: str) -> Memory | None:
    """Read a record back, tolerantly (docs/storage.md). None for a record that cannot be read
    or that belongs to another tenant (belt and braces on top of every filter)."""
    if not isinstance(md, dict) or not memory_id:
        return None
    content = md.get("content")
    tenant_id = md.get("tenantId")
    if not isinstance(content, str) or not isinstance(tenant_id, str) or tenant_id != tenant:
        return None
    memory_type: MemoryType = md["memoryType"] if md.get("memoryType") in MEMORY_TYPES else "project"
    category = md.get("category")
    tags = md.get("tags")
    created_at = md.get("createdAt")
    if not isinstance(created_at, str) or math.isnan(parse_iso(created_at)):
        created_at = EPOCH_ISO
    conversation = md.get("conversation")
    trust = md.get("trustBase")
    # text written before the rule on invisible characters (or by hand) reads as a write would
    # have left it, with what a write refuses shown as its code point (core/invisible.py)
    return Memory(
        id=memory_id,
        tenant=tenant_id,
        content=tidy(content),
        memory_type=memory_type,
        category=tidy(category) if isinstance(category, str) and category else None,
        tags=tuple(tidy(t) for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        created_at=created_at,
        scope="conversation" if md.get("scope") == "conversation" else "project",
        conversation=conversation if isinstance(conversation, str) and conversation else None,
        trust_base=float(trust) if isinstance(trust, (int, float)) and not isinstance(trust, bool) else 1.0,
    )
