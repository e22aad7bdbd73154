"""The tool layer (docs/tools.md, tools cases): the catalogue, argument
checks in the reference order, pass-through to the service, errors as isError
results, and one tool_call log line per call that never carries content."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.requests import ForgetRequest, ListRequest, RecallRequest, RememberRequest
from mcp_memory.core.service import ForgetResult, ListResult, RecallResult, RememberResult, StatsResult
from mcp_memory.server.protocol.tools import TOOLS, ToolLayer
from tests.conftest import Env

ACME = Caller("acme")
THREAD = Caller("acme", "chat:1")


def empty_result(name: str, request: Any) -> Any:
    """What the service answers when nothing is stored: the tool renders it as usual."""
    if name == "recall":
        return RecallResult(request.query, request.mode or "balanced", 5, [], "none", 0, found_any=False)
    if name == "list":
        return ListResult([], request.memory_type)
    if name == "forget":
        return ForgetResult(request.memory_id, deleted=False)
    if name == "remember":
        return RememberResult(Memory("01HZX0000000000000000000AB", "acme", request.content), created=True)
    return StatsResult(0)


class RecordingService:
    """Stands in for MemoryService: records the requests the tool layer made."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple[str, Caller, Any]] = []
        self.fail = fail

    async def _record(self, name: str, caller: Caller, request: Any = None) -> Any:
        if self.fail:
            raise self.fail
        self.calls.append((name, caller, request))
        return empty_result(name, request)

    async def recall_request(self, caller, request):
        return await self._record("recall", caller, request)

    async def remember_request(self, caller, request):
        return await self._record("remember", caller, request)

    async def list_request(self, caller, request):
        return await self._record("list", caller, request)

    async def forget_request(self, caller, request):
        return await self._record("forget", caller, request)

    async def stats(self, caller):
        return await self._record("stats", caller)


@pytest.fixture
def out() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def err() -> io.StringIO:
    return io.StringIO()


def layer(service: Any, out: io.StringIO, err: io.StringIO) -> ToolLayer:
    return ToolLayer(service, JsonLog(out, err))


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


# --------------------------------------------------------------------------- catalogue


def test_the_catalogue_has_exactly_the_five_memory_tools_in_order() -> None:
    assert [t.name for t in TOOLS] == ["recall", "remember", "list_memories", "forget", "memory_stats"]


def test_no_tool_schema_lets_a_model_name_a_tenant_or_conversation() -> None:
    text = json.dumps([t.input_schema for t in TOOLS]).lower()
    assert "tenant" not in text
    for tool in TOOLS:
        assert "tenant" not in tool.input_schema.get("properties", {})
        assert "conversation" not in tool.input_schema.get("properties", {})


def test_the_recall_description_asks_to_be_called_at_the_start_of_a_task() -> None:
    assert "at the start of a task" in TOOLS[0].description


def test_remember_properties_are_in_the_reference_order_then_replaces() -> None:
    remember = next(t for t in TOOLS if t.name == "remember")
    assert list(remember.input_schema["properties"]) == ["content", "scope", "type", "category", "tags", "replaces"]
    assert remember.input_schema["required"] == ["content"]


def test_memory_stats_takes_no_arguments() -> None:
    stats = next(t for t in TOOLS if t.name == "memory_stats")
    assert stats.input_schema == {"type": "object", "properties": {}}


# --------------------------------------------------------------------------- pass-through and defaults


async def test_recall_passes_query_and_leaves_limit_and_mode_to_the_service(out, err) -> None:
    service = RecordingService()
    result = await layer(service, out, err).call("recall", {"query": "deploys?"}, ACME)
    assert not result.is_error
    assert result.text.startswith('[MEMORY] No memories stored for this project matched "deploys?".')
    assert service.calls == [("recall", ACME, RecallRequest("deploys?", limit=None, mode=None))]


async def test_remember_defaults_to_a_project_memory_with_no_tags(out, err) -> None:
    service = RecordingService()
    await layer(service, out, err).call("remember", {"content": "  a fact  "}, ACME)
    assert service.calls == [
        (
            "remember",
            ACME,
            RememberRequest("  a fact  ", memory_type="project", category=None, tags=(), scope="project"),
        )
    ]


