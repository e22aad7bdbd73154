"""`serve-http` end to end with the MCP SDK's own client over Streamable HTTP:
both protocol eras, every tool, the tenant and conversation headers (docs/context.md, docs/http.md),
and the access log (docs/operations.md). The server is real (uvicorn on 127.0.0.1) and runs
in the test's event loop around a SQLite file in tmp_path."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core.errors import EmbeddingError
from mcp_memory.core.service import MemoryService
from mcp_memory.embedders.fake import FakeEmbedder
from tests.conftest import Clock, make_env
from tests.support.http_support import Running, mcp_client, serving, text

ERAS = ["auto", "legacy"]  # auto opens with server/discover (2026-07-28); legacy with initialize
TOOLS = ["recall", "remember", "list_memories", "forget", "memory_stats"]
FACT = "Rolling deploys drain in-flight streams before the pod exits"
QUERY = "Rolling deploys drain in-flight streams before the pod"


async def sqlite_service(tmp_path: Path) -> MemoryService:
    settings = Settings.from_env(
        {"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "HOSTNAME": "test-pod"}
    )
    return await open_service(settings)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    async with serving(await sqlite_service(tmp_path)) as running:
        yield running


def stored_id(result_text: str) -> str:
    match = re.search(r"Stored as ([0-9A-Z]{26})\.", result_text)
    assert match, result_text
    return match.group(1)


# --------------------------------------------------------------------------- the protocol


@pytest.mark.parametrize("mode", ERAS)
async def test_a_client_of_either_era_uses_every_tool(server: Running, mode: str) -> None:
    async with mcp_client(server, [("x-memory-tenant", "acme")], mode=mode) as client:
        if mode == "auto":
            assert client.protocol_version == "2026-07-28"
        else:
            assert client.protocol_version != "2026-07-28"
            assert client.server_info.name == "mcp-memory"
        assert [t.name for t in (await client.list_tools()).tools] == TOOLS

        stored = await client.call_tool("remember", {"content": FACT})
        assert not stored.is_error
        memory_id = stored_id(text(stored))

        recalled = await client.call_tool("recall", {"query": QUERY})
        assert text(recalled).startswith(f'[MEMORY] 1 memory matched "{QUERY}"')
        assert memory_id in text(recalled)

        assert text(await client.call_tool("list_memories", {})).startswith("[MEMORY] 1 memory, newest first.")
        assert text(await client.call_tool("memory_stats", {})) == "[MEMORY] 1 memory for this project (project: 1)."

        refused = await client.call_tool("recall", {"query": "q", "limit": 99})
        assert refused.is_error and text(refused) == "Error: `limit` must be an integer between 1 and 50."

        assert text(await client.call_tool("forget", {"id": memory_id})) == f"[MEMORY] Deleted {memory_id}."
        assert text(await client.call_tool("memory_stats", {})) == "[MEMORY] This project has no memories yet."


@pytest.mark.parametrize("mode", ERAS)
async def test_the_handshake_and_tools_list_need_no_tenant(server: Running, mode: str) -> None:
    async with mcp_client(server, mode=mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == TOOLS
        refused = await client.call_tool("memory_stats", {})
    assert refused.is_error
    assert text(refused) == (
        "Error: x-memory-tenant header is required: send the tenant's name in it with every request "
        "(an MCP client sends it from the headers of its server entry)"
    )
    assert server.tool_calls() == []  # the tool did not run


async def test_no_tool_schema_lets_a_model_name_a_tenant_or_conversation(server: Running) -> None:
    async with mcp_client(server) as client:
        schemas = [t.input_schema for t in (await client.list_tools()).tools]
    for schema in schemas:
        assert not {"tenant", "tenantId", "conversation"} & set(schema.get("properties", {}))


# --------------------------------------------------------------------------- tenant headers


async def stats_as(server: Running, headers: list[tuple[str, str]], mode: str = "auto") -> tuple[bool, str]:
    async with mcp_client(server, headers, mode=mode) as client:
        result = await client.call_tool("memory_stats", {})
    return result.is_error, text(result)


async def seed(server: Running, tenant: str, count: int) -> None:
    async with mcp_client(server, [("x-memory-tenant", tenant)]) as client:
        for i in range(count):
            assert not (await client.call_tool("remember", {"content": f"{tenant} fact w{i}x{i}y{i}z"})).is_error


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("headers", "tenant"),
    [
        ([("x-memory-tenant", "acme")], "acme"),
        ([("x-tenant-id", "acme")], "acme"),
        ([("X-Memory-Tenant", "acme")], "acme"),
        ([("x-memory-tenant", "acme"), ("x-tenant-id", "globex")], "acme"),
        ([("x-tenant-id", "globex"), ("x-memory-tenant", "acme")], "acme"),
        ([("x-memory-tenant", ""), ("x-tenant-id", "acme")], "acme"),
    ],
    ids=["explicit", "stamped", "any-case", "explicit-wins", "explicit-wins-either-order", "blank-explicit-gives-way"],
)
async def test_the_tenant_comes_from_the_headers(server: Running, mode: str, headers, tenant: str) -> None:
    await seed(server, "acme", 2)
    await seed(server, "globex", 1)
    is_error, answer = await stats_as(server, headers, mode)
    assert not is_error
    assert answer == "[MEMORY] 2 memories for this project (project: 2)."
    assert server.tool_calls()[-1]["tenant"] == tenant


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ([("x-memory-tenant", "../other")], "x-memory-tenant must start with a letter or digit"),
        ([("x-memory-tenant", "a" * 129)], "x-memory-tenant is too long (max 128 characters)"),
        ([("x-tenant-id", "not a slug!")], "x-tenant-id must start with a letter or digit"),
        ([("x-tenant-id", "-leading")], "x-tenant-id must start with a letter or digit"),
        ([("x-memory-tenant", "a/b"), ("x-tenant-id", "fine")], "x-memory-tenant must start"),
        (
            [("x-memory-tenant", "acme"), ("x-conversation-id", "has space")],
            "x-conversation-id may carry printable ASCII only, with no whitespace",
        ),
        (
            [("x-memory-tenant", "acme"), ("x-conversation-id", "c" * 513)],
            "x-conversation-id is too long (max 512 characters)",
        ),
        ([("x-memory-tenant", "../bad"), ("x-conversation-id", "has space")], "x-conversation-id may carry"),
        ([("x-memory-tenant", "acme"), ("x-memory-tenant", "globex")], "x-memory-tenant was sent more than once"),
        ([("x-tenant-id", "acme"), ("x-tenant-id", "acme")], "x-tenant-id was sent more than once"),
        (
            [("x-memory-tenant", "acme"), ("x-tenant-id", "acme"), ("x-tenant-id", "globex")],
            "x-tenant-id was sent more than once",
        ),
        (
            [("x-tenant-id", "acme"), ("x-memory-tenant", ""), ("x-memory-tenant", "globex")],
            "x-memory-tenant was sent more than once",
        ),
        (
            [("x-memory-tenant", "acme"), ("x-conversation-id", "chat:1"), ("x-conversation-id", "chat:2")],
            "x-conversation-id was sent more than once",
        ),
        ([("x-memory-tenant", ""), ("x-tenant-id", "")], "x-memory-tenant header is required"),
    ],
)
async def test_a_refused_header_is_an_error_result_naming_it_and_the_tool_does_not_run(
    server: Running, mode: str, headers, message: str
) -> None:
    is_error, answer = await stats_as(server, headers, mode)
    assert is_error
    assert answer.startswith(f"Error: {message}")
    assert server.tool_calls() == []


async def test_a_malformed_stamped_tenant_is_reported_without_naming_the_explicit_header(server: Running) -> None:
    _, answer = await stats_as(server, [("x-tenant-id", "a b")])
    assert "x-tenant-id" in answer and "x-memory-tenant" not in answer


# --------------------------------------------------------------------------- conversation scope


@pytest.mark.parametrize("mode", ERAS)
async def test_another_conversation_never_sees_a_conversation_scoped_note(server: Running, mode: str) -> None:
    tenant = ("x-memory-tenant", "acme")
    note = "Ask Dana before touching the billing cron tonight"
    async with mcp_client(server, [tenant, ("x-conversation-id", "chat:thread-a")], mode=mode) as thread_a:
        stored = await thread_a.call_tool("remember", {"content": note, "scope": "conversation"})
        note_id = stored_id(text(stored))
        await thread_a.call_tool("remember", {"content": "The billing cron runs at 02:00 UTC every night"})
        assert note in text(await thread_a.call_tool("recall", {"query": note}))
        assert text(await thread_a.call_tool("memory_stats", {})).startswith("[MEMORY] 2 memories")

    for headers in ([tenant, ("x-conversation-id", "chat:thread-b")], [tenant]):
        async with mcp_client(server, headers, mode=mode) as other:
            recalled = text(await other.call_tool("recall", {"query": note, "mode": "exploratory"}))
            assert note_id not in recalled and "02:00 UTC" in recalled
            listed = text(await other.call_tool("list_memories", {}))
            assert note not in listed and "02:00 UTC" in listed
            assert text(await other.call_tool("memory_stats", {})) == "[MEMORY] 1 memory for this project (project: 1)."
            forgotten = text(await other.call_tool("forget", {"id": note_id}))
            assert forgotten.startswith(f"[MEMORY] No memory with id {note_id} exists")

    async with mcp_client(server, [tenant, ("x-conversation-id", "chat:thread-a")], mode=mode) as thread_a:
        assert note in text(await thread_a.call_tool("list_memories", {}))


async def test_a_conversation_scoped_note_needs_a_conversation_header(server: Running) -> None:
    async with mcp_client(server, [("x-memory-tenant", "acme")]) as client:
        refused = await client.call_tool("remember", {"content": "a private note", "scope": "conversation"})
    assert refused.is_error and "X-Conversation-Id" in text(refused)
    assert "--conversation" not in text(refused) and "serve-stdio" not in text(refused)


async def test_tenants_never_see_each_other(server: Running) -> None:
    await seed(server, "acme", 1)
    async with mcp_client(server, [("x-memory-tenant", "globex")]) as client:
        assert text(await client.call_tool("list_memories", {})) == "[MEMORY] This project has no memories yet."
        recalled = text(await client.call_tool("recall", {"query": "acme fact w0x0y0z"}))
        assert "NO MATCH FOUND" in recalled and "[id:" not in recalled


# --------------------------------------------------------------------------- logs


async def test_every_call_logs_one_line_and_never_its_content_query_tags_or_conversation(server: Running) -> None:
    headers = [("x-memory-tenant", "acme"), ("x-conversation-id", "chat:secret-thread")]
    async with mcp_client(server, headers) as client:
        stored = await client.call_tool(
            "remember", {"content": "the secret launch code is 0000", "tags": ["secret-tag"], "category": "secret"}
        )
        await client.call_tool("recall", {"query": "what is the secret launch code"})
        await client.call_tool("list_memories", {})
        await client.call_tool("memory_stats", {})
        await client.call_tool("recall", {"query": "secret", "mode": "nonsense"})
        await client.call_tool("forget", {"id": stored_id(text(stored))})

    calls = server.tool_calls()
    assert [c["tool"] for c in calls] == ["remember", "recall", "list_memories", "memory_stats", "recall", "forget"]
    for call in calls:
        assert call["level"] == "info" and call["tenant"] == "acme" and call["inConversation"] is True
        assert isinstance(call["ms"], int) and call["ms"] >= 0
    assert [c["ok"] for c in calls] == [True, True, True, True, False, True]
    everything = server.out.getvalue() + server.err.getvalue()
    assert "secret" not in everything and "0000" not in everything


class FailingEmbedder(FakeEmbedder):
    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbeddingError("the embedding service did not answer within 10 s")


async def test_a_failing_call_is_an_error_result_and_a_stderr_line_naming_tool_and_tenant() -> None:
    async with serving(make_env(Clock(), embedder=FailingEmbedder()).service) as server:
        async with mcp_client(server, [("x-memory-tenant", "acme")]) as client:
            failed = await client.call_tool("recall", {"query": "the secret rollout plan"})
    assert failed.is_error
    assert text(failed) == (
        "Error: the memory store could not complete this request — the embedding service did not answer within 10 s"
    )
    assert server.lines("err") == [
        {
            "level": "error",
            "event": "tool_failed",
            "message": "the embedding service did not answer within 10 s",
            "tenant": "acme",
            "tool": "recall",
        },
    ]
    assert [(c["tool"], c["ok"]) for c in server.tool_calls()] == [("recall", False)]
    assert "secret" not in server.out.getvalue() + server.err.getvalue()
