"""Access counters: the operator's compaction (see tests/core/counters/conftest.py for the fixtures)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from mcp_memory.core.counters.tracker import CompactReport
from mcp_memory.core.ids import iso, ulid
from mcp_memory.stores.in_memory import InMemoryObjectStore
from tests.core.counters.support import (
    SETTLED,
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


async def test_operator_compaction_folds_every_settled_shard_whatever_the_threshold(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    writer = pod("pod-a")
    await flush_each(writer, clock, 3)
    await flush_each(writer, clock, 1, memory_id="m2")
    clock.advance(SETTLED)
    await flush_each(writer, clock, 2)  # young

    report = await pod("operator").compact(TENANT)

    assert report == CompactReport(
        tenant=TENANT,
        shards_folded=4,
        shards_left=2,
        shards_stale=0,
        memories=2,
        accesses=4,
        watermark=report.watermark,
        dry_run=False,
        written=True,
    )
    assert len(await shard_keys(store)) == 2
    assert await total(store) == 5
    assert await total(store, "m2") == 1


async def test_a_dry_run_reports_the_same_numbers_and_writes_nothing(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 5)
    clock.advance(SETTLED)
    await flush_each(pod("pod-a"), clock, 1)
    puts, shards = len(store.puts), await shard_keys(store)

    planned = await pod("operator").compact(TENANT, dry_run=True)
    assert (len(store.puts), store.deletes, await shard_keys(store)) == (puts, [], shards)
    assert (planned.dry_run, planned.written) == (True, False)

    done = await pod("operator").compact(TENANT)
    assert (done.dry_run, done.written) == (False, True)
    assert planned == replace(done, dry_run=True, written=False)
    assert (done.shards_folded, done.shards_left, done.accesses) == (5, 1, 5)


async def test_operator_compaction_with_nothing_settled_writes_nothing(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 2)
    puts = len(store.puts)

    report = await pod("operator").compact(TENANT)

    assert (report.shards_folded, report.shards_left, report.written) == (0, 2, False)
    assert len(store.puts) == puts
    assert await total(store) == 2


async def test_operator_compaction_pages_through_thousands_of_shards(store: FaultyStore, pod: PodFactory) -> None:
    # Each shard is one request over HTTP, so on S3 the listing pages are made
    # smaller instead of the shards more numerous: still many pages to walk.
    s3 = not isinstance(store.inner, InMemoryObjectStore)
    count, page = (300, 100) if s3 else (5000, 1000)
    shards = [
        (f"{SHARDS}{ulid(START + i)}-pod-{i % 7}.json", json.dumps({"m1": {"access": 1, "lastAt": iso(START + i)}}))
        for i in range(count)
    ]
    if s3:
        from tests.support.moto_endpoint import seed_objects

        seed_objects(store.inner.bucket, shards)  # type: ignore[attr-defined]
    else:
        for key, body in shards:
            await store.put(key, body)

    report = await pod("operator", list_limit=page, clock=lambda: START + count + SETTLED).compact(TENANT)

    assert (report.shards_folded, report.accesses, report.written) == (count, count, True)
    assert await shard_keys(store) == []
    assert await total(store) == count


async def test_two_operator_compactions_racing_neither_lose_nor_double_count(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    await flush_each(pod("pod-a"), clock, 6)
    await flush_each(pod("pod-a"), clock, 2, memory_id="m2")
    clock.advance(SETTLED)
    store.yield_each = True

    reports = await asyncio.gather(pod("op-1").compact(TENANT), pod("op-2").compact(TENANT))

    assert sorted(r.written for r in reports) == [False, True]
    assert all(r.accesses == 8 for r in reports)
    assert await shard_keys(store) == []
    assert await total(store) == 6
    assert await total(store, "m2") == 2
