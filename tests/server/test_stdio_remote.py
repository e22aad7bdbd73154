"""`serve-stdio` end to end with remote parts: the MCP SDK's own client drives the
server subprocess, which embeds through a real OpenAI-compatible HTTP server and
searches docs through a Bedrock Agent Runtime stand-in, both on 127.0.0.1.

The subprocess reaches the stand-in the way any AWS deployment can be pointed
elsewhere: botocore's own AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME, with dummy
credentials and no AWS config files or instance metadata.
"""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT
from tests.server.test_stdio import server_env, text
from tests.support.standins import KnowledgeBaseStandIn, OpenAIStandIn

KEY = "sk-e2e-key-never-logged"
KB = "KBTEST1234"
MEMORY_TOOLS = ["recall", "remember", "list_memories", "forget", "memory_stats"]


def params(tmp_path: Path, **extra: str) -> StdioServerParameters:
    env = {k: v for k, v in server_env(tmp_path / "m.db").items() if not k.startswith(("AWS_", "KNOWLEDGE_BASE_ID"))}
    env.update(extra)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_memory", "serve-stdio", "--tenant", "acme"],
        env=env,
        cwd=str(ROOT),
    )


def aws_env(tmp_path: Path, endpoint: str) -> dict[str, str]:
    return {
        "KNOWLEDGE_BASE_ID": KB,
        "AWS_REGION": "eu-west-1",
        "AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME": endpoint,
        "AWS_ACCESS_KEY_ID": "AKIDTEST",
        "AWS_SECRET_ACCESS_KEY": "test-secret",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


@pytest.fixture
async def embeddings() -> AsyncIterator[OpenAIStandIn]:
    stand_in = OpenAIStandIn(dim=64)
    await stand_in.start()
    yield stand_in
    await stand_in.stop()


@pytest.fixture
async def kb() -> AsyncIterator[KnowledgeBaseStandIn]:
    stand_in = KnowledgeBaseStandIn(
        [
            {
                "content": {"type": "TEXT", "text": "Rotate the signing keys every month."},
                "location": {"type": "S3", "s3Location": {"uri": "s3://docs/keys.md"}},
                "score": 0.61,
            },
            {"content": {"type": "TEXT", "text": "The vault CLI rotates keys."}, "score": 0.4},
        ]
    )
    await stand_in.start()
    yield stand_in
    await stand_in.stop()


async def test_remember_and_recall_embed_through_an_openai_compatible_server(tmp_path: Path, embeddings) -> None:
    env = {
        "EMBEDDING_PROVIDER": "openai",
        "EMBEDDING_BASE_URL": f"http://127.0.0.1:{embeddings.port}/v1/",
        "EMBEDDING_API_KEY": KEY,
        "EMBEDDING_MODEL": "test-embed",
        "EMBEDDING_DIM": "64",
    }
    async with Client(params(tmp_path, **env)) as client:
        stored = await client.call_tool(
            "remember", {"content": "Rolling deploys drain in-flight streams before the pod exits"}
        )
        assert not stored.is_error, text(stored)
        memory_id = re.search(r"Stored as ([0-9A-Z]{26})", text(stored)).group(1)

        recalled = await client.call_tool("recall", {"query": "Rolling deploys drain in-flight streams before the pod"})
        assert text(recalled).startswith(
            '[MEMORY] 1 memory matched "Rolling deploys drain in-flight streams before the pod"'
        )
        assert memory_id in text(recalled)

    assert [r.body["input"] for r in embeddings.received] == [
        "Rolling deploys drain in-flight streams before the pod exits",
        "Rolling deploys drain in-flight streams before the pod",
    ]
    assert {r.headers["Authorization"] for r in embeddings.received} == {f"Bearer {KEY}"}
    assert {r.body["model"] for r in embeddings.received} == {"test-embed"}


async def test_an_embedding_service_error_reaches_the_model_without_the_key(tmp_path: Path, embeddings) -> None:
    env = {
        "EMBEDDING_PROVIDER": "openai",
        "EMBEDDING_BASE_URL": f"http://127.0.0.1:{embeddings.port}/v1",
        "EMBEDDING_API_KEY": KEY,
        "EMBEDDING_DIM": "64",
    }
    embeddings.answer(401, {"error": f"key {KEY} is not valid"})
    async with Client(params(tmp_path, **env)) as client:
        refused = await client.call_tool("recall", {"query": "anything"})

    assert refused.is_error
    assert text(refused).startswith(
        "Error: the memory store could not complete this request — the embedding service answered 401: "
    )
    assert KEY not in text(refused)


async def test_search_docs_is_offered_after_the_memory_tools_and_answers_from_the_knowledge_base(
    tmp_path: Path, kb
) -> None:
    env = {"EMBEDDING_PROVIDER": "fake", **aws_env(tmp_path, f"http://127.0.0.1:{kb.port}")}
    async with Client(params(tmp_path, **env)) as client:
        listed = await client.list_tools()
        found = await client.call_tool("search_docs", {"query": "how often are keys rotated?", "limit": 2})

    assert [t.name for t in listed.tools] == [*MEMORY_TOOLS, "search_docs", "claude_code_hook"]
    assert not found.is_error
    assert text(found) == (
        '[DOCS] 2 excerpts matched "how often are keys rotated?" in the documentation library.\n\n'
        "1. (100% of the top result, source: s3://docs/keys.md)\n   Rotate the signing keys every month.\n\n"
        "2. (66% of the top result)\n   The vault CLI rotates keys."
    )
    [request] = kb.received
    assert request.path == f"/knowledgebases/{KB}/retrieve"
    assert request.body["retrievalQuery"] == {"text": "how often are keys rotated?"}
    assert request.body["retrievalConfiguration"] == {"vectorSearchConfiguration": {"numberOfResults": 2}}


async def test_a_knowledge_base_failure_names_the_documentation_index(tmp_path: Path, kb) -> None:
    kb.answer(400, {"message": "Knowledge base is not ready"}, headers={"x-amzn-ErrorType": "ValidationException"})
    env = {"EMBEDDING_PROVIDER": "fake", **aws_env(tmp_path, f"http://127.0.0.1:{kb.port}")}
    async with Client(params(tmp_path, **env)) as client:
        failed = await client.call_tool("search_docs", {"query": "keys"})

    assert failed.is_error
    assert text(failed).startswith("Error: the documentation index could not be searched — ")
    assert "ValidationException" in text(failed) and "Knowledge base is not ready" in text(failed)
    assert "memory store" not in text(failed)


async def test_without_a_knowledge_base_search_docs_is_neither_listed_nor_callable(tmp_path: Path) -> None:
    async with Client(params(tmp_path, EMBEDDING_PROVIDER="fake")) as client:
        listed = await client.list_tools()
        called = await client.call_tool("search_docs", {"query": "keys"})

    assert [t.name for t in listed.tools] == [*MEMORY_TOOLS, "claude_code_hook"]
    assert called.is_error and text(called) == 'Error: unknown tool "search_docs".'
