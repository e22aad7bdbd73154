"""A fake OpenAI Responses API on 127.0.0.1 for Codex CLI's sessions (docs/hooks.md#codex): every
`POST /v1/responses` body is kept, and each is answered, as a stream of server-sent events, with
the script's next function call and then with a short text.

Codex CLI is pointed at it by a model provider in its config.toml (`base_url`, `wire_api =
"responses"`). The events are the Responses API's streaming ones Codex reads: `response.created`,
one `response.output_item.done` (a `function_call`, with `namespace` for an MCP server's tool, or
an assistant `message`) and `response.completed`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from typing import Any

from aiohttp import web

DONE = "Done."


class Call:
    """One function call the fake model makes: its name, arguments and, for an MCP tool, the
    namespace Codex lists it under (`mcp__<server>`)."""

    def __init__(self, name: str, arguments: dict[str, Any], namespace: str | None = None) -> None:
        self.name = name
        self.arguments = arguments
        self.namespace = namespace


class FakeResponses:
    """POST /v1/responses: the script's next call, then DONE; every request body kept in order."""

    def __init__(self, script: Sequence[Call] = ()) -> None:
        self.script = list(script)
        self.bodies: list[dict[str, Any]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def _item(self, n: int) -> dict[str, Any]:
        if n <= len(self.script):
            call = self.script[n - 1]
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": call.name,
                "arguments": json.dumps(call.arguments),
            }
            if call.namespace:
                item["namespace"] = call.namespace
            return item
        text = {"type": "output_text", "text": DONE, "annotations": []}
        return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed", "content": [text]}

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(await request.json())
        n = len(self.bodies)
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events = [
            {"type": "response.created", "response": {"id": f"resp_{n}"}},
            {"type": "response.output_item.done", "output_index": 0, "item": self._item(n)},
            {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}},
        ]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in events:
            await response.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        await response.write_eof()
        return response

    async def _start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/responses", self._responses)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeResponses:
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
    """Every text of a request's input: its messages' texts and the tools' outputs, in order."""
    parts: list[str] = []
    for item in body["input"]:
        if item.get("type") == "message":
            content = item["content"]
            if isinstance(content, str):
                parts.append(content)
            else:
                parts.extend(part.get("text", "") for part in content)
        elif isinstance(item.get("output"), str):
            parts.append(item["output"])
    return "\n".join(parts)
