"""A real Claude Code session (its CLI in print mode) with the plugin installed as the README says,
against a fake Anthropic Messages API on 127.0.0.1 that records every request: memories stored in
an earlier session reach the model's first request, at start and on a related prompt, without a
tool call (docs/hooks.md#a-session-end-to-end)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.conftest import ROOT

ANSWER = "Run ops/deploy.sh with --dry-run first."
REFUND_RULE = "Partial refunds must call ledger.reverse_entry(); finance reconciles on reverse entries only"
DEPLOY = "The deploy script lives in ops/deploy.sh and must run with --dry-run first"
#: Unrelated notes stored after it: the digest (budget 300) shows the newest, so the deploy note
#: can only reach the model through the prompt hook.
FILLER = [
    f"Team lunch rota note {n}: the {colour} team books the room on floor {n} for Thursday sessions"
    for n, colour in enumerate(["red", "blue", "green", "amber", "violet", "teal", "grey", "pink"], 1)
]
SESSION_SECONDS = 120


class FakeMessages:
    """POST /v1/messages answered with one text block (SSE when asked to stream), every body kept."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.bodies.append(body)
        message = {
            "id": f"msg_{len(self.bodies)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        if not body.get("stream"):
            done = {**message, "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn"}
            return web.json_response(done)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ANSWER}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 9},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        for name, data in events:
            await response.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        await response.write_eof()
        return response

    async def _count(self, request: web.Request) -> web.Response:
        return web.json_response({"input_tokens": 10})

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/count_tokens", self._count)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def __enter__(self) -> FakeMessages:
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *_: object) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def turns(self) -> list[dict[str, Any]]:
        """The main loop's requests (those offering tools), in order."""
        return [b for b in self.bodies if b.get("tools")]


