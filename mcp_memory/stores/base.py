"""The two storage ports, and the memory record codec every backend shares.

VectorStore holds memories with their embeddings; ObjectStore is a key/value
store with compare-and-swap and byte-ordered prefix listing (what ordinary S3
gives). Backends store and fetch; ranking, dedup, ids, timestamps and the
visibility re-check live once, in the service.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mcp_memory.core.errors import BudgetExceeded, PreconditionFailed
from mcp_memory.core.ids import parse_iso
from mcp_memory.core.model import MEMORY_TYPES, Hit, Memory

if TYPE_CHECKING:  # numpy loads with the first vector, not before the MCP handshake
    import numpy as np

__all__ = [
    "CONTENT_MAX_BYTES",
    "FILTERABLE_MAX_BYTES",
    "METADATA_MAX_BYTES",
    "NON_FILTERABLE_KEYS",
    "ObjectStore",
    "PreconditionFailed",
    "StoredObject",
    "VectorStore",
    "assert_within_metadata_budget",
    "from_metadata",
    "to_metadata",
]

CONTENT_MAX_BYTES = 32_000
FILTERABLE_MAX_BYTES = 2_000
METADATA_MAX_BYTES = 40_000
#: Where the body and its provenance live; everything else is filterable.
NON_FILTERABLE_KEYS = ("content", "createdAt", "tags", "trustBase")
EPOCH_ISO = "1970-01-01T00:00:00.000Z"


@runtime_checkable
class VectorStore(Protocol):
    """Memories and their embeddings, always within one tenant."""

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        """Store one memory (ids are unique; a repeated id replaces)."""

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        """The `top_k` nearest memories of `tenant` *visible* to `conversation`.

        Visibility is applied before the limit (A4). No order is promised.
        """

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """The memories of `tenant` with these ids; missing ids are dropped, no order promised."""

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete these ids of `tenant`; unknown ids are ignored."""

    def exclusive(self, tenant: str) -> AbstractAsyncContextManager[None]:
        """Serialise a check-then-insert for `tenant` across every process sharing the store."""

    async def close(self) -> None:
        """Release connections, files and threads."""


@dataclass(frozen=True, slots=True)
class StoredObject:
    body: str
    etag: str


@runtime_checkable
class ObjectStore(Protocol):
    """Keys to bodies with ETags, conditional writes and byte-ordered listing."""

    async def get(self, key: str) -> StoredObject | None:
        """The body and ETag under `key`, or None."""

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        """Write `body`; returns the new ETag. A failed condition raises PreconditionFailed.

        `if_match`: only replace the object whose ETag is this. `if_none_match`:
        only create. Writing different content always yields a new ETag. Writing
        identical content may yield the same one (on S3 the ETag is the body's
        MD5); that is safe for compare-and-swap, since an equal ETag then means
        equal content, so whatever was computed from it is still current.
        """

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        """Up to `limit` keys starting with `prefix` and greater than `start_after`, in byte order."""

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete these keys; missing keys are ignored."""

    async def close(self) -> None:
        """Release connections and files."""


# --------------------------------------------------------------------------- the record codec


def _json_number(value: float) -> float | int:
    """JavaScript prints integral numbers without a fraction; so do we (byte budgets)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def to_metadata(memory: Memory) -> dict[str, Any]:
    """The reference metadata record, in the reference key order (B §10.3).

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


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def assert_within_metadata_budget(memory: Memory) -> None:
    """Refuse, before any write, a memory that would not fit S3 Vectors' metadata limits.

    Every backend applies it, so a memory one backend accepts fits them all.
    """
    content_bytes = len(memory.content.encode("utf-8"))
    if content_bytes > CONTENT_MAX_BYTES:
        raise BudgetExceeded(
            f"the content is {content_bytes} bytes; the maximum a single memory may hold is "
            f"{CONTENT_MAX_BYTES}. Store the essential fact and leave the detail where it lives."
        )
    md = to_metadata(memory)
    filterable = {k: v for k, v in md.items() if k not in NON_FILTERABLE_KEYS}
    filterable_bytes = _json_bytes(filterable)
    if filterable_bytes > FILTERABLE_MAX_BYTES:
        raise BudgetExceeded(
            f"the filterable metadata is {filterable_bytes} bytes against a {FILTERABLE_MAX_BYTES} "
            "byte limit. Shorten the category."
        )
    total = _json_bytes(md)
    if total > METADATA_MAX_BYTES:
        raise BudgetExceeded(
            f"the memory's metadata is {total} bytes against a {METADATA_MAX_BYTES} byte limit. "
            "Shorten the tags, or store a shorter fact."
        )


def from_metadata(memory_id: str, md: Any, tenant: str) -> Memory | None:
    """Read a record back, tolerantly (B §10.3). None for a record that cannot be read
    or that belongs to another tenant (belt and braces on top of every filter)."""
    if not isinstance(md, dict) or not memory_id:
        return None
    content = md.get("content")
    tenant_id = md.get("tenantId")
    if not isinstance(content, str) or not isinstance(tenant_id, str) or tenant_id != tenant:
        return None
    memory_type = md.get("memoryType")
    if memory_type not in MEMORY_TYPES:
        memory_type = "project"
    category = md.get("category")
    tags = md.get("tags")
    created_at = md.get("createdAt")
    if not isinstance(created_at, str) or math.isnan(parse_iso(created_at)):
        created_at = EPOCH_ISO
    conversation = md.get("conversation")
    trust = md.get("trustBase")
    return Memory(
        id=memory_id,
        tenant=tenant_id,
        content=content,
        memory_type=memory_type,
        category=category if isinstance(category, str) and category else None,
        tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        created_at=created_at,
        scope="conversation" if md.get("scope") == "conversation" else "project",
        conversation=conversation if isinstance(conversation, str) and conversation else None,
        trust_base=float(trust) if isinstance(trust, (int, float)) and not isinstance(trust, bool) else 1.0,
    )
