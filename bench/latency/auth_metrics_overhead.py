"""Recall p50 over HTTP with and without JWT validation and metrics, in one run.

Four servers on 127.0.0.1, each with its own service on one SQLite file (fake embedder, 300 memories):
the static key (baseline), OAuth JWTs (RS256, JWKS cached), the static key with
metrics on, OAuth with metrics on. Rounds are interleaved so load drifts hit every
configuration alike; each round is one recall per configuration, via raw httpx POSTs
(the SDK client's own cost would hide the difference).

    PYTHONPATH=. python -m bench.latency.auth_metrics_overhead [rounds]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

import httpx

from bench.harness.timing import Stopwatch, percentile
from mcp_memory.app import open_service
from mcp_memory.config import CallLimits, OAuthSettings, Settings
from mcp_memory.server.http.metrics import Metrics
from tests.support.http_process import clean_env, http_process
from tests.support.http_support import serving
from tests.support.issuer import ISSUER, RESOURCE, issuer_server

BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "recall", "arguments": {"query": "deploy key rotation"}},
}


async def main(rounds: int) -> None:
    tmp = Path(tempfile.mkdtemp())
    settings = Settings.from_env({"MEMORY_DB_PATH": str(tmp / "m.db"), "EMBEDDING_PROVIDER": "fake", "HOSTNAME": "b"})
    async with AsyncExitStack() as stack:
        issuer = await stack.enter_async_context(issuer_server())
        issuer.publish("k1")
        oauth = OAuthSettings(
            issuer=ISSUER, jwks_url=issuer.jwks_url, resource_url=RESOURCE, audience=RESOURCE, allow_http_loopback=True
        )
        from mcp_memory.core.model import Caller

        seeding = await open_service(settings)
        for i in range(300):
            await seeding.remember(Caller("bench", None), f"note {i}: the deploy key rotates every {i % 30} days")
        await seeding.close()
        unlimited = CallLimits(rate_per_s=100_000, burst=100_000, max_concurrent=1000)
        configs = {
            "static key": dict(api_key="k"),
            "oauth": dict(oauth=oauth),
            "static key + metrics": dict(api_key="k", metrics=Metrics()),
            "oauth + metrics": dict(oauth=replace(oauth), metrics=Metrics()),
        }
        token = issuer.token()
        urls, auth = {}, {}
        for name, options in configs.items():
            # a service each (same file): metrics wrap the store and embedder of theirs only
            service = await open_service(settings)
            options = {"call_limits": unlimited, **options}
            running = await stack.enter_async_context(serving(service, **options))
            urls[name] = running.mcp_url
            auth[name] = "k" if "api_key" in options else token
        # the noisy-neighbour run: `serve-http` in a process of its own, default limits
        env = clean_env(tmp, MEMORY_DB_PATH=str(tmp / "m.db"), EMBEDDING_PROVIDER="fake", MCP_API_KEY="k")
        limited = await stack.enter_async_context(http_process(env, tmp / "err.log", boot_lines=5))
        times: dict[str, list[float]] = {name: [] for name in configs}
        async with httpx.AsyncClient() as http:
            for round_ in range(rounds + 20):
                for name in configs:
                    headers = {
                        "authorization": f"Bearer {auth[name]}",
                        "x-memory-tenant": "bench",
                        "accept": "application/json, text/event-stream",
                        "mcp-protocol-version": "2025-06-18",
                    }
                    with Stopwatch() as posting:
                        response = await http.post(urls[name], json=BODY, headers=headers)
                    elapsed = posting.last
                    assert response.status_code == 200, (name, response.status_code, response.text[:200])
                    if round_ >= 20:  # warm-up rounds are dropped
                        times[name].append(elapsed * 1000)
            flood = await noisy_neighbour(http, limited.mcp_url, rounds)
    base = statistics.median(times["static key"])
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"{name:22s} p50 {p50:6.2f} ms  ({p50 - base:+.2f} ms vs static key)  n={len(values)}")
    print(flood)


def p95(values: list[float]) -> float:
    return percentile(values, 95)


async def noisy_neighbour(http: httpx.AsyncClient, url: str, rounds: int) -> str:
    """A quiet tenant's recall p95 alone, then while another tenant floods (8 senders, no pause)
    against a server with the default limits."""

    async def one(tenant: str) -> tuple[float, int]:
        headers = {
            "authorization": "Bearer k",
            "x-memory-tenant": tenant,
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
        }
        with Stopwatch() as posting:
            response = await http.post(url, json=BODY, headers=headers)
        return posting.last * 1000, response.status_code

    for _ in range(20):
        await one("bench")  # warm-up
    idle = []
    for _ in range(rounds):
        idle.append((await one("bench"))[0])
        await asyncio.sleep(0.05)
    stop = False
    codes: list[int] = []

    async def flood() -> None:
        while not stop:
            codes.append((await one("noisy"))[1])

    senders = [asyncio.create_task(flood()) for _ in range(8)]
    busy = []
    for _ in range(rounds):
        elapsed, status = await one("bench")
        assert status == 200, status
        busy.append(elapsed)
        await asyncio.sleep(0.05)  # an agent's pace, not a flood
    stop = True
    await asyncio.gather(*senders)
    refused = sum(code == 429 for code in codes)
    return (
        f"noisy neighbour: quiet tenant p95 idle {p95(idle):.2f} ms, during the flood {p95(busy):.2f} ms "
        f"({p95(busy) / p95(idle):.2f}x); flood {len(codes)} requests, {refused} answered 429"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
