"""When the local model fails, its error text carries nothing of what it was given: not the
message, not the exception chain a traceback would print, not a log line, not the tool result.

The tokenizer and onnxruntime are third-party code whose errors may quote their input (a
tokenizer refusing "<the text>", a runtime dumping its feeds); the failures here are forced
with exactly such messages, holding a distinctive marker, on the real loaded model.
"""

from __future__ import annotations

import asyncio
import io
import logging
import traceback
from collections.abc import Iterator

import pytest

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.errors import EmbeddingError
from mcp_memory.core.logs import JsonLog, NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.embedders.local.embedder import LocalEmbedder
from mcp_memory.server.protocol.tools import ToolLayer
from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore

MARKER = "zq-secret-deploy-7731"
CONTENT = f"The {MARKER} runbook says: drain the queue before 서버를 재시작 at 03:00 UTC"
QUERY = f"what does the {MARKER} runbook say about restarts?"


class QuotingTokenizer:
    """A tokenizer that refuses every batch, quoting it the way library errors do."""

    def encode_batch(self, texts: list[str]) -> object:
        raise ValueError(f"cannot split input {texts!r}: {texts[0]}")


class QuotingSession:
    """An onnxruntime session whose run fails, quoting what it was fed."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def run(self, names: list[str], feeds: dict[str, object]) -> object:
        raise RuntimeError(f"[ONNXRuntimeError] invalid feeds for {self.texts}: {feeds}")


@pytest.fixture
def loaded(local_embedder: LocalEmbedder) -> Iterator[LocalEmbedder]:
    asyncio.run(local_embedder.warm_up())
    yield local_embedder


def everything_said(error: BaseException) -> str:
    """What a user, a log line or a traceback could ever show of `error`."""
    return str(error) + repr(error) + "".join(traceback.format_exception(error))


def assert_no_marker(*outputs: str) -> None:
    for output in outputs:
        assert MARKER not in output and MARKER.upper() not in output
        assert "서버를" not in output


@pytest.mark.parametrize("texts", [[CONTENT], [CONTENT] * 40], ids=["one call", "bulk batches"])
def test_a_tokenizer_error_quoting_the_text_reaches_no_error_text_or_log(
    loaded: LocalEmbedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, texts: list[str]
) -> None:
    monkeypatch.setattr(loaded._runtime, "tokenizer", QuotingTokenizer())
    with caplog.at_level(logging.DEBUG), pytest.raises(EmbeddingError) as refused:
        asyncio.run(loaded.embed(texts))
    assert str(refused.value) == "the local tokenizer could not split the text (ValueError)"
    assert_no_marker(everything_said(refused.value), caplog.text)


def test_a_model_run_error_quoting_its_feeds_reaches_no_error_text_or_log(
    loaded: LocalEmbedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(loaded._runtime, "session", QuotingSession([CONTENT]))
    with caplog.at_level(logging.DEBUG), pytest.raises(EmbeddingError) as refused:
        asyncio.run(loaded.embed([CONTENT]))
    assert "the local embedding model failed to run (RuntimeError)" in str(refused.value)
    assert_no_marker(everything_said(refused.value), caplog.text)


def test_an_embedding_error_that_quotes_the_text_has_the_text_replaced_by_a_marker(
    loaded: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last line of defence: whatever inside the local embedder words an error with the
    text itself, the caller gets the reason with `<input>` where the text was."""

    def tokenize(texts: list[str]) -> object:
        raise EmbeddingError(f"token limit exceeded by {texts[0]!r} (model window 256)")

    monkeypatch.setattr(loaded._runtime, "tokenize", tokenize)
    with pytest.raises(EmbeddingError) as refused:
        asyncio.run(loaded.embed([CONTENT]))
    assert str(refused.value).startswith("token limit exceeded by '<input>")
    assert str(refused.value).endswith("(model window 256)")
    assert_no_marker(everything_said(refused.value))


def test_concurrent_calls_batched_together_get_only_their_own_failure(
    loaded: LocalEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Micro-batching joins calls into one model run; a failure quoting the joint batch must not
    hand one caller's text to another, so the failing caller's error carries neither."""
    other = "Backups are verified every Sunday by restoring into a scratch database"

    class Picky(QuotingTokenizer):
        def __init__(self, real: object) -> None:
            self.real = real

        def encode_batch(self, texts: list[str]) -> object:
            if any(MARKER in t for t in texts):
                raise ValueError(f"refused batch {texts}")
            return self.real.encode_batch(texts)  # type: ignore[attr-defined]

    monkeypatch.setattr(loaded._runtime, "tokenizer", Picky(loaded._runtime.tokenizer))

    async def both() -> list[object]:
        return await asyncio.gather(*(loaded.embed([t]) for t in (other, CONTENT, other)), return_exceptions=True)

    first, failed, third = asyncio.run(both())
    assert isinstance(failed, EmbeddingError) and not isinstance(first, BaseException)
    assert not isinstance(third, BaseException)
    assert "Backups are verified" not in everything_said(failed)
    assert_no_marker(everything_said(failed))


def test_through_the_tools_a_failing_local_model_leaks_nothing_to_the_result_or_the_log(
    loaded: LocalEmbedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(loaded._runtime, "tokenizer", QuotingTokenizer())
    objects = InMemoryObjectStore()
    counters = AccessCounters(objects, pod_id="test-pod", log=NullLog())
    service = MemoryService(InMemoryVectorStore(), objects, loaded, counters)
    out, err = io.StringIO(), io.StringIO()
    tools = ToolLayer(service, JsonLog(out, err))
    caller = Caller("acme", f"chat:{MARKER}")

    async def calls() -> list[object]:
        return [
            await tools.call("remember", {"content": CONTENT, "tags": [MARKER]}, caller),
            await tools.call("recall", {"query": QUERY}, caller),
        ]

    with caplog.at_level(logging.DEBUG):
        results = asyncio.run(calls())
    logged = out.getvalue() + err.getvalue()
    assert logged.count('"event":"tool_failed"') == 2 and logged.count('"event":"tool_call"') == 2
    for result in results:
        assert result.is_error  # type: ignore[attr-defined]
        assert "the local tokenizer could not split the text (ValueError)" in result.text  # type: ignore[attr-defined]
        assert_no_marker(result.text)  # type: ignore[attr-defined]
    assert_no_marker(logged, caplog.text)
