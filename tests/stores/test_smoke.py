"""The smoke suite: MemoryService on every storage backend, for what a backend can break beneath
the service's policy. The policy itself (dedup, ranking, supersede, confidence, validation, the
wording) is tested once, on the in-memory store (tests/core/); the ports' own promises are the
contract suite (tests/stores/test_contract.py). Here each backend runs the calls a user makes —
remember, recall (newest first among near memories), replaces, the type / tags / time filters,
list and paging, forget — and the walls between tenants and conversations, through the abilities
each backend implements itself (the filtered query, the stored vectors, the index write beside the
vector, the listing of index keys; the keyword index: tests/stores/test_keyword_recall.py)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import iso, parse_iso, ulid
from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.object_keys import index_key
from tests.conftest import DAY, T0, Env

ACME = Caller("acme")
GLOBEX = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")

WORDS = [f"w{i:03d}x" for i in range(200)]  # distinct tokens: the fake embedder drops 1-char words
DEPLOY = "Rolling deploys drain in-flight streams before the pod exits"
DEPLOY_QUERY = "Rolling deploys drain in-flight streams before the pod"
QUERY = "rolling deploys drain streams before the pod exits"
OLD = "The payments webhook retries failed deliveries three times with jitter"
NEW = "The payments webhook retries failed deliveries five times with backoff"
OTHER = "Invoices are archived to cold storage after ninety days"


async def put(env: Env, memories: list[Memory]) -> None:
    """Straight into the stores (vector and index key) at their own times, as remember would leave
    them: these near-duplicates would otherwise be merged."""
    vectors = await env.embedder.embed([m.content for m in memories])
    for memory, vector in zip(memories, vectors):
        await env.vectors.put(memory, vector)
    await put_keys(env, [index_key(m) for m in memories])


async def put_keys(env: Env, keys: list[str]) -> None:
    """Index keys (empty objects), a batch at a time; on S3 through the endpoint's seeding door:
    thousands of HTTP requests would only be setup."""
    seed = getattr(env.objects, "seed", None)
    if seed is not None:
        seed(keys)
        return
    for start in range(0, len(keys), 100):
        await asyncio.gather(*(env.objects.put(key, "") for key in keys[start : start + 100]))


def at(when: float, content: str, **kw) -> Memory:
    return Memory(id=ulid(when), tenant="acme", content=content, created_at=iso(when), **kw)


def crowd(start: float, n: int = 120, **kw) -> list[Memory]:
    """`n` memories nearer QUERY than anything else (5 of its 8 words and one of their own), a
    minute apart from `start`."""
    return [at(start + i * 60_000, f"{QUERY} {WORDS[i]}", **kw) for i in range(n)]


async def recalled(env: Env, caller: Caller, query: str, **kw) -> list[str]:
    return [r.memory.id for r in (await env.service.recall(caller, query, **kw)).results]


async def walk(env: Env, caller: Caller, **kw) -> list[str]:
    """Every id `page` gives, following the cursors to the end."""
    ids: list[str] = []
    cursor = None
    for _ in range(100):
        page = await env.service.list(caller, cursor=cursor, **kw)
        ids += [m.id for m in page.memories]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor
    raise AssertionError("more than 100 pages")


# --------------------------------------------------------------------------- remember and recall


async def test_a_remembered_fact_is_recalled_first_with_high_confidence(backend_env: Env) -> None:
    env = backend_env
    stored = await env.service.remember(ACME, DEPLOY, memory_type="pattern", category="decision", tags=["k8s"])
    await env.service.remember(ACME, OTHER)
    answer = await env.service.recall(ACME, DEPLOY_QUERY)
    assert stored.created and answer.results[0].memory == stored.memory
    assert answer.confidence == "high"
    [back] = await env.vectors.get("acme", [stored.memory.id])
    assert (back.memory_type, back.category, back.tags) == ("pattern", "decision", ("k8s",))


async def test_content_is_stored_exactly_as_received(backend_env: Env) -> None:
    content = '  padded fact about release trains — 배포는 화요일, "quoted" \\ back\nslash  '
    stored = await backend_env.service.remember(ACME, content)
    [memory] = await backend_env.vectors.get("acme", [stored.memory.id])
    assert memory.content == content


async def test_the_same_text_twice_is_written_once_and_a_different_fact_is_stored(backend_env: Env) -> None:
    env = backend_env
    first = await env.service.remember(ACME, DEPLOY)
    again = await env.service.remember(ACME, DEPLOY)
    other = await env.service.remember(ACME, OTHER)
    assert first.created and not again.created and again.memory.id == first.memory.id
    assert other.created
    assert await env.memory_count() == 2


async def test_a_correction_is_stored_beside_the_fact_it_corrects_and_names_it(backend_env: Env) -> None:
    env = backend_env
    fact = await env.service.remember(ACME, "The payments gateway listens on port 8443 behind the mesh")
    correction = await env.service.remember(ACME, "The payments gateway listens on port 8444 behind the mesh")
    assert correction.created and correction.near == fact.memory
    assert await env.memory_count() == 2


async def test_an_identical_repeat_is_known_even_behind_many_memories_with_the_same_embedding(
    backend_env: Env,
) -> None:
    """The fake embedder ignores one-letter words: twelve texts, one vector. The store's query
    must still bring the exact repeat back among its ties."""
    env = backend_env
    texts = [f"Deploy windows for the billing service close at noon, gate {letter}" for letter in "abcdefghijkl"]
    assert len({np.asarray(await env.embedder.embed([t])).tobytes() for t in texts}) == 1
    for text in texts:
        assert (await env.service.remember(ACME, text)).created
    for text in texts:
        assert not (await env.service.remember(ACME, text)).created, text
    assert (await env.service.stats(ACME)).total == len(texts)


async def test_two_identical_concurrent_remembers_leave_one_memory(backend_env: Env) -> None:
    results = await asyncio.gather(*(backend_env.service.remember(ACME, DEPLOY) for _ in range(5)))
    assert sum(r.created for r in results) == 1
    assert await backend_env.memory_count() == 1


async def test_the_index_key_is_written_after_the_vector(backend_env: Env) -> None:
    stored = await backend_env.service.remember(ACME, DEPLOY, memory_type="reference")
    [memory] = await backend_env.vectors.get("acme", [stored.memory.id])
    assert backend_env.objects.writes == [index_key(memory)]  # type: ignore[attr-defined]


async def test_a_correction_remembered_later_ranks_first_and_the_old_fact_is_marked(backend_env: Env) -> None:
    """docs/recall.md#newer-memories-first: recall reads the stored vectors of what it shows (each
    backend's `vectors`) to find near pairs."""
    env = backend_env
    old = (await env.service.remember(ACME, "The CI pipeline uses Python 3.11 for every job")).memory
    env.clock.advance(6 * 3_600_000)
    new = (await env.service.remember(ACME, "The CI pipeline uses Python 3.12 for every job")).memory
    env.clock.advance(3_600_000)
    answer = await env.service.recall(ACME, "which Python does the CI pipeline use")
    assert [r.memory.id for r in answer.results] == [new.id, old.id]
    assert answer.results[1].superseded_by == new.id and answer.results[0].superseded_by is None