async def test_remember_trims_category_and_tags_and_drops_empty_tags(out, err) -> None:
    service = RecordingService()
    await layer(service, out, err).call(
        "remember",
        {"content": "x fact", "category": "  decision ", "tags": [" a ", "", "  ", "b"], "type": "pattern"},
        THREAD,
    )
    request = service.calls[0][2]
    assert (request.content, request.memory_type, request.category, request.tags, request.scope) == (
        "x fact",
        "pattern",
        "decision",
        ("a", "b"),
        "project",
    )


async def test_list_defaults_to_twenty(out, err) -> None:
    service = RecordingService()
    await layer(service, out, err).call("list_memories", {}, ACME)
    assert service.calls == [("list", ACME, ListRequest(memory_type=None, limit=20))]


async def test_a_limit_of_three_point_zero_counts_as_an_integer(out, err) -> None:
    service = RecordingService()
    await layer(service, out, err).call("recall", {"query": "q", "limit": 3.0}, ACME)
    assert service.calls[0][2].limit == 3


async def test_null_arguments_mean_absent(out, err) -> None:
    service = RecordingService()
    await layer(service, out, err).call(
        "remember", {"content": "c fact", "scope": None, "type": None, "category": None, "tags": None}, ACME
    )
    assert service.calls[0][2].scope == "project"


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("recall", {"query": "q", "mode": "fast"}, "`mode` must be precision, balanced or exploratory."),
        ("recall", {"mode": "fast"}, "`mode` must be precision, balanced or exploratory."),
        ("recall", {}, "`query` is required and must be a non-empty string."),
        ("recall", {"query": "   "}, "`query` is required and must be a non-empty string."),
        ("recall", {"query": 7}, "`query` must be a string, not a number."),
        ("recall", {"query": "q", "limit": 0}, "`limit` must be an integer between 1 and 50."),
        ("recall", {"query": "q", "limit": -1}, "`limit` must be an integer between 1 and 50."),
        ("recall", {"query": "q", "limit": 51}, "`limit` must be an integer between 1 and 50."),
        ("recall", {"query": "q", "limit": 1.5}, "`limit` must be an integer between 1 and 50."),
        ("recall", {"query": "q", "limit": "3"}, "`limit` must be an integer between 1 and 50."),
        ("recall", {"query": "q", "limit": True}, "`limit` must be an integer between 1 and 50."),
        ("list_memories", {"type": "note"}, "`type` must be one of: project, pattern, reference, conversation."),
        ("list_memories", {"limit": 0}, "`limit` must be an integer between 1 and 50."),
        ("remember", {}, "`content` is required and must be a non-empty string."),
        ("remember", {"content": 42}, "`content` must be a string, not a number."),
        ("remember", {"content": ["a fact"]}, "`content` must be a string, not an array."),
        ("forget", {"id": True}, "`id` must be a string, not true or false."),
        ("remember", {"content": "c", "scope": "team"}, "`scope` must be one of: project, conversation."),
        (
            "remember",
            {"content": "c", "type": "note"},
            "`type` must be one of: project, pattern, reference, conversation.",
        ),
        ("remember", {"content": "c", "category": 5}, "`category` must be a string."),
        ("remember", {"content": "c", "tags": "a,b"}, "`tags` must be an array of strings."),
        ("remember", {"content": "c", "tags": ["a", 1]}, "`tags` must be an array of strings."),
        ("remember", {"content": "c", "tags": [f"t{i}" for i in range(21)]}, "`tags` may hold at most 20 entries."),
        ("forget", {}, "`id` is required and must be a non-empty string."),
        (
            "recall",
            {"query": "q" * 32_001},
            "`query` is 32001 bytes; a query may be at most 32000, as long as a memory can be. "
            "Ask with the part that matters.",
        ),
        (
            "recall",
            {"query": "회" * 10_667},
            "`query` is 32001 bytes; a query may be at most 32000, as long as a memory can be. "
            "Ask with the part that matters.",
        ),
        (
            "forget",
            {"id": "01HZX" + "A" * 5_000},
            "`id` is 5005 characters long; a memory id is 26 characters (as recall and list_memories show it).",
        ),
    ],
)
async def test_bad_arguments_are_refused_naming_the_field(out, err, tool, args, message) -> None:
    service = RecordingService()
    result = await layer(service, out, err).call(tool, args, ACME)
    assert result.is_error
    assert result.text == f"Error: {message}"
    assert service.calls == []
    assert err.getvalue() == ""  # a refusal is not an error in the logs


