"""The domain model: plain values, no I/O.

A stored memory is immutable: written once, never updated. What changes (access
counters) lives beside it in the object store (see core/counters/).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mcp_memory.core.timespan import TimeSpan

MemoryType = Literal["project", "pattern", "reference", "conversation"]
Scope = Literal["project", "conversation"]
Mode = Literal["precision", "balanced", "exploratory"]
#: Bands of the top result's probability (core/judgment.py); "none": nothing stored answers the
#: question and nothing was returned (the one word for it over MCP, in the CLI's JSON and in the library).
Confidence = Literal["high", "medium", "low", "none"]
#: How recall finds candidates: the embedding and the keyword index together (the default),
#: or one of them alone (for measuring each signal on its own).
Retrieval = Literal["hybrid", "dense", "keyword"]

#: Order matters: the stats breakdown and the error message list them this way.
MEMORY_TYPES: tuple[MemoryType, ...] = ("project", "pattern", "reference", "conversation")
SCOPES: tuple[Scope, ...] = ("project", "conversation")
MODES: tuple[Mode, ...] = ("precision", "balanced", "exploratory")
RETRIEVALS: tuple[Retrieval, ...] = ("hybrid", "dense", "keyword")

#: Trust of everything written by `remember`.
TRUST_MANUAL = 1.0


@dataclass(frozen=True, slots=True)
class Caller:
    """Whose memories a request reaches: the tenant, and the conversation if any.

    Both come from the transport (headers, or the operator's flags), never from
    a tool argument.
    """

    tenant: str
    conversation: str | None = None


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory (docs/memories.md, the reference record)."""

    id: str
    tenant: str
    content: str
    memory_type: MemoryType = "project"
    category: str | None = None
    tags: tuple[str, ...] = ()
    created_at: str = "1970-01-01T00:00:00.000Z"
    scope: Scope = "project"
    #: Visibility key for a conversation-scoped memory; provenance only for a project one.
    conversation: str | None = None
    trust_base: float = TRUST_MANUAL

    def visible_to(self, conversation: str | None) -> bool:
        """The single visibility rule (docs/memories.md)."""
        return self.scope != "conversation" or (bool(conversation) and self.conversation == conversation)


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """What recall and list_memories keep when asked: one memory type, any of some tags, and
    a span of creation times."""

    memory_type: MemoryType | None = None
    #: A memory matches when it carries at least one of these (exact strings); empty: any.
    tags: tuple[str, ...] = ()
    #: A memory matches when its createdAt lies within (both ends inclusive); empty: any time.
    span: TimeSpan = TimeSpan()

    def __bool__(self) -> bool:
        return bool(self.memory_type or self.tags or self.span)

    def matches(self, memory: Memory) -> bool:
        if self.memory_type and memory.memory_type != self.memory_type:
            return False
        if self.tags and not any(tag in memory.tags for tag in self.tags):
            return False
        return self.span.holds(memory.created_at)


@dataclass(frozen=True, slots=True)
class Hit:
    """A memory a vector query returned, with its cosine similarity to the query."""

    memory: Memory
    similarity: float


@dataclass(frozen=True, slots=True)
class AccessStats:
    """Approximate access counters for one memory (docs/memories.md)."""

    access_count: int = 0
    last_accessed_at: str = ""


EMPTY_STATS = AccessStats()


@dataclass(frozen=True, slots=True)
class Ranked:
    """A recall result: the hit, its composite score, and its standing against the top."""

    memory: Memory
    similarity: float
    score: float
    standing: float = 1.0
    stats: AccessStats = field(default=EMPTY_STATS)
    #: The keyword evidence (BM25 as a share of the query's best; 0 when no term matched).
    keyword: float = 0.0
    #: What the gates and the ranking read: the cosine plus the weighted keyword evidence.
    relevance: float = 0.0
    #: A newer result near this one, which may state what this one says after a change
    #: (core/supersede.py); None when no newer near memory was returned.
    superseded_by: str | None = None
    #: The probability that it answers the question (core/judgment.py); None without a model
    #: (dense or keyword retrieval).
    probability: float | None = None