# --------------------------------------------------------------------------- replaces


async def test_a_replaced_memory_is_gone_from_recall_list_and_stats(backend_env: Env) -> None:
    env = backend_env
    old = (await env.service.remember(ACME, OLD)).memory.id
    other = (await env.service.remember(ACME, OTHER)).memory.id
    new = await env.service.remember(ACME, NEW, replaces=[old])
    assert new.created and new.replaced == (old,)
    found = await recalled(env, ACME, OLD, limit=50, mode="exploratory")
    assert new.memory.id in found and old not in found
    assert {m.id for m in (await env.service.list(ACME)).memories} == {new.memory.id, other}
    assert (await env.service.stats(ACME)).total == 2 and await env.memory_count() == 2


async def test_replacing_across_tenants_or_conversations_is_refused_and_writes_nothing(backend_env: Env) -> None:
    env = backend_env
    theirs = (await env.service.remember(GLOBEX, OLD)).memory.id
    note = (await env.service.remember(THREAD, OTHER, scope="conversation")).memory.id
    with pytest.raises(InvalidArgument, match=theirs):
        await env.service.remember(ACME, NEW, replaces=[theirs])
    with pytest.raises(InvalidArgument, match=note):
        await env.service.remember(OTHER_THREAD, NEW, replaces=[note])
    assert await recalled(env, GLOBEX, OLD) == [theirs]
    assert await env.memory_count() == 2