async def test_the_mode_is_checked_before_the_query(out, err) -> None:
    result = await layer(RecordingService(), out, err).call("recall", {"query": "", "mode": "x"}, ACME)
    assert "`mode`" in result.text


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("recall", {"mode": "x", "query": " ", "limit": 0}, "`mode`"),
        ("recall", {"query": " ", "limit": 0}, "`query`"),
        ("remember", {"content": " ", "category": "c" * 200, "type": "x"}, "`content`"),
        ("remember", {"content": "c" * 32_001, "category": "c" * 200}, "32000"),
        ("remember", {"content": "c", "category": "c" * 200, "scope": "x", "type": "x"}, "`category`"),
        ("remember", {"content": "c", "scope": "conversation", "type": "x", "tags": "x"}, "X-Conversation-Id"),
        ("remember", {"content": "c", "type": "x", "tags": "x"}, "`type`"),
        ("list_memories", {"type": "x", "limit": 0}, "`type`"),
    ],
)
async def test_when_several_arguments_are_wrong_the_documented_first_one_is_named(
    out, err, tool: str, arguments: dict[str, Any], named: str
) -> None:
    """docs/tools.md: recall checks mode, query, limit; remember content, its size, category,
    scope (and the conversation it needs), type, tags; list_memories type then limit."""
    service = RecordingService()
    result = await layer(service, out, err).call(tool, arguments, ACME)
    assert result.is_error and named in result.text, result.text
    assert service.calls == []


