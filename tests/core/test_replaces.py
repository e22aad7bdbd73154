"""remember's `replaces`: a correction takes the place of the memories it names (on the
in-memory store; each real backend: tests/stores/test_smoke.py); ids the caller cannot see are
refused with nothing written; a failure between the writes leaves the new memory."""

from __future__ import annotations

import io
import re

import pytest

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.logs import JsonLog, NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.server import render
from mcp_memory.server.tools import ToolLayer
from tests.conftest import Env
from tests.support.faulty import FaultyStore

ACME = Caller("acme")
GLOBEX = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")

OLD = "The payments webhook retries failed deliveries three times with jitter"
NEW = "The payments webhook retries failed deliveries five times with backoff"
OTHER = "Invoices are archived to cold storage after ninety days"


def stored_id(text: str) -> str:
    match = re.search(r"Stored as ([0-9A-Z]{26})\.", text)
    assert match, text
    return match.group(1)


async def remember(env: Env, content: str, caller: Caller = ACME, **kw) -> str:
    return render.remember_text(await env.service.remember(caller, content, **kw))


async def visible_ids(service: MemoryService, caller: Caller, query: str) -> tuple[set[str], set[str], int]:
    recalled = {r.memory.id for r in (await service.recall(caller, query, limit=50, mode="exploratory")).results}
    listed = {m.id for m in (await service.list(caller, limit=50)).memories}
    return recalled, listed, (await service.stats(caller)).total


async def test_a_replaced_memory_is_gone_from_recall_list_and_stats(env: Env) -> None:
    old_id = stored_id(await remember(env, OLD))
    other_id = stored_id(await remember(env, OTHER))
    answer = await remember(env, NEW, replaces=[old_id])
    new_id = stored_id(answer)
    assert f"Replaced: {old_id} (removed" in answer
    recalled, listed, total = await visible_ids(env.service, ACME, OLD)
    assert old_id not in recalled and old_id not in listed
    assert new_id in recalled and listed == {new_id, other_id} and total == 2
    assert await env.memory_count() == 2


async def test_one_call_replaces_up_to_five_memories(env: Env) -> None:
    ids = [stored_id(await remember(env, f"Fact number w{i}x about the build cache tier k{i}z")) for i in range(5)]
    answer = await remember(env, NEW, replaces=ids)
    assert f"Replaced: {', '.join(ids)} (removed" in answer
    assert (await env.service.stats(ACME)).total == 1


async def test_an_id_the_caller_cannot_see_is_refused_naming_it_and_nothing_is_written(env: Env) -> None:
    mine = stored_id(await remember(env, OLD))
    theirs = stored_id(await remember(env, OTHER, GLOBEX))
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
    note = stored_id(await remember(env, OLD, THREAD, scope="conversation"))
    with pytest.raises(InvalidArgument, match=note):
        await env.service.remember(OTHER_THREAD, NEW, replaces=[note])
    with pytest.raises(InvalidArgument, match=note):
        await env.service.remember(ACME, NEW, replaces=[note])
    assert await env.memory_count() == 1
    answer = await remember(env, NEW, THREAD, scope="conversation", replaces=[note])
    assert f"Replaced: {note}" in answer
    assert (await env.service.stats(THREAD)).total == 1


async def test_replacing_across_tenants_is_impossible_even_with_the_right_id(env: Env) -> None:
    theirs = stored_id(await remember(env, OLD, GLOBEX))
    with pytest.raises(InvalidArgument, match=theirs):
        await env.service.remember(ACME, NEW, replaces=[theirs])
    recalled, listed, total = await visible_ids(env.service, GLOBEX, OLD)
    assert theirs in recalled and theirs in listed and total == 1
    assert (await env.service.stats(ACME)).total == 0


async def test_a_failure_between_the_writes_leaves_the_new_memory_and_the_old(env: Env) -> None:
    old_id = stored_id(await remember(env, OLD))
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
    assert f"NOT REPLACED: {old_id} could not be removed and is still stored" in render.remember_text(result)
    recalled, listed, total = await visible_ids(env.service, ACME, NEW)
    assert {result.memory.id, old_id} <= recalled and listed == {result.memory.id, old_id} and total == 2


async def test_a_failure_writing_the_new_memory_removes_nothing(env: Env) -> None:
    old_id = stored_id(await remember(env, OLD))
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
    old_id = stored_id(await remember(env, OLD))
    answer = await remember(env, OLD, replaces=[old_id])
    new_id = stored_id(answer)
    assert new_id != old_id and f"Replaced: {old_id}" in answer
    _, listed, total = await visible_ids(env.service, ACME, OLD)
    assert listed == {new_id} and total == 1


async def test_following_the_hint_replaces_the_old_memory(env: Env) -> None:
    old_id = stored_id(await remember(env, OLD))
    first = await remember(env, OLD.replace("three", "five"))
    assert f"CLOSE TO AN EXISTING MEMORY: [id:{old_id}]" in first
    again = await remember(env, OLD.replace("three", "five"), replaces=[old_id])
    assert "Already known" in again and f"Replaced: {old_id}" in again and "CLOSE TO" not in again
    assert (await env.service.stats(ACME)).total == 1


# --------------------------------------------------------------------------- the tool argument


async def call(env: Env, arguments: dict, caller: Caller = ACME):
    return await ToolLayer(env.service, JsonLog(io.StringIO())).call("remember", arguments, caller)


@pytest.mark.parametrize(
    ("replaces", "message"),
    [
        (7, "`replaces` must be a memory id or an array of memory ids."),
        ([1], "`replaces` must be a memory id or an array of memory ids."),
        (["01ARZ3NDEKTSV4RRFFQ69G5FA"] * 6, "`replaces` may name at most 5 memories; it names 6."),
        (["not-an-id"], '`replaces`: "not-an-id" is not a memory id (26 characters'),
        (
            ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAV"],
            "`replaces` names 01ARZ3NDEKTSV4RRFFQ69G5FAV twice.",
        ),
    ],
)
async def test_a_bad_replaces_argument_is_refused_naming_the_field_and_writes_nothing(
    env: Env, replaces, message
) -> None:
    result = await call(env, {"content": NEW, "replaces": replaces})
    assert result.is_error and message in result.text
    assert await env.memory_count() == 0


async def test_the_tool_takes_one_id_as_a_string_and_says_what_it_replaced(env: Env) -> None:
    old_id = stored_id(await remember(env, OLD))
    result = await call(env, {"content": NEW, "replaces": old_id})
    assert not result.is_error and f"Replaced: {old_id} (removed" in result.text
    refused = await call(env, {"content": OTHER, "replaces": [old_id]})
    assert refused.is_error and old_id in refused.text and "Nothing was written" in refused.text


async def test_the_structured_result_carries_what_was_replaced_and_the_close_memory(env: Env) -> None:
    from mcp_memory.server.structured import remember_data

    old_id = stored_id(await remember(env, OLD))
    near = remember_data(await env.service.remember(ACME, OLD.replace("three", "four")))
    assert near["created"] and near["near"]["id"] == old_id and near["replaced"] == []
    corrected = remember_data(await env.service.remember(ACME, NEW, replaces=[old_id, near["memory"]["id"]]))
    assert corrected["replaced"] == [old_id, near["memory"]["id"]] and "near" not in corrected
