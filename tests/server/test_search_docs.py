"""search_docs (docs/tools.md, docs/search_docs.md, docs.test and the tools.test search_docs cases).

The retriever is tested through botocore's Stubber (requests validated against
the real bedrock-agent-runtime model) and over HTTP against a local stand-in
(answers botocore really parses); the tool layer with a recording retriever.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from mcp_memory.config import Settings
from mcp_memory.core.errors import DocsError
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.search_docs import DocHit, DocsRetriever, parse_results, render_docs
from mcp_memory.server.protocol.tools import build_tool_layer
from mcp_memory.stores.section import StoreSection
from tests.conftest import ROOT
from tests.support.standins import KnowledgeBaseStandIn

KB = "KBTEST1234"
SESSION = boto3.session.Session()
ACME = Caller("acme")


def agent_client(endpoint_url: str | None = None):
    return SESSION.client(
        "bedrock-agent-runtime",
        region_name="eu-west-1",
        endpoint_url=endpoint_url,
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
    )


def result(text: Any, uri: Any = None, score: Any = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"content": {"type": "TEXT", "text": text}}
    if uri is not None:
        entry["location"] = {"type": "S3", "s3Location": {"uri": uri}}
    if score is not None:
        entry["score"] = score
    return entry


# --------------------------------------------------------------------------- the Retrieve call


@pytest.fixture
def client():
    client = agent_client()
    yield client
    client.close()


async def retrieve(client, query: str = "how do I rotate keys?", limit: int = 5) -> list[DocHit]:
    retriever = DocsRetriever(KB, "eu-west-1", client=client)
    try:
        return await retriever.retrieve(query, limit)
    finally:
        await retriever.close()


async def test_retrieve_passes_the_id_the_query_and_the_limit_and_keeps_excerpt_source_and_score(client) -> None:
    with Stubber(client) as stub:
        stub.add_response(
            "retrieve",
            {
                "retrievalResults": [
                    {**result("Rotate keys monthly.", "s3://docs/keys.md", 0.8), "metadata": {"x-amz-page": 3}},
                    result("Use the vault CLI."),
                ]
            },
            {
                "knowledgeBaseId": KB,
                "retrievalQuery": {"text": "how do I rotate keys?"},
                "retrievalConfiguration": {"vectorSearchConfiguration": {"numberOfResults": 7}},
            },
        )
        hits = await retrieve(client, limit=7)
        stub.assert_no_pending_responses()

    assert hits == [DocHit("Rotate keys monthly.", "s3://docs/keys.md", 0.8), DocHit("Use the vault CLI.")]


async def test_a_failed_retrieve_says_the_knowledge_base_could_not_be_searched(client) -> None:
    with Stubber(client) as stub:
        stub.add_client_error(
            "retrieve",
            service_error_code="AccessDeniedException",
            service_message="not authorized",
            http_status_code=403,
        )
        with pytest.raises(DocsError) as refused:
            await retrieve(client)

    assert str(refused.value).startswith("the knowledge base could not be searched — ")
    assert "AccessDeniedException" in str(refused.value) and "not authorized" in str(refused.value)


@pytest.fixture
async def kb() -> AsyncIterator[KnowledgeBaseStandIn]:
    stand_in = KnowledgeBaseStandIn([result("Rotate keys monthly.", "s3://docs/keys.md", 0.5)])
    await stand_in.start()
    yield stand_in
    await stand_in.stop()


async def test_retrieve_over_http_posts_to_the_knowledge_base_and_parses_the_answer(kb) -> None:
    client = agent_client(f"http://127.0.0.1:{kb.port}")
    try:
        hits = await retrieve(client, "rotate keys", 3)
    finally:
        client.close()

    [request] = kb.received
    assert request.path == f"/knowledgebases/{KB}/retrieve"
    assert request.body == {
        "retrievalQuery": {"text": "rotate keys"},
        "retrievalConfiguration": {"vectorSearchConfiguration": {"numberOfResults": 3}},
    }
    assert request.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTEST/")
    assert hits == [DocHit("Rotate keys monthly.", "s3://docs/keys.md", 0.5)]


@pytest.mark.parametrize("answer", [{}, {"nextToken": "x"}])
async def test_an_answer_without_retrieval_results_is_refused(kb, answer) -> None:
    kb.answer(200, answer)
    client = agent_client(f"http://127.0.0.1:{kb.port}")
    try:
        with pytest.raises(DocsError) as refused:
            await retrieve(client)
    finally:
        client.close()

    assert str(refused.value) == "the knowledge base returned a response with no retrieval results in it"


@pytest.mark.parametrize("payload", [None, [], {"retrievalResults": "none"}, {"retrievalResults": None}])
def test_a_payload_whose_results_are_not_a_list_is_refused(payload) -> None:
    with pytest.raises(DocsError, match="no retrieval results in it"):
        parse_results(payload)


def test_parsing_skips_blank_and_non_text_excerpts_and_ignores_everything_else() -> None:
    hits = parse_results(
        {
            "retrievalResults": [
                result("   "),
                result(None),
                result(42),
                {"content": "not an object"},
                "not a result",
                result("  kept  ", uri=7, score="0.9"),
                result("also kept", score=True),
                {**result("web page"), "location": {"type": "WEB", "webLocation": {"url": "https://wiki/x"}}},
            ]
        }
    )

    assert hits == [DocHit("kept"), DocHit("also kept"), DocHit("web page", "https://wiki/x")]


# --------------------------------------------------------------------------- rendering


def test_results_show_their_standing_against_the_top_one_and_their_source_never_the_raw_score() -> None:
    text = render_docs("rotate keys", [DocHit("first", "s3://docs/a.md", 0.5), DocHit("second", "s3://docs/b.md", 0.4)])

    assert text == (
        '[DOCS] 2 excerpts matched "rotate keys" in the documentation library.\n\n'
        "1. (100% of the top result, source: s3://docs/a.md)\n   first\n\n"
        "2. (80% of the top result, source: s3://docs/b.md)\n   second"
    )
    assert "0.5" not in text and "0.4" not in text


def test_a_bare_excerpt_has_no_facets() -> None:
    assert (
        render_docs("q", [DocHit("bare")])
        == '[DOCS] 1 excerpt matched "q" in the documentation library.\n\n1.\n   bare'
    )


def test_standing_is_left_out_when_no_result_has_a_positive_score() -> None:
    text = render_docs("q", [DocHit("a", "s3://a", 0.0), DocHit("b", None, 0.0)])
    assert "% of the top result" not in text
    assert "1. (source: s3://a)\n   a" in text and "2.\n   b" in text


def test_an_excerpt_over_2000_characters_is_cut_with_a_note() -> None:
    text = render_docs("q", [DocHit("가" * 2001), DocHit("나" * 2000)])

    assert "가" * 2000 + "… (truncated — read the source document for the rest)" in text
    assert "가" * 2001 not in text
    assert text.count("truncated") == 1  # exactly 2000 is not cut


def test_nothing_found_says_that_empty_is_not_the_same_as_no_answer() -> None:
    text = render_docs("rotate keys", [])

    assert text.startswith('[DOCS] Nothing in the documentation library matched "rotate keys".')
    assert "not the same as the subject having no answer" in text


# --------------------------------------------------------------------------- the tool


class RecordingRetriever:
    def __init__(self, hits: list[DocHit] | None = None, fail: Exception | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.hits = hits or []
        self.fail = fail
        self.closed = False

    async def retrieve(self, query: str, limit: int) -> list[DocHit]:
        self.calls.append((query, limit))
        if self.fail:
            raise self.fail
        return self.hits

    async def close(self) -> None:
        self.closed = True


def tools_with(retriever: RecordingRetriever | None, out: io.StringIO, err: io.StringIO, kb: str | None = KB):
    settings = Settings(store=StoreSection(knowledge_base_id=kb))
    return build_tool_layer(settings, object(), JsonLog(out, err), retriever=retriever)  # the service is not used


@pytest.fixture
def out() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def err() -> io.StringIO:
    return io.StringIO()


def test_search_docs_is_listed_last_and_only_with_a_knowledge_base(out, err) -> None:
    offered = tools_with(RecordingRetriever(), out, err)
    memories_only = tools_with(None, out, err, kb=None)

    assert [t.name for t in offered.catalogue] == [
        "recall",
        "remember",
        "list_memories",
        "forget",
        "memory_stats",
        "search_docs",
    ]
    assert [t.name for t in memories_only.catalogue] == [
        "recall",
        "remember",
        "list_memories",
        "forget",
        "memory_stats",
    ]


def test_the_search_docs_schema_has_query_and_limit_and_no_tenant(out, err) -> None:
    spec = tools_with(RecordingRetriever(), out, err).catalogue[-1]

    assert list(spec.input_schema["properties"]) == ["query", "limit"]
    assert spec.input_schema["required"] == ["query"]
    assert "(max 1000 characters)" in spec.input_schema["properties"]["query"]["description"]
    limit = spec.input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["description"]) == (1, 50, "Default 5.")
    assert "tenant" not in json.dumps(spec.input_schema).lower()


async def test_without_a_knowledge_base_search_docs_cannot_be_called(out, err) -> None:
    result = await tools_with(None, out, err, kb=None).call("search_docs", {"query": "q"}, ACME)
    assert result.is_error and result.text == 'Error: unknown tool "search_docs".'


async def test_search_docs_defaults_to_five_results_and_renders_them(out, err) -> None:
    retriever = RecordingRetriever([DocHit("Rotate keys monthly.", "s3://docs/keys.md", 0.7)])

    result = await tools_with(retriever, out, err).call("search_docs", {"query": "rotate keys"}, ACME)

    assert retriever.calls == [("rotate keys", 5)]
    assert not result.is_error
    assert result.text.startswith('[DOCS] 1 excerpt matched "rotate keys"')


async def test_search_docs_passes_a_given_limit(out, err) -> None:
    retriever = RecordingRetriever()
    await tools_with(retriever, out, err).call("search_docs", {"query": "q", "limit": 50}, ACME)
    assert retriever.calls == [("q", 50)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "`query` is required and must be a non-empty string."),
        ({"query": "   "}, "`query` is required and must be a non-empty string."),
        ({"query": 5}, "`query` must be a string, not a number."),
        ({"query": "q", "limit": 0}, "`limit` must be an integer between 1 and 50."),
        ({"query": "q", "limit": 51}, "`limit` must be an integer between 1 and 50."),
        ({"query": "q", "limit": 1.5}, "`limit` must be an integer between 1 and 50."),
        ({"query": "q", "limit": "3"}, "`limit` must be an integer between 1 and 50."),
        ({"query": "q", "limit": True}, "`limit` must be an integer between 1 and 50."),
    ],
)
async def test_bad_arguments_are_refused_and_nothing_is_searched(out, err, args, message) -> None:
    retriever = RecordingRetriever()
    result = await tools_with(retriever, out, err).call("search_docs", args, ACME)
    assert result.is_error and result.text == f"Error: {message}"
    assert retriever.calls == []


async def test_a_query_of_1001_hangul_characters_is_refused_on_characters(out, err) -> None:
    retriever = RecordingRetriever()
    tools = tools_with(retriever, out, err)

    refused = await tools.call("search_docs", {"query": "가" * 1001, "limit": 0}, ACME)
    accepted = await tools.call("search_docs", {"query": "가" * 1000}, ACME)

    assert refused.is_error and refused.text.startswith("Error: `query` is 1001 characters; the maximum is 1000.")
    assert not accepted.is_error and retriever.calls == [("가" * 1000, 5)]


async def test_a_knowledge_base_failure_names_the_documentation_index_not_the_memory_store(out, err) -> None:
    retriever = RecordingRetriever(fail=DocsError("the knowledge base could not be searched — throttled"))

    result = await tools_with(retriever, out, err).call("search_docs", {"query": "secret plans"}, ACME)

    assert result.is_error
    assert result.text == (
        "Error: the documentation index could not be searched — the knowledge base could not be searched — throttled"
    )
    assert "memory store" not in result.text
    [failure] = [json.loads(line) for line in err.getvalue().splitlines()]
    assert failure["event"] == "tool_failed" and failure["tool"] == "search_docs" and failure["tenant"] == "acme"
    assert "type" not in failure  # our own error class
    [call] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert call["tool"] == "search_docs" and call["tenant"] == "acme" and call["ok"] is False
    assert "secret" not in out.getvalue() + err.getvalue()


async def test_a_knowledge_base_error_that_quotes_the_query_reaches_no_result_or_log_line(out, err) -> None:
    """Bedrock's ValidationException quotes the value it refused; a Korean query, in its JSON
    escaping too, must not come back in the tool result or any log line, while the reason does."""
    query = "배포 서버를 재시작하기 전에 캐시를 비우는 절차는 무엇인가요?"
    escaped = json.dumps(query)[1:-1]
    quoted = (
        "An error occurred (ValidationException) when calling the Retrieve operation: "
        f"1 validation error detected: Value '{query}' at 'retrievalQuery.text' failed to satisfy "
        f'constraint; request was {{"retrievalQuery": {{"text": "{escaped}"}}}}'
    )
    retriever = RecordingRetriever(fail=DocsError(f"the knowledge base could not be searched — {quoted}"))

    result = await tools_with(retriever, out, err).call("search_docs", {"query": query}, ACME)

    assert result.is_error and "ValidationException" in result.text and "retrievalQuery.text" in result.text
    logged = out.getvalue() + err.getvalue()
    assert '"event":"tool_failed"' in logged
    for shown in (result.text, logged):
        assert query[:12] not in shown and "서버를 재시작" not in shown and escaped[:24] not in shown


async def test_closing_the_tool_layer_closes_the_retriever(out, err) -> None:
    retriever = RecordingRetriever()
    tools = tools_with(retriever, out, err)
    await tools.close()
    assert retriever.closed


def test_building_the_layer_with_a_knowledge_base_loads_no_aws_code_until_the_first_search() -> None:
    script = (
        "import json, sys\n"
        "from mcp_memory.config import Settings\n"
        "from mcp_memory.stores.section import StoreSection\n"
        "from mcp_memory.core.logs import NullLog\n"
        "from mcp_memory.server.protocol.tools import build_tool_layer\n"
        "tools = build_tool_layer(Settings(store=StoreSection(knowledge_base_id='KBTEST1234')), object(), NullLog())\n"
        "assert tools.catalogue[-1].name == 'search_docs'\n"
        "print(json.dumps([m for m in ('boto3', 'botocore') if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_knowledge_base_without_boto3_is_refused_at_start_up_with_the_install_hint(monkeypatch, out, err) -> None:
    import importlib.util

    from mcp_memory.core.errors import StartupError

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "boto3" else real_find_spec(name, *a)
    )

    with pytest.raises(StartupError) as refused:
        build_tool_layer(Settings(store=StoreSection(knowledge_base_id=KB)), object(), JsonLog(out, err))

    assert str(refused.value) == (
        "KNOWLEDGE_BASE_ID (search_docs) needs boto3, which is not installed: "
        "install the AWS extra: from a checkout, pip install '.[aws]' (once released: pip install 'mcp-tenant-memory[aws]')"
    )
