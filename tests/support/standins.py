"""Test stand-ins for remote services, served for real over HTTP on 127.0.0.1.

- `OpenAIStandIn` speaks OpenAI's embeddings API (`POST /v1/embeddings`): by
  default it embeds every input with the fake embedder (so recall works end to
  end); a test can queue scripted answers, or a hang, for the next requests.
- `KnowledgeBaseStandIn` answers Bedrock Agent Runtime's Retrieve
  (`POST /knowledgebases/<id>/retrieve`), for botocore clients pointed at it
  with an endpoint URL (or AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME in a
  subprocess). It does not check signatures: dummy credentials are enough.

Both record every request they receive, so tests assert what was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from mcp_memory.embedders.fake import fake_vector


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Scripted:
    status: int = 200
    body: Any = None  # dict/list → JSON; str → sent as is
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False


class _StandIn:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._script: deque[Scripted] = deque()
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    def answer(self, status: int = 200, body: Any = None, headers: dict[str, str] | None = None) -> None:
        """Queue the answer to the next request."""
        self._script.append(Scripted(status, body, headers or {}))

    def hang(self) -> None:
        """The next request gets no answer until the stand-in stops."""
        self._script.append(Scripted(hang=True))

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    async def start(self) -> str:
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _record(self, request: web.Request) -> Any:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        self.received.append(Received(request.path, dict(request.headers), body))
        return body

    async def _scripted(self) -> web.Response | None:
        if not self._script:
            return None
        step = self._script.popleft()
        if step.hang:
            await self._release.wait()
            return web.Response(status=503)
        text = step.body if isinstance(step.body, str) or step.body is None else json.dumps(step.body)
        return web.Response(status=step.status, text=text or "", headers=step.headers, content_type=None)


class OpenAIStandIn(_StandIn):
    def __init__(self, dim: int = 64, *, reverse: bool = False) -> None:
        super().__init__()
        self.dim = dim
        #: Answer items in reverse order (indexes still right), like a server that reorders.
        self.reverse = reverse

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/embeddings", self._embeddings)

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        scripted = await self._scripted()
        if scripted is not None:
            return scripted
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in fake_vector(text, self.dim)]}
            for i, text in enumerate(inputs)
        ]
        if self.reverse:
            data.reverse()
        return web.json_response({"object": "list", "data": data, "model": body["model"]})


class KnowledgeBaseStandIn(_StandIn):
    def __init__(self, results: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.results = results or []

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/knowledgebases/{kb}/retrieve", self._retrieve)

    async def _retrieve(self, request: web.Request) -> web.Response:
        await self._record(request)
        scripted = await self._scripted()
        if scripted is not None:
            return scripted
        return web.json_response({"retrievalResults": self.results})
