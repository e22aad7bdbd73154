"""`mcp-memory oauth check` against the test issuer on 127.0.0.1, run in process
(tests/support/cli_runner.py): a good token is ACCEPTED with what it may do, each kind of bad one
is REFUSED with serve-http's reason and exit 1, and no output ever holds the token or the
introspection secret."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.cli_runner import run_cli
from tests.support.issuer import CLIENT_ID, CLIENT_SECRET, RESOURCE, Issuer, issuer_server


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    async with issuer_server() as running:
        running.publish("k1")
        yield running


async def check(issuer: Issuer, token: str | None, tmp_path: Path, *extra: str, **env: str) -> tuple[int, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "MCP_", "EMBEDDING_"))}
    environment |= {
        "PYTHONPATH": str(ROOT),
        "MEMORY_DB_PATH": str(tmp_path / "m.db"),
        "MCP_OAUTH_ISSUER": issuer.url,
        "MCP_OAUTH_JWKS_URL": issuer.jwks_url,
        "MCP_RESOURCE_URL": RESOURCE,
        "MCP_OAUTH_ALLOW_HTTP_LOOPBACK": "true",
        **env,
    }
    args = ["oauth", "check", *extra]
    if token is not None:
        (tmp_path / "token").write_text(token + "\n")
        args += ["--token-file", str(tmp_path / "token")]
    # In a worker thread: the command runs its own event loop, and this one serves the issuer.
    done = await asyncio.to_thread(run_cli, *args, env=environment)
    return done.returncode, done.output


async def test_a_good_token_is_accepted_with_its_scopes_and_the_issuer_it_checked(issuer: Issuer, tmp_path) -> None:
    token = issuer.token(iss=issuer.url)
    code, out = await check(issuer, token, tmp_path)
    assert code == 0, out
    assert f"issuer:        {issuer.url}\n" in out
    assert f"metadata:      {issuer.url}/.well-known/oauth-authorization-server\n" in out
    assert "  issuer is MCP_OAUTH_ISSUER\n  jwks_uri is MCP_OAUTH_JWKS_URL\n" in out
    assert "keys:          1 signing key: k1 (RSA)\n" in out
    assert "token:         ACCEPTED (a JWT), client agent, expires in 4 min\n" in out
    assert "  memory:forget: forget, and remember with replaces: allowed\n" in out
    assert "  tenants: any the request's tenant header names\n" in out
    assert token not in out


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iss": "https://someone-else.example"}, "the token was issued by another issuer"),
        ({"aud": "https://other.example/mcp"}, "the token was issued for another resource"),
        ({"exp": int(time.time()) - 3600}, "the token has expired"),
        ({"nbf": int(time.time()) + 3600}, "the token is not valid yet"),
    ],
)
async def test_a_token_serve_http_would_refuse_is_refused_saying_why(
    issuer: Issuer, tmp_path, claims: dict, reason: str
) -> None:
    token = issuer.token(**{"iss": issuer.url, **claims})
    code, out = await check(issuer, token, tmp_path)
    assert code == 1
    assert f"token:         REFUSED (a JWT): {reason}\n" in out
    assert '  serve-http answers 401 with error="invalid_token" and this reason\n' in out
    assert token not in out


async def test_a_token_signed_by_a_key_the_issuer_does_not_publish_is_refused(issuer: Issuer, tmp_path) -> None:
    from tests.support.issuer import rsa_key

    token = issuer.token("k9", key=rsa_key(), iss=issuer.url)
    code, out = await check(issuer, token, tmp_path)
    assert code == 1 and "REFUSED (a JWT): the token is signed with a key the authorization server" in out
    assert token not in out


async def test_a_token_without_a_scope_or_a_tenant_it_may_use_can_do_nothing(issuer: Issuer, tmp_path) -> None:
    read_only = issuer.token(iss=issuer.url, scope="memory:read", tenants=["acme"])
    code, out = await check(issuer, read_only, tmp_path, "--tenant", "beta", MCP_TENANT_CLAIM="tenants")
    assert code == 1, out
    assert "  memory:read: recall, list_memories, memory_stats, search_docs: allowed\n" in out
    assert "  memory:write: remember: REFUSED with 403 insufficient_scope\n" in out
    assert "  tenants: acme (its tenants claim)\n" in out
    assert '  tenant beta: REFUSED: "beta" is not one this token may use\n' in out
    code, out = await check(issuer, read_only, tmp_path, "--tenant", "acme", MCP_TENANT_CLAIM="tenants")
    assert code == 0 and "  tenant acme: allowed\n" in out
    nothing = issuer.token(iss=issuer.url, scope="profile")
    code, out = await check(issuer, nothing, tmp_path)
    assert code == 1 and "  memory:read: recall, list_memories, memory_stats, search_docs: REFUSED" in out


async def test_an_opaque_token_is_checked_by_introspection_and_the_secret_never_shown(issuer: Issuer, tmp_path) -> None:
    introspection = {
        "MCP_OAUTH_INTROSPECTION_URL": issuer.introspection_url,
        "MCP_OAUTH_CLIENT_ID": CLIENT_ID,
        "MCP_OAUTH_CLIENT_SECRET": CLIENT_SECRET,
    }
    good = issuer.opaque(iss=issuer.url)
    code, out = await check(issuer, good, tmp_path, **introspection)
    assert code == 0, out
    assert f"introspection: {issuer.introspection_url} (client {CLIENT_ID}, secret set)\n" in out
    assert "token:         ACCEPTED (an opaque token), client agent" in out
    revoked = issuer.opaque(iss=issuer.url, active=False)
    code, out = await check(issuer, revoked, tmp_path, **introspection)
    assert code == 1 and "token:         REFUSED (an opaque token): " in out
    for shown in (good, revoked, CLIENT_SECRET):
        assert shown not in out


async def test_without_a_token_it_checks_the_settings_and_the_keys(issuer: Issuer, tmp_path) -> None:
    code, out = await check(issuer, None, tmp_path)
    assert code == 0 and "keys:          1 signing key: k1 (RSA)\n" in out and "token:" not in out
    issuer.down = True
    code, out = await check(issuer, None, tmp_path)
    assert "keys:          NONE: every JWT would be refused\n" in out
    assert f"could not fetch the JWKS from {issuer.jwks_url}: ValueError: HTTP 503" in out


async def test_without_oauth_settings_it_says_what_to_set(issuer: Issuer, tmp_path) -> None:
    code, out = await check(issuer, None, tmp_path, MCP_OAUTH_ISSUER="", MCP_OAUTH_JWKS_URL="", MCP_RESOURCE_URL="")
    assert code == 2
    assert out == (
        "error: OAuth is not configured: set MCP_OAUTH_ISSUER, MCP_OAUTH_JWKS_URL and MCP_RESOURCE_URL (docs/oauth.md)\n"
    )


async def test_the_docs_recipe_mints_a_local_token_that_oauth_check_accepts(tmp_path) -> None:
    """docs/oauth.md#a-local-test-token, as written: its Python mints the key, the JWKS and the
    token; the JWKS is served on 127.0.0.1 (by aiohttp here, as the recipe's http.server would)."""
    import re

    from aiohttp import web

    page = (ROOT / "docs" / "oauth.md").read_text(encoding="utf-8").split("### A local test token", 1)[1]
    (recipe,) = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    done = await asyncio.create_subprocess_exec(sys.executable, "-c", recipe, cwd=tmp_path)
    assert await done.wait() == 0

    async def jwks(request: web.Request) -> web.FileResponse:
        return web.FileResponse(tmp_path / "jwks.json")

    app = web.Application()
    app.router.add_get("/jwks.json", jwks)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 8765)
    await site.start()
    try:
        served = Issuer(url="http://127.0.0.1:8765")
        env = {"MCP_OAUTH_JWKS_URL": served.url + "/jwks.json", "MCP_RESOURCE_URL": "http://127.0.0.1:3000/mcp"}
        env |= {"MCP_TENANT_CLAIM": "tenants"}
        token = (tmp_path / "token.txt").read_text()
        code, out = await check(served, token, tmp_path, "--tenant", "acme", **env)
    finally:
        await runner.cleanup()
    assert code == 0, out
    assert "keys:          1 signing key: local-1 (RS256)\n" in out and "token:         ACCEPTED (a JWT)" in out
    assert "  tenant acme: allowed\n" in out and token not in out
    bash = re.findall(r"```bash\n(.*?)```", page, flags=re.DOTALL)[0]
    assert "MCP_OAUTH_ISSUER=http://127.0.0.1:8765 MCP_OAUTH_JWKS_URL=http://127.0.0.1:8765/jwks.json" in bash
