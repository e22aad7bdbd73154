"""The rows a tag filter may match, kept between searches while their tenant is unchanged.

A tool hook asks, for every file an agent reads or edits, which memories carry a `path:` tag for
it (core/actions.py `path_tags`): a filtered query whose SQL reads every row of the tenant, most
of the hook's server-side time for a file, for an answer that is almost always none. The rows that can match any of
those tags are the few whose tags hold their common start (store.py `_tags_start`: `"path:`), the
same for every file; they are read once per version of the tenant and filtered here, exactly as
the SQL filters them (bench/RESULTS.md, "The path: tags read once per version").

An entry is valid for one version of its tenant, the `(generation, purged)` pair that every write
moves in whichever process it happens (vectors.py), looked up with the version the search's own
snapshot was read at, in the same transaction: as fresh as row_cache.py's rows. A start that more
than ROWS_MAX rows hold is not kept (its version is remembered, so its SQL runs as before).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from mcp_memory.core.model import MemoryFilter

#: A tenant's version: (generation, purged) from its `tenants` row.
Version = tuple[int, int]
#: (id, tags as stored, scope, conversation, memory_type, created_at)
Row = tuple[str, str, str, str | None, str, str]
#: The columns of a Row, as SELECT names them.
COLUMNS = "id, tags, scope, conversation, memory_type, created_at"
#: The most rows one entry keeps; a start more rows hold is filtered by SQL each time.
ROWS_MAX = 2000
#: The most (tenant, start) entries kept, least recently used first out.
ENTRIES_MAX = 16


class TaggedRows:
    """Thread-safe: the store's searches run on several worker threads."""

    def __init__(self, rows_max: int = ROWS_MAX, entries_max: int = ENTRIES_MAX) -> None:
        self.rows_max = rows_max
        self.entries_max = entries_max
        self._entries: OrderedDict[tuple[str, tuple[str, ...]], tuple[Version, list[Row] | None]] = OrderedDict()
        self._lock = threading.Lock()

    def rows(
        self, tenant: str, starts: Sequence[str], version: Version, read: Callable[[], list[Row]]
    ) -> list[Row] | None:
        """The rows whose tags hold one of `starts` at `version`: kept ones, else `read()`'s (kept
        when there are ROWS_MAX or fewer); None when there are more (the caller's SQL filters)."""
        key = (tenant, tuple(starts))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == version:
                self._entries.move_to_end(key)
                return entry[1]
        found = read()
        kept = found if len(found) <= self.rows_max else None
        with self._lock:
            self._entries[key] = (version, kept)
            self._entries.move_to_end(key)
            while len(self._entries) > self.entries_max:
                self._entries.popitem(last=False)
        return kept


def matching(rows: Sequence[Row], conversation: str | None, where: MemoryFilter) -> list[str] | None:
    """The ids of `rows` that store.py's `_filter_sql` selects for `conversation` and `where`, in
    the rows' order; None when a row's tags are not a JSON list of strings, as this store writes
    them (the SQL then filters: what json_each makes of anything else is its own)."""
    wanted = set(where.tags)
    visible_in = conversation or ""
    since = where.span.since_iso if where.span.since is not None else None
    until = where.span.until_iso if where.span.until is not None else None
    ids = []
    for memory_id, tags, scope, row_conversation, memory_type, created_at in rows:
        if not (scope == "project" or scope == "conversation" and row_conversation == visible_in):
            continue
        if where.memory_type and memory_type != where.memory_type:
            continue
        if since is not None and created_at < since or until is not None and created_at > until:
            continue
        try:
            values = json.loads(tags)
        except ValueError:
            return None
        if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
            return None  # not as this store writes tags: json_each's reading is SQL's to give
        if any(value in wanted for value in values):
            ids.append(memory_id)
    return ids
