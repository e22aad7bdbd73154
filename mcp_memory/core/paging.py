"""list: the caller's memories, newest first, a page at a time (docs/tools.md#paging).

A page is a walk of the recency index (core/object_keys.py `Walk`): its keys sort newest first in byte
order, so a page is one `list` after the cursor's key, however many memories the tenant holds.
The type, the scope and the visibility are read from the key; tags need the memory, so a
filtered page reads the index in batches and stops after PAGE_SCAN_CAP keys, returning what it
found and a cursor to go on from (a rare tag costs more pages, never a longer one).

A cursor is an opaque string: the position just after the last key read (its time and id,
never a conversation's digest) and a mark of the tenant it was given to, so that another
tenant's cursor is refused as a forged one is, naming `cursor` and nothing of either tenant. It
is not tied to the filters: the same cursor with other filters goes on from the same place.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import hashlib
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import MAX_TIME, inverted_time, is_ulid, ulid_time
from mcp_memory.core.model import Caller, Memory, MemoryType, Scope
from mcp_memory.core.object_keys import WALK_BATCH, Indexed, IndexEntry, Walk
from mcp_memory.core.ports import ObjectStore
from mcp_memory.core.timespan import TimeSpan

#: A page holds at most this many memories.
PAGE_MAX = 200
PAGE_DEFAULT = 50
#: One page reads at most this many index keys (a filter matching few memories returns a short
#: page and a cursor rather than reading on).
PAGE_SCAN_CAP = 10_000
#: Index keys read per `list` when the page is filtered.
PAGE_BATCH = WALK_BATCH
#: How a page reads the memories its keys name (VectorStore.get).
Get = Callable[[str, Sequence[str]], Awaitable[builtins.list[Memory]]]
#: The cursor's spelling: a version letter, then base64url of `<invertedTime>#<ulid>#<tenant mark>`.
_CURSOR_VERSION = "c2"
_CURSOR_MAX_CHARS = 80
#: Sorts after every type name and digest that may follow `<invertedTime>#<ulid>#` in a key.
_AFTER = "#\x7f"


@dataclass(frozen=True, slots=True)
class PageFilter:
    """What a page keeps: one type, any of some tags, one scope, and a span of creation times
    (read from the keys: epoch milliseconds, both inclusive)."""

    memory_type: MemoryType | None = None
    tags: tuple[str, ...] = ()
    scope: Scope | None = None
    span: TimeSpan = TimeSpan()

    def keeps_key(self, entry: IndexEntry) -> bool:
        if self.memory_type and entry.memory_type != self.memory_type:
            return False
        if self.scope == "project" and entry.digest is not None:
            return False
        return not (self.scope == "conversation" and entry.digest is None)

    def keeps(self, memory: Memory) -> bool:
        return not self.tags or any(tag in memory.tags for tag in self.tags)


@dataclass(frozen=True)
class ListResult:
    """One page of the caller's memories, newest first, and what it was asked to keep."""

    memories: list[Memory]
    memory_type: MemoryType | None = None
    #: The tags asked for (any of them), if any.
    tags: tuple[str, ...] = ()
    #: The creation times asked for, if any.
    span: TimeSpan = TimeSpan()
    scope: Scope | None = None
    #: Where the next page starts; None when this page reached the end.
    next_cursor: str | None = None
    #: Index keys read for this page (a filtered page may read many for few memories).
    scanned: int = 0


def _tenant_mark(tenant: str) -> str:
    """What a cursor carries of its tenant: enough to tell another tenant's apart, not its name."""
    return hashlib.sha256(b"mcp-memory cursor\0" + tenant.encode("utf-8")).hexdigest()[:12]


def _refused() -> InvalidArgument:
    return InvalidArgument(
        "{field} is not a cursor this server gave out; pass the next cursor of a page as it was returned.",
        field="cursor",
    )


def check_cursor(field: str, value: object) -> str:
    """A cursor as a request takes it: a string of a cursor's length (the position and the
    tenant are read when the page is, `decode_cursor`)."""
    if not isinstance(value, str) or len(value) > _CURSOR_MAX_CHARS:
        raise _refused()
    return value


def encode_cursor(key: str, tenant: str) -> str:
    """The cursor that goes on after index key `key`, for `tenant` alone."""
    suffix = key.rsplit("/", 1)[-1]
    position = "#".join([*suffix.split("#")[:2], _tenant_mark(tenant)])
    return _CURSOR_VERSION + base64.urlsafe_b64encode(position.encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, tenant: str) -> str:
    """The `<invertedTime>#<ulid>` a cursor of `tenant` names; refused naming `cursor` when it
    names none, or was given to another tenant (the same words: nothing said of either)."""
    if not isinstance(cursor, str) or len(cursor) > _CURSOR_MAX_CHARS or not cursor.startswith(_CURSOR_VERSION):
        raise _refused()
    body = cursor[len(_CURSOR_VERSION) :]
    try:
        position = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise _refused() from None
    inverted, _, rest = position.partition("#")
    memory_id, _, mark = rest.partition("#")
    if not is_ulid(memory_id) or inverted != inverted_time(ulid_time(memory_id)) or mark != _tenant_mark(tenant):
        raise _refused()
    return f"{inverted}#{memory_id}"


def _start_after(prefix: str, tenant: str, cursor: str | None, until_ms: float | None) -> str | None:
    """The key a page lists after: the cursor's, or past everything newer than `until_ms`."""
    starts: builtins.list[str] = []
    if cursor is not None:
        starts.append(prefix + decode_cursor(cursor, tenant) + _AFTER)
    if until_ms is not None and math.floor(until_ms) < MAX_TIME:
        # keys of a later millisecond sort before `inverted_time(until + 1)` followed by anything
        starts.append(prefix + inverted_time(max(math.floor(until_ms) + 1, 0)) + _AFTER)
    return max(starts) if starts else None


async def read_page(
    objects: ObjectStore, get: Get, caller: Caller, where: PageFilter, limit: int, cursor: str | None
) -> ListResult:
    """One page of `caller`'s visible memories that `where` keeps, newest first (see the module)."""
    walk = Walk(objects, caller, since_ms=where.span.since)
    walk.after = _start_after(walk.prefix, caller.tenant, cursor, where.span.until)
    found: builtins.list[Memory] = []
    last_found = ""

    def page(next_cursor: str | None) -> ListResult:
        return ListResult(found, where.memory_type, where.tags, where.span, where.scope, next_cursor, walk.read)

    # Unfiltered, one key past the page tells whether a next page exists; filtered, keys come in batches.
    filtered = bool(where.tags or where.memory_type or where.scope or caller.conversation)
    while walk.read < PAGE_SCAN_CAP:
        size = PAGE_BATCH if filtered else limit - len(found) + 1
        batch = await walk.next(min(size, PAGE_SCAN_CAP - walk.read))
        kept: builtins.list[Indexed] = []  # the keys the key alone does not rule out
        for item in batch:
            if where.keeps_key(item.entry):
                kept.append(item)
                if not where.tags and len(found) + len(kept) > limit:
                    walk.back_to(item)  # one more than the page: enough to know there is a next one
                    break
        memories = {m.id: m for m in await get(caller.tenant, [i.id for i in kept])} if kept else {}
        for item in kept:
            memory = memories.get(item.id)
            if memory is None or not memory.visible_to(caller.conversation) or not where.keeps(memory):
                continue
            if len(found) >= limit:  # the key past the page
                return page(encode_cursor(last_found, caller.tenant))
            found.append(memory)
            last_found = item.key
        if walk.ended:
            return page(None)
    return page(encode_cursor(walk.after, caller.tenant) if walk.after else None)
