"""MemoryService.list: every memory of a tenant, newest first, a page at a time with an opaque
cursor (core/paging.py, docs/tools.md#paging), on the in-memory store; each real backend's listing of
index keys under it: tests/stores/test_smoke.py and the contract suite."""

from __future__ import annotations

import pytest

from mcp_memory.core import paging
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import iso, ulid
from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.object_keys import index_key
from tests.conftest import DAY, T0, Env, make_env

ACME = Caller("acme")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")
GLOBEX = Caller("globex")


async def store(env: Env, tenant: str, count: int, *, start: float = T0, step: float = 1000, **fields) -> list[str]:
    """`count` memories of `tenant` stored `step` ms apart from `start`, oldest first; their ids."""
    memories = []
    for i in range(count):
        at = start + i * step
        memories.append(
            Memory(id=ulid(at), tenant=tenant, content=f"note n{i:05d}x {tenant}", created_at=iso(at), **fields)
        )
    vectors = await env.embedder.embed([m.content for m in memories])
    await env.vectors.put_many(list(zip(memories, vectors)))
    for memory in memories:
        await env.objects.put(index_key(memory), "")
    return [m.id for m in memories]


async def walk(env: Env, caller: Caller, **kw) -> list[list[str]]:
    """Every page's ids, following the cursors to the end."""
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = await env.service.list(caller, cursor=cursor, **kw)
        pages.append([m.id for m in page.memories])
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor
        assert len(pages) < 100


async def test_pages_give_every_memory_once_newest_first_and_the_last_has_no_cursor(env: Env) -> None:
    ids = await store(env, "acme", 7)
    assert await walk(env, ACME, limit=3) == [ids[:3:-1], ids[3:0:-1], ids[:1]]


async def test_a_page_that_ends_exactly_at_the_last_memory_has_no_next_cursor(env: Env) -> None:
    ids = await store(env, "acme", 6)
    first = await env.service.list(ACME, limit=3)
    second = await env.service.list(ACME, limit=3, cursor=first.next_cursor)
    assert [m.id for m in second.memories] == ids[2::-1]
    assert second.next_cursor is None


async def test_an_empty_tenant_has_one_empty_page(env: Env) -> None:
    await store(env, "globex", 3)
    page = await env.service.list(ACME)
    assert page.memories == [] and page.next_cursor is None


async def test_another_tenants_cursor_is_refused_as_a_forged_one_and_its_own_pages_stay_whole(env: Env) -> None:
    acme = await store(env, "acme", 4)
    globex = await store(env, "globex", 4, start=T0 + 500)
    theirs = await env.service.list(GLOBEX, limit=2)
    with pytest.raises(InvalidArgument) as refused:
        await env.service.list(ACME, limit=10, cursor=theirs.next_cursor)
    assert refused.value.field == "cursor" and "not a cursor this server gave out" in str(refused.value)
    assert not any(i in str(refused.value) for i in acme + globex) and "globex" not in str(refused.value)
    assert [i for p in await walk(env, GLOBEX, limit=3) for i in p] == globex[::-1]


async def test_a_conversation_pages_its_own_notes_and_the_projects_but_no_other_conversations(env: Env) -> None:
    project = await store(env, "acme", 3)
    mine = await store(env, "acme", 2, start=T0 + 100, scope="conversation", conversation="chat:thread-a")
    theirs = await store(env, "acme", 2, start=T0 + 200, scope="conversation", conversation="chat:thread-b")
    seen = [i for p in await walk(env, THREAD, limit=2) for i in p]
    assert set(seen) == set(project) | set(mine) and not set(theirs) & set(seen)
    assert [i for p in await walk(env, ACME, limit=2) for i in p] == project[::-1]
    only_mine = [i for p in await walk(env, THREAD, limit=2, scope="conversation") for i in p]
    assert only_mine == mine[::-1]
    assert [i for p in await walk(env, THREAD, scope="project") for i in p] == project[::-1]


async def test_pages_filter_by_type_and_by_any_of_some_tags(env: Env) -> None:
    plain = await store(env, "acme", 5)
    patterns = await store(env, "acme", 3, start=T0 + 10, memory_type="pattern")
    tagged = await store(env, "acme", 2, start=T0 + 20, tags=("ops", "k8s"))
    other_tag = await store(env, "acme", 2, start=T0 + 30, tags=("billing",))
    assert [i for p in await walk(env, ACME, limit=2, memory_type="pattern") for i in p] == patterns[::-1]
    assert [i for p in await walk(env, ACME, limit=1, tags=["k8s"]) for i in p] == tagged[::-1]
    both = [i for p in await walk(env, ACME, tags=["ops", "billing"]) for i in p]
    assert set(both) == set(tagged) | set(other_tag) and not set(plain) & set(both)


