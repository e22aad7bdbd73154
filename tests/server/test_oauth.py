"""serve-http as an OAuth 2.1 resource server: JWT access tokens from a test
authorization server on 127.0.0.1, through the MCP SDK client and raw HTTP."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from mcp.shared.auth import ProtectedResourceMetadata

from mcp_memory.app import open_service
from mcp_memory.config import OAuthSettings, Settings
from mcp_memory.core.logs import NullLog
from mcp_memory.server.http.oauth import JwtVerifier
from tests.support.http_support import Running, mcp_client, serving, text
from tests.support.issuer import ISSUER, RESOURCE, Issuer, issuer_server

METADATA_URL = "https://memory.example.test/.well-known/oauth-protected-resource/mcp"
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "x"}}}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def oauth_settings(issuer: Issuer, **changes) -> OAuthSettings:
    base = OAuthSettings(
        issuer=ISSUER,
        jwks_url=issuer.jwks_url,
        resource_url=RESOURCE,
        audience=RESOURCE,
        jwks_min_refresh_s=0,
        allow_http_loopback=True,
    )
    return replace(base, **changes)


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    async with issuer_server() as running:
        running.publish("k1")
        yield running


async def service(tmp_path: Path):
    settings = Settings.from_env(
        {"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "HOSTNAME": "t"}
    )
    return await open_service(settings)


@pytest.fixture
async def server(tmp_path: Path, issuer: Issuer) -> AsyncIterator[Running]:
    async with serving(await service(tmp_path), oauth=oauth_settings(issuer), api_key="static-key") as running:
        yield running


async def post(server: Running, token: str | None, body: dict = CALL, **headers: str) -> httpx.Response:
    sent = {"accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient() as client:
        return await client.post(server.mcp_url, json=body, headers=sent)


async def fetched(issuer: Issuer, count: int) -> None:
    while issuer.fetches < count:
        await asyncio.sleep(0.01)


def challenge(response: httpx.Response) -> dict[str, str]:
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


# --------------------------------------------------------------------------- a valid token


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_valid_token_works_end_to_end_through_the_sdk_client(
    server: Running, issuer: Issuer, mode: str
) -> None:
    headers = [*bearer(issuer.token()), ("x-memory-tenant", "acme")]
    async with mcp_client(server, headers, mode=mode) as client:
        stored = await client.call_tool("remember", {"content": "the deploy key lives in vault"})
        assert not stored.is_error, text(stored)
        found = await client.call_tool("recall", {"query": "deploy key"})
        assert "the deploy key lives in vault" in text(found)


async def test_the_static_key_still_works_beside_oauth(server: Running) -> None:
    async with mcp_client(server, [*bearer("static-key"), ("x-memory-tenant", "acme")]) as client:
        assert not (await client.call_tool("memory_stats", {})).is_error


# --------------------------------------------------------------------------- refusals


async def test_no_token_gets_a_401_pointing_at_the_protected_resource_document(server: Running) -> None:
    response = await post(server, None)
    assert response.status_code == 401
    params = challenge(response)
    assert params["resource_metadata"] == METADATA_URL
    assert "error" not in params  # no credentials: no error code (docs/context.md, RFC 6750)
    # the document is served where the challenge points (the path RFC 9728 derives), and at the bare path
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        async with httpx.AsyncClient() as client:
            got = await client.get(server.url + path)
        assert got.status_code == 200
        document = ProtectedResourceMetadata.model_validate(got.json())
        assert str(document.resource) == RESOURCE
        assert [str(u).rstrip("/") for u in document.authorization_servers] == [ISSUER]
        assert document.scopes_supported == ["memory:read", "memory:write", "memory:forget"]
        assert document.bearer_methods_supported == ["header"]


def unsigned(claims: dict) -> str:
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT', 'kid': 'k1'})}.{part(claims)}."


def tampered(token: str) -> str:
    head, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["scope"] = "memory:read memory:write memory:forget admin"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{signature}"


def hs256_with_public_key(issuer: Issuer) -> str:
    public = (
        issuer.keys["k1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": RESOURCE, "exp": now + 300, "scope": "memory:read"}
    # PyJWT refuses to sign HS256 with a PEM key; the attack is made by hand, as an attacker would
    head = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "kid": "k1"}).encode()).rstrip(b"=")
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=")
    import hashlib
    import hmac

    mac = hmac.new(public, head + b"." + body, hashlib.sha256).digest()
    return (head + b"." + body + b"." + base64.urlsafe_b64encode(mac).rstrip(b"=")).decode()


REFUSED = {
    "expired": (lambda i: i.token(exp=int(time.time()) - 120), "the token has expired"),
    "not yet valid": (lambda i: i.token(nbf=int(time.time()) + 120), "the token is not valid yet"),
    "wrong issuer": (lambda i: i.token(iss="https://other.example.test"), "the token was issued by another issuer"),
    "wrong audience": (
        lambda i: i.token(aud="https://other.example.test/mcp"),
        "the token was issued for another resource",
    ),
    "no exp": (lambda i: i.token(exp=None), "the token has no exp claim"),
    "alg none": (lambda i: unsigned({"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 300}), "'none'"),
    "HS256 with the public key": (hs256_with_public_key, "'HS256' are not accepted"),
    "tampered payload": (lambda i: tampered(i.token()), "the token's signature does not verify"),
    "signed by another key under a known kid": (
        lambda i: i.token(key=__import__("tests.support.issuer", fromlist=["rsa_key"]).rsa_key()),
        "the token's signature does not verify",
    ),
    "not a JWT": (lambda i: "not-a-jwt", "the token is not a well-formed JWT"),
}


@pytest.mark.parametrize("case", REFUSED)
async def test_a_bad_token_is_refused_with_401_invalid_token_saying_why(
    server: Running, issuer: Issuer, case: str
) -> None:
    make, why = REFUSED[case]
    response = await post(server, make(issuer))
    assert response.status_code == 401
    params = challenge(response)
    assert params["error"] == "invalid_token"
    assert why in params["error_description"]
    assert params["resource_metadata"] == METADATA_URL
    assert response.json()["error"]["message"] == "missing or invalid bearer token"


async def test_a_small_clock_skew_is_forgiven(server: Running, issuer: Issuer) -> None:
    token = issuer.token(exp=int(time.time()) - 5, nbf=int(time.time()) + 5)
    async with mcp_client(server, [*bearer(token), ("x-memory-tenant", "acme")]) as client:
        assert not (await client.call_tool("memory_stats", {})).is_error


def call(name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize(
    ("scopes", "body", "needed"),
    [
        ("memory:read", call("remember", {"content": "x"}), "memory:write"),
        (
            "memory:read memory:write",
            call("remember", {"content": "x", "replaces": ["01J0000000000000000000000A"]}),
            "memory:forget",
        ),
        ("memory:read memory:write", call("forget", {"id": "01J0000000000000000000000A"}), "memory:forget"),
        ("memory:write", call("recall", {"query": "x"}), "memory:read"),
        ("memory:write", call("list_memories", {}), "memory:read"),
        ("memory:write", {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": {}}, "memory:read"),
        (
            "memory:write",
            {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "memory://recent"}},
            "memory:read",
        ),
        (
            "memory:write",
            {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "recall-context"}},
            "memory:read",
        ),
    ],
)
async def test_a_missing_scope_is_refused_with_403_naming_the_scope(
    server: Running, issuer: Issuer, scopes: str, body: dict, needed: str
) -> None:
    response = await post(server, issuer.token(scope=scopes), body, **{"x-memory-tenant": "acme"})
    assert response.status_code == 403
    params = challenge(response)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == needed
    assert params["resource_metadata"] == METADATA_URL


async def test_a_read_only_token_reads_and_is_refused_a_write(server: Running, issuer: Issuer) -> None:
    headers = [*bearer(issuer.token(scope="memory:read")), ("x-memory-tenant", "acme")]
    async with mcp_client(server, headers) as client:
        assert not (await client.call_tool("recall", {"query": "anything"})).is_error
        with pytest.raises(Exception, match="403|insufficient"):
            await client.call_tool("remember", {"content": "not allowed"})


# --------------------------------------------------------------------------- keys


async def test_an_unknown_kid_is_refused_until_the_issuer_rotates_it_in(server: Running, issuer: Issuer) -> None:
    new_key = issuer.publish("k2")
    del issuer.keys["k2"]
    token = issuer.token("k2", key=new_key)
    refused = await post(server, token, **{"x-memory-tenant": "acme"})
    assert refused.status_code == 401
    assert "does not publish" in challenge(refused)["error_description"]
    issuer.keys["k2"] = new_key  # rotated in: the next unknown kid refetches
    async with mcp_client(server, [*bearer(token), ("x-memory-tenant", "acme")]) as client:
        assert not (await client.call_tool("memory_stats", {})).is_error


async def test_unknown_kids_refetch_the_jwks_at_most_once_per_refresh_interval(tmp_path: Path, issuer: Issuer) -> None:
    settings = oauth_settings(issuer, jwks_min_refresh_s=60)
    async with serving(await service(tmp_path), oauth=settings) as running:
        good = issuer.token()
        assert (await post(running, good)).status_code != 401
        before = issuer.fetches
        stranger = issuer.token("k9", key=issuer.publish("k9"))
        del issuer.keys["k9"]
        for _ in range(20):
            assert (await post(running, stranger)).status_code == 401
        assert issuer.fetches == before  # the first fetch was just now: none in the next 60 s


async def test_a_jwks_outage_keeps_cached_keys_for_their_lifetime_then_fails_closed(
    tmp_path: Path, issuer: Issuer
) -> None:
    clock = Clock()
    settings = oauth_settings(issuer, jwks_cache_s=100, jwks_min_refresh_s=1)
    verifier = JwtVerifier(settings, NullLog(), clock=clock)
    async with serving(await service(tmp_path), oauth=settings, verifier=verifier) as running:
        headers = {"x-memory-tenant": "acme"}
        token = issuer.token()
        assert (await post(running, token, **headers)).status_code == 200
        issuer.down = True
        clock.now += 80  # past half the lifetime: a refetch is tried beside the call, fails, the keys stay
        fetches = issuer.fetches
        assert (await post(running, token, **headers)).status_code == 200
        await asyncio.wait_for(fetched(issuer, fetches + 1), timeout=30)
        assert (await post(running, token, **headers)).status_code == 200
        assert issuer.fetches == fetches + 1
        clock.now += 30  # past the lifetime, the issuer still down: every token is refused
        refused = await post(running, token, **headers)
        assert refused.status_code == 401
        assert "signing keys are unavailable" in challenge(refused)["error_description"]
        issuer.down = False
        clock.now += 2
        assert (await post(running, token, **headers)).status_code == 200


async def test_a_hanging_jwks_endpoint_costs_one_bounded_fetch_and_never_holds_up_a_known_key(
    tmp_path: Path, issuer: Issuer
) -> None:
    settings = oauth_settings(issuer, jwks_timeout_s=3.0)
    async with serving(await service(tmp_path), oauth=settings) as running:
        headers = {"x-memory-tenant": "acme"}
        good = issuer.token()
        assert (await post(running, good, **headers)).status_code == 200
        before = issuer.fetches
        issuer.hang = True
        stranger = issuer.token("k9", key=issuer.publish("k9"))
        del issuer.keys["k9"]
        async with httpx.AsyncClient(timeout=60) as client:
            sent = {"authorization": f"Bearer {stranger}", "accept": "application/json, text/event-stream"}
            strangers = [asyncio.create_task(client.post(running.mcp_url, json=CALL, headers=sent)) for _ in range(10)]
            while not issuer.hanging:
                await asyncio.sleep(0.01)
            known = await post(running, good, **headers)  # while the one fetch hangs
            assert known.status_code == 200
            assert not any(task.done() for task in strangers)
            refused = await asyncio.gather(*strangers)  # once the fetch gave up
        assert [r.status_code for r in refused] == [401] * 10
        assert all("does not publish" in challenge(r)["error_description"] for r in refused)
        assert issuer.fetches == before + 1 and issuer.hanging == 1
    warnings = [line for line in running.lines("err") if line.get("event") == "jwks_fetch_failed"]
    assert [line["message"] for line in warnings] == [
        f"could not fetch the JWKS from {issuer.jwks_url}: no answer in 3 s"
    ]


# --------------------------------------------------------------------------- tenants from the token


@pytest.fixture
async def claimed(tmp_path: Path, issuer: Issuer) -> AsyncIterator[Running]:
    settings = oauth_settings(issuer, tenant_claim="tenants")
    async with serving(await service(tmp_path), oauth=settings) as running:
        yield running


async def stats(running: Running, token: str, tenant: str | None) -> tuple[bool, str]:
    headers = bearer(token) + ([("x-memory-tenant", tenant)] if tenant else [])
    async with mcp_client(running, headers) as client:
        result = await client.call_tool("memory_stats", {})
        return result.is_error, text(result)


async def test_the_tenant_claim_restricts_the_header_to_the_tokens_tenants(claimed: Running, issuer: Issuer) -> None:
    token = issuer.token(tenants=["acme", "beta"])
    assert (await stats(claimed, token, "acme"))[0] is False
    assert (await stats(claimed, token, "beta"))[0] is False
    error, message = await stats(claimed, token, "gamma")
    assert error
    assert message == 'Error: tenant "gamma" is not one this token may use (its "tenants" claim)'
    error, message = await stats(claimed, token, None)
    assert error
    assert "may use the tenants acme, beta: choose one with the x-memory-tenant header" in message
    assert [line["tenant"] for line in claimed.tool_calls()] == ["acme", "beta"]


async def test_a_single_tenant_claim_needs_no_header(claimed: Running, issuer: Issuer) -> None:
    assert (await stats(claimed, issuer.token(tenants="acme"), None))[0] is False
    assert [line["tenant"] for line in claimed.tool_calls()] == ["acme"]


async def test_a_token_without_the_tenant_claim_may_use_no_tenant(claimed: Running, issuer: Issuer) -> None:
    error, message = await stats(claimed, issuer.token(), "acme")
    assert error
    assert message == 'Error: this token names no tenant in its "tenants" claim, so it may use none'


# --------------------------------------------------------------------------- settings


def env(**values: str) -> dict[str, str]:
    return {"MEMORY_DB_PATH": "/tmp/x.db", **values}


def test_oauth_settings_are_read_and_the_audience_defaults_to_the_resource() -> None:
    settings = Settings.from_env(
        env(
            MCP_OAUTH_ISSUER="https://login.example.com/",
            MCP_OAUTH_JWKS_URL="https://login.example.com/.well-known/jwks.json",
            MCP_RESOURCE_URL="https://memory.example.com/mcp",
            MCP_TENANT_CLAIM="tenant",
            MCP_SCOPE_READ="mem.read",
        )
    )
    assert settings.serve.oauth is not None
    assert settings.serve.oauth.audience == "https://memory.example.com/mcp"
    assert settings.serve.oauth.scopes == ("mem.read", "memory:write", "memory:forget")
    assert settings.serve.oauth.tenant_claim == "tenant"
    assert "HS256" not in settings.serve.oauth.algorithms and "none" not in settings.serve.oauth.algorithms


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"MCP_OAUTH_JWKS_URL": "https://a/jwks"}, "MCP_OAUTH_JWKS_URL is set but MCP_OAUTH_ISSUER is not"),
        ({"MCP_OAUTH_ISSUER": "https://a"}, "MCP_OAUTH_JWKS_URL is required when MCP_OAUTH_ISSUER is set"),
        (
            {
                "MCP_OAUTH_ISSUER": "https://a",
                "MCP_OAUTH_JWKS_URL": "http://127.0.0.1:9/jwks",
                "MCP_RESOURCE_URL": "https://m/mcp",
            },
            "MCP_OAUTH_JWKS_URL must be an https:// URL",
        ),
        (
            {
                "MCP_OAUTH_ISSUER": "https://a",
                "MCP_OAUTH_JWKS_URL": "http://idp.example.com/jwks",
                "MCP_RESOURCE_URL": "https://m/mcp",
                "MCP_OAUTH_ALLOW_HTTP_LOOPBACK": "true",
            },
            "MCP_OAUTH_JWKS_URL must be an https:// URL",
        ),
        (
            {
                "MCP_OAUTH_ISSUER": "https://a",
                "MCP_OAUTH_JWKS_URL": "https://a/j",
                "MCP_RESOURCE_URL": "https://m/mcp",
                "MCP_OAUTH_ALGORITHMS": "RS256,HS256",
            },
            "MCP_OAUTH_ALGORITHMS may name only RS256",
        ),
        (
            {
                "MCP_OAUTH_ISSUER": "https://a",
                "MCP_OAUTH_JWKS_URL": "https://a/j",
                "MCP_RESOURCE_URL": "https://m/mcp",
                "MCP_SCOPE_WRITE": 'a"b',
            },
            "MCP_SCOPE_WRITE must be one scope token",
        ),
    ],
)
def test_bad_oauth_settings_are_refused_by_name(values: dict[str, str], message: str) -> None:
    from mcp_memory.core.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(message)):
        Settings.from_env(env(**values))


def test_http_jwks_on_loopback_is_allowed_only_by_the_explicit_setting() -> None:
    values = {
        "MCP_OAUTH_ISSUER": "https://a",
        "MCP_OAUTH_JWKS_URL": "http://127.0.0.1:9/jwks",
        "MCP_RESOURCE_URL": "https://m/mcp",
        "MCP_OAUTH_ALLOW_HTTP_LOOPBACK": "true",
    }
    settings = Settings.from_env(env(**values))
    assert settings.serve.oauth is not None and settings.serve.oauth.jwks_url == "http://127.0.0.1:9/jwks"
    assert jwt.__version__  # PyJWT is what validates (the oauth extra)
