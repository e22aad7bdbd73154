"""docs/tools.md: content of exactly 32,000 UTF-8 bytes is accepted, whatever it is made of.

Line breaks, quotes, backslashes and Korean once cost more against the 40,000-byte metadata
budget than their UTF-8 bytes (they were counted JSON-escaped); now the budget counts what is
stored, so the largest content, the most tags and the longest category fit on every backend, and
a memory that truly does not fit is the caller's input error, not a store failure."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from mcp_memory.core.errors import BudgetExceeded
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import Clock, open_env

ACME = Caller("acme")

#: The largest tags and category the arguments allow, escapes and all (20 tags of 64 bytes, 128 bytes).
MOST_TAGS = [f"{i:02d}" + '"\\' * 31 for i in range(20)]
LONGEST_CATEGORY = 'c"' * 64

CONTENTS = {
    "crlf": ("line\r\n" * 5334)[:32_000],
    "quotes": ('"quoted" ' * 3556)[:32_000],
    "backslashes": ("C:\\dir\\file\t" * 2667)[:32_000],
    "korean": "회의록 " * 3199 + "회의록!",
}


def records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_every_content_here_is_exactly_32000_bytes() -> None:
    assert {name: len(c.encode("utf-8")) for name, c in CONTENTS.items()} == dict.fromkeys(CONTENTS, 32_000)
    assert all(len(t.encode("utf-8")) == 64 for t in MOST_TAGS) and len(LONGEST_CATEGORY.encode()) == 128


async def test_content_of_exactly_32000_bytes_is_stored_and_returned_byte_for_byte_on_every_backend(
    backend: str, clock: Clock, request: pytest.FixtureRequest
) -> None:
    env = await open_env(backend, clock, request)
    out, err = io.StringIO(), io.StringIO()
    tools = ToolLayer(env.service, JsonLog(out, err))
    try:
        answers = {}
        for name, content in CONTENTS.items():
            answers[name] = await tools.call(
                "remember", {"content": content, "tags": MOST_TAGS, "category": LONGEST_CATEGORY}, ACME
            )
        listed = await tools.call("list_memories", {}, ACME)
    finally:
        await env.service.close()
    assert {name: a.text[:60] for name, a in answers.items() if a.is_error} == {}
    assert all(a.data is not None and a.data["created"] for a in answers.values())
    assert listed.data is not None
    stored = {m["id"]: m for m in listed.data["memories"]}
    assert len(stored) == len(CONTENTS)
    for name, content in CONTENTS.items():
        memory = stored[answers[name].data["memory"]["id"]]  # type: ignore[index]
        assert memory["content"] == content, name
        assert memory["tags"] == MOST_TAGS and memory["category"] == LONGEST_CATEGORY
    assert [line for line in records(err) if line["level"] == "error"] == []


async def test_a_memory_over_the_metadata_budget_is_refused_as_the_callers_input_without_an_error_line() -> None:
    class OverBudget:
        async def remember_request(self, caller: Caller, request: Any) -> Any:
            raise BudgetExceeded(
                "the memory's metadata is 40100 bytes against a 40000 byte limit. Shorten the tags, or store a "
                "shorter fact."
            )

    out, err = io.StringIO(), io.StringIO()
    result = await ToolLayer(OverBudget(), JsonLog(out, err)).call("remember", {"content": "the release train"}, ACME)  # type: ignore[arg-type]
    assert result.is_error
    assert result.text == (
        "Error: the memory's metadata is 40100 bytes against a 40000 byte limit. Shorten the tags, or store a "
        "shorter fact."
    )
    assert err.getvalue() == ""
    [line] = records(out)
    assert line["event"] == "tool_call" and line["ok"] is False and line["level"] == "info"
    assert "release train" not in out.getvalue()
