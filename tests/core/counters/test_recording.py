"""Access counters: recording and flushing (see tests/core/counters/conftest.py for the fixtures)."""

from __future__ import annotations

import asyncio
import re

import pytest

from mcp_memory.core.ids import iso, ulid_time
from mcp_memory.core.model import EMPTY_STATS
from tests.core.counters.support import (
    MERGED,
    SHARDS,
    START,
    TENANT,
    Clock,
    FaultyStore,
    PodFactory,
    flush_each,
    shard_keys,
    total,
)


async def test_counts_a_pod_recorded_are_visible_to_it_before_any_flush(store: FaultyStore, pod: PodFactory) -> None:
    counters = pod("pod-a")
    counters.record(TENANT, "m1", START)
    counters.record(TENANT, "m1", START)

    assert await shard_keys(store) == []
    assert await store.get(MERGED) is None
    assert (await counters.load(TENANT))["m1"].access_count == 2


async def test_a_flush_makes_counts_readable_by_another_pod(store: FaultyStore, pod: PodFactory) -> None:
    writer = pod("pod-a")
    writer.record(TENANT, "m1", START)
    assert await writer.flush() == 1

    assert await total(store) == 1


async def test_a_shard_has_the_reference_key_and_a_compact_delta_body(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    counters = pod("pod-a")
    counters.record(TENANT, "m1", START - 5000)
    counters.record(TENANT, "m1", START - 9000)
    clock.advance(42)
    await counters.flush()

    [key] = await shard_keys(store)
    name = key.removeprefix(SHARDS)
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}-pod-a\.json", name)
    assert ulid_time(name[:26]) == START + 42
    stored = await store.get(key)
    assert stored is not None
    assert stored.body == '{"m1":{"access":2,"lastAt":"2026-06-30T23:59:55.000Z"}}'


async def test_flushing_twice_does_not_count_twice(store: FaultyStore, pod: PodFactory) -> None:
    counters = pod("pod-a")
    counters.record(TENANT, "m1", START)
    assert await counters.flush() == 1
    assert await counters.flush() == 0

    assert await total(store) == 1


async def test_three_pods_flushing_in_the_same_millisecond_all_count(store: FaultyStore, pod: PodFactory) -> None:
    pods = [pod(name) for name in ("pod-a", "pod-b", "pod-c")]
    for counters in pods:
        counters.record(TENANT, "m1", START)
        counters.record(TENANT, "m1", START)
    store.yield_each = True
    await asyncio.gather(*(counters.flush() for counters in pods))

    assert len(await shard_keys(store)) == 3
    assert await total(store) == 6


async def test_the_later_timestamp_wins_across_pods(store: FaultyStore, pod: PodFactory) -> None:
    late, early = pod("pod-b"), pod("pod-a")
    late.record(TENANT, "m1", START + 60_000)
    early.record(TENANT, "m1", START)
    await late.flush()
    await early.flush()

    stats = (await pod("reader").load(TENANT))["m1"]
    assert stats.last_accessed_at == iso(START + 60_000)
    assert stats.access_count == 2


async def test_tenants_are_kept_apart(store: FaultyStore, pod: PodFactory) -> None:
    counters = pod("pod-a")
    counters.record("alpha", "m1", START)
    counters.record("beta", "m1", START)
    counters.record("beta", "m1", START)
    assert await counters.flush() == 2

    assert await total(store, tenant="alpha") == 1
    assert await total(store, tenant="beta") == 2
    assert await total(store, tenant="gamma") == 0


async def test_the_empty_stats_value_cannot_be_modified(pod: PodFactory) -> None:
    empty = (await pod("reader").load(TENANT)).get("never-used", EMPTY_STATS)
    assert empty.access_count == 0
    with pytest.raises(AttributeError):
        empty.access_count = 99  # type: ignore[misc]
    assert EMPTY_STATS.access_count == 0


async def test_more_shards_than_one_fetch_batch_are_all_counted_sixteen_at_a_time(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 40)

    store.yield_each = True
    assert await total(store) == 40
    assert store.max_gets_in_flight == 16


async def test_a_shard_that_vanishes_between_list_and_read_is_skipped(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 3)
    store.vanished.add((await shard_keys(store))[1])

    assert await total(store) == 2
