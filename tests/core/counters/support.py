"""Shared by the access-counter tests: the clock, the fault-staging store, the log
reader and the helpers that read totals and write shards straight to the store."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.errors import StoreError
from mcp_memory.core.ids import iso, parse_iso, ulid
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import EMPTY_STATS
from mcp_memory.stores.records import ObjectStore, StoredObject

TENANT = "demo"
START = parse_iso("2026-07-01T00:00:00.000Z")
#: Comfortably past the one-minute lag, after which a shard may be absorbed.
SETTLED = 120_000
SHARDS = f"stats/{TENANT}/shard/"
MERGED = f"stats/{TENANT}/merged.json"


class Clock:
    """Epoch milliseconds that move only when a test says so."""

    def __init__(self, at: float = START) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at

    def advance(self, ms: float) -> None:
        self.at += ms


class FaultyStore:
    """Wraps any ObjectStore to stage the failures and races the counters must survive."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        #: Suspend at every call, so concurrent tasks really interleave.
        self.yield_each = False
        self.fail_put: Callable[[str], bool] = lambda key: False
        self.fail_delete = False
        #: Runs once, just before the next conditional (CAS) write goes through.
        self.before_cas: Callable[[], Awaitable[None]] | None = None
        self.vanished: set[str] = set()
        self.puts: list[str] = []
        self.deletes: list[str] = []
        self.put_done = asyncio.Event()
        self.put_failed = asyncio.Event()
        self.put_started = asyncio.Event()
        #: When set, writes wait for it: a write caught in flight.
        self.gate: asyncio.Event | None = None
        self.gets_in_flight = 0
        self.max_gets_in_flight = 0

    async def _pause(self) -> None:
        if self.yield_each:
            await asyncio.sleep(0)

    async def get(self, key: str) -> StoredObject | None:
        self.gets_in_flight += 1
        self.max_gets_in_flight = max(self.max_gets_in_flight, self.gets_in_flight)
        try:
            await self._pause()
            return None if key in self.vanished else await self.inner.get(key)
        finally:
            self.gets_in_flight -= 1

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        await self._pause()
        self.put_started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_put(key):
            self.put_failed.set()
            raise StoreError(f"injected put failure for {key}")
        if (if_match is not None or if_none_match) and self.before_cas is not None:
            hook, self.before_cas = self.before_cas, None
            await hook()
        etag = await self.inner.put(key, body, if_match=if_match, if_none_match=if_none_match)
        self.puts.append(key)
        self.put_done.set()
        return etag

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        await self._pause()
        return await self.inner.list(prefix, limit, start_after)

    async def delete(self, keys: Sequence[str]) -> None:
        await self._pause()
        if self.fail_delete:
            raise StoreError("injected delete failure")
        self.deletes.extend(keys)
        await self.inner.delete(keys)

    async def close(self) -> None:
        await self.inner.close()


class Logs:
    """A JsonLog writing to memory, read back as parsed lines."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.log = JsonLog(self.out, self.err)

    def lines(self) -> list[dict[str, Any]]:
        text = self.out.getvalue() + self.err.getvalue()
        return [json.loads(line) for line in text.splitlines()]

    def events(self) -> list[str]:
        return [line["event"] for line in self.lines()]


PodFactory = Callable[..., AccessCounters]


async def total(store: ObjectStore, memory_id: str = "m1", tenant: str = TENANT) -> int:
    """What a fresh pod that never compacts reads for one memory."""
    reader = AccessCounters(
        store,
        pod_id="reader",
        log=JsonLog(io.StringIO(), io.StringIO()),
        cache_ttl_ms=0,
        compact_threshold=10**9,
        clock=lambda: START,
    )
    return (await reader.load(tenant)).get(memory_id, EMPTY_STATS).access_count


async def shard_keys(store: ObjectStore, tenant: str = TENANT) -> list[str]:
    """Every shard key, paging past the listing limit."""
    keys: list[str] = []
    after: str | None = None
    while page := await store.list(f"stats/{tenant}/shard/", 1000, after):
        keys.extend(page)
        after = page[-1]
    return keys


async def put_shard(store: ObjectStore, at: float, pod_id: str, counts: dict[str, int] | None = None) -> str:
    """A shard stamped `at`, written straight to the store (as another pod would)."""
    key = f"{SHARDS}{ulid(at)}-{pod_id}.json"
    body = {m: {"access": n, "lastAt": iso(at)} for m, n in (counts or {"m1": 1}).items()}
    await store.put(key, json.dumps(body))
    return key


async def flush_each(counters: AccessCounters, clock: Clock, n: int, memory_id: str = "m1") -> None:
    """n single-access shards, one second apart."""
    for _ in range(n):
        counters.record(TENANT, memory_id, clock())
        await counters.flush()
        clock.advance(1000)
