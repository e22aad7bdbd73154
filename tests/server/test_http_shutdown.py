"""Stopping the HTTP server (docs/operations.md): stop accepting, let running calls finish
within a bounded grace, close (flush the counters) exactly once, exit 0; a
second signal changes nothing. The order is tested on GracefulServer with a
stand-in server; a real server then shows a running call finishing first."""

from __future__ import annotations

import asyncio
import io
import json
import signal

import httpx
import pytest

from mcp_memory.core.logs import JsonLog
from mcp_memory.server.http.serve import GracefulServer
from tests.conftest import Clock, make_env
from tests.server.test_http_concurrency import GatedEmbedder
from tests.support.http_support import serving


class StandInServer:
    """Records what a stop does to it; `drains=False` never finishes stopping."""

    def __init__(self, events: list[str], *, drains: bool = True, fails: Exception | None = None) -> None:
        self.events = events
        self.drains = drains
        self.fails = fails
        self.exit_requested = asyncio.Event()

    @property
    def should_exit(self) -> bool:
        return self.exit_requested.is_set()

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        if value:
            self.events.append("stop accepting")
            self.exit_requested.set()

    async def serve(self) -> None:
        if self.fails is not None:
            raise self.fails
        await self.exit_requested.wait()
        if not self.drains:
            await asyncio.Event().wait()  # never returns: only the limit ends this
        self.events.append("drained")


class Harness:
    def __init__(
        self,
        *,
        drains: bool = True,
        close_fails: bool = False,
        close_hangs: bool = False,
        fails: Exception | None = None,
        limit_s: float = 15,
        close_limit_s: float = 10,
    ) -> None:
        self.events: list[str] = []
        self.out, self.err = io.StringIO(), io.StringIO()
        self.close_fails = close_fails
        self.close_hangs = close_hangs
        server = StandInServer(self.events, drains=drains, fails=fails)
        self.graceful = GracefulServer(
            server, self.close, JsonLog(out=self.out, err=self.err), limit_s=limit_s, close_limit_s=close_limit_s
        )

    async def close(self) -> None:
        self.events.append("closed")
        if self.close_fails:
            raise OSError("disk full")
        if self.close_hangs:
            await asyncio.Event().wait()

    def log(self) -> list[dict]:
        return [json.loads(line) for line in (self.out.getvalue() + self.err.getvalue()).splitlines()]


async def run_until_serving(h: Harness) -> asyncio.Task[None]:
    task = asyncio.create_task(h.graceful.run())
    await asyncio.sleep(0)  # let run() start serving
    return task


async def test_a_signal_stops_accepting_then_drains_then_closes_once() -> None:
    h = Harness()
    task = await run_until_serving(h)
    h.graceful.stop(signal.SIGTERM)
    await task
    assert h.events == ["stop accepting", "drained", "closed"]
    assert {"level": "info", "event": "shutdown_started", "signal": "SIGTERM"} in h.log()


async def test_the_counters_are_flushed_even_if_the_server_never_finishes_stopping() -> None:
    h = Harness(drains=False, limit_s=0.01)
    task = await run_until_serving(h)
    h.graceful.stop(signal.SIGINT)
    await task
    assert h.events == ["stop accepting", "closed"]
    assert any(line["event"] == "shutdown_grace_expired" and line["level"] == "error" for line in h.log())


async def test_a_second_signal_is_logged_and_ignored() -> None:
    h = Harness()
    task = await run_until_serving(h)
    h.graceful.stop(signal.SIGTERM)
    h.graceful.stop(signal.SIGINT)
    await task
    h.graceful.stop(signal.SIGTERM)
    assert h.events == ["stop accepting", "drained", "closed"]
    ignored = [line for line in h.log() if line["event"] == "shutdown_signal_ignored"]
    assert [line["signal"] for line in ignored] == ["SIGINT", "SIGTERM"]
    assert all(line["level"] == "warn" for line in ignored)


async def test_a_failing_close_is_logged_and_the_stop_still_completes() -> None:
    h = Harness(close_fails=True)
    task = await run_until_serving(h)
    h.graceful.stop(signal.SIGTERM)
    await task  # does not raise: the process still exits 0
    assert h.events[-1] == "closed"
    failed = [line for line in h.log() if line["event"] == "shutdown_close_failed"]
    assert failed and failed[0]["message"] == "disk full"


async def test_a_close_that_never_returns_is_given_up_on_and_the_stop_completes() -> None:
    h = Harness(close_hangs=True, close_limit_s=0.01)
    task = await run_until_serving(h)
    h.graceful.stop(signal.SIGTERM)
    await task
    failed = [line for line in h.log() if line["event"] == "shutdown_close_failed"]
    assert failed and "gave up" in failed[0]["message"]


async def test_once_stopped_the_process_ignores_further_signals() -> None:
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        h = Harness()
        h.graceful.install_signal_handlers()
        task = await run_until_serving(h)
        h.graceful.stop(signal.SIGTERM)
        await task
        # the loop no longer owns them, so closing it cannot restore "die on SIGTERM"
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


async def test_closing_again_after_the_stop_does_nothing() -> None:
    h = Harness()
    task = await run_until_serving(h)
    h.graceful.stop(signal.SIGTERM)
    await task
    await h.graceful.close_once()
    assert h.events.count("closed") == 1


async def test_a_server_that_fails_on_its_own_is_closed_once_and_its_error_raised() -> None:
    h = Harness(fails=RuntimeError("lifespan failed"))
    with pytest.raises(RuntimeError, match="lifespan failed"):
        await h.graceful.run()
    await h.graceful.close_once()
    assert h.events == ["closed"]


async def test_a_call_running_when_the_stop_begins_finishes_before_the_counters_are_flushed() -> None:
    embedder = GatedEmbedder()
    env = make_env(Clock(), embedder=embedder)
    env.service.counters.record("acme", "01JZ0000000000000000000000", Clock()())  # a pending count
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"content": "a slow fact about queues"}},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        "x-memory-tenant": "acme",
    }
    async with serving(env.service) as server, httpx.AsyncClient(timeout=30) as http:
        pending = asyncio.create_task(http.post(server.mcp_url, json=call, headers=headers))
        await embedder.entered.wait()
        server.graceful.stop(signal.SIGTERM)
        assert server.app.in_flight == 1
        assert await env.objects.list("stats/acme/shard/", 100) == []  # nothing flushed while it runs
        embedder.gate.set()
        response = await pending
        await server.task  # the stop completes once the call has been answered
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"].startswith("[MEMORY] Stored as ")
    assert server.app.in_flight == 0
    assert len(await env.objects.list("stats/acme/shard/", 100)) == 1  # flushed once, after the call
