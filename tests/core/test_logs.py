"""One JSON line per event; nothing private reaches a log (docs/operations.md, docs/context.md)."""

from __future__ import annotations

import io
import json

import pytest

from mcp_memory.core.errors import ConfigError, EmbeddingError
from mcp_memory.core.logs import JsonLog, NullLog


@pytest.fixture
def streams() -> tuple[io.StringIO, io.StringIO]:
    return io.StringIO(), io.StringIO()


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    text = stream.getvalue()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_an_info_event_is_one_json_line_on_stdout(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    JsonLog(out, err).info("tool_call", tool="recall", tenant="acme", ok=True, ms=12)
    assert lines(out) == [
        {"level": "info", "event": "tool_call", "tool": "recall", "tenant": "acme", "ok": True, "ms": 12}
    ]
    assert err.getvalue() == ""


def test_an_error_goes_to_stderr_with_its_message(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    JsonLog(out, err).error("stats_flush_failed", EmbeddingError("embedding service answered 401"), tenant="acme")
    assert lines(err) == [
        {"level": "error", "event": "stats_flush_failed", "message": "embedding service answered 401", "tenant": "acme"}
    ]
    assert out.getvalue() == ""


def test_a_foreign_exception_is_logged_with_its_type(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    JsonLog(out, err).error("tool_failed", TimeoutError("read timed out"), tool="recall")
    (record,) = lines(err)
    assert record["message"] == "read timed out"
    assert record["type"] == "TimeoutError"


def test_our_own_errors_and_plain_messages_carry_no_type(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    log = JsonLog(out, err)
    log.error("tool_failed", ConfigError("PORT must be an integer"))
    log.error("tool_failed", "something went wrong")
    assert [("type" in r, r["message"]) for r in lines(err)] == [
        (False, "PORT must be an integer"),
        (False, "something went wrong"),
    ]


def test_a_warning_goes_to_stderr(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    JsonLog(out, err).warn("auth_open", "MCP_API_KEY is not set; the server answers ANY caller")
    assert lines(err) == [
        {"level": "warn", "event": "auth_open", "message": "MCP_API_KEY is not set; the server answers ANY caller"}
    ]
    assert out.getvalue() == ""


def test_private_context_never_reaches_a_log_line(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    log = JsonLog(out, err)
    private = {
        "query": "what is the db password",
        "content": "the db password is hunter2",
        "conversation": "slack:C1:1723.45",
        "tags": ["secret"],
        "embedding": [0.1, 0.2],
    }
    log.info("tool_call", tool="remember", tenant="acme", inConversation=True, **private)
    log.error("tool_failed", RuntimeError("boom"), tool="remember", **private)
    assert lines(out) == [
        {"level": "info", "event": "tool_call", "tool": "remember", "tenant": "acme", "inConversation": True}
    ]
    (record,) = lines(err)
    assert set(record) == {"level", "event", "message", "type", "tool"}
    for text in (out.getvalue(), err.getvalue()):
        assert "hunter2" not in text
        assert "slack:C1" not in text
        assert "password" not in text


def test_context_left_unset_is_not_written(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    JsonLog(out, err).info("tool_call", tool="recall", tenant=None)
    assert lines(out) == [{"level": "info", "event": "tool_call", "tool": "recall"}]


def test_under_stdio_even_info_lines_go_to_stderr(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    log = JsonLog(out, err, stdio=True)
    log.info("tool_call", tool="recall")
    log.error("tool_failed", ValueError("bad"))
    assert out.getvalue() == ""
    assert [r["level"] for r in lines(err)] == ["info", "error"]


def test_every_event_is_exactly_one_line_even_with_newlines_in_the_message(
    streams: tuple[io.StringIO, io.StringIO],
) -> None:
    out, err = streams
    log = JsonLog(out, err)
    for n in range(3):
        log.info("tool_call", tool="recall", ms=n)
    log.error("tool_failed", ValueError("line one\nline two"))
    assert len(out.getvalue().splitlines()) == 3
    assert [r["ms"] for r in lines(out)] == [0, 1, 2]
    assert len(err.getvalue().splitlines()) == 1
    assert lines(err)[0]["message"] == "line one\nline two"


def test_non_ascii_text_is_written_as_is(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    JsonLog(out, err).error("tool_failed", "저장소에 연결할 수 없습니다")
    assert "저장소" in err.getvalue()


def test_streams_are_looked_up_when_a_line_is_written(capsys: pytest.CaptureFixture[str]) -> None:
    log = JsonLog()
    log.info("tool_call", tool="recall")
    log.error("tool_failed", "bad")
    captured = capsys.readouterr()
    assert json.loads(captured.out)["event"] == "tool_call"
    assert json.loads(captured.err)["event"] == "tool_failed"


def test_a_closed_stream_never_breaks_the_caller() -> None:
    out = io.StringIO()
    out.close()
    JsonLog(out, io.StringIO()).info("tool_call", tool="recall")


def test_the_null_log_writes_nothing(streams: tuple[io.StringIO, io.StringIO]) -> None:
    out, err = streams
    log = NullLog(out, err)
    log.info("tool_call", tool="recall")
    log.error("tool_failed", ValueError("bad"))
    assert out.getvalue() == err.getvalue() == ""
