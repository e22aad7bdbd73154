"""The pieces around the HTTP app: binding, the boot lines for every storage,
the caller resolver's refusal outside HTTP, and library logs as JSON lines."""

from __future__ import annotations

import io
import json
import logging
import socket
from types import SimpleNamespace

import pytest

from mcp_memory.config import Settings
from mcp_memory.core.errors import ContextError, StartupError
from mcp_memory.core.logs import JsonLog, library_logs_as_json
from mcp_memory.server.http.app import caller_from_request
from mcp_memory.server.http.serve import bind_sockets, bound_port, url_for
from mcp_memory.server.protocol.tools import ToolLayer
from mcp_memory.server.runners.boot import storage_line
from mcp_memory.server.runners.http import boot_lines
from tests.conftest import Clock, make_env


def close_all(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def test_port_0_binds_a_free_port_on_every_address_of_the_host() -> None:
    sockets = bind_sockets("localhost", 0)
    try:
        ports = {sock.getsockname()[1] for sock in sockets}
        assert ports == {bound_port(sockets)} and bound_port(sockets) > 0
    finally:
        close_all(sockets)


def test_a_port_in_use_is_refused_naming_the_address() -> None:
    sockets = bind_sockets("127.0.0.1", 0)
    try:
        port = bound_port(sockets)
        with pytest.raises(StartupError, match=rf"^cannot listen on 127\.0\.0\.1:{port}: the port is already in use$"):
            bind_sockets("127.0.0.1", port)
    finally:
        close_all(sockets)


def test_a_host_that_does_not_resolve_is_refused_naming_it() -> None:
    with pytest.raises(StartupError, match=r"cannot listen on no-such-host\.invalid:3000"):
        bind_sockets("no-such-host.invalid", 3000)


def test_an_address_this_machine_does_not_have_is_refused() -> None:
    with pytest.raises(StartupError, match=r"^cannot listen on 192\.0\.2\.1:3000: "):
        bind_sockets("192.0.2.1", 3000)


@pytest.mark.parametrize(
    ("host", "url"),
    [("127.0.0.1", "http://127.0.0.1:3000"), ("::1", "http://[::1]:3000"), ("localhost", "http://localhost:3000")],
)
def test_the_url_shown_brackets_ipv6_addresses(host: str, url: str) -> None:
    assert url_for(host, 3000) == url


# --------------------------------------------------------------------------- boot lines


def settings(**env: str) -> Settings:
    return Settings.from_env({"HOSTNAME": "pod", **env})


def test_the_storage_line_names_postgres_without_its_password() -> None:
    line = storage_line(settings(DATABASE_URL="postgresql://app:hunter2@db:5432/memory"))
    assert line == "storage: postgres postgresql://app:***@db:5432/memory — DATABASE_URL is set"


def test_the_storage_line_names_both_buckets() -> None:
    line = storage_line(settings(VECTOR_BUCKET="vecs", STATE_BUCKET="state", VECTOR_INDEX="mem"))
    assert line == "storage: s3 s3vectors://vecs/mem, state s3://state — VECTOR_BUCKET and STATE_BUCKET are set"


def test_a_forced_backend_says_it_was_forced() -> None:
    line = storage_line(settings(MEMORY_BACKEND="sqlite", MEMORY_DB_PATH="/data/m.db"))
    assert line == "storage: sqlite /data/m.db — MEMORY_BACKEND=sqlite"


def test_the_docs_line_says_whether_search_docs_is_offered() -> None:
    tools = ToolLayer(make_env(Clock()).service, JsonLog())
    out, _ = boot_lines(settings(KNOWLEDGE_BASE_ID="KB12345678"), tools, "http://127.0.0.1:3000")
    assert out[3] == "docs: bedrock-kb://KB12345678 (search_docs offered)"
    out, _ = boot_lines(settings(), tools, "http://127.0.0.1:3000")
    assert out[3] == "docs: no KNOWLEDGE_BASE_ID — memories only, search_docs not offered"


def test_the_boot_lines_never_show_the_api_key() -> None:
    tools = ToolLayer(make_env(Clock()).service, JsonLog())
    out, err = boot_lines(settings(MCP_API_KEY="hunter2"), tools, "http://127.0.0.1:3000")
    assert out[0] == "mcp-memory v0.1.0 listening on http://127.0.0.1:3000 (POST /mcp)"
    assert out[2] == "embedder: fake:fake-bag-of-words, 64d"
    assert out[-1].startswith("auth: MCP_API_KEY is set")
    assert err == []
    assert "hunter2" not in "\n".join(out)


# --------------------------------------------------------------------------- caller and logs


@pytest.mark.parametrize("ctx", [SimpleNamespace(request=None), SimpleNamespace()])
def test_a_tool_call_without_an_http_request_has_no_tenant(ctx) -> None:
    with pytest.raises(ContextError, match="x-memory-tenant header is required"):
        caller_from_request(ctx)


def test_library_warnings_become_json_lines_without_their_traceback() -> None:
    err = io.StringIO()
    logger = logging.getLogger("mcp.server.streamable_http")
    with library_logs_as_json(JsonLog(out=io.StringIO(), err=err)):
        logger.warning("dropped %r: malformed params", "tools/call")
        try:
            raise ValueError("the secret request body")
        except ValueError:
            logger.exception("Error handling POST request")
        logging.getLogger("mcp.server").info("not worth a line")
    logger.warning("after: not ours any more")
    lines = [json.loads(line) for line in err.getvalue().splitlines()]
    assert lines == [
        {
            "level": "warn",
            "event": "server_warning",
            "message": "dropped 'tools/call': malformed params",
            "source": "mcp.server.streamable_http",
        },
        {
            "level": "error",
            "event": "server_error",
            "message": "Error handling POST request",
            "source": "mcp.server.streamable_http",
        },
    ]
    assert logging.getLogger("mcp").propagate is True


async def test_a_server_that_cannot_start_is_a_startup_error_and_the_service_is_closed_once() -> None:
    from contextlib import asynccontextmanager

    from mcp_memory.server.http.app import HttpApp
    from mcp_memory.server.http.serve import GracefulServer, make_uvicorn

    class Unstartable:
        @asynccontextmanager
        async def run(self):
            raise RuntimeError("no task group today")
            yield

    closes: list[str] = []

    async def close() -> None:
        closes.append("closed")

    err = io.StringIO()
    log = JsonLog(out=io.StringIO(), err=err)
    app = HttpApp(ToolLayer(make_env(Clock()).service, log), log)
    app.manager = Unstartable()
    sockets = bind_sockets("127.0.0.1", 0)
    try:
        graceful = GracefulServer(make_uvicorn(app, sockets, lambda: closes.append("announced")), close, log)
        with pytest.raises(StartupError, match="the HTTP server could not start"):
            await graceful.run()
    finally:
        close_all(sockets)
    assert closes == ["closed"]
    assert json.loads(err.getvalue().splitlines()[0])["event"] == "mcp_handler_failed"
