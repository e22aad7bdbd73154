"""The HTTP layer's own answers, over raw HTTP (docs/http.md): health, 404s, Origin,
bearer auth and the body limit, each checked in the reference order."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from mcp_memory.server.http.app import MAX_BODY_BYTES
from tests.conftest import Clock, make_env
from tests.support.http_support import Running, serving

JSON = "application/json"
MCP_HEADERS = {"content-type": JSON, "accept": "application/json, text/event-stream"}
LEGACY = {**MCP_HEADERS, "mcp-protocol-version": "2025-06-18"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}

ORIGIN_REFUSED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32002, "message": "browser origins are not allowed"}}
AUTH_REFUSED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "missing or invalid bearer token"}}


@pytest.fixture
async def open_server() -> AsyncIterator[Running]:
    async with serving(make_env(Clock()).service) as running:
        yield running


@pytest.fixture
async def keyed_server() -> AsyncIterator[Running]:
    async with serving(make_env(Clock()).service, api_key="s3cret") as running:
        yield running


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


def assert_json(response: httpx.Response, status: int, body: object) -> None:
    assert response.status_code == status
    assert response.headers["content-type"] == JSON
    assert response.json() == body


# --------------------------------------------------------------------------- health and routing


@pytest.mark.parametrize("method", ["GET", "POST", "HEAD"])
async def test_health_answers_ok_with_no_dependency_checked(open_server: Running, http, method: str) -> None:
    response = await http.request(method, open_server.url + "/health?probe=1")
    assert response.status_code == 200
    assert response.headers["content-type"] == JSON
    if method != "HEAD":
        assert response.json() == {"status": "ok"}


async def test_health_is_not_subject_to_origin_or_auth(keyed_server: Running, http) -> None:
    response = await http.get(keyed_server.url + "/health", headers={"origin": "https://example.com"})
    assert_json(response, 200, {"status": "ok"})


@pytest.mark.parametrize("path", ["/nope", "/mcp-extra", "/mcp/", "/", "/healthz", "/MCP"])
async def test_any_other_path_is_not_found(open_server: Running, http, path: str) -> None:
    assert_json(await http.post(open_server.url + path, json=PING, headers=LEGACY), 404, {"error": "not found"})


async def test_the_query_string_does_not_change_the_route(open_server: Running, http) -> None:
    response = await http.post(open_server.url + "/mcp?x=1", json=PING, headers=LEGACY)
    assert_json(response, 200, {"jsonrpc": "2.0", "id": 1, "result": {}})


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "OPTIONS"])
async def test_the_endpoint_takes_post_only(open_server: Running, http, method: str) -> None:
    response = await http.request(method, open_server.url + "/mcp", headers={"accept": "text/event-stream"})
    assert_json(
        response,
        405,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "method not allowed: use POST"}},
    )
    assert response.headers["allow"] == "POST"


async def test_a_failure_inside_the_sdk_handler_is_a_logged_json_500(open_server: Running, http) -> None:
    class Broken:
        async def handle_request(self, scope, receive, send) -> None:
            raise RuntimeError("session manager is gone")

    open_server.app.manager = Broken()
    response = await http.post(open_server.url + "/mcp", json=PING, headers=LEGACY)
    assert_json(response, 500, {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "internal error"}})
    failure = open_server.lines("err")[-1]
    assert failure == {
        "level": "error",
        "event": "mcp_handler_failed",
        "message": "session manager is gone",
        "type": "RuntimeError",
    }


# --------------------------------------------------------------------------- origin


@pytest.mark.parametrize("origin", ["https://example.com", "null", "", "http://127.0.0.1:3000"])
async def test_a_request_carrying_an_origin_is_refused(open_server: Running, http, origin: str) -> None:
    response = await http.post(open_server.url + "/mcp", json=PING, headers={**LEGACY, "origin": origin})
    assert_json(response, 403, ORIGIN_REFUSED)


async def test_origin_is_refused_before_auth_is_checked(keyed_server: Running, http) -> None:
    response = await http.post(keyed_server.url + "/mcp", json=PING, headers={**LEGACY, "origin": "null"})
    assert_json(response, 403, ORIGIN_REFUSED)


async def test_no_host_allowlist_refuses_a_client_that_reached_us_by_another_name(open_server: Running, http) -> None:
    response = await http.post(open_server.url + "/mcp", json=PING, headers={**LEGACY, "host": "mcp-memory.svc:80"})
    assert_json(response, 200, {"jsonrpc": "2.0", "id": 1, "result": {}})


# --------------------------------------------------------------------------- bearer


@pytest.mark.parametrize(
    ("authorization", "allowed"),
    [
        ("Bearer s3cret", True),
        ("bearer s3cret", True),
        ("BEARER  s3cret", True),
        ("Bearer wrong", False),
        ("s3cret", False),
        ("Basic s3cret", False),
        (None, False),
        ("Bearer s", False),
        ("Bearer " + "s" * 500, False),
    ],
)
async def test_with_a_key_only_the_right_bearer_token_gets_through(
    keyed_server: Running, http, authorization: str | None, allowed: bool
) -> None:
    headers = {**LEGACY} if authorization is None else {**LEGACY, "authorization": authorization}
    response = await http.post(keyed_server.url + "/mcp", json=PING, headers=headers)
    if allowed:
        assert_json(response, 200, {"jsonrpc": "2.0", "id": 1, "result": {}})
    else:
        assert_json(response, 401, AUTH_REFUSED)
        assert response.headers["www-authenticate"] == 'Bearer realm="mcp"'


async def test_a_raw_discover_without_the_bearer_is_refused(keyed_server: Running, http) -> None:
    headers = {**MCP_HEADERS, "mcp-protocol-version": "2026-07-28"}
    response = await http.post(keyed_server.url + "/mcp", json=DISCOVER, headers=headers)
    assert_json(response, 401, AUTH_REFUSED)
    assert response.headers["www-authenticate"] == 'Bearer realm="mcp"'


async def test_a_client_with_the_bearer_lists_the_tools(keyed_server: Running) -> None:
    from tests.support.http_support import mcp_client

    async with mcp_client(keyed_server, [("authorization", "Bearer s3cret")]) as client:
        assert len((await client.list_tools()).tools) == 5


async def test_without_a_key_no_token_is_needed(open_server: Running, http) -> None:
    response = await http.post(open_server.url + "/mcp", json=PING, headers={**LEGACY, "authorization": "Basic x"})
    assert_json(response, 200, {"jsonrpc": "2.0", "id": 1, "result": {}})


# --------------------------------------------------------------------------- body limit


def padded_ping(size: int) -> bytes:
    """A valid ping exactly `size` bytes long (JSON allows trailing whitespace)."""
    body = json.dumps(PING).encode()
    return body + b" " * (size - len(body))


async def chunks(body: bytes, size: int = 64 * 1024) -> AsyncIterator[bytes]:
    """The body as a stream of unknown length: sent chunked, without Content-Length."""
    for start in range(0, len(body), size):
        yield body[start : start + size]


TOO_LARGE = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": f"request body is larger than {MAX_BODY_BYTES} bytes"},
}


@pytest.mark.parametrize("size", [MAX_BODY_BYTES + 1, 4 * MAX_BODY_BYTES])
async def test_a_body_over_one_mebibyte_is_refused(open_server: Running, http, size: int) -> None:
    response = await http.post(open_server.url + "/mcp", content=padded_ping(size), headers=LEGACY)
    assert_json(response, 413, TOO_LARGE)
    # the rest of the body was discarded, and the connection still serves requests
    again = await http.post(open_server.url + "/mcp", json=PING, headers=LEGACY)
    assert_json(again, 200, {"jsonrpc": "2.0", "id": 1, "result": {}})


async def test_a_chunked_body_is_refused_once_it_passes_the_limit(open_server: Running, http) -> None:
    response = await http.post(
        open_server.url + "/mcp", content=chunks(padded_ping(2 * MAX_BODY_BYTES)), headers=LEGACY
    )
    assert "content-length" not in response.request.headers
    assert_json(response, 413, TOO_LARGE)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_a_body_of_exactly_one_mebibyte_is_served(open_server: Running, http, chunked: bool) -> None:
    body = padded_ping(MAX_BODY_BYTES)
    response = await http.post(open_server.url + "/mcp", content=chunks(body) if chunked else body, headers=LEGACY)
    assert_json(response, 200, {"jsonrpc": "2.0", "id": 1, "result": {}})


async def test_the_body_limit_comes_after_auth(keyed_server: Running, http) -> None:
    response = await http.post(keyed_server.url + "/mcp", content=padded_ping(MAX_BODY_BYTES + 1), headers=LEGACY)
    assert_json(response, 401, AUTH_REFUSED)
