"""remember's `replaces`: a correction takes the place of the memories it names (on the
in-memory store; each real backend: tests/stores/test_smoke.py); ids the caller cannot see are
refused with nothing written; a failure between the writes leaves the new memory."""

from __future__ import annotations

import pytest

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService, RememberResult
from tests.conftest import Env
from tests.support.faulty import FaultyStore

ACME = Caller("acme")
GLOBEX = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")

OLD = "The payments webhook retries failed deliveries three times with jitter"
NEW = "The payments webhook retries failed deliveries five times with backoff"
OTHER = "Invoices are archived to cold storage after ninety days"


async def remember(env: Env, content: str, caller: Caller = ACME, **kw) -> RememberResult:
    return await env.service.remember(caller, content, **kw)


async def stored(env: Env, content: str, caller: Caller = ACME, **kw) -> str:
    """The id of a new memory of `content`."""
    result = await remember(env, content, caller, **kw)
    assert result.created, result
    return result.memory.id


async def visible_ids(service: MemoryService, caller: Caller, query: str) -> tuple[set[str], set[str], int]:
    recalled = {r.memory.id for r in (await service.recall(caller, query, limit=50, mode="exploratory")).results}
    listed = {m.id for m in (await service.list(caller, limit=50)).memories}
    return recalled, listed, (await service.stats(caller)).total


async def test_a_replaced_memory_is_gone_from_recall_list_and_stats(env: Env) -> None:
    old_id = await stored(env, OLD)
    other_id = await stored(env, OTHER)
    answer = await remember(env, NEW, replaces=[old_id])
    new_id = answer.memory.id
    assert answer.created and answer.replaced == (old_id,)
    recalled, listed, total = await visible_ids(env.service, ACME, OLD)
    assert old_id not in recalled and old_id not in listed
    assert new_id in recalled and listed == {new_id, other_id} and total == 2
    assert await env.memory_count() == 2


async def test_one_call_replaces_up_to_five_memories(env: Env) -> None:
    ids = [await stored(env, f"Fact number w{i}x about the build cache tier k{i}z") for i in range(5)]
    answer = await remember(env, NEW, replaces=ids)
    assert answer.replaced == tuple(ids)
    assert (await env.service.stats(ACME)).total == 1


async def test_an_id_the_caller_cannot_see_is_refused_naming_it_and_nothing_is_written(env: Env) -> None:
    mine = await stored(env, OLD)
    theirs = await stored(env, OTHER, GLOBEX)
    before = await env.memory_count()
    with pytest.raises(InvalidArgument, match=theirs) as refused:
        await env.service.remember(ACME, NEW, replaces=[mine, theirs])
    assert "Nothing was written" in str(refused.value)
    assert await env.memory_count() == before
    assert (await env.service.stats(ACME)).total == 1 and (await env.service.stats(GLOBEX)).total == 1


async def test_an_unknown_id_is_refused_and_nothing_is_written(env: Env) -> None:
    await remember(env, OLD)
    with pytest.raises(InvalidArgument, match="01ARZ3NDEKTSV4RRFFQ69G5FAV"):
        await env.service.remember(ACME, NEW, replaces=["01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    assert await env.memory_count() == 1


async def test_a_conversation_cannot_replace_another_conversations_note(env: Env) -> None:
    note = await stored(env, OLD, THREAD, scope="conversation")
    with pytest.raises(InvalidArgument, match=note):
        await env.service.remember(OTHER_THREAD, NEW, replaces=[note])
    with pytest.raises(InvalidArgument, match=note):
        await env.service.remember(ACME, NEW, replaces=[note])
    assert await env.memory_count() == 1
    answer = await remember(env, NEW, THREAD, scope="conversation", replaces=[note])
    assert answer.replaced == (note,)
    assert (await env.service.stats(THREAD)).total == 1


async def test_replacing_across_tenants_is_impossible_even_with_the_right_id(env: Env) -> None:
    theirs = await stored(env, OLD, GLOBEX)
    with pytest.raises(InvalidArgument, match=theirs):
        await env.service.remember(ACME, NEW, replaces=[theirs])
    recalled, listed, total = await visible_ids(env.service, GLOBEX, OLD)
    assert theirs in recalled and theirs in listed and total == 1
    assert (await env.service.stats(ACME)).total == 0


async def test_a_failure_between_the_writes_leaves_the_new_memory_and_the_old(env: Env) -> None:
    old_id = await stored(env, OLD)
    faulty = FaultyStore(env.vectors)
    service = MemoryService(
        faulty,
        env.objects,
        env.embedder,
        AccessCounters(env.objects, pod_id="faulty", log=NullLog(), clock=env.clock),
        floor=0.3,
        clock=env.clock,
    )
    faulty.fail_on("delete")  # the removal of the old memory, after the new one is written
    result = await service.remember(ACME, NEW, replaces=[old_id])
    assert faulty.failures == 1
    assert result.created and result.replaced == () and result.not_removed == (old_id,)
    recalled, listed, total = await visible_ids(env.service, ACME, NEW)
    assert {result.memory.id, old_id} <= recalled and listed == {result.memory.id, old_id} and total == 2


async def test_a_failure_writing_the_new_memory_removes_nothing(env: Env) -> None:
    old_id = await stored(env, OLD)
    faulty = FaultyStore(env.vectors)
    service = MemoryService(
        faulty,
        env.objects,
        env.embedder,
        AccessCounters(env.objects, pod_id="faulty", log=NullLog(), clock=env.clock),
        floor=0.3,
        clock=env.clock,
    )
    faulty.fail_on("put")
    with pytest.raises(RuntimeError, match="injected"):
        await service.remember(ACME, NEW, replaces=[old_id])
    _, listed, total = await visible_ids(env.service, ACME, OLD)
    assert listed == {old_id} and total == 1


async def test_replacing_with_the_same_text_keeps_the_fact(env: Env) -> None:
    old_id = await stored(env, OLD)
    answer = await remember(env, OLD, replaces=[old_id])
    new_id = answer.memory.id
    assert answer.created and new_id != old_id and answer.replaced == (old_id,)
    _, listed, total = await visible_ids(env.service, ACME, OLD)
    assert listed == {new_id} and total == 1


async def test_following_the_hint_replaces_the_old_memory(env: Env) -> None:
    old_id = await stored(env, OLD)
    first = await remember(env, OLD.replace("three", "five"))
    assert first.created and first.near is not None and first.near.id == old_id
    again = await remember(env, OLD.replace("three", "five"), replaces=[old_id])
    assert not again.created and again.memory.id == first.memory.id
    assert again.replaced == (old_id,) and again.near is None
    assert (await env.service.stats(ACME)).total == 1
