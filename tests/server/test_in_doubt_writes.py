"""A remember whose write committed but whose answer was lost (a connection dropped while the
store committed: PostgreSQL during a restart) is answered as an error that says a retry is safe,
and the retry with the same content lands on the memory already stored: one memory, one id."""

from __future__ import annotations

import io
import re

import pytest

from mcp_memory.core.errors import StoreError
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import IN_DOUBT, ToolLayer
from tests.conftest import Clock, open_env

ACME = Caller("acme")
CONTENT = "The staging database is rebuilt from the nightly snapshot every Sunday at 02:00 UTC"


def commit_then_fail(store, name: str) -> None:
    """The write commits, then the answer is lost, as when the connection drops during COMMIT."""
    original = getattr(store, name)
    calls = {"n": 0}

    async def write(*args, **kwargs):
        await original(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 1:
            raise StoreError(
                "lost the connection to PostgreSQL at db:5432 during put memory: server closed the connection"
            )

    setattr(store, name, write)


async def test_a_retry_after_an_in_doubt_write_lands_on_the_memory_already_stored(
    backend: str, clock: Clock, request: pytest.FixtureRequest
) -> None:
    env = await open_env(backend, clock, request)
    for name in ("put", "put_with_index"):
        if hasattr(env.vectors, name):
            commit_then_fail(env.vectors, name)
    tools = ToolLayer(env.service, JsonLog(io.StringIO(), io.StringIO()))
    try:
        failed = await tools.call("remember", {"content": CONTENT, "tags": ["ops"]}, ACME)
        assert failed.is_error
        assert failed.text.startswith("Error: the memory store could not complete this request — lost the connection")
        assert failed.text.endswith(IN_DOUBT)
        retried = await tools.call("remember", {"content": CONTENT, "tags": ["ops"]}, ACME)
        assert not retried.is_error, retried.text
        assert retried.text.startswith("[MEMORY] Already known — an existing memory already says this")
        assert await env.memory_count() == 1
        stored_id = re.search(r"\[id:([0-9A-Z]{26})", retried.text)
        assert stored_id is not None, retried.text
        listed = (await tools.call("list_memories", {}, ACME)).text
        assert listed.startswith("[MEMORY] 1 memory, newest first.")
        assert stored_id.group(1) in listed
    finally:
        await env.service.close()


async def test_an_embedding_failure_does_not_claim_the_memory_may_be_stored(clock: Clock) -> None:
    from mcp_memory.core.errors import EmbeddingError
    from tests.conftest import make_env

    env = make_env(clock)

    async def broken(texts):
        raise EmbeddingError("the embedding service did not answer within 10 s")

    env.service.embedder.embed = broken  # type: ignore[method-assign]
    failed = await ToolLayer(env.service, JsonLog(io.StringIO(), io.StringIO())).call(
        "remember", {"content": CONTENT}, ACME
    )
    assert failed.is_error and IN_DOUBT not in failed.text