def texts(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body["messages"]:
        content = message["content"]
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if part.get("type") == "text":
                parts.append(part["text"])
    return "\n".join(parts)


def tool_uses(body: dict[str, Any]) -> list[Any]:
    return [
        part
        for message in body["messages"]
        if not isinstance(message["content"], str)
        for part in message["content"]
        if part.get("type") in ("tool_use", "tool_result")
    ]


def install(home: Path, claude_code: str) -> dict[str, str]:
    """The plugin installed into a scratch HOME as the README says; the session's environment."""
    (home / "project").mkdir(parents=True)
    bin_dir = str(Path(sys.executable).parent)  # where this environment's mcp-memory is
    env = {
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_DATA_HOME": str(home / "data"),
        "MEMORY_DB_PATH": str(home / "memory.db"),
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "MEMORY_HOOK_BUDGET": "300",
        "LANG": "C.UTF-8",
    }
    command = [claude_code, "plugin", "install", "mcp-memory", "--marketplace", str(ROOT), "--config", "tenant=acme"]
    # The install talks to the fake API as the sessions do: with an API key and Anthropic's own API,
    # Claude Code first looks api.anthropic.com up, and where that name does not resolve (CI) it
    # retries for about 19 s before installing the same plugin.
    with FakeMessages() as fake:
        api = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{fake.port}"}
        done = subprocess.run(command, env=env | api, capture_output=True, text=True, cwd=home / "project", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, claude_code: str) -> Iterator[dict[str, str]]:
    env = install(tmp_path_factory.mktemp("claude-home"), claude_code)
    asyncio.run(remember(env, [DEPLOY, *FILLER]))  # the earlier session
    yield {**env, "CLAUDE_CODE_BIN": claude_code}  # session() takes it out of Claude Code's environment


def session(env: dict[str, str], prompt: str, debug: Path | None = None) -> tuple[FakeMessages, str]:
    with FakeMessages() as fake:
        run_env = {**env, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{fake.port}"}
        claude = run_env.pop("CLAUDE_CODE_BIN")
        cwd = Path(env["HOME"]) / "project"
        command = [claude, "-p", prompt] + (["--debug-file", str(debug)] if debug else [])
        done = subprocess.run(command, env=run_env, capture_output=True, text=True, cwd=cwd, timeout=SESSION_SECONDS)
        assert done.returncode == 0, done.stdout + done.stderr
        return fake, done.stdout


def test_a_fresh_session_starts_with_the_digest_and_a_related_prompt_brings_the_earlier_memory(
    installed: dict[str, str], tmp_path: Path
) -> None:
    debug = tmp_path / "debug.log"
    fake, shown = session(installed, "How do I run the deploy script?", debug)
    assert shown.strip() == ANSWER
    first = fake.turns()[0]
    seen = texts(first)
    assert "[MEMORY] What this project remembers:" in seen
    assert FILLER[-1] in seen  # the newest memory, in the digest
    assert "[MEMORY] 1 memory stored earlier matches this prompt." in seen
    assert DEPLOY in seen and "quoted as data" in seen
    assert tool_uses(first) == [] and len(fake.turns()) == 1  # no tool call was needed
    # the prompt's memory came from the plugin's mcp_tool hook, a call to serve-stdio's tool
    log = debug.read_text(encoding="utf-8")
    assert "mcp_tool calling plugin:mcp-memory:memory/claude_code_hook" in log
    assert "Hook UserPromptSubmit (plugin:mcp-memory:memory/claude_code_hook) provided additionalContext" in log


async def remember(env: dict[str, str], contents: list[str]) -> None:
    """Each of `contents` stored for the tenant acme in the store of `env` (MEMORY_DB_PATH), in this
    order, as `mcp-memory remember --tenant acme` stores it (the same service), through one opening
    of the store: a command each opened the store and loaded the model again."""
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    service = await open_service(Settings.from_env(env))
    try:
        for content in contents:
            await service.remember(Caller("acme"), content)
    finally:
        await service.close()


async def store_rule_under_newer_notes(env: dict[str, str]) -> None:
    """The rule, then enough newer notes that the digest (budget 300) is full without it: it can
    reach the model only through the tool hook."""
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    service = await open_service(Settings.from_env(env))
    try:
        await service.remember(Caller("acme"), REFUND_RULE, tags=["path:billing/refund.py"])
        for n in range(1, 17):
            note = f"Parking note {n}: visitors park in garage {n} on level {n % 4} after {n % 5 + 5} pm"
            await service.remember(Caller("acme"), note)
    finally:
        await service.close()


def test_a_read_of_a_file_a_memory_is_tagged_for_brings_it_through_the_mcp_tool_hook_before_the_next_turn(
    installed: dict[str, str], tmp_path: Path
) -> None:
    # the module's install (one `claude plugin install` per worker, not two), its store a fresh one of
    # this test's: the plugin's server and hooks read MEMORY_DB_PATH from the session's environment
    installed = {**installed, "MEMORY_DB_PATH": str(tmp_path / "memory.db")}
    from bench.harness.fake_model import Call, FakeModel
    from bench.harness.fake_model import texts as request_texts

    project = Path(installed["HOME"]) / "project"
    target = project / "services" / "billing" / "refund.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("def refund():\n    pass\n", encoding="utf-8")
    asyncio.run(store_rule_under_newer_notes(installed))
    debug = tmp_path / "debug.log"
    with FakeModel([Call("Read", {"file_path": str(target)})]) as fake:
        run_env = {**installed, "ANTHROPIC_BASE_URL": fake.url}
        claude = run_env.pop("CLAUDE_CODE_BIN")
        command = [claude, "-p", "Tidy up the code", "--allowedTools", "Read", "--debug-file", str(debug)]
        done = subprocess.run(
            command, env=run_env, capture_output=True, text=True, cwd=project, timeout=SESSION_SECONDS
        )
        assert done.returncode == 0, done.stdout + done.stderr
        turns = [turn.body for turn in fake.turns]
    assert len(turns) == 2 and REFUND_RULE not in request_texts(turns[0])  # not before the call
    after = request_texts(turns[1])
    assert "PreToolUse:Read hook additional context: [MEMORY] 1 memory stored earlier concerns this file." in after
    assert REFUND_RULE in after
    assert "Hook PreToolUse (plugin:mcp-memory:memory/claude_code_hook) provided additionalContext" in (
        debug.read_text(encoding="utf-8")
    )


def test_a_prompt_unrelated_to_any_memory_brings_nothing_but_the_digest(installed: dict[str, str]) -> None:
    fake, _ = session(installed, "Write a haiku about the sea.")
    seen = texts(fake.turns()[0])
    assert "[MEMORY] What this project remembers:" in seen
    assert "matches this prompt" not in seen  # the digest may hold any memory; no prompt block
