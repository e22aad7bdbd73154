"""Structured output tells one story (issue 28): each result carries the fused `relevance` that
the gates and HIGH read beside its `similarity`; an empty answer's confidence is "none" over MCP
and in the CLI's --json alike, whose results carry the same fields; and a filtered recall that
matches nothing says the filter excluded what the query found, never that nothing is stored."""

from __future__ import annotations

import io
import json

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import ToolLayer
from tests.cli.test_cli import cli  # noqa: F401 (the fixture)
from tests.conftest import Env

ACME = Caller("acme")
DEPLOY = "Rolling deploys drain the websocket streams before the pod exits"


async def call(env: Env, tool: str, arguments: dict):
    return await ToolLayer(env.service, JsonLog(io.StringIO())).call(tool, arguments, ACME)


async def test_each_result_exposes_the_relevance_that_high_is_judged_on(env: Env) -> None:
    await env.service.remember(ACME, DEPLOY, tags=["ops"])
    result = await call(env, "recall", {"query": "rolling deploys drain websocket streams"})
    record = result.data["results"][0]
    ranked = (await env.service.recall(ACME, "rolling deploys drain websocket streams")).results[0]
    assert record["relevance"] == round(ranked.relevance, 4) and record["similarity"] == round(ranked.similarity, 4)
    assert record["relevance"] > record["similarity"]  # the keyword evidence is in it


async def test_a_filtered_recall_that_matches_nothing_says_the_filter_excluded_what_the_query_found(env: Env) -> None:
    for i, words in enumerate(["websocket streams", "pod exits", "deploy drains"]):
        await env.service.remember(ACME, f"Rolling deploys: note {i} about {words} before shutdown", tags=["ops"])
    result = await call(env, "recall", {"query": "rolling deploys before shutdown", "tags": ["freeze"]})
    assert not result.is_error
    assert result.text.startswith(
        '[MEMORY] 3 memories matched "rolling deploys before shutdown" but none carries tag freeze.'
    )
    assert "nothing is stored" not in result.text and "NO MATCH FOUND" not in result.text
    assert result.data["filteredOut"] == 3 and result.data["results"] == [] and result.data["confidence"] == "none"
    typed = await call(env, "recall", {"query": "rolling deploys before shutdown", "type": "reference", "since": "1d"})
    assert 'but none is of type "reference" and was stored since ' in typed.text


async def test_a_recall_that_finds_nothing_at_all_still_says_nothing_is_stored_and_none(env: Env) -> None:
    result = await call(env, "recall", {"query": "zebra migration quantum", "tags": ["freeze"]})
    assert "NO MATCH FOUND" in result.text and result.data["confidence"] == "none"
    assert "filteredOut" not in result.data


def test_the_cli_json_says_none_when_empty_and_carries_the_tools_fields(cli) -> None:  # noqa: F811
    cli("remember", "-t", "acme", DEPLOY)
    empty = json.loads(cli("recall", "-t", "acme", "zebra migration quantum", "--json").stdout)
    assert empty["confidence"] == "none" and empty["results"] == []
    found = json.loads(cli("recall", "-t", "acme", "rolling deploys drain websocket streams", "--json").stdout)
    record = found["results"][0]
    assert {"id", "type", "content", "createdAt", "scope", "tags", "similarity", "relevance", "standing"} <= set(record)
    assert {"score", "accessCount"} <= set(record)
    filtered = cli("recall", "-t", "acme", "rolling deploys drain websocket streams", "--tag", "freeze")
    assert "1 memory matched the query but none carries tag freeze" in filtered.stdout
