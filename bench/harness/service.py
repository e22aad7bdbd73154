"""The one way a benchmark builds a MemoryService on stores it opened itself: in-memory stores, a
store opened with a non-default option, or a precomputed embedder. (A service opened from settings,
as the server opens it, is the library's `open_service(Settings.from_env(env))`.)"""

from __future__ import annotations

from typing import Any

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.service import MemoryService


def service_on(vectors: Any, objects: Any, embedder: Any, *, pod_id: str = "bench", **options: Any) -> MemoryService:
    """A MemoryService over `vectors` and `objects` with `embedder`; its access counters log
    nothing. `options` are MemoryService's own (floor, high, clock, …)."""
    counters = AccessCounters(objects, pod_id=pod_id, log=NullLog())
    return MemoryService(vectors, objects, embedder, counters, **options)


def in_memory_service(embedder: Any, *, pod_id: str = "bench", **options: Any) -> MemoryService:
    """The same on fresh in-memory stores: no file, no server."""
    from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore

    return service_on(InMemoryVectorStore(), InMemoryObjectStore(), embedder, pod_id=pod_id, **options)
