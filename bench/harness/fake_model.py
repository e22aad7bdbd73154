"""A fake Anthropic Messages API on 127.0.0.1 that plays a scripted agent: each request of
Claude Code's main loop (one offering tools) is answered with the script's next tool call, and
with a short text once the script is done; every request body is kept, with the time it came.

Claude Code's CLI is pointed at it with ANTHROPIC_BASE_URL (docs/hooks.md#a-session-end-to-end).
Side requests (no tools offered: a title, a summary) get a one-word text.

With `retry_stopped`, a call a PreToolUse hook denied (docs/hooks.md#stopped-before-it-runs) is made
again, as an agent that has read the reason and still means the call would (bench/hooks/tool_time.py):
the script's next call waits until the stopped one has run.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

from aiohttp import web

#: What Claude Code's CLI runs with against the fake API: a placeholder key (no real one is ever
#: sent), no traffic but the API's, no update, telemetry or error report.
CLAUDE_QUIET = {
    "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "LANG": "C.UTF-8",
}

DONE = "Done."
#: How Claude Code (2.1.328) hands the model a call a PreToolUse hook denied: the tool result, an
#: error, is this and the hook's reason.
HOOK_DENIED = re.compile(r"^PreToolUse:\S+ hook error: ")
#: A stopped call is made again at most this many times in a row.
RETRIES_MAX = 3


class Call:
    """One tool call the fake model makes: a Claude Code tool's name and its input."""

    def __init__(self, name: str, tool_input: dict[str, Any]) -> None:
        self.name = name
        self.input = tool_input

    def __repr__(self) -> str:
        return f"Call({self.name!r}, {self.input!r})"


class Turn:
    """A request of the main loop and what the fake model answered."""

    def __init__(
        self, body: dict[str, Any], at: float, answer: Call | None, step: int | None = None, retry: bool = False
    ) -> None:
        self.body = body
        self.at = at
        self.answer = answer
        #: The script's index of the call answered (None: the final text); `retry` when it is made again.
        self.step = step
        self.retry = retry


class FakeModel:
    """POST /v1/messages: the next scripted call for the main loop; text otherwise (SSE when asked)."""

    def __init__(self, script: Sequence[Call] = (), final: str = DONE, *, retry_stopped: bool = False) -> None:
        self.script = list(script)
        self.final = final
        self.retry_stopped = retry_stopped
        self._step = 0
        self._retries = 0
        self.turns: list[Turn] = []
        self.side: list[dict[str, Any]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def _next(self, body: dict[str, Any]) -> Call | None:
        if self.retry_stopped and 0 < self._step and self._retries < RETRIES_MAX and denied(body) is not None:
            self._retries += 1
            step, retry = self._step - 1, True
        else:
            step, retry = self._step, False
            self._step += 1
            self._retries = 0
        call = self.script[step] if step < len(self.script) else None
        self.turns.append(Turn(body, time.monotonic(), call, step if call is not None else None, retry))
        return call

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if body.get("tools"):
            call = self._next(body)
        else:
            self.side.append(body)
            call = None
        n = len(self.turns) + len(self.side)
        blocks: list[dict[str, Any]]
        if call is None:
            blocks = [{"type": "text", "text": self.final if body.get("tools") else "Note"}]
            stop = "end_turn"
        else:
            blocks = [{"type": "tool_use", "id": f"toolu_{n:04d}", "name": call.name, "input": call.input}]
            stop = "tool_use"
        message = {
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        if not body.get("stream"):
            return web.json_response({**message, "content": blocks, "stop_reason": stop})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
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
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/count_tokens", self._count)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeModel:
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *_: object) -> None:
        assert self._runner is not None and self._thread is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


def texts(body: dict[str, Any]) -> str:
    """Every text a request carries to the model: its system prompt, its messages' text blocks and
    the text of its tool results (where Claude Code puts a tool hook's context)."""
    parts: list[str] = []
    system = body.get("system")
    for part in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        if part.get("type") == "text":
            parts.append(part["text"])
    for message in body["messages"]:
        content = message["content"]
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            parts.extend(_part_texts(part))
    return "\n".join(parts)


def _part_texts(part: dict[str, Any]) -> list[str]:
    if part.get("type") == "text":
        return [part["text"]]
    if part.get("type") == "tool_result":
        content = part.get("content")
        if isinstance(content, str):
            return [content]
        return [p["text"] for p in content or [] if p.get("type") == "text"]
    return []


def denied(body: dict[str, Any]) -> str | None:
    """The reason a PreToolUse hook gave for denying the call the request's last tool result answers,
    or None when that call ran (or there is none)."""
    for message in reversed(body.get("messages", [])):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        results = [p for p in content if p.get("type") == "tool_result"]
        if not results:
            continue
        for part in results:
            text = "\n".join(_part_texts(part))
            if part.get("is_error") and HOOK_DENIED.match(text):
                return HOOK_DENIED.sub("", text, count=1)
        return None
    return None
