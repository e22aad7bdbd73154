"""Opaque access tokens checked by RFC 7662 introspection at a test authorization server on
127.0.0.1: held to the same rules as a JWT (active, issuer, audience, expiry, scopes, the
tenant claim), cached until their expiry or the cache's age, refused when the server cannot
be asked (fail closed), and the client secret never shown."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from mcp_memory.app import open_service
from mcp_memory.config import OAuthSettings, Settings
from mcp_memory.core.errors import ConfigError
from mcp_memory.core.logs import NullLog
from mcp_memory.server.http.introspection import IntrospectionVerifier, TokenVerifiers
from mcp_memory.server.http.oauth import JwtVerifier
from tests.support.http_support import Running, mcp_client, serving, text
from tests.support.issuer import CLIENT_ID, CLIENT_SECRET, ISSUER, RESOURCE, Issuer, issuer_server

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_stats", "arguments": {}}}


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def settings_for(issuer: Issuer, **changes) -> OAuthSettings:
    base = OAuthSettings(
        issuer=ISSUER,
        jwks_url=issuer.jwks_url,
        resource_url=RESOURCE,
        audience=RESOURCE,
        allow_http_loopback=True,
        introspection_url=issuer.introspection_url,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
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


async def post(running: Running, token: str, **headers: str) -> httpx.Response:
    sent = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {token}", **headers}
    async with httpx.AsyncClient() as client:
        return await client.post(running.mcp_url, json=CALL, headers=sent)


def description(response: httpx.Response) -> str:
    value = response.headers["www-authenticate"]
    return value.split('error_description="', 1)[1].split('"', 1)[0]


async def test_an_active_opaque_token_works_through_the_sdk_client_and_its_tenant_claim_applies(
    tmp_path: Path, issuer: Issuer
) -> None:
    token = issuer.opaque(tenants=["acme"])
    settings = settings_for(issuer, tenant_claim="tenants")
    async with serving(await service(tmp_path), oauth=settings) as running:
        async with mcp_client(running, [("authorization", f"Bearer {token}")]) as client:
            stored = await client.call_tool("remember", {"content": "the deploy key rotates monthly"})
            assert not stored.is_error
            assert "monthly" in text(await client.call_tool("recall", {"query": "deploy key"}))
        refused = await post(running, token, **{"x-memory-tenant": "other"})
        assert refused.status_code == 200
        assert 'tenant \\"other\\" is not one this token may use' in refused.text
    assert issuer.introspections == 1  # every later call was answered from the cache


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"active": False}, "the authorization server says the token is not active"),
        ({"exp": 1000}, "the token has expired"),
        ({"nbf": 4_000_000_000}, "the token is not valid yet"),
        ({"iss": "https://elsewhere.example.test"}, "the token was issued by another issuer"),
        ({"aud": "https://other.example.test/mcp"}, "the token was issued for another resource"),
        ({"aud": None}, "the token was issued for another resource"),
    ],
)
async def test_an_opaque_token_is_refused_by_the_same_rules_as_a_jwt(
    tmp_path: Path, issuer: Issuer, answer: dict, why: str
) -> None:
    token = issuer.opaque(**answer)
    async with serving(await service(tmp_path), oauth=settings_for(issuer)) as running:
        refused = await post(running, token, **{"x-memory-tenant": "acme"})
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert description(refused) == why


async def test_a_missing_scope_is_403_as_for_a_jwt(tmp_path: Path, issuer: Issuer) -> None:
    token = issuer.opaque(scope="memory:write")
    async with serving(await service(tmp_path), oauth=settings_for(issuer)) as running:
        refused = await post(running, token, **{"x-memory-tenant": "acme"})
    assert refused.status_code == 403
    assert 'scope="memory:read"' in refused.headers["www-authenticate"]


async def test_the_cache_lasts_until_the_tokens_expiry_or_the_cache_age_whichever_is_first(
    tmp_path: Path, issuer: Issuer
) -> None:
    clock = Clock()
    settings = settings_for(issuer, introspection_cache_s=60)
    verifier = TokenVerifiers(JwtVerifier(settings, NullLog()), IntrospectionVerifier(settings, NullLog(), clock=clock))
    long_lived = issuer.opaque(exp=int(clock.now) + 3600)
    short_lived = issuer.opaque(exp=int(clock.now) + 10)
    async with serving(await service(tmp_path), oauth=settings, verifier=verifier) as running:
        headers = {"x-memory-tenant": "acme"}
        for token in (long_lived, short_lived, long_lived, short_lived):
            assert (await post(running, token, **headers)).status_code == 200
        assert issuer.introspections == 2
        clock.now += 11  # past the short token's expiry: asked again, and refused (revoked meanwhile)
        issuer.answers[short_lived]["active"] = False
        assert (await post(running, short_lived, **headers)).status_code == 401
        assert (await post(running, short_lived, **headers)).status_code == 401  # refused from the cache
        assert (await post(running, long_lived, **headers)).status_code == 200
        assert issuer.introspections == 3
        clock.now += 50  # past the cache's 60 s: the long token is asked about again
        assert (await post(running, long_lived, **headers)).status_code == 200
        assert issuer.introspections == 4


async def test_an_unreachable_introspection_endpoint_refuses_tokens_and_never_shows_the_secret(
    tmp_path: Path, issuer: Issuer
) -> None:
    token = issuer.opaque()
    async with serving(await service(tmp_path), oauth=settings_for(issuer)) as running:
        issuer.down = True
        down = await post(running, token, **{"x-memory-tenant": "acme"})
        issuer.down = False
        wrong = settings_for(issuer, client_secret="not-the-secret")
    async with serving(await service(tmp_path), oauth=wrong) as other:
        refused = await post(other, token, **{"x-memory-tenant": "acme"})
    for response in (down, refused):
        assert response.status_code == 401
        assert description(response) == "the authorization server cannot check the token now; try again later"
    lines = running.lines("err") + other.lines("err")
    assert [line["event"] for line in lines] == ["introspection_failed", "introspection_failed"]
    assert lines[1]["message"].endswith(": HTTP 401")
    everything = running.out.getvalue() + running.err.getvalue() + other.out.getvalue() + other.err.getvalue()
    for secret in (CLIENT_SECRET, "not-the-secret", token):
        assert secret not in everything and secret not in down.text + refused.text


async def test_a_jwt_still_goes_to_the_jwks_beside_introspection(tmp_path: Path, issuer: Issuer) -> None:
    async with serving(await service(tmp_path), oauth=settings_for(issuer)) as running:
        assert (await post(running, issuer.token(), **{"x-memory-tenant": "acme"})).status_code == 200
    assert issuer.introspections == 0


def test_introspection_needs_the_client_credentials_and_hides_the_secret() -> None:
    env = {
        "MEMORY_DB_PATH": "/tmp/x",
        "MCP_OAUTH_ISSUER": "https://login.example.com/",
        "MCP_OAUTH_JWKS_URL": "https://login.example.com/jwks",
        "MCP_RESOURCE_URL": "https://memory.example.com/mcp",
        "MCP_OAUTH_INTROSPECTION_URL": "https://login.example.com/introspect",
    }
    with pytest.raises(ConfigError, match="MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET are required"):
        Settings.from_env(env)
    with pytest.raises(ConfigError, match="MCP_OAUTH_INTROSPECTION_URL must be an https:// URL"):
        Settings.from_env({**env, "MCP_OAUTH_INTROSPECTION_URL": "http://login.example.com/introspect"})
    settings = Settings.from_env({**env, "MCP_OAUTH_CLIENT_ID": "memory", "MCP_OAUTH_CLIENT_SECRET": "hunter2-secret"})
    assert settings.serve.oauth is not None and settings.serve.oauth.client_secret == "hunter2-secret"
    assert settings.serve.oauth.introspection_cache_s == 60
    assert "hunter2-secret" not in repr(settings)
