"""recall's `type` and `tags` and list_memories' `tags`, on the in-memory store: applied
before the limit (a tagged memory behind 120 nearer ones with other tags is still found), any of
the given tags, visibility unchanged, and bad values refused naming the field and the limit. Each
real backend filters in its own query: tests/stores/test_smoke.py runs the filters there."""

from __future__ import annotations

import asyncio

from mcp_memory.core.ids import iso, ulid
from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.object_keys import index_key
from tests.conftest import T0, Env

ACME = Caller("acme")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")
QUERY = "rolling deploys drain streams before the pod exits"
WORDS = [f"w{i:03d}x" for i in range(200)]


async def put(env: Env, memories: list[Memory]) -> None:
    """Straight into the stores (vector and index key), as remember would leave them: these
    near-duplicates would otherwise be merged."""
    vectors = await env.embedder.embed([m.content for m in memories])
    for memory, vector in zip(memories, vectors):
        await env.vectors.put(memory, vector)
    seed = getattr(env.objects, "seed", None)
    if seed is not None:
        seed([index_key(m) for m in memories])
    else:
        await asyncio.gather(*(env.objects.put(index_key(m), "") for m in memories))


def memory(i: int, content: str, **kw) -> Memory:
    at = T0 - (1000 - i) * 1000
    return Memory(id=ulid(at), tenant="acme", content=content, created_at=iso(at), **kw)


def crowd(n: int = 120, **kw) -> list[Memory]:
    """`n` memories nearer the query than anything else (5 of its 8 words and one of their own)."""
    return [memory(i, f"{QUERY} {WORDS[i]}", **kw) for i in range(n)]


async def test_a_tagged_memory_behind_120_nearer_ones_with_other_tags_is_recalled(env: Env) -> None:
    await put(env, crowd(tags=("k8s", "ops")))
    await put(env, [memory(500, "rolling deploys pause for the release freeze", tags=("freeze",))])
    plain = await env.service.recall(ACME, QUERY, limit=50)
    assert "freeze" not in " ".join(r.memory.content for r in plain.results)  # unfiltered, it is crowded out
    tagged = await env.service.recall(ACME, QUERY, tags=["freeze", "absent-tag"])
    assert [r.memory.content for r in tagged.results] == ["rolling deploys pause for the release freeze"]


async def test_a_memory_of_the_asked_type_behind_120_nearer_ones_is_recalled(env: Env) -> None:
    await put(env, crowd())
    await put(env, [memory(500, "rolling deploys are documented in the runbook wiki", memory_type="reference")])
    result = await env.service.recall(ACME, QUERY, memory_type="reference")
    assert [r.memory.content for r in result.results] == ["rolling deploys are documented in the runbook wiki"]
    none = await env.service.recall(ACME, QUERY, memory_type="conversation")
    assert none.results == [] and not none.found_any


async def test_recall_keeps_memories_carrying_any_of_the_tags_and_only_those(env: Env) -> None:
    await put(
        env,
        [
            memory(1, f"{QUERY} {WORDS[1]}", tags=("blue",)),
            memory(2, f"{QUERY} {WORDS[2]}", tags=("green", "blue")),
            memory(3, f"{QUERY} {WORDS[3]}", tags=("red",)),
            memory(4, f"{QUERY} {WORDS[4]}"),
        ],
    )
    result = await env.service.recall(ACME, QUERY, tags=["blue", "green"], mode="exploratory")
    assert sorted(r.memory.content[-4:] for r in result.results) == [WORDS[1][-4:], WORDS[2][-4:]]


async def test_a_filter_never_shows_another_conversations_note(env: Env) -> None:
    await put(
        env, [memory(1, f"{QUERY} {WORDS[1]}", tags=("x",), scope="conversation", conversation=THREAD.conversation)]
    )
    mine = await env.service.recall(THREAD, QUERY, tags=["x"])
    theirs = await env.service.recall(OTHER_THREAD, QUERY, tags=["x"])
    assert len(mine.results) == 1 and theirs.results == []
    assert len((await env.service.list(THREAD, tags=["x"])).memories) == 1
    assert (await env.service.list(OTHER_THREAD, tags=["x"])).memories == []


async def test_list_with_tags_finds_an_old_tagged_memory_behind_a_page_of_newer_ones(env: Env) -> None:
    tagged = memory(0, "the oldest memory carries the audit tag", tags=("audit",))
    await put(env, [tagged])
    # 1,200 newer index keys of other memories (their records need not exist: list skips those)
    newer = [memory(10 + i, f"other {i}", tags=("misc",)) for i in range(1200)]
    seed = getattr(env.objects, "seed", None)
    keys = [index_key(m) for m in newer]
    if seed is not None:
        seed(keys)
    else:
        for start in range(0, len(keys), 100):
            await asyncio.gather(*(env.objects.put(k, "") for k in keys[start : start + 100]))
    await put(env, newer[:30])
    listed = await env.service.list(ACME, tags=["audit"], limit=5)
    assert [m.id for m in listed.memories] == [tagged.id]
    both = await env.service.list(ACME, tags=["audit", "misc"], limit=50)
    assert len(both.memories) == 31 and both.memories[-1].id == tagged.id  # newest first
    typed = await env.service.list(ACME, tags=["audit"], memory_type="reference")
    assert typed.memories == []
