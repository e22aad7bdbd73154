"""Access counters: the cache (see tests/core/counters/conftest.py for the fixtures)."""

from __future__ import annotations

from tests.core.counters.support import START, TENANT, Clock, FaultyStore, PodFactory


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
