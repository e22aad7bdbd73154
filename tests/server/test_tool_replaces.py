"""remember's `replaces` through the tool: one id or an array, worded in the answer and in the
structured result, and a bad argument refused naming the field with nothing written. What a
replacement does is tests/core/test_replaces.py's."""

from __future__ import annotations

import io

import pytest

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import RememberResult
from mcp_memory.server.protocol import render
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import Env
from tests.core.test_replaces import NEW, OLD, OTHER, stored

ACME = Caller("acme")


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
    old_id = await stored(env, OLD)
    result = await call(env, {"content": NEW, "replaces": old_id})
    assert not result.is_error and f"Replaced: {old_id} (removed" in result.text
    refused = await call(env, {"content": OTHER, "replaces": [old_id]})
    assert refused.is_error and old_id in refused.text and "Nothing was written" in refused.text


async def test_the_structured_result_carries_what_was_replaced_and_the_close_memory(env: Env) -> None:
    from mcp_memory.server.protocol.structured import remember_data

    old_id = await stored(env, OLD)
    near = remember_data(await env.service.remember(ACME, OLD.replace("three", "four")))
    assert near["created"] and near["near"]["id"] == old_id and near["replaced"] == []
    corrected = remember_data(await env.service.remember(ACME, NEW, replaces=[old_id, near["memory"]["id"]]))
    assert corrected["replaced"] == [old_id, near["memory"]["id"]] and "near" not in corrected


async def test_a_memory_that_could_not_be_removed_is_named_as_still_stored(env: Env) -> None:
    old_id = await stored(env, OLD)
    new = (await env.service.remember(ACME, NEW)).memory
    text = render.remember_text(RememberResult(new, True, replaced=(), not_removed=(old_id,)))
    assert f"NOT REPLACED: {old_id} could not be removed and is still stored" in text
