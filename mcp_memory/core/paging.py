"""Every memory of a tenant, newest first, a page at a time (docs/tools.md#paging).

A page is read from the recency index (core/object_keys.py): its keys sort newest first in
byte order, so a page is one `list` after the cursor's key, however many memories the tenant
holds. The type, the scope and the visibility are read from the key; tags need the memory, so
a filtered page reads the index in batches and stops after PAGE_SCAN_CAP keys, returning what
it found and a cursor to go on from (a rare tag costs more pages, never a longer one).

A cursor is an opaque string: the position just after the last key read (its time and id,
never a conversation's digest). It is not tied to the filters: the same cursor with other
filters goes on from the same place.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import MAX_TIME, inverted_time, is_ulid, ulid_time
from mcp_memory.core.model import Caller, Memory, MemoryType, Scope
from mcp_memory.core.object_keys import IndexEntry, index_prefix, parse_index_key
from mcp_memory.core.ports import ObjectStore

#: A page holds at most this many memories.
PAGE_MAX = 200
PAGE_DEFAULT = 50
#: One page reads at most this many index keys (a filter matching few memories returns a short
#: page and a cursor rather than reading on).
PAGE_SCAN_CAP = 5_000
#: Index keys read per `list` when the page is filtered.
PAGE_BATCH = 500
#: The cursor's spelling: a version letter, then base64url of `<invertedTime>#<ulid>`.
_CURSOR_VERSION = "c1"
_CURSOR_MAX_CHARS = 80
#: Sorts after every type name and digest that may follow `<invertedTime>#<ulid>#` in a key.
_AFTER = "#\x7f"


@dataclass(frozen=True, slots=True)
class PageFilter:
    """What a page keeps: one type, any of some tags, one scope, and a span of creation times
    (epoch milliseconds, both inclusive)."""

    memory_type: MemoryType | None = None
    tags: tuple[str, ...] = ()
    scope: Scope | None = None
    since_ms: float | None = None
    until_ms: float | None = None

    def keeps_key(self, entry: IndexEntry) -> bool:
        if self.memory_type and entry.memory_type != self.memory_type:
            return False
        if self.scope == "project" and entry.digest is not None:
            return False
        return not (self.scope == "conversation" and entry.digest is None)

    def keeps(self, memory: Memory) -> bool:
        return not self.tags or any(tag in memory.tags for tag in self.tags)


@dataclass(frozen=True)
class MemoryPage:
    memories: list[Memory]
    #: Where the next page starts; None when this page reached the end.
    next_cursor: str | None
    #: Index keys read for this page (a filtered page may read many for few memories).
    scanned: int
    where: PageFilter


def encode_cursor(key: str) -> str:
    """The cursor that goes on after index key `key`."""
    suffix = key.rsplit("/", 1)[-1]
    position = "#".join(suffix.split("#")[:2])
    return _CURSOR_VERSION + base64.urlsafe_b64encode(position.encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The `<invertedTime>#<ulid>` a cursor names; refused naming `cursor` when it names none."""
    refused = InvalidArgument(
        "{field} is not a cursor this server gave out; pass the next cursor of a page as it was returned.",
        field="cursor",
    )
    if not isinstance(cursor, str) or len(cursor) > _CURSOR_MAX_CHARS or not cursor.startswith(_CURSOR_VERSION):
        raise refused
    body = cursor[len(_CURSOR_VERSION) :]
    try:
        position = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise refused from None
    inverted, _, memory_id = position.partition("#")
    if not is_ulid(memory_id) or inverted != inverted_time(ulid_time(memory_id)):
        raise refused
    return position


def _start_after(prefix: str, cursor: str | None, until_ms: float | None) -> str | None:
    """The key a page lists after: the cursor's, or past everything newer than `until_ms`."""
    starts: builtins.list[str] = []
    if cursor is not None:
        starts.append(prefix + decode_cursor(cursor) + _AFTER)
    if until_ms is not None and math.floor(until_ms) < MAX_TIME:
        # keys of a later millisecond sort before `inverted_time(until + 1)` followed by anything
        starts.append(prefix + inverted_time(max(math.floor(until_ms) + 1, 0)) + _AFTER)
    return max(starts) if starts else None


