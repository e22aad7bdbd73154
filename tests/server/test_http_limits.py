"""Slow and stuck clients over real sockets on 127.0.0.1 against the real server
(uvicorn in this event loop, small limits set by the test): each phase of a
request is cut within its configured time, more stuck clients than the
connection cap never keep /health from answering, and a client that drops its
body is an info line, not an error."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_memory.app import open_service
from mcp_memory.config import HttpLimits, Settings
from mcp_memory.core.logs import library_logs_as_json
from tests.support.http_support import Running, serving

LIMITS = HttpLimits(header_timeout_ms=600, body_timeout_ms=600, keep_alive_ms=600, max_connections=8)
#: Room for a busy 2-core machine between the configured time and the cut.
SLACK_S = 2.5
HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    settings = Settings.from_env({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake"})
    async with serving(await open_service(settings), limits=LIMITS) as running:
        yield running


async def connect(server: Running) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = server.url.removeprefix("http://").split(":")
    return await asyncio.open_connection(host, int(port))


async def seconds_until_closed(reader: asyncio.StreamReader) -> tuple[float, bytes]:
    """How long until the server closes the connection, and what it sent before."""
    started = time.monotonic()
    received = await asyncio.wait_for(reader.read(), timeout=30)
    return time.monotonic() - started, received


async def health(server: Running) -> bytes:
    reader, writer = await connect(server)
    try:
        writer.write(HEALTH)
        return await asyncio.wait_for(reader.readuntil(b'{"status":"ok"}'), timeout=10)
    finally:
        writer.close()


def levels(server: Running) -> list[str]:
    return [line["level"] for line in server.lines("err")]


async def test_a_client_that_never_finishes_its_headers_is_cut_with_408(server: Running) -> None:
    reader, writer = await connect(server)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-")  # and then nothing
    took, received = await seconds_until_closed(reader)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert 0.5 <= took < 0.6 + SLACK_S
    writer.close()


async def test_a_connection_that_sends_nothing_is_cut_after_the_header_timeout(server: Running) -> None:
    reader, writer = await connect(server)
    took, received = await seconds_until_closed(reader)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert 0.5 <= took < 0.6 + SLACK_S
    writer.close()


async def test_a_header_trickled_a_byte_at_a_time_is_still_cut_on_time(server: Running) -> None:
    reader, writer = await connect(server)
    started = time.monotonic()

    async def trickle() -> None:
        for byte in b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 200:
            writer.write(bytes([byte]))
            await asyncio.sleep(0.05)

    dripping = asyncio.create_task(trickle())
    received = await asyncio.wait_for(reader.read(), timeout=30)
    took = time.monotonic() - started
    dripping.cancel()
    assert received.startswith(b"HTTP/1.1 408 ")
    assert took < 0.6 + SLACK_S
    writer.close()


async def test_a_client_that_never_finishes_its_body_is_cut_and_logs_no_error(server: Running) -> None:
    reader, writer = await connect(server)
    writer.write(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Memory-Tenant: acme\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n"
        b'{"jsonrpc":"2.0","id":1,'
    )
    took, received = await seconds_until_closed(reader)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert 0.5 <= took < 0.6 + SLACK_S
    writer.close()
    await asyncio.sleep(0.2)
    assert "error" not in levels(server)
    assert server.tool_calls() == []


async def test_a_client_that_drops_its_body_is_an_info_line_not_an_error(server: Running) -> None:
    with library_logs_as_json(server.graceful.log):  # as serve-http does: the SDK's errors are ours
        await drop_a_body(server)
    assert "error" not in levels(server)
    assert [line["event"] for line in server.lines() if line["event"] == "request_body_incomplete"] == [
        "request_body_incomplete"
    ]
    assert (await health(server)).startswith(b"HTTP/1.1 200 ")


async def drop_a_body(server: Running) -> None:
    reader, writer = await connect(server)
    writer.write(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b'Accept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{"jsonrpc":'
    )
    await writer.drain()
    await asyncio.sleep(0.1)
    writer.close()  # gone, half the body unsent
    await asyncio.sleep(0.5)


async def test_an_idle_keep_alive_connection_is_closed_after_the_keep_alive_time(server: Running) -> None:
    reader, writer = await connect(server)
    writer.write(HEALTH)
    await asyncio.wait_for(reader.readuntil(b'{"status":"ok"}'), timeout=10)
    took, received = await seconds_until_closed(reader)  # nothing more is sent
    assert received == b""
    assert 0.5 <= took < 0.6 + SLACK_S
    writer.close()


async def test_a_kept_alive_connection_serves_its_next_request_when_it_comes_in_time(server: Running) -> None:
    reader, writer = await connect(server)
    for _ in range(3):
        writer.write(HEALTH)
        answer = await asyncio.wait_for(reader.readuntil(b'{"status":"ok"}'), timeout=10)
        assert answer.startswith(b"HTTP/1.1 200 ")
        await asyncio.sleep(0.3)  # idle, but less than the keep-alive time
    writer.close()


async def test_more_stuck_clients_than_the_cap_never_keep_health_from_answering(server: Running) -> None:
    stuck = []
    for i in range(3 * LIMITS.max_connections):  # type: ignore[operator]
        reader, writer = await connect(server)
        if i % 2:
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-")  # half the headers
        else:
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")  # half a body
        stuck.append((reader, writer))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    for _ in range(5):
        assert (await health(server)).startswith(b"HTTP/1.1 200 ")
    assert time.monotonic() - started < 0.5  # answered at once, not after the stuck ones timed out
    assert "error" not in levels(server)
    evicted = [line for line in server.lines("err") if line["event"] == "connection_evicted"]
    assert len(evicted) == 1  # one line per interval, however many were closed
    for _, writer in stuck:
        writer.close()


async def test_when_every_connection_is_being_answered_a_new_one_gets_503(tmp_path: Path) -> None:
    settings = Settings.from_env({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake"})
    limits = HttpLimits(header_timeout_ms=5000, body_timeout_ms=5000, keep_alive_ms=5000, max_connections=1)
    async with serving(await open_service(settings), limits=limits) as running:
        release = asyncio.Event()
        app = running.app
        answering = app._http

        async def slow_http(scope, receive, send):  # a request the server is still answering
            if scope["path"] == "/slow":
                await release.wait()
            await answering(scope, receive, send)

        app._http = slow_http  # type: ignore[method-assign]
        reader, writer = await connect(running)
        writer.write(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        await asyncio.sleep(0.2)
        refused_reader, refused_writer = await connect(running)
        _, refused = await seconds_until_closed(refused_reader)
        assert refused.startswith(b"HTTP/1.1 503 ")
        release.set()
        assert (await asyncio.wait_for(reader.readuntil(b"}"), timeout=10)).startswith(b"HTTP/1.1 404 ")
        writer.close()
        refused_writer.close()


# --------------------------------------------------------------------------- out of file descriptors


async def test_out_of_file_descriptors_is_one_json_line_and_open_connections_are_still_served(
    tmp_path: Path,
) -> None:
    import json

    from tests.support.http_process import clean_env, http_process

    env = clean_env(
        tmp_path,
        EMBEDDING_PROVIDER="fake",
        MEMORY_DB_PATH=str(tmp_path / "m.db"),
        HTTP_MAX_CONNECTIONS="5000",  # above what the file limit allows: the limit is what runs out
        HTTP_HEADER_TIMEOUT_MS="60000",
        HTTP_KEEP_ALIVE_MS="60000",
    )
    async with http_process(env, tmp_path / "err.log", open_files=96) as process:
        host, port = process.url.removeprefix("http://").split(":")
        kept_reader, kept_writer = await asyncio.open_connection(host, int(port))
        kept_writer.write(HEALTH)
        assert (await asyncio.wait_for(kept_reader.readuntil(b'{"status":"ok"}'), 10)).startswith(b"HTTP/1.1 200")
        stuck = [await asyncio.open_connection(host, int(port)) for _ in range(150)]  # the backlog holds the rest
        await asyncio.sleep(3.5)  # asyncio retries the accept every second
        kept_writer.write(HEALTH)  # a connection it already has is still answered
        assert (await asyncio.wait_for(kept_reader.readuntil(b'{"status":"ok"}'), 10)).startswith(b"HTTP/1.1 200")
        for _, writer in stuck:
            writer.close()
        kept_writer.close()
        await asyncio.sleep(1.5)
        fresh_reader, fresh_writer = await asyncio.open_connection(host, int(port))  # accepting resumed
        fresh_writer.write(HEALTH)
        assert (await asyncio.wait_for(fresh_reader.readuntil(b'{"status":"ok"}'), 10)).startswith(b"HTTP/1.1 200")
        fresh_writer.close()
        code, _, stderr = await process.stop()
    assert code == 0
    logged = [line for line in stderr.splitlines() if not line.startswith("warning: MCP_API_KEY is NOT set")]
    lines = [json.loads(line) for line in logged]  # every line is JSON: no traceback
    refused = [line for line in lines if line["event"] == "accept_failed"]
    assert len(refused) == 1, lines
    assert refused[0]["level"] == "warn"
    assert refused[0]["message"].startswith("cannot accept a connection: Too many open files;")


async def test_serve_http_takes_its_limits_from_the_environment(tmp_path: Path) -> None:
    from tests.support.http_process import clean_env, http_process

    env = clean_env(
        tmp_path,
        EMBEDDING_PROVIDER="fake",
        MEMORY_DB_PATH=str(tmp_path / "m.db"),
        HTTP_HEADER_TIMEOUT_MS="700",
        HTTP_KEEP_ALIVE_MS="900",
    )
    async with http_process(env, tmp_path / "err.log") as process:
        host, port = process.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        took, received = await seconds_until_closed(reader)  # sends nothing at all
        assert received.startswith(b"HTTP/1.1 408 ") and 0.6 <= took < 0.7 + SLACK_S
        writer.close()
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(HEALTH)
        await asyncio.wait_for(reader.readuntil(b'{"status":"ok"}'), timeout=10)
        took, received = await seconds_until_closed(reader)  # idle after an answer
        assert received == b"" and 0.8 <= took < 0.9 + SLACK_S
        writer.close()
        code, _, _ = await process.stop()
    assert code == 0
