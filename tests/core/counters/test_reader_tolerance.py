"""Access counters: what a reader tolerates (see tests/core/counters/conftest.py for the fixtures)."""

from __future__ import annotations

import json

from mcp_memory.core.ids import iso, ulid
from tests.core.counters.support import (
    MERGED,
    SETTLED,
    SHARDS,
    START,
    TENANT,
    Clock,
    FaultyStore,
    PodFactory,
    put_shard,
    shard_keys,
    total,
)


async def test_an_entry_with_an_unparseable_timestamp_is_dropped_and_its_neighbour_kept(
    store: FaultyStore, pod: PodFactory
) -> None:
    body = {
        "m1": {"access": 3, "lastAt": "not-a-date"},
        "m2": {"access": 2, "lastAt": iso(START)},
        "m3": {"access": "4", "lastAt": iso(START)},
        "m4": {"access": True, "lastAt": iso(START)},
        "m5": "junk",
    }
    await store.put(f"{SHARDS}{'0' * 26}-pod-x.json", json.dumps(body))

    counts = await pod("reader").load(TENANT)
    assert set(counts) == {"m2"}
    assert counts["m2"].access_count == 2


async def test_a_shard_whose_body_is_not_json_counts_as_nothing(store: FaultyStore, pod: PodFactory) -> None:
    await put_shard(store, START, "pod-a")
    await store.put(f"{SHARDS}{ulid(START + 1)}-pod-b.json", "{ not json")

    assert await total(store) == 1


async def test_corrupt_merged_json_is_tolerated_and_replaced_by_the_next_compaction(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await store.put(MERGED, "{ not json")
    writer = pod("pod-a")
    writer.record(TENANT, "m1", START)
    await writer.flush()

    assert await total(store) == 1

    clock.advance(SETTLED)
    compactor = pod("compactor", compact_threshold=0)
    assert (await compactor.load(TENANT))["m1"].access_count == 1
    await compactor.wait_for_compaction()

    stored = await store.get(MERGED)
    assert stored is not None
    assert json.loads(stored.body)["counts"]["m1"]["access"] == 1
    assert await shard_keys(store) == []
    assert await total(store) == 1
