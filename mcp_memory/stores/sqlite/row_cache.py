"""The memories a search returns, kept between searches while their tenant is unchanged.

Every recall reads its 30 candidates' rows back from SQLite (content, tags,
timestamps) and decodes them; under concurrent recalls that was about a tenth of
the server's CPU, and the same hot memories were read again and again.

An entry is valid for one version of its tenant — the `(generation, purged)`
pair that every write to the tenant moves, in whichever process it happens
(vectors.py) — and is looked up with the version of the snapshot the
search itself used, read in the same transaction. So a cached row is exactly as
fresh as the vectors it was found by: a write anywhere makes the tenant's
entries miss, and they are read again. Bounded by rows and by an estimate of
their size (text length plus a fixed overhead each), least recently used first
out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from mcp_memory.core.model import Memory

#: A tenant's version: (generation, purged) from its `tenants` row.
Version = tuple[int, int]

MAX_ROWS = 4096
#: The size budget, counted as characters of content plus `_OVERHEAD_BYTES` per row: an
#: estimate (Python keeps 1–4 bytes per character), not an exact byte count.
MAX_BYTES = 4 * 1024 * 1024
#: Roughly what a Memory costs beyond its text (the object, its id, tags and timestamps).
_OVERHEAD_BYTES = 400


class RowCache:
    """Thread-safe: the store's searches run on several worker threads."""

    def __init__(self, max_rows: int = MAX_ROWS, max_bytes: int = MAX_BYTES) -> None:
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self._rows: OrderedDict[tuple[str, str], tuple[Version, Memory, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def get_many(self, tenant: str, version: Version, ids: Sequence[str]) -> tuple[dict[str, Memory], list[str]]:
        """The cached memories among `ids` at this version, and the ids still to be read."""
        found: dict[str, Memory] = {}
        missing: list[str] = []
        with self._lock:
            for memory_id in ids:
                if memory_id in found:
                    continue
                key = (tenant, memory_id)
                entry = self._rows.get(key)
                if entry is not None and entry[0] == version:
                    self._rows.move_to_end(key)
                    found[memory_id] = entry[1]
                else:
                    missing.append(memory_id)
        return found, missing

    def put_many(self, tenant: str, version: Version, memories: Iterable[Memory]) -> None:
        """Keep `memories`, read at `version`; drop the least recently used beyond the bounds."""
        with self._lock:
            for memory in memories:
                key = (tenant, memory.id)
                size = len(memory.content) + _OVERHEAD_BYTES
                old = self._rows.pop(key, None)
                if old is not None:
                    self._bytes -= old[2]
                self._rows[key] = (version, memory, size)
                self._bytes += size
            while self._rows and (len(self._rows) > self.max_rows or self._bytes > self.max_bytes):
                _, (_, _, size) = self._rows.popitem(last=False)
                self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self._bytes = 0
