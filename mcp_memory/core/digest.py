"""The digest: the memories most worth having in context before any question is asked.

With no query there is no relevance, so the order is what is left of recall's other
signals (docs/hooks.md#the-digest): decayed trust, times how recently a memory was
made or used and how often it was the confident answer. Only the newest
DIGEST_SCAN visible memories are read (the recency index gives them without a
scan of the tenant); the caller renders them in order until its token budget is spent.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableSet, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp_memory.core import ranking
from mcp_memory.core.ids import parse_iso
from mcp_memory.core.model import EMPTY_STATS, AccessStats, Caller, Memory
from mcp_memory.core.object_keys import RULE_TAG as RULE_TAG
from mcp_memory.core.object_keys import WALK_BATCH, Walk, memory_keys, rules_marker

if TYPE_CHECKING:
    from mcp_memory.core.ports import ObjectStore, VectorStore

#: How many of the newest visible memories the digest weighs.
DIGEST_SCAN = 200
#: At most this many rules lead the digest (the newest, when a tenant has more).
RULES_MAX = 20
#: The most `rules/` keys the digest lists (each visible rule among them is read, RULES_MAX at most).
RULES_SCAN = 1000
#: A store from before the `rules/` keys has its rules found once among this many index keys.
TRACK_SCAN_CAP = 10_000
#: The share of recency and of use in the digest's order (trust multiplies both).
RECENCY_SHARE = 0.6
ACCESS_SHARE = 0.4


@dataclass(frozen=True)
class DigestResult:
    """Memories in the order they are worth including; `topical` of them first answered the topic."""

    memories: list[Memory]
    #: How many visible memories were weighed (at most DIGEST_SCAN).
    weighed: int
    #: How many of `memories`, at the front, answered the topic (0 without one).
    topical: int = 0
    #: A memory a newer near one of them may supersede -> that newer one's id (core/supersede.py).
    superseded_by: Mapping[str, str] = field(default_factory=dict)
    #: How many of `memories`, at the very front, are rules (tagged RULE_TAG).
    rules: int = 0


def order(memories: Sequence[Memory], stats: Mapping[str, AccessStats], at_ms: float) -> list[Memory]:
    """`memories` by trust × (recency and use), best first; ties keep the newest first."""
    max_access = max((stats.get(m.id, EMPTY_STATS).access_count for m in memories), default=0)
    scored: list[tuple[float, int, Memory]] = []
    for position, memory in enumerate(memories):
        s = stats.get(memory.id, EMPTY_STATS)
        last = parse_iso(s.last_accessed_at) if s.last_accessed_at else parse_iso(memory.created_at)
        trust = ranking.decayed_trust(at_ms, memory.trust_base, last, memory.memory_type, s.access_count)
        worth = RECENCY_SHARE * ranking.recency_score(at_ms, last) + ACCESS_SHARE * ranking.access_score(
            s.access_count, max_access
        )
        scored.append((trust * worth, position, memory))
    scored.sort(key=lambda row: (-row[0], row[1]))
    return [memory for _, _, memory in scored]


async def read_rules(
    objects: ObjectStore, vectors: VectorStore, caller: Caller, tracked: MutableSet[str]
) -> list[Memory]:
    """The caller's newest visible rules (RULES_MAX at most), read from their `rules/` keys
    (RULES_SCAN keys at most), not from every memory's tags (bench/RESULTS.md, "The digest's
    rules read, bounded"). A tenant's first digest since rules had keys finds them the old way
    once (`_track_rules`); `tracked` holds the tenants this process knows to be done."""
    tenant = caller.tenant
    if tenant not in tracked:
        if await objects.get(rules_marker(tenant)) is None:
            await _track_rules(objects, vectors, tenant)
        tracked.add(tenant)
    ids = [e.id for e in await Walk(objects, caller, rules=True).entries(RULES_SCAN)]
    rules: list[Memory] = []
    for start in range(0, len(ids), RULES_MAX):
        chunk = ids[start : start + RULES_MAX]
        found = {m.id: m for m in await vectors.get(tenant, chunk)}
        for memory_id in chunk:  # a key outliving its memory (forget stopped between) is skipped
            memory = found.get(memory_id)
            if memory is not None and memory.visible_to(caller.conversation) and RULE_TAG in memory.tags:
                rules.append(memory)
        if len(rules) >= RULES_MAX:
            break
    return rules[:RULES_MAX]


async def _track_rules(objects: ObjectStore, vectors: VectorStore, tenant: str) -> None:
    """The `rules/` keys of a tenant's rules stored before remember wrote them: every memory's
    tags read once (TRACK_SCAN_CAP keys at most, every conversation's), then the marker that says so."""
    walk = Walk(objects, Caller(tenant), every_scope=True)
    while walk.read < TRACK_SCAN_CAP and not walk.ended:
        ids = [e.id for e in await walk.entries(WALK_BATCH)]
        rules = [m for m in await vectors.get(tenant, ids) if RULE_TAG in m.tags] if ids else []
        if rules:
            await objects.put_many([(key, "") for m in rules for key in memory_keys(m)[1:]])
    await objects.put(rules_marker(tenant), "")


def estimate_tokens(text: str) -> int:
    """A conservative token count for a budget: one token per three UTF-8 bytes, rounded up.

    No tokenizer of the reading model ships here; English runs about four bytes a token
    (so this over-counts it by a third) and Hangul or kana three bytes a character, about
    one token each (docs/hooks.md#budget).
    """
    return -(-len(text.encode("utf-8")) // 3)
