"""Access counters: background compaction (see tests/core/counters/conftest.py for the fixtures)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.core.counters.support import (
    MERGED,
    SETTLED,
    SHARDS,
    START,
    TENANT,
    Clock,
    FaultyStore,
    Logs,
    PodFactory,
    flush_each,
    put_shard,
    shard_keys,
    total,
)


async def test_compaction_keeps_the_total_and_removes_the_folded_shards(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 5)
    shards = await shard_keys(store)

    clock.advance(SETTLED)
    compactor = pod("compactor", compact_threshold=3)
    assert (await compactor.load(TENANT))["m1"].access_count == 5
    await compactor.wait_for_compaction()

    assert await shard_keys(store) == []
    stored = await store.get(MERGED)
    assert stored is not None
    merged = json.loads(stored.body)
    assert merged["watermark"] == max(shards).removeprefix(SHARDS)
    assert merged["counts"]["m1"]["access"] == 5
    assert await total(store) == 5


async def test_compaction_waits_until_strictly_more_settled_shards_than_the_threshold(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 3)
    clock.advance(SETTLED)

    compactor = pod("compactor", compact_threshold=3)
    await compactor.load(TENANT)
    await compactor.wait_for_compaction()

    assert await store.get(MERGED) is None
    assert len(await shard_keys(store)) == 3


async def test_shards_reinserted_after_compaction_are_not_counted_again(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 4)
    bodies = {key: (await store.get(key)) for key in await shard_keys(store)}

    clock.advance(SETTLED)
    compactor = pod("compactor", compact_threshold=2)
    await compactor.load(TENANT)
    await compactor.wait_for_compaction()
    assert await shard_keys(store) == []

    # The compactor that wrote merged.json but died before deleting these.
    for key, stored in bodies.items():
        assert stored is not None
        await store.put(key, stored.body)

    assert await total(store) == 4


@pytest.mark.parametrize("merged_exists", [False, True], ids=["first-merge", "later-merge"])
async def test_a_compactor_that_loses_the_cas_leaves_the_shards_in_place(
    store: FaultyStore, pod: PodFactory, clock: Clock, logs: Logs, merged_exists: bool
) -> None:
    if merged_exists:  # the CAS is then an if-match on its ETag, not an if-none-match
        await flush_each(pod("pod-a"), clock, 2)
        clock.advance(SETTLED)
        assert (await pod("operator").compact(TENANT)).written
    await flush_each(pod("pod-a"), clock, 4)

    async def rival_compacts_first() -> None:
        await store.inner.put(MERGED, json.dumps({"counts": {}, "watermark": ""}))

    store.before_cas = rival_compacts_first
    clock.advance(SETTLED)
    loser = pod("loser", compact_threshold=2)
    assert (await loser.load(TENANT))["m1"].access_count == 4 + (2 if merged_exists else 0)
    deletes = list(store.deletes)
    await loser.wait_for_compaction()

    assert store.before_cas is None  # the rival did get in first
    assert len(await shard_keys(store)) == 4
    assert store.deletes == deletes
    assert logs.events() == []


async def test_a_late_shard_stamped_inside_the_lag_is_still_counted(store: FaultyStore, pod: PodFactory) -> None:
    await put_shard(store, START, "pod-a")
    await put_shard(store, START + 70_000, "pod-b")

    # Absorbing everything visible would put the line at +70 s, beneath which
    # the shard stamped at +65 s (still in flight) would land and never count.
    compactor = pod("compactor", compact_threshold=0, clock=lambda: START + 118_000)
    await compactor.load(TENANT)
    await compactor.wait_for_compaction()
    await put_shard(store, START + 65_000, "pod-behind")

    assert len(await shard_keys(store)) == 2
    assert await total(store) == 3


async def test_absorbed_shards_left_behind_do_not_crowd_fresh_ones_out_of_the_listing(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 6)
    leftovers = {key: await store.get(key) for key in await shard_keys(store)}
    clock.advance(SETTLED)
    assert (await pod("operator").compact(TENANT)).shards_folded == 6
    for key, stored in leftovers.items():  # a compactor that died before deleting
        assert stored is not None
        await store.put(key, stored.body)
    await flush_each(pod("pod-a"), clock, 2)

    # A listing limit below the leftovers: it must be spent above the watermark.
    reader = pod("reader", list_limit=5, compact_threshold=10**9)
    assert (await reader.load(TENANT))["m1"].access_count == 8


async def test_young_shards_are_counted_but_not_folded(store: FaultyStore, pod: PodFactory, clock: Clock) -> None:
    await flush_each(pod("pod-a"), clock, 4)

    eager = pod("eager", compact_threshold=1)
    assert (await eager.load(TENANT))["m1"].access_count == 4
    await eager.wait_for_compaction()

    assert len(await shard_keys(store)) == 4
    assert await store.get(MERGED) is None
    assert await total(store) == 4


async def test_a_compactor_that_dies_between_the_cas_and_the_deletes_leaves_totals_correct(
    store: FaultyStore, pod: PodFactory, clock: Clock, logs: Logs
) -> None:
    await flush_each(pod("pod-a"), clock, 4)
    clock.advance(SETTLED)

    store.fail_delete = True
    compactor = pod("compactor", compact_threshold=2)
    await compactor.load(TENANT)
    await compactor.wait_for_compaction()

    assert len(await shard_keys(store)) == 4
    assert await total(store) == 4
    [line] = [line for line in logs.lines() if line["event"] == "stats_shard_cleanup_failed"]
    assert line["tenant"] == TENANT

    # The operator's pass collects what the watermark already covers.
    store.fail_delete = False
    report = await pod("operator").compact(TENANT)
    assert (report.shards_stale, report.shards_folded, report.accesses) == (4, 0, 4)
    assert await shard_keys(store) == []
    assert await total(store) == 4


async def test_a_store_failure_during_background_compaction_is_logged_and_the_read_still_answers(
    store: FaultyStore, pod: PodFactory, clock: Clock, logs: Logs
) -> None:
    await flush_each(pod("pod-a"), clock, 3)
    clock.advance(SETTLED)
    store.fail_put = lambda key: key == MERGED

    compactor = pod("compactor", compact_threshold=0)
    assert (await compactor.load(TENANT))["m1"].access_count == 3
    await compactor.wait_for_compaction()

    [line] = [line for line in logs.lines() if line["event"] == "stats_compaction_failed"]
    assert line["tenant"] == TENANT and line["level"] == "error"
    assert len(await shard_keys(store)) == 3


async def test_two_background_compactions_racing_keep_the_total(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 6)
    clock.advance(SETTLED)
    store.yield_each = True

    first, second = pod("c1", compact_threshold=0), pod("c2", compact_threshold=0)
    await asyncio.gather(first.load(TENANT), second.load(TENANT))
    await asyncio.gather(first.wait_for_compaction(), second.wait_for_compaction())

    assert await total(store) == 6
