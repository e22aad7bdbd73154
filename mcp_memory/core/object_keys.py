"""The object-store key layout (docs/storage.md), shared by every backend.

    index/<tenant>/<invertedTime>#<ulid>#<type>[#<digest>]   empty body; the key is the record
    stats/<tenant>/shard/<ulid>-<podId>.json                  one process's flush of counter deltas
    stats/<tenant>/merged.json                                folded counters + watermark
    imports/<tenant>/<invertedTime>#<ulid>                    one import from another format (core/transfer/bulk.py)
    rules/<tenant>/<invertedTime>#<ulid>#<type>[#<digest>]   empty body; a memory tagged `rule` (the digest's rules)
    rules-tracked/<tenant>                                    empty body; every rule of the tenant has its key

Listing `index/<tenant>/` in byte order gives newest-first, and the digest (only
on conversation-scoped memories) lets list and stats apply visibility from the
key alone.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from mcp_memory.core.ids import inverted_time, ulid_time
from mcp_memory.core.model import Memory

#: The tag that marks a memory as a rule: in every digest, first, however old (docs/hooks.md#rules-that-always-hold).
RULE_TAG = "rule"


def conversation_digest(conversation: str) -> str:
    """First 16 hex chars of SHA-256 of the conversation (docs/storage.md, the index-key suffix)."""
    return hashlib.sha256(conversation.encode("utf-8")).hexdigest()[:16]


def index_prefix(tenant: str) -> str:
    return f"index/{tenant}/"


def index_key(memory: Memory) -> str:
    return index_prefix(memory.tenant) + _entry(memory)


def _entry(memory: Memory) -> str:
    key = f"{inverted_time(ulid_time(memory.id))}#{memory.id}#{memory.memory_type}"
    if memory.scope == "conversation" and memory.conversation:
        key += f"#{conversation_digest(memory.conversation)}"
    return key


def rule_prefix(tenant: str) -> str:
    return f"rules/{tenant}/"


def rules_marker(tenant: str) -> str:
    """Present once every rule of the tenant has its `rules/` key (written by the first digest
    that found them by reading every memory's tags); the digest then lists the rules' keys alone."""
    return f"rules-tracked/{tenant}"


def memory_keys(memory: Memory) -> list[str]:
    """The keys a stored memory has beside itself: its recency index entry and, for a memory tagged
    `rule`, its rule entry (the same entry under `rules/`), so the digest reads a tenant's rules
    without reading every memory's tags (docs/storage.md#the-recency-index)."""
    keys = [index_key(memory)]
    if RULE_TAG in memory.tags:
        keys.append(rule_prefix(memory.tenant) + _entry(memory))
    return keys


@dataclass(frozen=True, slots=True)
class IndexEntry:
    id: str
    memory_type: str
    digest: str | None = None

    def visible_to(self, conversation: str | None) -> bool:
        """Key-level visibility: no digest, or the digest of the asking conversation."""
        return self.digest is None or (conversation is not None and self.digest == conversation_digest(conversation))


def parse_index_key(key: str) -> IndexEntry | None:
    parts = key.rsplit("/", 1)[-1].split("#")
    if len(parts) not in (3, 4) or not parts[1] or not parts[2]:
        return None
    digest = parts[3] if len(parts) == 4 and parts[3] else None
    return IndexEntry(parts[1], parts[2], digest)


def import_prefix(tenant: str) -> str:
    return f"imports/{tenant}/"


def import_key(tenant: str, run_id: str) -> str:
    """Where one import's record lives; listing the prefix gives the newest import first."""
    return f"{import_prefix(tenant)}{inverted_time(ulid_time(run_id))}#{run_id}"
