"""Access counters (B §11.7 and the operator's compaction).

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

import asyncio
import io
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest

from mcp_memory.core.counters.tracker import AccessCounters, CompactReport, new_pod_id
from mcp_memory.core.errors import StoreError
from mcp_memory.core.ids import iso, parse_iso, ulid, ulid_time
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import EMPTY_STATS
from mcp_memory.stores.base import ObjectStore, StoredObject
from mcp_memory.stores.memory import InMemoryObjectStore

TENANT = "demo"
START = parse_iso("2026-07-01T00:00:00.000Z")
#: Comfortably past the one-minute lag, after which a shard may be absorbed.
SETTLED = 120_000
SHARDS = f"stats/{TENANT}/shard/"
MERGED = f"stats/{TENANT}/merged.json"


class Clock:
    """Epoch milliseconds that move only when a test says so."""

    def __init__(self, at: float = START) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at

    def advance(self, ms: float) -> None:
        self.at += ms


class FaultyStore:
    """Wraps any ObjectStore to stage the failures and races the counters must survive."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        #: Suspend at every call, so concurrent tasks really interleave.
        self.yield_each = False
        self.fail_put: Callable[[str], bool] = lambda key: False
        self.fail_delete = False
        #: Runs once, just before the next conditional (CAS) write goes through.
        self.before_cas: Callable[[], Awaitable[None]] | None = None
        self.vanished: set[str] = set()
        self.puts: list[str] = []
        self.deletes: list[str] = []
        self.put_done = asyncio.Event()
        self.put_failed = asyncio.Event()
        self.put_started = asyncio.Event()
        #: When set, writes wait for it: a write caught in flight.
        self.gate: asyncio.Event | None = None
        self.gets_in_flight = 0
        self.max_gets_in_flight = 0

    async def _pause(self) -> None:
        if self.yield_each:
            await asyncio.sleep(0)

    async def get(self, key: str) -> StoredObject | None:
        self.gets_in_flight += 1
        self.max_gets_in_flight = max(self.max_gets_in_flight, self.gets_in_flight)
        try:
            await self._pause()
            return None if key in self.vanished else await self.inner.get(key)
        finally:
            self.gets_in_flight -= 1

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        await self._pause()
        self.put_started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_put(key):
            self.put_failed.set()
            raise StoreError(f"injected put failure for {key}")
        if (if_match is not None or if_none_match) and self.before_cas is not None:
            hook, self.before_cas = self.before_cas, None
            await hook()
        etag = await self.inner.put(key, body, if_match=if_match, if_none_match=if_none_match)
        self.puts.append(key)
        self.put_done.set()
        return etag

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        await self._pause()
        return await self.inner.list(prefix, limit, start_after)

    async def delete(self, keys: Sequence[str]) -> None:
        await self._pause()
        if self.fail_delete:
            raise StoreError("injected delete failure")
        self.deletes.extend(keys)
        await self.inner.delete(keys)

    async def close(self) -> None:
        await self.inner.close()