# --------------------------------------------------------------------------- filters


async def test_a_tagged_memory_behind_120_nearer_ones_with_other_tags_is_recalled(backend_env: Env) -> None:
    """docs/how_recall_works.md: the filters apply before the limit, on every backend."""
    env = backend_env
    freeze = at(T0 - 500_000, "rolling deploys pause for the release freeze", tags=("freeze",))
    await put(env, [*crowd(T0 - DAY, tags=("k8s", "ops")), freeze])
    assert freeze.id not in await recalled(env, ACME, QUERY, limit=50)  # unfiltered, it is crowded out
    assert await recalled(env, ACME, QUERY, tags=["freeze", "absent-tag"]) == [freeze.id]


async def test_a_memory_of_the_asked_type_behind_120_nearer_ones_is_recalled(backend_env: Env) -> None:
    env = backend_env
    wiki = at(T0 - 500_000, "rolling deploys are documented in the runbook wiki", memory_type="reference")
    await put(env, [*crowd(T0 - DAY), wiki])
    assert await recalled(env, ACME, QUERY, memory_type="reference") == [wiki.id]
    assert await recalled(env, ACME, QUERY, memory_type="conversation") == []


async def test_recall_keeps_memories_carrying_any_of_the_tags_and_only_those(backend_env: Env) -> None:
    blue, both, red, bare = (
        at(T0 - 4000, f"{QUERY} {WORDS[1]}", tags=("blue",)),
        at(T0 - 3000, f"{QUERY} {WORDS[2]}", tags=("green", "blue")),
        at(T0 - 2000, f"{QUERY} {WORDS[3]}", tags=("red",)),
        at(T0 - 1000, f"{QUERY} {WORDS[4]}"),
    )
    await put(backend_env, [blue, both, red, bare])
    found = await recalled(backend_env, ACME, QUERY, tags=["blue", "green"], mode="exploratory")
    assert sorted(found) == sorted([blue.id, both.id])


async def test_since_and_until_reach_behind_120_nearer_memories_and_both_ends_are_inclusive(backend_env: Env) -> None:
    env = backend_env
    old = at(T0 - 30 * DAY, "rolling deploys waited for the database migration in May")
    new = at(T0 - 3_600_000, "rolling deploys now wait for the cache warm-up")
    await put(env, [old, *crowd(T0 - 2 * DAY), new])
    assert old.id not in await recalled(env, ACME, QUERY, limit=50)
    assert await recalled(env, ACME, QUERY, until=iso(T0 - 10 * DAY)) == [old.id]
    assert await recalled(env, ACME, QUERY, since=iso(T0 - 3_600_000)) == [new.id]  # the bound itself is in
    day = parse_iso("2026-06-10")
    inside = [at(day, f"{QUERY} {WORDS[150]}"), at(day + DAY - 1, f"{QUERY} {WORDS[151]}")]
    await put(env, [*inside, at(day - 1, f"{QUERY} {WORDS[152]}"), at(day + DAY, f"{QUERY} {WORDS[153]}")])
    found = await recalled(env, ACME, QUERY, since="2026-06-10", until="2026-06-10", mode="exploratory")
    assert sorted(found) == sorted(m.id for m in inside)


async def test_list_and_pages_filter_by_type_tags_and_time_past_a_page_of_newer_keys(backend_env: Env) -> None:
    env = backend_env
    oldest = [
        at(T0 - 100 * DAY, "an old pattern", memory_type="pattern"),
        at(T0 - 99 * DAY, "an old audit note", tags=("audit",)),
    ]
    await put(env, oldest)
    # 1,005 newer index keys, newer than both; their records need not exist.
    await put_keys(env, [f"index/acme/0{i:09d}#01J{i:023d}#project" for i in range(1005)])
    assert [m.id for m in (await env.service.list(ACME, memory_type="pattern")).memories] == [oldest[0].id]
    assert [m.id for m in (await env.service.list(ACME, tags=["audit"])).memories] == [oldest[1].id]
    assert [m.id for m in (await env.service.list(ACME, until=iso(T0 - 50 * DAY))).memories] == [
        oldest[1].id,
        oldest[0].id,
    ]
    assert await walk(env, ACME, tags=["audit"]) == [oldest[1].id]