async def test_since_and_until_keep_the_memories_created_within_both_inclusive(env: Env) -> None:
    ids = await store(env, "acme", 10, step=DAY)  # one a day from 2026-07-01
    inside = [i for p in await walk(env, ACME, limit=2, since="2026-07-03", until="2026-07-05") for i in p]
    assert inside == ids[4:1:-1]
    exact = await env.service.list(ACME, since=iso(T0 + 2 * DAY), until=iso(T0 + 2 * DAY))
    assert [m.id for m in exact.memories] == [ids[2]]
    assert [m.id for m in (await env.service.list(ACME, until="2026-07-01")).memories] == [ids[0]]
    assert [m.id for m in (await env.service.list(ACME, since="2026-07-10")).memories] == [ids[9]]


async def test_a_forgotten_memory_at_the_cursor_does_not_stop_the_next_page(env: Env) -> None:
    ids = await store(env, "acme", 5)
    first = await env.service.list(ACME, limit=2)
    assert (await env.service.forget(ACME, ids[3])).deleted
    second = await env.service.list(ACME, limit=2, cursor=first.next_cursor)
    assert [m.id for m in second.memories] == [ids[2], ids[1]]


@pytest.mark.parametrize(
    "cursor", ["", "c1", "c1!!!", "c1" + "QQ" * 40, "nonsense", "c1MDAwMDAwMDAwMCMwMUowMDAwMDAwMDAwMDAwMDAwMDAwMDAx"]
)
async def test_a_cursor_the_server_did_not_give_is_refused_naming_the_cursor(env: Env, cursor: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        await env.service.list(ACME, cursor=cursor)
    assert refused.value.field == "cursor" and "not a cursor this server gave out" in str(refused.value)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": paging.PAGE_MAX + 1}, "limit"),
        ({"limit": True}, "limit"),
        ({"memory_type": "diary"}, "type"),
        ({"scope": "everyone"}, "scope"),
        ({"since": "last tuesday"}, "since"),
        ({"until": "2026-13-45"}, "until"),
        ({"since": "2026-07-05", "until": "2026-07-01"}, "since"),
    ],
)
async def test_bad_paging_arguments_are_refused_naming_the_field(kw: dict, field: str, clock) -> None:
    env = make_env(clock)
    with pytest.raises(InvalidArgument) as refused:
        await env.service.list(ACME, **kw)
    assert refused.value.field == field


async def test_a_rare_tag_returns_short_pages_with_a_cursor_rather_than_reading_on(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(paging, "PAGE_SCAN_CAP", 6)
    monkeypatch.setattr(paging, "PAGE_BATCH", 4)
    [rare] = await store(env, "acme", 1, tags=("rare",))
    await store(env, "acme", 15, start=T0 + 1000)
    pages = await walk(env, ACME, tags=["rare"])
    assert pages[-1] == [rare] and all(p == [] for p in pages[:-1]) and len(pages) == 3


class CountingObjects:
    """An object store that records the size of every listing asked of it."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.listed: list[int] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        self.listed.append(limit)
        return await self.inner.list(prefix, limit, start_after)


async def test_an_unfiltered_page_reads_one_key_more_than_it_shows_however_many_are_stored(clock) -> None:
    env = make_env(clock)
    counting = CountingObjects(env.objects)
    env.service.objects = counting
    await store(env, "acme", 300)
    page = await env.service.list(ACME, limit=50)
    deeper = await env.service.list(ACME, limit=50, cursor=page.next_cursor)
    assert len(page.memories) == len(deeper.memories) == 50
    assert counting.listed == [51, 51]


async def test_created_times_come_from_the_index_for_the_visible_memories_and_say_when_more_remain(env: Env) -> None:
    await store(env, "acme", 4)
    await store(env, "acme", 2, start=T0 + 100, scope="conversation", conversation="chat:thread-b")
    times, more = await env.service.created_times(ACME, cap=10)
    assert times == [T0 + 3000, T0 + 2000, T0 + 1000, T0] and not more
    capped, more = await env.service.created_times(ACME, cap=3)
    assert len(capped) <= 3 and more
