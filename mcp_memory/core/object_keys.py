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

So every read of a tenant's newest memories is a walk: one `list` after another, each after the
last key read. Every walk of the index goes through `Walk`, below — a page of list
(core/paging.py), the digest's newest, its rules (their own index, `rules/`, and its one-time
tracking), a filtered recall's fallback, stats, the tenants' counts, the growth chart — so the
order, the parsing of a key and what a caller may see of it are written once, beside the layout
(here rather than in a module of its own: `--help` and the stdio handshake import this one already).
"""

from __future__ import annotations

import builtins
import hashlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from mcp_memory.core.ids import MAX_TIME, inverted_time, ulid_time
from mcp_memory.core.model import MEMORY_TYPES, Caller, Memory, MemoryType

if TYPE_CHECKING:
    from mcp_memory.core.ports import ObjectStore

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


class IndexEntry(NamedTuple):
    """What an index key says of its memory (a tuple: a walk of the index parses thousands)."""

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


# --------------------------------------------------------------------------- the walk

#: Keys read per `list` when what is kept thins them (a type, a conversation, tags): S3's own page.
WALK_BATCH = 1000


class Indexed(NamedTuple):
    """One key of the index that parsed and that the walk's reader may see (a tuple: the growth
    chart's walk makes ten thousand)."""

    key: str
    entry: IndexEntry
    #: How many keys the walk had read with this one (keys that did not parse, or that the
    #: reader may not see, count too): where a walk stopped inside a batch.
    seq: int
    #: The key's inverted time (10 Crockford characters; core/ids.py `inverted_time`).
    stamp: str

    @property
    def id(self) -> str:
        return self.entry.id

    def at_ms(self) -> float:
        """The epoch ms the key's time names (a tenth of the cost of decoding the id), NaN if none."""
        value = 0
        for char in self.stamp:
            digit = _CROCKFORD.get(char)
            if digit is None:
                return math.nan
            value = value * 32 + digit
        return float(MAX_TIME - value) if len(self.stamp) == 10 and value <= MAX_TIME else math.nan


_CROCKFORD = {c: i for i, c in enumerate("0123456789ABCDEFGHJKMNPQRSTVWXYZ")}


class Walk:
    """One tenant's index keys, newest first, a batch at a time: what `caller` may see of them
    (a project memory, or a note of the caller's own conversation), or with `every_scope` every
    key (the operator's counts); after the key `after`, and down to `since_ms`."""

    def __init__(
        self,
        objects: ObjectStore,
        caller: Caller,
        *,
        every_scope: bool = False,
        rules: bool = False,
        after: str | None = None,
        since_ms: float | None = None,
    ) -> None:
        self._objects = objects
        self._conversation = caller.conversation
        self._every_scope = every_scope
        #: The recency index, or with `rules` the rules' own (the same keys, of rules alone).
        self.prefix = rule_prefix(caller.tenant) if rules else index_prefix(caller.tenant)
        #: The walk ends at the first key stored before this (epoch ms), seen or not.
        self._oldest = inverted_time(min(math.ceil(since_ms), MAX_TIME)) if since_ms and since_ms > 0 else None
        #: The key the next batch lists after (None: from the newest).
        self.after = after
        #: Keys read so far.
        self.read = 0
        #: The last batch came back short: there is nothing after it.
        self.ended = False

    async def next(self, size: int) -> builtins.list[Indexed]:
        """The next `size` keys at most: those that parse and may be seen, with their places."""
        first = self.read + 1
        keys = await self._list(size)
        start, sees = len(self.prefix), self._sees
        found: builtins.list[Indexed] = []
        for seq, key in enumerate(keys, first):
            entry = parse_index_key(key)
            if entry is not None and sees(entry):
                found.append(Indexed(key, entry, seq, key[start : start + 10]))
        return found

    async def entries(self, size: int) -> builtins.list[IndexEntry]:
        """`next`, the entries alone (a count of ten thousand keys needs no more)."""
        entries = [e for e in map(parse_index_key, await self._list(size)) if e is not None]
        if self._every_scope:
            return entries
        conversation = self._conversation
        return [e for e in entries if e.visible_to(conversation)]

    def _sees(self, entry: IndexEntry) -> bool:
        return self._every_scope or entry.visible_to(self._conversation)

    async def _list(self, size: int) -> builtins.list[str]:
        keys = await self._objects.list(self.prefix, size, self.after)
        self.ended = len(keys) < size
        if self._oldest is not None:
            start = len(self.prefix)
            for cut, key in enumerate(keys):
                if key[start : start + 10] > self._oldest:
                    keys, self.ended = keys[:cut], True  # and what follows is older still
                    break
        if keys:
            self.read += len(keys)
            self.after = keys[-1]
        return keys

    def back_to(self, item: Indexed) -> None:
        """Go on right after `item`, a key of the last batch (a walk that stopped inside one)."""
        self.after, self.read = item.key, item.seq


@dataclass(frozen=True, slots=True)
class Count:
    """Keys counted: in all, by type (known types only), how many are conversation notes."""

    total: int
    by_type: dict[str, int] = field(default_factory=dict)
    notes: int = 0
    #: Counting stopped at the cap: every figure is a lower bound.
    lower_bound: bool = False


async def count_index(walk: Walk, cap: int) -> Count:
    """Count the keys `walk` sees among the newest `cap` (one listing)."""
    total = notes = 0
    by_type: dict[str, int] = {}
    for entry in await walk.entries(cap):
        total += 1
        notes += entry.digest is not None
        if entry.memory_type in MEMORY_TYPES:
            by_type[entry.memory_type] = by_type.get(entry.memory_type, 0) + 1
    return Count(total, by_type, notes, lower_bound=walk.read >= cap)


async def newest_ids(
    objects: ObjectStore, caller: Caller, limit: int, memory_type: MemoryType | None = None
) -> builtins.list[str]:
    """The ids of the caller's `limit` newest visible memories (of `memory_type`), from the keys
    alone: one listing of `limit` keys when nothing thins them, else WALK_BATCH at a time."""
    walk = Walk(objects, caller)
    size = WALK_BATCH if (memory_type or caller.conversation) else limit
    ids: builtins.list[str] = []
    while len(ids) < limit and not walk.ended:
        for item in await walk.next(size):
            if memory_type and item.entry.memory_type != memory_type:
                continue
            ids.append(item.id)
            if len(ids) >= limit:
                break
    return ids


async def created_times(objects: ObjectStore, caller: Caller, cap: int) -> tuple[builtins.list[float], bool]:
    """When each of the caller's newest `cap` visible memories was stored (epoch ms, from the
    index keys alone: no memory is read), and whether there were more."""
    walk = Walk(objects, caller)
    times: builtins.list[float] = []
    while walk.read < cap:
        for item in await walk.next(min(WALK_BATCH, cap - walk.read)):
            at = item.at_ms()
            if not math.isnan(at):
                times.append(at)
        if walk.ended:
            return times, False
    await walk.next(1)  # any key past the cap, seen or not
    return times, not walk.ended
