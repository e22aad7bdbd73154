"""An embedding server that quotes its input in its errors (400 and 500 validation
errors often do): neither the memory content nor the query reaches a log line, a
tool result or the CLI's output, whole, in pieces, JSON-escaped or cut off; the
status and the server's reason still do."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import ROOT
from tests.support.standins import OpenAIStandIn

CONTENT = 'Deploys drain "in-flight" streams\nbefore the pod exits — café 日本語 rule #7'
QUERY = "how do rolling deploys treat in-flight streams?"
PIECE = 8  # what counts as a long piece of the input (core/echo.py TEXT_PIECE)


def spelled(value: str) -> list[str]:
    return [value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], " ".join(value.split())]


def leaked(output: str, value: str) -> list[str]:
    """Every piece of `value` (PIECE characters or more, in any spelling) found in `output`."""
    found = []
    low = output.lower()
    for form in spelled(value):
        for start in range(len(form) - PIECE + 1):
            piece = form[start : start + PIECE].lower()
            if piece in low:
                found.append(piece)
    return found


class EchoingServer(OpenAIStandIn):
    """Answers every request with `status`, quoting the input the way `style` says.

    A 5xx also says `Retry-After: 0`: the embedder still makes its three attempts and reports
    the last answer, without the backoff between them (about 1 s per call; the backoff is
    tests/embedders/test_openai.py's to test, and not what these tests are about)."""

    def __init__(self) -> None:
        super().__init__(dim=8)
        self.status = 400
        self.style = "truncated"

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        text = body["input"] if isinstance(body["input"], str) else body["input"][0]
        if self.style == "truncated":  # a message cut off in the middle of the input
            answer = json.dumps({"error": {"message": f"input too long: {text[:40]}…", "type": "invalid_request"}})
        elif self.style == "request":  # the whole request body, JSON-escaped inside JSON
            answer = json.dumps({"detail": f"Internal error while processing {json.dumps(body)}"})
        elif self.style == "collapsed":  # the input with its line breaks and runs of spaces folded
            answer = json.dumps({"error": f"rejected input <{' '.join(text.split())}> (policy)"})
        else:  # plain text, upper-cased by a shouting server
            answer = f"VALIDATION FAILED FOR {text.upper()}"
        headers = {"Retry-After": "0"} if self.status >= 500 else {}
        return web.Response(status=self.status, text=answer, content_type="application/json", headers=headers)


@pytest.fixture
async def echoing() -> AsyncIterator[EchoingServer]:
    server = EchoingServer()
    await server.start()
    yield server
    await server.stop()


def env_for(server: EchoingServer, tmp_path: Path) -> dict[str, str]:
    return {
        "MEMORY_DB_PATH": str(tmp_path / "m.db"),
        "EMBEDDING_PROVIDER": "openai",
        "EMBEDDING_BASE_URL": f"http://127.0.0.1:{server.port}/v1",
        "EMBEDDING_API_KEY": "sk-test-key",
        "EMBEDDING_DIM": "8",
        "MEMORY_TENANT": "acme",
    }


@pytest.mark.parametrize("status", [400, 500])
@pytest.mark.parametrize("style", ["truncated", "request", "shouted", "collapsed"])
async def test_no_log_line_or_tool_text_carries_the_content_or_the_query(
    echoing: EchoingServer, tmp_path: Path, status: int, style: str
) -> None:
    echoing.status, echoing.style = status, style
    service = await open_service(Settings.from_env(env_for(echoing, tmp_path)))
    out, err = io.StringIO(), io.StringIO()
    tools = ToolLayer(service, JsonLog(out, err))
    try:
        remembered = await tools.call("remember", {"content": CONTENT, "tags": ["ops"]}, Caller("acme"))
        recalled = await tools.call("recall", {"query": QUERY}, Caller("acme"))
    finally:
        await service.close()
    assert len(echoing.received) == (6 if status >= 500 else 2)  # a 5xx is tried three times, a 400 once
    for result in (remembered, recalled):
        assert result.is_error
        assert result.text.startswith(
            f"Error: the memory store could not complete this request — the embedding service answered {status}: "
        )
    if style == "truncated":
        assert "input too long" in remembered.text  # the reason survives
    logged = out.getvalue() + err.getvalue()
    assert logged.count('"event":"tool_failed"') == 2
    for output in (remembered.text, recalled.text, logged):
        assert leaked(output, CONTENT) == []
        assert leaked(output, QUERY) == []


@pytest.mark.parametrize("status", [400, 500])
async def test_the_cli_never_prints_the_content_or_the_query(
    echoing: EchoingServer, tmp_path: Path, status: int
) -> None:
    echoing.status, echoing.style = status, "request"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update(env_for(echoing, tmp_path), PYTHONPATH=str(ROOT), COLUMNS="200")
    outputs = []
    for args in (["remember", CONTENT], ["recall", QUERY]):
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mcp_memory", *args, env=env, cwd=str(ROOT),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
        assert process.returncode == 1
        printed = stdout.decode() + stderr.decode()
        assert f"the embedding service answered {status}" in printed
        outputs.append(printed)
    for printed in outputs:
        assert leaked(printed, CONTENT) == []
        assert leaked(printed, QUERY) == []


async def test_the_scrub_only_takes_out_the_input_not_the_reason() -> None:
    from mcp_memory.core.echo import strip_echoes

    message = f'the embedding service answered 400: {{"error": "input too long: {CONTENT[:30]}…"}}'
    assert strip_echoes(message, [CONTENT]) == (
        'the embedding service answered 400: {"error": "input too long: <input>…"}'
    )
