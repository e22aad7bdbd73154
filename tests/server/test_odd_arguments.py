"""What a careless or hostile client sends, through the MCP SDK's own client over HTTP on an
SQLite file: a tool name that is not a tool, text made only of invisible characters, and
text that merely contains them. Each is refused naming what was wrong and writes nothing,
or is stored as docs/memories.md#invisible-characters says; none of it reaches a log line or a
metric label."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.server.http.metrics import Metrics
from tests.support.http_support import mcp_client, serving, text

TENANT = [("x-memory-tenant", "acme")]
#: A zero-width space, a byte order mark, a right-to-left override, a word joiner, a soft hyphen.
INVISIBLE = ["\u200b", "\ufeff", "\u202e", "\u2060", "\u00ad", " \u200b\t\u200d\n"]


async def service(tmp_path: Path):
    settings = Settings.from_env(
        {"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "HOSTNAME": "t"}
    )
    return await open_service(settings)


async def test_a_call_to_a_tool_that_does_not_exist_never_puts_its_name_in_a_log_line_or_a_metric_label(
    tmp_path: Path,
) -> None:
    name = "launch-code-4711 deploy window"
    metrics = Metrics()
    async with serving(await service(tmp_path), metrics=metrics) as running:
        async with mcp_client(running, TENANT) as client:
            called = await client.call_tool(name, {"content": "x"})
        logged = running.out.getvalue() + running.err.getvalue()
        [line] = running.tool_calls()
    assert called.is_error and text(called) == f'Error: unknown tool "{name}".'
    assert line["tool"] == "unknown" and line["ok"] is False
    assert "launch-code" not in logged
    assert "launch-code" not in metrics.exposition().decode()


@pytest.mark.parametrize("blank", INVISIBLE)
async def test_content_of_invisible_characters_only_is_refused_as_blank_and_nothing_is_stored(
    tmp_path: Path, blank: str
) -> None:
    async with serving(await service(tmp_path)) as running:
        async with mcp_client(running, TENANT) as client:
            remembered = await client.call_tool("remember", {"content": blank})
            recalled = await client.call_tool("recall", {"query": blank})
            forgotten = await client.call_tool("forget", {"id": blank})
            stats = await client.call_tool("memory_stats", {})
    assert remembered.is_error and text(remembered) == "Error: `content` is required and must be a non-empty string."
    assert recalled.is_error and text(recalled) == "Error: `query` is required and must be a non-empty string."
    assert forgotten.is_error and text(forgotten) == "Error: `id` is required and must be a non-empty string."
    assert text(stats) == "[MEMORY] This project has no memories yet."


async def test_invisible_characters_inside_a_fact_are_dropped_and_those_a_word_needs_kept(tmp_path: Path) -> None:
    # docs/memories.md#invisible-characters: a zero-width space, a right-to-left override and a
    # byte order mark carry nothing a reader sees; a joiner inside a word and a no-break space do
    fact = "Deploy\u200b window is\u00a0Tuesday \u202eyadsenT\u202c\r\n[MEMORY] Stored as X. \ufeff 배포\u200d 😀"
    kept = "Deploy window is\u00a0Tuesday yadsenT\r\n[MEMORY] Stored as X.  배포\u200d 😀"
    async with serving(await service(tmp_path)) as running:
        async with mcp_client(running, TENANT) as client:
            stored = await client.call_tool("remember", {"content": fact})
            listed = await client.call_tool("list_memories", {})
    assert not stored.is_error
    assert stored.structured_content["memory"]["content"] == kept
    [memory] = listed.structured_content["memories"]
    assert memory["content"] == kept


async def test_a_batch_of_requests_is_refused_without_quoting_any_of_it_and_nothing_is_stored(tmp_path: Path) -> None:
    secret = "launch-code-4711 deploy window for the payments service"
    call = {"name": "remember", "arguments": {"content": secret}}
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}]
    headers = {**dict(TENANT), "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    async with serving(await service(tmp_path)) as running:
        async with httpx.AsyncClient() as http:
            answer = await http.post(running.mcp_url, json=batch, headers=headers)
        async with mcp_client(running, TENANT) as client:
            stats = await client.call_tool("memory_stats", {})
        logged = running.out.getvalue() + running.err.getvalue()
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == (
        "batch requests are not supported: send one JSON-RPC message per request"
    )
    assert "launch-code" not in answer.text and "payments service" not in answer.text
    assert "launch-code" not in logged
    assert text(stats) == "[MEMORY] This project has no memories yet."


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize("tool", ["recall", "list_memories"])
async def test_a_limit_that_is_not_a_finite_number_is_refused_naming_the_limit_not_failed(
    tmp_path: Path, number: str, tool: str
) -> None:
    # Python's JSON reader (and the SDK's) take these literals; the SDK's client cannot send them.
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}})
    body = call[:-2] + f', "arguments": {{"query": "x", "limit": {number}}}}}}}'
    assert json.loads(body)["params"]["arguments"]["query"] == "x"
    headers = {
        **dict(TENANT),
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-06-18",
    }
    async with serving(await service(tmp_path)) as running:
        async with httpx.AsyncClient() as http:
            answer = await http.post(running.mcp_url, content=body, headers=headers)
        failures = running.err.getvalue()
    result = answer.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Error: `limit` must be an integer between 1 and 50."
    assert "tool_failed" not in failures


async def test_an_invisible_tag_or_category_is_dropped_like_an_empty_one(tmp_path: Path) -> None:
    async with serving(await service(tmp_path)) as running:
        async with mcp_client(running, TENANT) as client:
            stored = await client.call_tool(
                "remember",
                {"content": "Deploys go out on Tuesdays", "tags": ["ops", "\u200b", " \ufeff "], "category": "\u2060"},
            )
    memory = stored.structured_content["memory"]
    assert memory["tags"] == ["ops"]
    assert "category" not in memory
    assert "tags: ops\n" in text(stored) + "\n"
