"""Backpressure on serve-http: a token bucket per tenant (429 + Retry-After) and a cap
on requests answered at once (503 + Retry-After), both answered at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np

from mcp_memory.app import open_service
from mcp_memory.config import CallLimits, HttpLimits, Settings
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.server.http.backpressure import TenantBuckets
from tests.support.http_support import mcp_client, serving

ACCEPT = {"accept": "application/json, text/event-stream"}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_stats", "arguments": {}}}


async def service(tmp_path: Path):
    settings = Settings.from_env(
        {"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "HOSTNAME": "t"}
    )
    return await open_service(settings)


async def test_a_flood_from_one_tenant_gets_429s_while_another_tenants_calls_succeed(tmp_path: Path) -> None:
    limits = CallLimits(rate_per_s=0.5, burst=5, max_concurrent=64)
    async with serving(await service(tmp_path), call_limits=limits) as running:
        async with httpx.AsyncClient() as http:
            flood = await asyncio.gather(
                *(
                    http.post(
                        running.mcp_url,
                        json=CALL,
                        headers={"x-memory-tenant": "noisy", "accept": "application/json, text/event-stream"},
                    )
                    for _ in range(30)
                )
            )
        refused = [r for r in flood if r.status_code == 429]
        assert len(refused) == 25  # the burst of 5 went through, the rest were answered at once
        assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
        assert refused[0].json()["error"]["message"] == "rate limit: too many requests for this tenant"
        async with mcp_client(running, [("x-memory-tenant", "quiet")]) as client:
            for _ in range(3):
                assert not (await client.call_tool("memory_stats", {})).is_error


class GatedEmbedder(FakeEmbedder):
    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.gate = asyncio.Event()
        self.waiting = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.waiting += 1
        await self.gate.wait()
        return await super().embed(texts)


async def test_past_the_concurrency_cap_a_request_is_refused_at_once_with_503(tmp_path: Path) -> None:
    svc = await service(tmp_path)
    gated = GatedEmbedder(svc.embedder.dim)
    svc.embedder = gated
    limits = CallLimits(rate_per_s=100, burst=100, max_concurrent=2, per_tenant=2)
    async with serving(svc, call_limits=limits) as running:
        headers = [("x-memory-tenant", "acme")]

        async def recall() -> bool:
            async with mcp_client(running, headers) as client:
                return (await client.call_tool("recall", {"query": "anything"})).is_error

        held = [asyncio.create_task(recall()) for _ in range(2)]
        while gated.waiting < 2:
            await asyncio.sleep(0.01)
        async with httpx.AsyncClient() as http:
            busy = await http.post(running.mcp_url, json=CALL, headers=dict(headers))
        assert busy.status_code == 503
        assert busy.headers["retry-after"] == "1"
        gated.gate.set()
        assert await asyncio.gather(*held) == [False, False]
        async with mcp_client(running, headers) as client:  # the slots are free again
            assert not (await client.call_tool("memory_stats", {})).is_error


async def test_one_tenant_cannot_hold_more_than_its_share_of_the_concurrency_cap(tmp_path: Path) -> None:
    svc = await service(tmp_path)
    gated = GatedEmbedder(svc.embedder.dim)
    svc.embedder = gated
    limits = CallLimits(rate_per_s=100, burst=100, max_concurrent=8, per_tenant=2)
    async with serving(svc, call_limits=limits) as running:

        async def recall(tenant: str) -> bool:
            async with mcp_client(running, [("x-memory-tenant", tenant)]) as client:
                return (await client.call_tool("recall", {"query": "anything"})).is_error

        held = [asyncio.create_task(recall("slow")) for _ in range(2)]
        while gated.waiting < 2:
            await asyncio.sleep(0.01)
        async with httpx.AsyncClient() as http:
            third = await http.post(running.mcp_url, json=CALL, headers={"x-memory-tenant": "slow", **ACCEPT})
            other = await http.post(running.mcp_url, json=CALL, headers={"x-memory-tenant": "quiet", **ACCEPT})
        assert third.status_code == 429
        assert third.headers["retry-after"] == "1"
        assert third.json()["error"]["message"] == "rate limit: too many calls at once for this tenant"
        assert other.status_code == 200 and '"isError":false' in other.text.replace(" ", "")
        gated.gate.set()
        assert await asyncio.gather(*held) == [False, False]
        async with mcp_client(running, [("x-memory-tenant", "slow")]) as client:  # its share is free again
            assert not (await client.call_tool("memory_stats", {})).is_error


def test_a_tenants_share_is_a_quarter_of_the_cap_unless_set() -> None:
    assert CallLimits().tenant_share == 16
    assert CallLimits(max_concurrent=2).tenant_share == 1
    assert CallLimits(max_concurrent=8, per_tenant=20).tenant_share == 8
    env = {"MEMORY_DB_PATH": "/tmp/x", "MAX_CONCURRENT_PER_TENANT": "5"}
    assert Settings.from_env(env).serve.call_limits.tenant_share == 5


def raw_call(tenant: str, *, with_body: bool = True) -> bytes:
    payload = json.dumps(CALL).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Memory-Tenant: {tenant}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode()
    return head + payload if with_body else head


async def answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=20)
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if line)
    body = await reader.readexactly(int(headers["content-length"]))
    return int(lines[0].split()[1]), headers, body


async def test_a_request_over_the_rate_is_answered_429_before_its_body_is_sent(tmp_path: Path) -> None:
    limits = CallLimits(rate_per_s=0.1, burst=1)
    async with serving(await service(tmp_path), call_limits=limits) as running:
        host, port = running.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(raw_call("noisy"))
        assert (await answer(reader))[0] == 200  # the burst of one
        other_reader, other = await asyncio.open_connection(host, int(port))
        other.write(raw_call("noisy", with_body=False))  # the headers, and the body never comes
        status, headers, body = await answer(other_reader)
        assert status == 429 and 1 <= int(headers["retry-after"]) <= 10
        assert json.loads(body)["error"]["message"] == "rate limit: too many requests for this tenant"
        writer.close()
        other.close()
    assert len(running.tool_calls()) == 1  # only the burst's call ran


async def test_a_connection_told_to_wait_is_read_again_after_one_that_was_not(tmp_path: Path) -> None:
    """After a 429 the connection's next request waits out the Retry-After (at most 1 s) before
    it is read; another connection is answered meanwhile, and the held one is not dropped, even
    with a keep-alive timeout shorter than the hold."""
    limits = CallLimits(rate_per_s=0.5, burst=1)
    http_limits = HttpLimits(keep_alive_ms=200)
    async with serving(await service(tmp_path), call_limits=limits, limits=http_limits) as running:
        host, port = running.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(raw_call("noisy"))
        assert (await answer(reader))[0] == 200
        writer.write(raw_call("noisy"))
        assert (await answer(reader))[0] == 429
        writer.write(raw_call("noisy"))  # at once, as a flood would
        order: list[str] = []

        async def held() -> None:
            status, _, _ = await answer(reader)
            order.append(f"held {status}")

        async def other() -> None:
            other_reader, other_writer = await asyncio.open_connection(host, int(port))
            other_writer.write(raw_call("quiet"))
            status, _, _ = await answer(other_reader)
            order.append(f"other {status}")
            other_writer.close()

        await asyncio.gather(held(), other())
        writer.close()
    assert order == ["other 200", "held 429"]


def test_a_bucket_refills_at_its_rate_and_says_how_long_to_wait() -> None:
    now = [0.0]
    buckets = TenantBuckets(CallLimits(rate_per_s=2, burst=2), clock=lambda: now[0])
    assert buckets.take("a") == 0 and buckets.take("a") == 0
    assert buckets.take("a") == 0.5
    assert buckets.take("b") == 0  # another tenant has its own bucket
    now[0] += 0.5
    assert buckets.take("a") == 0


def test_the_defaults_and_the_variables() -> None:
    assert Settings.from_env({"MEMORY_DB_PATH": "/tmp/x"}).serve.call_limits == CallLimits(20.0, 40, 64)
    limits = Settings.from_env(
        {
            "MEMORY_DB_PATH": "/tmp/x",
            "RATE_LIMIT_PER_TENANT": "2.5",
            "RATE_LIMIT_BURST": "5",
            "MAX_CONCURRENT_CALLS": "8",
        }
    ).serve.call_limits
    assert limits == CallLimits(2.5, 5, 8)
