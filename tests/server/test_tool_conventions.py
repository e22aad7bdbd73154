"""MCP's conventions for tools, as the SDK's own client sees them: every tool has a
title, annotations that say what it does to the world, and an output schema that is
valid JSON Schema; every successful result carries structuredContent that validates
against it, beside the text; an error result is its text and isError, nothing else."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for
from mcp import Client

from mcp_memory.config import Settings
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.search_docs import DocHit
from mcp_memory.server.protocol.server import build_mcp_server
from mcp_memory.server.protocol.tools import build_tool_layer
from mcp_memory.stores.section import StoreSection
from tests.conftest import Env
from tests.support.http_support import mcp_client, serving

ACME = Caller("acme", "chat:1")

#: (title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint); None: not sent.
EXPECTED = {
    "recall": ("Recall memories", True, None, None, False),
    "remember": ("Remember a fact", False, True, True, False),
    "list_memories": ("List memories", True, None, None, False),
    "forget": ("Forget a memory", False, True, True, False),
    "memory_stats": ("Count memories", True, None, None, False),
    "search_docs": ("Search documentation", True, None, None, True),
}


class Retriever:
    def __init__(self, hits: list[DocHit]) -> None:
        self.hits = hits

    async def retrieve(self, query: str, limit: int) -> list[DocHit]:
        return self.hits[:limit]

    async def close(self) -> None:
        pass


def in_process(env: Env, hits: list[DocHit] | None = None):
    """The whole MCP server (search_docs included) behind the SDK's in-process client."""
    settings = Settings(store=StoreSection(knowledge_base_id="KB12345678"))
    tools = build_tool_layer(
        settings, env.service, JsonLog(io.StringIO(), io.StringIO()), retriever=Retriever(hits or [])
    )
    return build_mcp_server(tools, lambda ctx: ACME)


def annotations(tool: Any) -> tuple:
    a = tool.annotations
    return (tool.title, a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)


def text(result: Any) -> str:
    return result.content[0].text


def check(schema: dict[str, Any], result: Any) -> dict[str, Any]:
    """The structured content of a successful result, validated against the tool's schema."""
    assert not result.is_error, text(result)
    validator_for(schema)(schema).validate(result.structured_content)
    return result.structured_content


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_tool_lists_a_title_the_right_annotations_and_a_valid_output_schema(env: Env, mode: str) -> None:
    async with Client(in_process(env), mode=mode) as client:
        tools = (await client.list_tools()).tools

    assert {t.name: annotations(t) for t in tools} == EXPECTED
    for tool in tools:
        assert tool.output_schema["type"] == "object", tool.name
        validator_for(tool.output_schema, default=Draft202012Validator).check_schema(tool.output_schema)
        # open to fields added later: no object in any schema closes itself
        assert '"additionalProperties": false' not in json.dumps(tool.output_schema), tool.name


async def test_the_http_listing_carries_the_same_titles_and_annotations(env: Env) -> None:
    async with serving(env.service) as running, mcp_client(running) as client:
        tools = (await client.list_tools()).tools
    assert {t.name: annotations(t) for t in tools} == {k: v for k, v in EXPECTED.items() if k != "search_docs"}
    wire = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools])
    assert '"readOnlyHint": true' in wire and '"outputSchema"' in wire and '"title": "Recall memories"' in wire


