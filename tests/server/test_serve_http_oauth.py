"""`mcp-memory serve-http` as an operator runs it, with OAuth and metrics set in the
environment: the variables reach the app, the boot lines say so, /metrics answers."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support.http_process import clean_env, http_process
from tests.support.http_support import mcp_client
from tests.support.issuer import ISSUER, RESOURCE, issuer_server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_serve_http_with_oauth_and_metrics_from_the_environment(tmp_path: Path) -> None:
    async with issuer_server() as issuer:
        issuer.publish("k1")
        port = free_port()
        env = clean_env(
            tmp_path,
            MEMORY_DB_PATH=str(tmp_path / "m.db"),
            EMBEDDING_PROVIDER="fake",
            MCP_OAUTH_ISSUER=ISSUER,
            MCP_OAUTH_JWKS_URL=issuer.jwks_url,
            MCP_RESOURCE_URL=RESOURCE,
            MCP_OAUTH_ALLOW_HTTP_LOOPBACK="true",
            MCP_TENANT_CLAIM="tenant",
            METRICS_PORT=str(port),
        )
        async with http_process(env, tmp_path / "err.log", boot_lines=6) as server:
            assert (
                server.boot[4]
                == f"auth: OAuth 2.1 tokens from {ISSUER} for {RESOURCE}; tenants from the 'tenant' claim"
            )
            assert "MCP_TENANT_CLAIM is not set" not in server.err()
            assert server.boot[5] == f"metrics: http://127.0.0.1:{port}/metrics"
            assert "MCP_API_KEY is NOT set" not in server.err()  # OAuth: nobody gets in without a token
            async with httpx.AsyncClient() as http:
                refused = await http.post(server.mcp_url, json={})
                assert refused.status_code == 401
                assert "resource_metadata=" in refused.headers["www-authenticate"]
            token = issuer.token(tenant="acme")
            async with mcp_client(server.mcp_url, [("authorization", f"Bearer {token}")]) as client:
                stored = await client.call_tool("remember", {"content": "served through a real token"})
                assert not stored.is_error
            async with httpx.AsyncClient() as http:
                scraped = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
            values = {
                (s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(scraped)
                for s in family.samples
            }
            assert values[("mcp_memory_tool_calls_total", (("outcome", "ok"), ("tool", "remember")))] == 1
            assert values[("mcp_memory_http_rejected_requests_total", (("reason", "auth"),))] == 1
            code, _, _ = await server.stop()
            assert code == 0
