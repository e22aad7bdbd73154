"""Access counters (docs/counters.md, and the operator's compaction).

These are about convergence more than about the API: many pods writing at once,
a compaction landing in the middle, a second compaction over the same shards, a
compactor dying halfway. The property throughout is that the total is the total:
never doubled, never lost to a race.

Every test takes its store from the `store` fixture and only uses the
ObjectStore port (failures and races are staged by wrapping it), so the same
cases run against the in-memory reference store and against a real S3 bucket
over HTTP (the moto endpoint, which evaluates conditional writes the way S3
does). No test sleeps: the clock is injected, and the two timer tests wait on
an event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.stores.in_memory import InMemoryObjectStore
from mcp_memory.stores.records import ObjectStore
from tests.core.counters.support import Clock, FaultyStore, Logs, PodFactory


@pytest.fixture(params=["memory", "s3"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[ObjectStore]:
    """The store under test: the reference in-memory store, and S3 (a fresh bucket on the endpoint)."""
    if request.param == "memory":
        yield InMemoryObjectStore()
        return
    from tests.support.moto_endpoint import s3_object_store

    store = s3_object_store(request.getfixturevalue("aws_endpoint"))
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def store(backend: ObjectStore) -> FaultyStore:
    return FaultyStore(backend)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def logs() -> Logs:
    return Logs()


@pytest.fixture
def pod(store: FaultyStore, clock: Clock, logs: Logs) -> PodFactory:
    """A pod on the shared store. The cache is off unless asked for, so most tests
    assert against what is durable rather than against a stale copy."""

    def make(pod_id: str, **options: Any) -> AccessCounters:
        options.setdefault("cache_ttl_ms", 0)
        options.setdefault("clock", clock)
        return AccessCounters(store, pod_id=pod_id, log=logs.log, **options)

    return make
