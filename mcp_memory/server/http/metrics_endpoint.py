"""The `/metrics` endpoint on a port of its own, served by the same hardened HTTP stack
as `/mcp` (uvicorn with server/http/connections.py's header, body and keep-alive timeouts) on
the same event loop, with a small connection cap of its own (docs/monitoring.md#metrics).

prometheus-client's own server took a thread and a descriptor per connection, with no
timeout and no cap: 250 idle connections to it exhausted a 256-descriptor process and
the MCP port accepted nothing. Here a flood costs at most `MAX_CONNECTIONS` descriptors,
which the MCP port's cap leaves aside, and the oldest idle connection makes room for a
scrape. The exposition is rendered in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import replace
from typing import Any

from mcp_memory.config import HttpLimits
from mcp_memory.core.errors import StartupError
from mcp_memory.core.logs import JsonLog
from mcp_memory.server.http.metrics import Metrics

#: Connections the metrics port holds open at most (a scraper needs one or two).
MAX_CONNECTIONS = 16
PATH = "/metrics"
#: How long a stop waits for the metrics server to wind down.
STOP_LIMIT_S = 5.0


class MetricsApp:
    """ASGI: `GET /metrics` (or HEAD) is the exposition; anything else 404 or 405."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        if scope["path"] != PATH:
            await _answer(send, 404, b"not found\n")
        elif scope["method"] not in ("GET", "HEAD"):
            await _answer(send, 405, b"method not allowed: use GET\n", [(b"allow", b"GET")])
        else:
            from prometheus_client import CONTENT_TYPE_LATEST

            body = await asyncio.to_thread(self.metrics.exposition)
            await _answer(send, 200, body, content_type=CONTENT_TYPE_LATEST.encode("ascii"))


async def _answer(
    send: Any,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    *,
    content_type: bytes = b"text/plain",
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode("ascii")),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class MetricsEndpoint:
    """The metrics port: bound at once (a clear StartupError if it cannot be), served from `start`."""

    def __init__(self, metrics: Metrics, host: str, port: int, limits: HttpLimits, log: JsonLog) -> None:
        from mcp_memory.server.http.serve import bind_sockets

        try:
            self.sockets: list[socket.socket] = bind_sockets(host, port)
        except StartupError as exc:
            raise StartupError(str(exc).replace("cannot listen on", "cannot serve metrics on", 1)) from None
        self.app = MetricsApp(metrics)
        self.limits = replace(limits, max_connections=MAX_CONNECTIONS)
        self.log = log
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return int(self.sockets[0].getsockname()[1])

    async def start(self) -> None:
        from mcp_memory.server.http.serve import make_uvicorn

        started = asyncio.Event()
        # backlog: asyncio accepts that many at once per readiness; a burst of a flood must not
        # take more descriptors than the cap before the cap can evict
        self._server = make_uvicorn(
            self.app, self.sockets, started.set, limits=self.limits, log=self.log, backlog=MAX_CONNECTIONS
        )
        self._task = asyncio.create_task(self._server.serve(), name="metrics-http")
        ready = asyncio.create_task(started.wait())
        await asyncio.wait({self._task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            self._task.result()  # why it could not start

    async def stop(self) -> None:
        """Stop serving and close the sockets; never raises."""
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            done, _ = await asyncio.wait({self._task}, timeout=STOP_LIMIT_S)
            if not done:
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task
        for sock in self.sockets:
            sock.close()
