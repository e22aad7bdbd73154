"""Helpers for the HTTP tests: a real server (uvicorn on 127.0.0.1, an ephemeral
port) running in the test's own event loop around an injected MemoryService,
and the MCP SDK's client with the request headers a platform would stamp."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_memory.config import HttpLimits
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.service import MemoryService
from mcp_memory.server.http.app import HttpApp
from mcp_memory.server.http.serve import SHUTDOWN_LIMIT_S, GracefulServer, bind_sockets, bound_port, make_uvicorn
from mcp_memory.server.protocol.tools import ToolLayer

Headers = Sequence[tuple[str, str]]


@dataclass
class Running:
    url: str
    app: HttpApp
    graceful: GracefulServer
    out: io.StringIO
    err: io.StringIO
    task: asyncio.Task[None]

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    def lines(self, stream: str = "out") -> list[dict]:
        text = (self.out if stream == "out" else self.err).getvalue()
        return [json.loads(line) for line in text.splitlines()]

    def tool_calls(self) -> list[dict]:
        return [line for line in self.lines() if line.get("event") == "tool_call"]


@asynccontextmanager
async def serving(
    service: MemoryService,
    *,
    api_key: str | None = None,
    limit_s: float = SHUTDOWN_LIMIT_S,
    limits: HttpLimits | None = None,
    **app_options: Any,
) -> AsyncIterator[Running]:
    """Serve `service` until the block ends, then stop as a signal would.

    `app_options` go to HttpApp (oauth, verifier, limits, metrics)."""
    out, err = io.StringIO(), io.StringIO()
    log = JsonLog(out=out, err=err)
    app = HttpApp(ToolLayer(service, log), log, api_key=api_key, **app_options)
    sockets = bind_sockets("127.0.0.1", 0)
    started = asyncio.Event()
    server = make_uvicorn(app, sockets, started.set, limits=limits, log=log)
    graceful = GracefulServer(server, service.close, log, limit_s=limit_s)
    task = asyncio.create_task(graceful.run())
    ready = asyncio.create_task(started.wait())
    await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
    if not ready.done():
        ready.cancel()
        task.result()  # raises why it could not start
    running = Running(f"http://127.0.0.1:{bound_port(sockets)}", app, graceful, out, err, task)
    try:
        yield running
    finally:
        graceful.stop()
        await task
        for sock in sockets:
            sock.close()


@asynccontextmanager
async def mcp_client(running: Running | str, headers: Headers = (), *, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, sending `headers` on every request."""
    url = running if isinstance(running, str) else running.mcp_url
    timeout = httpx2.Timeout(30.0, read=60.0)
    async with httpx2.AsyncClient(headers=list(headers), timeout=timeout) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def text(result) -> str:
    return result.content[0].text