# --------------------------------------------------------------------------- list, paging and forget


async def test_pages_give_every_memory_once_newest_first_even_when_one_at_the_cursor_is_forgotten(
    backend_env: Env,
) -> None:
    env = backend_env
    memories = [at(T0 + i * 1000, f"note n{i:05d}x acme") for i in range(7)]
    await put(env, memories)
    ids = [m.id for m in memories]
    assert await walk(env, ACME, limit=3) == ids[::-1]
    first = await env.service.list(ACME, limit=2)
    assert (await env.service.forget(ACME, ids[5])).deleted
    second = await env.service.list(ACME, limit=2, cursor=first.next_cursor)
    assert [m.id for m in second.memories] == [ids[4], ids[3]]


async def test_forget_deletes_the_memory_and_its_index_key_and_only_for_its_tenant(backend_env: Env) -> None:
    env = backend_env
    memory_id = (await env.service.remember(ACME, DEPLOY)).memory.id
    assert not (await env.service.forget(GLOBEX, memory_id)).deleted
    assert await env.memory_count() == 1
    assert (await env.service.forget(ACME, memory_id)).deleted
    assert await env.memory_count() == 0 and await env.object_count() == 0
    assert await recalled(env, ACME, DEPLOY_QUERY) == []
    assert not (await env.service.forget(ACME, memory_id)).deleted


# --------------------------------------------------------------------------- visibility


async def test_another_tenant_sees_nothing_of_this_one(backend_env: Env) -> None:
    env = backend_env
    await env.service.remember(ACME, DEPLOY, tags=["ops"])
    for caller in (GLOBEX, Caller("globex", "chat:thread-a")):
        answer = await env.service.recall(caller, DEPLOY_QUERY, mode="exploratory")
        assert answer.results == [] and not answer.found_any
        assert (await env.service.list(caller)).memories == []
        assert await walk(env, caller) == [] and (await env.service.stats(caller)).total == 0
    assert (await env.service.remember(GLOBEX, DEPLOY)).created  # the duplicate check stays in its tenant


async def test_a_conversation_sees_its_notes_and_the_projects_and_no_other_conversations(backend_env: Env) -> None:
    env = backend_env
    project = (await env.service.remember(ACME, OTHER)).memory.id
    note = (await env.service.remember(THREAD, DEPLOY, scope="conversation")).memory.id
    assert await recalled(env, THREAD, DEPLOY_QUERY) == [note]
    assert await recalled(env, OTHER_THREAD, DEPLOY_QUERY) == []
    assert await recalled(env, ACME, DEPLOY_QUERY) == []
    assert await recalled(env, OTHER_THREAD, OTHER) == [project]
    assert {m.id for m in (await env.service.list(THREAD)).memories} == {project, note}
    assert [m.id for m in (await env.service.list(OTHER_THREAD)).memories] == [project]
    assert sorted(await walk(env, OTHER_THREAD)) == [project]
    assert (await env.service.stats(THREAD)).total == 2 and (await env.service.stats(ACME)).total == 1
    assert (await env.service.remember(OTHER_THREAD, DEPLOY, scope="conversation")).created


async def test_a_busy_conversation_cannot_crowd_project_memories_out_of_a_recall(backend_env: Env) -> None:
    """docs/backends.md: visibility is applied before the limit on every backend."""
    env = backend_env
    notes = [
        Memory(
            id=f"01J{i:023d}",
            tenant="acme",
            content=f"{DEPLOY} {WORDS[i]}",
            scope="conversation",
            conversation=THREAD.conversation,
            created_at="2026-06-01T00:00:00.000Z",
        )
        for i in range(120)
    ]
    for note, vector in zip(notes, await env.embedder.embed([n.content for n in notes])):
        await env.vectors.put(note, vector)
    canary = (await env.service.remember(ACME, "Rolling deploys drain slowly on canary hosts")).memory.id
    assert await recalled(env, OTHER_THREAD, DEPLOY_QUERY) == [canary]
