"""JSON nested deep enough to exhaust Python's stack, from any caller with a valid token (or
none), is a 400 naming the limit, never a 500 with an error line; a JWT whose `exp`, `nbf` or
`iat` is not a number is refused; the `auth:` boot line says when no tenant claim binds tokens."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from mcp_memory.config import OAuthSettings
from mcp_memory.core.logs import JsonLog
from mcp_memory.server.http.introspection import IntrospectionVerifier
from mcp_memory.server.http.oauth import TokenRefused
from mcp_memory.server.runners.http import oauth_lines
from tests.server.test_oauth import METADATA_URL, challenge, oauth_settings, post, service
from tests.support.http_support import Running, serving
from tests.support.issuer import CLIENT_ID, CLIENT_SECRET, ISSUER, RESOURCE, Issuer, issuer_server

DEPTH = 10_000
DEEP_MESSAGE = "the request nests arrays or objects deeper than 64 levels"


def deep_call(depth: int = DEPTH) -> bytes:
    arguments = '{"query":"x","tags":' + "[" * depth + "]" * depth + "}"
    return (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":' + arguments + "}}"
    ).encode()


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    async with issuer_server() as running:
        running.publish("k1")
        yield running


@pytest.fixture
async def server(tmp_path: Path, issuer: Issuer) -> AsyncIterator[Running]:
    async with serving(await service(tmp_path), oauth=oauth_settings(issuer)) as running:
        yield running


async def raw_post(url: str, body: bytes, token: str | None = None) -> httpx.Response:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient() as client:
        return await client.post(url, content=body, headers={**headers, "x-memory-tenant": "acme"})


@pytest.mark.parametrize("depth", [65, DEPTH, 50_000])
async def test_a_deeply_nested_tool_call_with_a_valid_token_is_a_400_not_a_500(
    server: Running, issuer: Issuer, depth: int
) -> None:
    response = await raw_post(server.mcp_url, deep_call(depth), issuer.token())
    assert response.status_code == 400
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": DEEP_MESSAGE}}
    assert not [line for line in server.lines("err") if line["level"] == "error"]


async def test_nesting_at_the_limit_still_reaches_the_tool(server: Running, issuer: Issuer) -> None:
    response = await raw_post(server.mcp_url, deep_call(60), issuer.token())
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is True  # the tool's own refusal of such tags
    assert "`tags`" in response.json()["result"]["content"][0]["text"]


async def test_without_auth_a_deeply_nested_body_is_the_same_400(tmp_path: Path) -> None:
    async with serving(await service(tmp_path)) as running:
        response = await raw_post(running.mcp_url, deep_call())
    assert response.status_code == 400
    assert response.json()["error"] == {"code": -32600, "message": DEEP_MESSAGE}


def forged_header_token(depth: int) -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"RS256","x":' + b"[" * depth + b"]" * depth + b"}").rstrip(b"=")
    return header.decode() + ".e30.c2ln"


async def test_a_token_whose_header_nests_thousands_deep_is_a_401_not_a_500(server: Running) -> None:
    response = await post(server, forged_header_token(5000))
    assert response.status_code == 401
    assert challenge(response)["error_description"] == "the token is not a well-formed JWT"
    assert challenge(response)["resource_metadata"] == METADATA_URL
    assert not [line for line in server.lines("err") if line["level"] == "error"]


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
@pytest.mark.parametrize(
    "spelled", [str, lambda t: True, lambda t: [t], lambda t: float("inf")], ids=["string", "bool", "list", "infinity"]
)
async def test_a_time_claim_that_is_not_a_number_is_refused(
    server: Running, issuer: Issuer, claim: str, spelled
) -> None:
    now = int(time.time())
    valid = {"exp": now + 300, "nbf": now - 10, "iat": now - 10}[claim]
    response = await post(server, issuer.token(**{claim: spelled(valid)}))
    assert response.status_code == 401
    assert challenge(response)["error_description"] == f"the token's {claim} claim is not a number"


async def test_an_exp_given_as_a_string_of_digits_is_refused_by_name(server: Running, issuer: Issuer) -> None:
    response = await post(server, issuer.token(exp=str(int(time.time()) + 300)))
    assert response.status_code == 401
    assert challenge(response)["error_description"] == "the token's exp claim is not a number"


@pytest.fixture
async def deep_introspection() -> AsyncIterator[str]:
    async def answer(request: web.Request) -> web.Response:
        return web.Response(
            text='{"active":true,"x":' + "[" * DEPTH + "]" * DEPTH + "}", content_type="application/json"
        )

    app = web.Application()
    app.router.add_post("/introspect", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/introspect"
    await runner.cleanup()


async def test_an_introspection_answer_nested_thousands_deep_refuses_the_token_saying_why(
    deep_introspection: str, issuer: Issuer, capsys
) -> None:
    settings = OAuthSettings(
        issuer=ISSUER,
        jwks_url=issuer.jwks_url,
        resource_url=RESOURCE,
        audience=RESOURCE,
        allow_http_loopback=True,
        introspection_url=deep_introspection,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
    )
    verifier = IntrospectionVerifier(settings, JsonLog())
    with pytest.raises(TokenRefused, match="cannot check the token now"):
        await verifier.check("opaque-token-value")
    line = json.loads(capsys.readouterr().err.strip())
    assert line["event"] == "introspection_failed"
    assert line["message"].endswith("the JSON nests arrays or objects deeper than 64 levels")
    assert "opaque-token-value" not in line["message"]


def test_the_auth_line_warns_when_no_tenant_claim_binds_tokens_and_names_introspection(issuer: Issuer) -> None:
    bare = oauth_settings(issuer)
    out, err = oauth_lines(bare, [])
    assert out == [f"auth: OAuth 2.1 tokens from {ISSUER} for {RESOURCE}"]
    assert err == [
        "warning: MCP_TENANT_CLAIM is not set: any valid token may use any tenant the request's headers name. "
        "Set it to bind each token to its tenants."
    ]
    from dataclasses import replace

    bound = replace(bare, tenant_claim="tenants", introspection_url="https://login.example.com/introspect")
    out, err = oauth_lines(bound, ["auth: MCP_API_KEY is set; every request must present it as a bearer token"])
    assert out[1] == (
        f"auth: OAuth 2.1 tokens from {ISSUER} for {RESOURCE}; opaque tokens introspected at "
        "https://login.example.com/introspect; tenants from the 'tenants' claim"
    )
    assert err == []
