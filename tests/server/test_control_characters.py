"""NUL and other control characters are refused as bad arguments by the tool
layer, naming the field, before any store sees them, on every backend; and a
NUL in a tenant header is a refusal too, never an error-level log line."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import Clock, open_env
from tests.support.http_support import Running, serving

ACME = Caller("acme")


class Untouchable:
    def __getattr__(self, name: str) -> Any:
        async def called(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(f"the service was called ({name})")

        return called


def records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


@pytest.mark.parametrize(
    ("tool", "args", "field", "code", "position"),
    [
        ("forget", {"id": "01HZX\x00"}, "id", "0000", 5),
        ("recall", {"query": "deploys\x00 drop"}, "query", "0000", 7),
        ("recall", {"query": "bell \x07"}, "query", "0007", 5),
        ("remember", {"content": "escape \x1b[31m red"}, "content", "001B", 7),
        ("remember", {"content": "fact", "category": "dec\x00ision"}, "category", "0000", 3),
        ("remember", {"content": "fact", "tags": ["ok", "t\x7fag"]}, "tags", "007F", 1),
    ],
)
async def test_a_control_character_in_any_argument_is_refused_naming_the_field(
    tool: str, args: dict[str, Any], field: str, code: str, position: int
) -> None:
    out, err = io.StringIO(), io.StringIO()
    result = await ToolLayer(Untouchable(), JsonLog(out, err)).call(tool, args, ACME)  # type: ignore[arg-type]
    assert result.is_error
    assert result.text.startswith(f"Error: `{field}` contains a control character (U+{code} at position {position})")
    assert err.getvalue() == ""
    [line] = records(out)
    assert line["event"] == "tool_call" and line["ok"] is False


@pytest.mark.parametrize(
    ("tool", "args", "field", "code", "position"),
    [
        ("remember", {"content": "a lone surrogate \ud800"}, "content", "D800", 17),
        ("recall", {"query": "low half \udc00 alone"}, "query", "DC00", 9),
        ("remember", {"content": "fact", "tags": ["ok", "t\ud83dag"]}, "tags", "D83D", 1),
    ],
)
async def test_a_lone_surrogate_is_refused_as_not_valid_unicode_not_as_a_control_character(
    tool: str, args: dict[str, Any], field: str, code: str, position: int
) -> None:
    out, err = io.StringIO(), io.StringIO()
    result = await ToolLayer(Untouchable(), JsonLog(out, err)).call(tool, args, ACME)  # type: ignore[arg-type]
    assert result.is_error
    assert result.text.startswith(
        f"Error: `{field}` contains an unpaired surrogate (U+{code} at position {position}), which is not valid "
        "Unicode; send the text as UTF-8."
    )
    assert "control character" not in result.text
    assert err.getvalue() == ""


async def test_nul_in_a_forget_id_is_a_bad_argument_on_every_backend_and_logs_no_error(
    backend: str, clock: Clock, request: pytest.FixtureRequest
) -> None:
    env = await open_env(backend, clock, request)
    out, err = io.StringIO(), io.StringIO()
    tools = ToolLayer(env.service, JsonLog(out, err))
    try:
        stored = await tools.call("remember", {"content": "tabs\tand\nnewlines are text"}, ACME)
        assert not stored.is_error, stored.text
        refused = await tools.call("forget", {"id": "01HZXAMPLE\x00' OR 1=1"}, ACME)
        listed = await tools.call("list_memories", {}, ACME)
    finally:
        await env.service.close()
    assert refused.is_error
    assert refused.text.startswith("Error: `id` contains a control character (U+0000 at position 10)")
    assert "   tabs\tand\n   newlines are text" in listed.text  # nothing was deleted (each line quoted)
    assert [line for line in records(err) if line["level"] == "error"] == []


# --------------------------------------------------------------------------- headers


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    settings = Settings.from_env({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake"})
    async with serving(await open_service(settings)) as running:
        yield running


async def raw_request(url: str, head: bytes) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(head)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    await writer.wait_closed()
    return answer


@pytest.mark.parametrize("header", [b"X-Memory-Tenant", b"X-Tenant-Id", b"X-Conversation-Id"])
async def test_nul_in_a_tenant_header_is_refused_with_400_and_no_error_line(server: Running, header: bytes) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_stats","arguments":{}}}'
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nConnection: close\r\n"
        b"X-Memory-Tenant: acme\r\n"
        * (header != b"X-Memory-Tenant")
        + header
        + b": ac\x00me\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    answer = await raw_request(server.url, head)
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert server.tool_calls() == []
    assert [line for line in server.lines("err") if line["level"] == "error"] == []


async def test_nul_in_a_tenant_header_that_reaches_the_app_is_a_refusal_naming_it() -> None:
    from mcp_memory.core.errors import ContextError
    from mcp_memory.server.http.headers import caller_from_headers

    with pytest.raises(ContextError, match="^x-tenant-id must start with a letter or digit"):
        caller_from_headers(None, ["ac\x00me"], None)
    with pytest.raises(ContextError, match="^x-memory-tenant must start with a letter or digit"):
        caller_from_headers(["ac\x00me"], ["acme"], None)