async def test_every_result_carries_fields_that_match_its_text_and_validate(env: Env) -> None:
    hits = [DocHit("Rotate the keys every 90 days.", "s3://kb/keys.md", 0.8), DocHit("Keys live in KMS.", None, 0.4)]
    async with Client(in_process(env, hits)) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}

        stored = await client.call_tool(
            "remember",
            {"content": "Deploys run through the blue-green pipeline", "tags": ["deploy"], "category": "decision"},
        )
        data = check(schemas["remember"], stored)
        memory_id = re.search(r"Stored as ([0-9A-Z]{26})", text(stored)).group(1)
        assert data["created"] is True
        assert data["memory"] == {
            "id": memory_id,
            "type": "project",
            "content": "Deploys run through the blue-green pipeline",
            "createdAt": data["memory"]["createdAt"],
            "scope": "project",
            "tags": ["deploy"],
            "category": "decision",
        }
        assert data["memory"]["createdAt"][:10] in text(stored)

        again = check(schemas["remember"], await client.call_tool("remember", {"content": data["memory"]["content"]}))
        assert again["created"] is False and again["memory"]["id"] == memory_id

        recalled = await client.call_tool("recall", {"query": "blue-green pipeline deploys"})
        data = check(schemas["recall"], recalled)
        assert [r["id"] for r in data["results"]] == [memory_id]
        assert data["confidence"] in text(recalled).lower()
        assert data["mode"] == "balanced" and data["query"] == "blue-green pipeline deploys"
        assert 0 < data["results"][0]["similarity"] <= 1 and data["results"][0]["standing"] == 1

        empty = check(schemas["recall"], await client.call_tool("recall", {"query": "zebra migration quantum"}))
        assert empty["results"] == [] and empty["confidence"] == "none"

        listed = check(schemas["list_memories"], await client.call_tool("list_memories", {}))
        assert [m["id"] for m in listed["memories"]] == [memory_id]

        stats = await client.call_tool("memory_stats", {})
        assert check(schemas["memory_stats"], stats) == {"total": 1, "byType": {"project": 1}, "lowerBound": False}

        docs = await client.call_tool("search_docs", {"query": "key rotation"})
        assert check(schemas["search_docs"], docs) == {
            "query": "key rotation",
            "results": [
                {"excerpt": "Rotate the keys every 90 days.", "source": "s3://kb/keys.md", "standing": 1.0},
                {"excerpt": "Keys live in KMS.", "standing": 0.5},
            ],
        }
        assert "50% of the top result" in text(docs)

        forgotten = await client.call_tool("forget", {"id": memory_id})
        assert check(schemas["forget"], forgotten) == {"id": memory_id, "deleted": True}
        missing = await client.call_tool("forget", {"id": memory_id})
        assert check(schemas["forget"], missing) == {"id": memory_id, "deleted": False}
        assert check(schemas["list_memories"], await client.call_tool("list_memories", {})) == {"memories": []}


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("recall", {"query": "q", "limit": 0}),
        ("remember", {"content": ""}),
        ("list_memories", {"type": "note"}),
        ("forget", {}),
        ("search_docs", {"query": "x" * 1001}),
        ("no_such_tool", {}),
    ],
)
async def test_an_error_result_is_its_text_and_is_error_without_structured_content(env: Env, tool, args) -> None:
    async with Client(in_process(env)) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    assert result.structured_content is None
    assert text(result).startswith("Error: ")


async def test_a_correction_reports_the_close_memory_and_what_it_replaced_as_fields(env: Env) -> None:
    async with Client(in_process(env)) as client:
        schema = {t.name: t.output_schema for t in (await client.list_tools()).tools}["remember"]
        first = check(schema, await client.call_tool("remember", {"content": "Use Python 3.11 for the build"}))
        old_id = first["memory"]["id"]
        assert first["replaced"] == [] and "near" not in first

        close = check(schema, await client.call_tool("remember", {"content": "Use Python 3.12 for the build"}))
        assert close["created"] is True and close["near"]["id"] == old_id
        assert close["near"]["content"] == "Use Python 3.11 for the build"

        fixed = await client.call_tool(
            "remember", {"content": "Use Python 3.13 for the build", "replaces": [old_id, close["memory"]["id"]]}
        )
        data = check(schema, fixed)
        assert data["replaced"] == [old_id, close["memory"]["id"]] and "notRemoved" not in data
        assert f"Replaced: {old_id}, {close['memory']['id']}" in text(fixed)