def _older_than(entry_key: str, since_ms: float | None, prefix: str) -> bool:
    if since_ms is None or since_ms <= 0:
        return False
    stamp = entry_key[len(prefix) : len(prefix) + 10]
    return stamp > inverted_time(min(math.ceil(since_ms), MAX_TIME))


async def read_page(
    objects: ObjectStore,
    get: Callable[[str, Sequence[str]], Awaitable[builtins.list[Memory]]],
    caller: Caller,
    where: PageFilter,
    limit: int,
    cursor: str | None,
) -> MemoryPage:
    """One page of `caller`'s visible memories that `where` keeps, newest first (see the module)."""
    prefix = index_prefix(caller.tenant)
    start_after = _start_after(prefix, cursor, where.until_ms)
    found: builtins.list[Memory] = []
    last_found = ""
    scanned = 0
    # Unfiltered, one key past the page tells whether a next page exists; filtered, keys come in batches.
    filtered = bool(where.tags or where.memory_type or where.scope or caller.conversation)
    while scanned < PAGE_SCAN_CAP:
        batch = min(PAGE_BATCH if filtered else limit - len(found) + 1, PAGE_SCAN_CAP - scanned)
        keys = await objects.list(prefix, batch, start_after)
        ended = len(keys) < batch
        kept: builtins.list[tuple[str, str]] = []  # (key, id) of the keys the key alone does not rule out
        read = 0
        for key in keys:
            if _older_than(key, where.since_ms, prefix):
                ended = True
                break
            read += 1
            entry = parse_index_key(key)
            if entry is not None and entry.visible_to(caller.conversation) and where.keeps_key(entry):
                kept.append((key, entry.id))
                if not where.tags and len(found) + len(kept) > limit:
                    break  # one more than the page: enough to know there is a next one
        memories = {m.id: m for m in await get(caller.tenant, [i for _, i in kept])} if kept else {}
        for key, memory_id in kept:
            memory = memories.get(memory_id)
            if memory is None or not memory.visible_to(caller.conversation) or not where.keeps(memory):
                continue
            if len(found) >= limit:  # the key past the page
                return MemoryPage(found, encode_cursor(last_found), scanned + read, where)
            found.append(memory)
            last_found = key
        scanned += read
        if ended or not keys:
            return MemoryPage(found, None, scanned, where)
        start_after = keys[read - 1]
    return MemoryPage(found, encode_cursor(start_after) if start_after else None, scanned, where)


_CROCKFORD = {c: i for i, c in enumerate("0123456789ABCDEFGHJKMNPQRSTVWXYZ")}


def _stamp_ms(stamp: str) -> float:
    """The epoch ms an index key's inverted time names (a tenth of the cost of decoding the id)."""
    value = 0
    for char in stamp:
        digit = _CROCKFORD.get(char)
        if digit is None:
            return math.nan
        value = value * 32 + digit
    return float(MAX_TIME - value) if len(stamp) == 10 and value <= MAX_TIME else math.nan


async def created_times(objects: ObjectStore, caller: Caller, cap: int) -> tuple[builtins.list[float], bool]:
    """When each of the caller's newest `cap` visible memories was stored (epoch ms, from the
    index keys alone: no memory is read), and whether there were more."""
    prefix = index_prefix(caller.tenant)
    times: builtins.list[float] = []
    start_after: str | None = None
    read = 0
    while read < cap:
        batch = min(1000, cap - read)
        keys = await objects.list(prefix, batch, start_after)
        read += len(keys)
        for key in keys:
            entry = parse_index_key(key)
            if entry is not None and entry.visible_to(caller.conversation):
                at = _stamp_ms(key[len(prefix) : len(prefix) + 10])
                if not math.isnan(at):
                    times.append(at)
        if len(keys) < batch:
            return times, False
        start_after = keys[-1]
    return times, bool(await objects.list(prefix, 1, start_after))
