"""One process serves many calls at once: every answer is right and every tenant
stays isolated, and a slow embedding on one request stalls no other request."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np

from mcp_memory.embedders.fake import FakeEmbedder
from tests.conftest import Clock, make_env
from tests.server.test_http import sqlite_service
from tests.support.http_support import mcp_client, serving, text

TENANTS = ["acme", "globex", "initech", "umbrella", "hooli"]
PER_TENANT = 10


def fact(tenant: str, i: int) -> str:
    # Distinct words only, so the fake embedder never takes two facts for one.
    return f"{tenant} keeps ledger{i}q in vault{i}k near harbor{i}m"


async def test_fifty_concurrent_calls_from_five_tenants_are_all_answered_and_isolated(tmp_path: Path) -> None:
    async with serving(await sqlite_service(tmp_path)) as server:
        async with (
            mcp_client(server, [("x-memory-tenant", TENANTS[0])]) as c0,
            mcp_client(server, [("x-tenant-id", TENANTS[1])]) as c1,
            mcp_client(server, [("x-memory-tenant", TENANTS[2])], mode="legacy") as c2,
            mcp_client(server, [("x-memory-tenant", TENANTS[3])]) as c3,
            mcp_client(server, [("x-tenant-id", TENANTS[4])], mode="legacy") as c4,
        ):
            clients = dict(zip(TENANTS, (c0, c1, c2, c3, c4)))
            work = [(t, i) for i in range(PER_TENANT) for t in TENANTS]  # interleaved tenants
            stored = await asyncio.gather(*(clients[t].call_tool("remember", {"content": fact(t, i)}) for t, i in work))
            assert all(not r.is_error and text(r).startswith("[MEMORY] Stored as ") for r in stored)

            recalled = await asyncio.gather(
                *(clients[t].call_tool("recall", {"query": fact(t, i), "limit": 1}) for t, i in work)
            )
            for (tenant, i), result in zip(work, recalled):
                assert not result.is_error
                shown = re.findall(r"\n   (.+)", text(result))
                assert shown == [fact(tenant, i)]

            stats = await asyncio.gather(*(clients[t].call_tool("memory_stats", {}) for t in TENANTS))
            expected = f"[MEMORY] {PER_TENANT} memories for this project (project: {PER_TENANT})."
            assert [text(s) for s in stats] == [expected] * len(TENANTS)

            listed = await asyncio.gather(*(clients[t].call_tool("list_memories", {}) for t in TENANTS))
            for tenant, result in zip(TENANTS, listed):
                contents = re.findall(r"\n   (.+)", text(result))
                assert sorted(contents) == sorted(fact(tenant, i) for i in range(PER_TENANT))

    calls = server.tool_calls()
    assert len(calls) == 2 * len(work) + 2 * len(TENANTS)
    assert all(c["ok"] for c in calls)


class GatedEmbedder(FakeEmbedder):
    """Embeds any text containing "slow" only once the test opens the gate, waiting
    on a worker thread as the local model does; everything else at once."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.gate = threading.Event()

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any("slow" in t for t in texts):
            self.entered.set()
            await asyncio.to_thread(self.gate.wait)
        return await super().embed(texts)


async def test_a_slow_embedding_stalls_neither_health_nor_other_calls() -> None:
    embedder = GatedEmbedder()
    async with serving(make_env(Clock(), embedder=embedder).service) as server:
        async with (
            mcp_client(server, [("x-memory-tenant", "acme")]) as acme,
            mcp_client(server, [("x-memory-tenant", "globex")]) as globex,
            httpx.AsyncClient(timeout=30) as http,
        ):
            slow = asyncio.create_task(acme.call_tool("remember", {"content": "a slow fact about caching"}))
            await embedder.entered.wait()
            try:
                health = await http.get(server.url + "/health")
                assert health.status_code == 200 and health.json() == {"status": "ok"}
                stored = await globex.call_tool("remember", {"content": "Globex bills on the first of the month"})
                assert text(stored).startswith("[MEMORY] Stored as ")
                assert "bills on the first" in text(await globex.call_tool("recall", {"query": "Globex bills"}))
                assert text(await acme.call_tool("memory_stats", {})) == "[MEMORY] This project has no memories yet."
                assert not slow.done()
            finally:
                embedder.gate.set()
            assert text(await slow).startswith("[MEMORY] Stored as ")
