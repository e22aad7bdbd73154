"""recall's and list_memories' `since` / `until` on the in-memory store: applied before the
limit (a memory of the span behind 120 nearer ones outside it is still found), both ends inclusive
(a date as `until` is the whole day), ages counted back from the service's clock, and bad values
refused naming the field, on the tools, the library API and the CLI. Each real backend's own
time filter: tests/stores/test_smoke.py."""

from __future__ import annotations

import asyncio

import pytest

from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import iso, parse_iso, ulid
from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.object_keys import index_key
from tests.conftest import DAY, T0, Env

ACME = Caller("acme")
QUERY = "rolling deploys drain streams before the pod exits"
WORDS = [f"w{i:03d}x" for i in range(200)]
HOUR = 3_600_000


async def put(env: Env, memories: list[Memory]) -> None:
    """Straight into the stores (vector and index key), as remember would leave them at their own times."""
    vectors = await env.embedder.embed([m.content for m in memories])
    for memory, vector in zip(memories, vectors):
        await env.vectors.put(memory, vector)
    seed = getattr(env.objects, "seed", None)
    if seed is not None:
        seed([index_key(m) for m in memories])
    else:
        await asyncio.gather(*(env.objects.put(index_key(m), "") for m in memories))


def at(when: float, content: str, **kw) -> Memory:
    return Memory(id=ulid(when), tenant="acme", content=content, created_at=iso(when), **kw)


def crowd(start: float, n: int = 120) -> list[Memory]:
    """`n` memories nearer the query than anything else, a minute apart from `start`."""
    return [at(start + i * 60_000, f"{QUERY} {WORDS[i]}") for i in range(n)]


async def test_an_old_memory_behind_120_nearer_newer_ones_is_recalled_with_until(env: Env) -> None:
    old = at(T0 - 30 * DAY, "rolling deploys waited for the database migration in May")
    await put(env, [old, *crowd(T0 - 2 * DAY)])
    plain = await env.service.recall(ACME, QUERY, limit=50)
    assert old.id not in [r.memory.id for r in plain.results]  # unfiltered, it is crowded out
    found = await env.service.recall(ACME, QUERY, until=iso(T0 - 10 * DAY))
    assert [r.memory.id for r in found.results] == [old.id]


async def test_a_new_memory_behind_120_nearer_older_ones_is_recalled_with_since(env: Env) -> None:
    new = at(T0 - HOUR, "rolling deploys now wait for the cache warm-up")
    await put(env, [*crowd(T0 - 40 * DAY), new])
    found = await env.service.recall(ACME, QUERY, since="1d")  # an age, from the service's clock (T0)
    assert [r.memory.id for r in found.results] == [new.id]


async def test_both_ends_are_inclusive_and_a_date_as_until_is_the_whole_day(env: Env) -> None:
    day = "2026-06-10"
    start = parse_iso(day)
    inside = [at(start, f"{QUERY} {WORDS[1]}"), at(start + DAY - 1, f"{QUERY} {WORDS[2]}")]
    outside = [at(start - 1, f"{QUERY} {WORDS[3]}"), at(start + DAY, f"{QUERY} {WORDS[4]}")]
    await put(env, [*inside, *outside])
    result = await env.service.recall(ACME, QUERY, since=day, until=day, mode="exploratory")
    assert sorted(r.memory.id for r in result.results) == sorted(m.id for m in inside)
    instant = await env.service.recall(ACME, QUERY, since=iso(start + DAY - 1), mode="exploratory")
    assert sorted(r.memory.id for r in instant.results) == sorted([inside[1].id, outside[1].id])


async def test_time_combines_with_tags_and_type(env: Env) -> None:
    await put(
        env,
        [
            at(T0 - 5 * DAY, f"{QUERY} {WORDS[1]}", tags=("ops",)),
            at(T0 - 5 * DAY + 1, f"{QUERY} {WORDS[2]}", tags=("dev",)),
            at(T0 - 50 * DAY, f"{QUERY} {WORDS[3]}", tags=("ops",)),
        ],
    )
    result = await env.service.recall(ACME, QUERY, tags=["ops"], since="2w", mode="exploratory")
    assert [r.memory.content[-4:] for r in result.results] == [WORDS[1][-4:]]
    assert (await env.service.recall(ACME, QUERY, memory_type="reference", since="2w")).results == []


async def test_list_keeps_only_the_span_newest_first_behind_a_page_of_newer_ones(env: Env) -> None:
    old = [at(T0 - (100 + i) * DAY, f"an old memory {i}") for i in range(3)]
    newer = [at(T0 - DAY - i * 60_000, f"a newer memory {i}") for i in range(1200)]
    await put(env, old)
    seed = getattr(env.objects, "seed", None)
    keys = [index_key(m) for m in newer]  # 1,200 newer index keys; their records need not exist
    if seed is not None:
        seed(keys)
    else:
        for start in range(0, len(keys), 100):
            await asyncio.gather(*(env.objects.put(k, "") for k in keys[start : start + 100]))
    listed = await env.service.list(ACME, until=iso(T0 - 50 * DAY), limit=10)
    assert [m.id for m in listed.memories] == [m.id for m in old]
    assert listed.span.until == T0 - 50 * DAY
    between = await env.service.list(ACME, since=iso(T0 - 101 * DAY), until=iso(T0 - 100 * DAY))
    assert [m.id for m in between.memories] == [old[0].id, old[1].id]


async def test_the_library_api_refuses_a_bad_bound_and_a_since_after_until_naming_the_field(env: Env) -> None:
    with pytest.raises(InvalidArgument) as bad:
        await env.service.recall(ACME, QUERY, since="last tuesday")
    assert str(bad.value).startswith("`since` must be an ISO 8601 date (2026-05-01) or time")
    with pytest.raises(InvalidArgument) as order:
        await env.service.list(ACME, since="2026-06-02", until="2026-06-01")
    assert "`since` (2026-06-02T00:00:00.000Z) is later than the span's end (2026-06-01T23:59:59.999Z)" in str(
        order.value
    )
