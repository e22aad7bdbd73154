"""recall's and list_memories' filters (`type`, `tags`, `since`, `until`) through the tools: taken
as JSON arguments, worded in the answer, and bad values refused naming the field and the limit.
What the filters select is tests/core/test_filters.py's and tests/core/test_time_filters.py's."""

from __future__ import annotations

import io

import pytest

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import DAY, T0, Env
from tests.core.test_filters import QUERY, memory, put
from tests.core.test_time_filters import at

ACME = Caller("acme")


async def call(env: Env, tool: str, arguments: dict):
    return await ToolLayer(env.service, JsonLog(io.StringIO())).call(tool, arguments, ACME)


async def test_the_tools_take_type_and_tags_and_say_when_no_tagged_memory_exists(env: Env) -> None:
    await put(env, [memory(1, "rolling deploys pause for the release freeze", tags=("freeze",))])
    found = await call(env, "recall", {"query": QUERY, "tags": ["freeze"], "type": "project"})
    assert not found.is_error and "release freeze" in found.text
    listed = await call(env, "list_memories", {"tags": ["freeze"]})
    assert "1 memory, newest first" in listed.text
    empty = await call(env, "list_memories", {"tags": ["nothing-here"]})
    assert empty.text == "[MEMORY] This project has no memories tagged nothing-here yet."


@pytest.mark.parametrize("tool", ["recall", "list_memories"])
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"tags": "freeze"}, "`tags` must be an array of strings."),
        ({"tags": [1]}, "`tags` must be an array of strings."),
        ({"tags": [f"t{i}" for i in range(21)]}, "`tags` may hold at most 20 entries."),
        ({"tags": ["x" * 65]}, "each tag may be at most 64 bytes"),
        ({"type": "note"}, "`type` must be one of: project, pattern, reference, conversation."),
    ],
)
async def test_bad_filters_are_refused_naming_the_field_and_the_limit(env: Env, tool, arguments, message) -> None:
    if tool == "list_memories" and "type" in arguments:
        arguments = {"type": "note"}
    result = await call(env, tool, {"query": QUERY, **arguments} if tool == "recall" else arguments)
    assert result.is_error and message in result.text


async def test_the_tools_take_since_and_until(env: Env) -> None:
    await put(env, [at(T0 - 3 * DAY, "rolling deploys pause for the release freeze")])
    found = await call(env, "recall", {"query": QUERY, "since": "2026-06-27", "until": "2026-06-28T12:00:00+02:00"})
    assert not found.is_error and "release freeze" in found.text
    listed = await call(env, "list_memories", {"since": "1w"})
    assert "1 memory, newest first" in listed.text
    empty = await call(env, "list_memories", {"until": "2026-01-01", "tags": ["ops"]})
    assert empty.text == "[MEMORY] This project has no memories tagged ops stored until 2026-01-01T23:59:59.999Z."


@pytest.mark.parametrize("tool", ["recall", "list_memories"])
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"since": "yesterday"}, "`since` must be an ISO 8601 date (2026-05-01) or time"),
        ({"until": 1751328000}, "`until` must be an ISO 8601 date"),
        ({"since": "7 d"}, "`since` must be"),
        ({"since": "2026-13-01"}, "`since` must be"),
        ({"until": "9" * 41}, "`until` must be"),
        ({"since": "3d", "until": "5d"}, "`since` ("),
    ],
)
async def test_bad_bounds_are_refused_naming_the_field(env: Env, tool, arguments, message) -> None:
    result = await call(env, tool, {"query": QUERY, **arguments} if tool == "recall" else arguments)
    assert result.is_error and message in result.text
    assert "9" * 41 not in result.text  # a refused value is not echoed