class Logs:
    """A JsonLog writing to memory, read back as parsed lines."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.log = JsonLog(self.out, self.err)

    def lines(self) -> list[dict[str, Any]]:
        text = self.out.getvalue() + self.err.getvalue()
        return [json.loads(line) for line in text.splitlines()]

    def events(self) -> list[str]:
        return [line["event"] for line in self.lines()]


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


PodFactory = Callable[..., AccessCounters]


@pytest.fixture
def pod(store: FaultyStore, clock: Clock, logs: Logs) -> PodFactory:
    """A pod on the shared store. The cache is off unless asked for, so most tests
    assert against what is durable rather than against a stale copy."""

    def make(pod_id: str, **options: Any) -> AccessCounters:
        options.setdefault("cache_ttl_ms", 0)
        options.setdefault("clock", clock)
        return AccessCounters(store, pod_id=pod_id, log=logs.log, **options)

    return make


async def total(store: ObjectStore, memory_id: str = "m1", tenant: str = TENANT) -> int:
    """What a fresh pod that never compacts reads for one memory."""
    reader = AccessCounters(
        store,
        pod_id="reader",
        log=JsonLog(io.StringIO(), io.StringIO()),
        cache_ttl_ms=0,
        compact_threshold=10**9,
        clock=lambda: START,
    )
    return (await reader.load(tenant)).get(memory_id, EMPTY_STATS).access_count


async def shard_keys(store: ObjectStore, tenant: str = TENANT) -> list[str]:
    """Every shard key, paging past the listing limit."""
    keys: list[str] = []
    after: str | None = None
    while page := await store.list(f"stats/{tenant}/shard/", 1000, after):
        keys.extend(page)
        after = page[-1]
    return keys


async def put_shard(store: ObjectStore, at: float, pod_id: str, counts: dict[str, int] | None = None) -> str:
    """A shard stamped `at`, written straight to the store (as another pod would)."""
    key = f"{SHARDS}{ulid(at)}-{pod_id}.json"
    body = {m: {"access": n, "lastAt": iso(at)} for m, n in (counts or {"m1": 1}).items()}
    await store.put(key, json.dumps(body))
    return key


async def flush_each(counters: AccessCounters, clock: Clock, n: int, memory_id: str = "m1") -> None:
    """n single-access shards, one second apart."""
    for _ in range(n):
        counters.record(TENANT, memory_id, clock())
        await counters.flush()
        clock.advance(1000)


# --------------------------------------------------------------------------- recording and flushing


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


# --------------------------------------------------------------------------- what a reader tolerates


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


# --------------------------------------------------------------------------- background compaction


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


# --------------------------------------------------------------------------- the cache


async def test_a_cached_read_is_reused_within_the_ttl_and_refreshed_after(
    store: FaultyStore, pod: PodFactory, clock: Clock
) -> None:
    writer = pod("pod-a")
    reader = pod("reader", cache_ttl_ms=60_000)
    writer.record(TENANT, "m1", clock())
    await writer.flush()
    assert (await reader.load(TENANT))["m1"].access_count == 1

    clock.advance(1000)
    writer.record(TENANT, "m1", clock())
    await writer.flush()
    assert (await reader.load(TENANT))["m1"].access_count == 1  # still cached

    clock.advance(60_000)
    assert (await reader.load(TENANT))["m1"].access_count == 2  # expired


async def test_expired_tenants_are_evicted_when_the_cache_is_written(pod: PodFactory, clock: Clock) -> None:
    reader = pod("reader", cache_ttl_ms=60_000)
    for tenant in ("alpha", "beta", "gamma"):
        await reader.load(tenant)
    assert reader.cached_tenants == 3

    clock.advance(59_999)
    await reader.load("delta")
    assert reader.cached_tenants == 4  # none had expired yet

    clock.advance(1)
    await reader.load("epsilon")
    assert reader.cached_tenants == 2  # alpha, beta, gamma are gone, not merely stale


async def test_a_flush_folds_its_counts_into_the_cached_read(pod: PodFactory, clock: Clock) -> None:
    counters = pod("pod-a", cache_ttl_ms=60_000)
    counters.record(TENANT, "m1", clock())
    assert (await counters.load(TENANT))["m1"].access_count == 1

    clock.advance(1000)
    await counters.flush()
    assert (await counters.load(TENANT))["m1"].access_count == 1  # not lost with the pending counts

    clock.advance(60_000)
    assert (await counters.load(TENANT))["m1"].access_count == 1  # nor doubled on the re-read


async def test_loading_some_ids_gives_their_durable_plus_unflushed_counts_and_nothing_else(
    pod: PodFactory, clock: Clock
) -> None:
    counters = pod("pod-a", cache_ttl_ms=60_000)
    for memory_id in ("m1", "m1", "m2", "m3"):
        counters.record(TENANT, memory_id, clock())
    await counters.flush()
    clock.advance(5000)
    counters.record(TENANT, "m1", clock())  # unflushed, and later than the durable one
    counters.record(TENANT, "m4", clock())

    some = await counters.load(TENANT, ["m1", "m4", "m3", "never-used"])
    everything = await counters.load(TENANT)

    assert set(some) == {"m1", "m3", "m4"}
    assert {k: everything[k] for k in some} == some
    assert some["m1"].access_count == 3 and some["m1"].last_accessed_at == everything["m1"].last_accessed_at


async def test_the_mapping_a_load_returns_is_the_callers_own(pod: PodFactory) -> None:
    counters = pod("pod-a", cache_ttl_ms=60_000)
    counters.record(TENANT, "m1", START)
    first = await counters.load(TENANT)
    first.clear()  # type: ignore[attr-defined]

    assert (await counters.load(TENANT))["m1"].access_count == 1


# --------------------------------------------------------------------------- failures while flushing


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


# --------------------------------------------------------------------------- the operator's compaction


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


# --------------------------------------------------------------------------- identity


def test_a_pod_id_is_the_hostname_and_eight_random_hex_characters() -> None:
    first, second = new_pod_id("web-7f9c"), new_pod_id("web-7f9c")
    assert re.fullmatch(r"web-7f9c-[0-9a-f]{8}", first)
    assert first != second
    assert re.fullmatch(r"a-b-c-[0-9a-f]{8}", new_pod_id("a/b c"))


def test_a_pod_id_that_would_break_a_key_is_refused(store: FaultyStore, logs: Logs) -> None:
    with pytest.raises(ValueError):
        AccessCounters(store, pod_id="a/b", log=logs.log)