async def test_content_over_32000_bytes_is_refused_in_bytes_even_when_short_in_characters(out, err) -> None:
    service = RecordingService()
    korean = "한" * (32_000 // 3 + 1)
    result = await layer(service, out, err).call("remember", {"content": korean}, ACME)
    assert result.is_error and "bytes" in result.text and "32000" in result.text
    assert service.calls == []


async def test_content_of_exactly_32000_bytes_is_accepted(out, err) -> None:
    service = RecordingService()
    result = await layer(service, out, err).call("remember", {"content": "a" * 32_000}, ACME)
    assert not result.is_error


async def test_a_category_over_128_bytes_is_refused(out, err) -> None:
    result = await layer(RecordingService(), out, err).call("remember", {"content": "c", "category": "é" * 65}, ACME)
    assert result.is_error and "`category` may be at most" in result.text


async def test_a_category_is_measured_in_bytes_before_it_is_trimmed(out, err) -> None:
    """docs/tools.md: "a string of at most 128 bytes, measured before trimming"."""
    tools = layer(RecordingService(), out, err)
    assert not (await tools.call("remember", {"content": "c", "category": "é" * 64}, ACME)).is_error  # 128 bytes
    padded = " " + "x" * 127 + " "  # 127 bytes once trimmed, 129 as sent
    refused = await tools.call("remember", {"content": "c", "category": padded}, ACME)
    assert refused.is_error and "`category` may be at most 128 bytes" in refused.text


async def test_a_long_tag_is_refused_quoting_its_start(out, err) -> None:
    tag = "x" * 65
    result = await layer(RecordingService(), out, err).call("remember", {"content": "c", "tags": [tag]}, ACME)
    assert result.is_error and "each tag may be at most 64 bytes" in result.text
    assert f'"{"x" * 30}…"' in result.text


async def test_conversation_scope_without_a_conversation_names_the_header_and_writes_nothing(out, err) -> None:
    service = RecordingService()
    result = await layer(service, out, err).call("remember", {"content": "c", "scope": "conversation"}, ACME)
    assert result.is_error and "X-Conversation-Id" in result.text
    assert service.calls == []


async def test_an_unknown_tool_is_an_error_result(out, err) -> None:
    result = await layer(RecordingService(), out, err).call("search_docs", {"query": "q"}, ACME)
    assert result.is_error and result.text == 'Error: unknown tool "search_docs".'


# --------------------------------------------------------------------------- failures and logs


async def test_a_storage_failure_is_an_error_result_and_an_error_log_line(out, err) -> None:
    service = RecordingService(fail=OSError("disk I/O error"))
    result = await layer(service, out, err).call("recall", {"query": "q"}, ACME)
    assert result.is_error
    assert result.text == "Error: the memory store could not complete this request — disk I/O error"
    [failure] = lines(err)
    assert failure == {
        "level": "error",
        "event": "tool_failed",
        "message": "disk I/O error",
        "type": "OSError",
        "tenant": "acme",
        "tool": "recall",
    }


async def test_every_call_writes_one_tool_call_line(out, err) -> None:
    tools = layer(RecordingService(), out, err)
    await tools.call("recall", {"query": "q"}, THREAD)
    await tools.call("recall", {"query": ""}, ACME)
    records = lines(out)
    assert len(records) == 2
    first, second = records
    assert set(first) == {"level", "event", "tenant", "tool", "ms", "ok", "inConversation"}
    assert first["level"] == "info" and first["event"] == "tool_call"
    assert first["tenant"] == "acme" and first["tool"] == "recall" and first["ok"] is True
    assert first["inConversation"] is True and isinstance(first["ms"], int)
    assert second["ok"] is False and second["inConversation"] is False


async def test_no_log_line_carries_content_queries_tags_or_conversation_ids(env: Env, out, err) -> None:
    tools = ToolLayer(env.service, JsonLog(out, err))
    caller = Caller("acme", "chat:secret-thread")
    await tools.call("remember", {"content": "the secret is 42", "tags": ["secret-tag"], "category": "secret"}, caller)
    await tools.call("recall", {"query": "what is the secret"}, caller)
    await tools.call("remember", {"content": "x" * 40_000 + "secret"}, caller)
    logged = out.getvalue() + err.getvalue()
    assert logged.count("tool_call") == 3
    assert "secret" not in logged


async def test_the_real_service_answers_through_the_tools(env: Env, out, err) -> None:
    tools = ToolLayer(env.service, JsonLog(out, err))
    stored = await tools.call(
        "remember", {"content": "Rolling deploys drain in-flight streams before the pod exits"}, ACME
    )
    recalled = await tools.call("recall", {"query": "Rolling deploys drain in-flight streams before the pod"}, ACME)
    stats = await tools.call("memory_stats", {}, ACME)
    assert stored.text.startswith("[MEMORY] Stored as ")
    assert recalled.text.startswith("[MEMORY] 1 memory matched")
    assert stats.text == "[MEMORY] 1 memory for this project (project: 1)."


async def test_a_failure_quoting_the_conversation_id_shows_it_neither_in_the_result_nor_in_the_log(out, err) -> None:
    # e.g. a store refusing a query filter and quoting it, conversation value and all
    conversation = "chat:thread-7f3a9c2e"
    service = RecordingService(fail=OSError(f"invalid filter {{'conversation': {{'$eq': '{conversation}'}}}}"))
    caller = Caller("acme", conversation)
    result = await layer(service, out, err).call("recall", {"query": "q"}, caller)
    assert result.is_error and result.text.startswith("Error: the memory store could not complete this request")
    assert "invalid filter" in result.text  # the reason stays
    assert "7f3a9c2e" not in result.text
    assert "7f3a9c2e" not in out.getvalue() + err.getvalue()


@pytest.mark.parametrize("memory_id", ["01HZX0000000000000000000AB", "not-an-id", "x" * 26])
async def test_forget_answers_an_id_of_at_most_26_characters_as_before(out, err, memory_id: str) -> None:
    service = RecordingService()
    result = await layer(service, out, err).call("forget", {"id": memory_id}, ACME)
    assert result.text == f"[MEMORY] No memory with id {memory_id} exists for this project. Nothing was deleted."
    assert service.calls == [("forget", ACME, ForgetRequest(memory_id))]


async def test_a_query_of_exactly_32000_bytes_is_passed_on_untouched(out, err) -> None:
    service = RecordingService()
    query = ("deploy \r\n" * 3556)[:32_000]
    result = await layer(service, out, err).call("recall", {"query": query}, ACME)
    assert not result.is_error, result.text
    assert service.calls == [("recall", ACME, RecallRequest(query))]
