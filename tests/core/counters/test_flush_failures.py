"""Access counters: failures while flushing (see tests/core/counters/conftest.py for the fixtures)."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcp_memory.core.errors import StoreError
from tests.core.counters.support import (
    SETTLED,
    SHARDS,
    START,
    TENANT,
    Clock,
    FaultyStore,
    Logs,
    PodFactory,
    flush_each,
    shard_keys,
    total,
)


async def test_a_failed_flush_loses_that_delta_and_later_records_still_flush(
    store: FaultyStore, pod: PodFactory
) -> None:
    counters = pod("pod-a")
    counters.record("alpha", "m1", START)
    counters.record("beta", "m1", START)
    store.fail_put = lambda key: key.startswith("stats/alpha/")

    with pytest.raises(StoreError):
        await counters.flush()
    assert await shard_keys(store, "beta") == []  # the loop stopped at the failure

    store.fail_put = lambda key: False
    counters.record("alpha", "m1", START + 1)
    assert await counters.flush() == 2

    assert await total(store, tenant="alpha") == 1  # the failed delta is gone, not replayed
    assert await total(store, tenant="beta") == 1  # the tenant after it flushed next time


async def test_stop_flushes_once_and_never_raises_even_when_the_store_fails(
    store: FaultyStore, pod: PodFactory, logs: Logs
) -> None:
    counters = pod("pod-a")
    counters.record(TENANT, "secret-memory-id", START)
    store.fail_put = lambda key: True

    await counters.stop()
    await counters.stop()

    [line] = [line for line in logs.lines() if line["event"] == "stats_final_flush_failed"]
    assert line["tenant"] == TENANT and line["key"].startswith(SHARDS)
    assert "secret-memory-id" not in logs.out.getvalue() + logs.err.getvalue()


async def test_stop_flushes_pending_counts_exactly_once(store: FaultyStore, pod: PodFactory) -> None:
    counters = pod("pod-a")
    counters.start(flush_ms=3_600_000)
    counters.record(TENANT, "m1", START)

    await counters.stop()
    await counters.stop()

    assert len(store.puts) == 1
    assert await total(store) == 1
    assert all(task is asyncio.current_task() for task in asyncio.all_tasks())


async def test_the_periodic_flush_writes_pending_counts(store: FaultyStore, pod: PodFactory) -> None:
    counters = pod("pod-a")
    counters.record(TENANT, "m1", START)
    counters.start(flush_ms=1)
    try:
        await asyncio.wait_for(store.put_done.wait(), timeout=5)
    finally:
        await counters.stop()

    assert await total(store) == 1


async def test_a_failing_periodic_flush_is_logged_and_the_timer_keeps_running(
    store: FaultyStore, pod: PodFactory, logs: Logs
) -> None:
    failures = iter([True])
    store.fail_put = lambda key: next(failures, False)
    counters = pod("pod-a")
    counters.record(TENANT, "first", START)
    counters.start(flush_ms=1)
    try:
        await asyncio.wait_for(store.put_failed.wait(), timeout=5)
        counters.record(TENANT, "second", START)
        await asyncio.wait_for(store.put_done.wait(), timeout=5)
    finally:
        await counters.stop()

    [line] = [line for line in logs.lines() if line["event"] == "stats_flush_failed"]
    assert line["tenant"] == TENANT and line["message"].startswith("injected put failure")
    assert "first" not in json.dumps(line)
    counts = await pod("reader").load(TENANT)
    assert set(counts) == {"second"}


async def test_stopping_during_a_periodic_flush_lets_that_write_finish(store: FaultyStore, pod: PodFactory) -> None:
    counters = pod("pod-a")
    counters.record(TENANT, "m1", START)
    store.gate = asyncio.Event()
    counters.start(flush_ms=1)
    await asyncio.wait_for(store.put_started.wait(), timeout=5)

    stopping = asyncio.ensure_future(counters.stop())
    await asyncio.sleep(0)  # stop() cancels the timer while its write is held
    store.gate.set()
    await asyncio.wait_for(stopping, timeout=5)

    assert len(store.puts) == 1
    assert await total(store) == 1


async def test_stop_waits_for_an_in_flight_background_compaction(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 3)
    clock.advance(SETTLED)
    store.yield_each = True

    compactor = pod("compactor", compact_threshold=0)
    await compactor.load(TENANT)
    await compactor.stop()

    assert await shard_keys(store) == []
    assert await total(store) == 3
