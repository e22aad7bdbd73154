"""The web view's server time at 100,000 memories (docs/web.md#speed, issue 23).

Fills one tenant of an SQLite file with N memories (synthetic sentences from a 2,000-word
vocabulary, every 50th a `reference`, one tag in 20 each, a few rare-tagged; written as import
writes them: put_many and the index keys), then times each page through the view's ASGI app
in-process (httpx's ASGI transport: the server's work plus the client's, so an upper bound of
server time), interleaved in rounds so load on the machine hits every page alike:

- Browse: the first page, a page 50,000 memories deep (following its cursor), a type filter
  (1 in 50), a tag filter (1 in 20);
- a Memory page (its neighbours by the `near` rule: one embed and one query);
- Search against `recall` called directly with the same query, side by side: the page's
  overhead is their difference;
- Stats (reads the newest 10,000 memories).

    nice .venv/bin/python -m bench.latency.web_view --memories 100000 --rounds 20 --db /tmp/web100k.db

Each page is timed in wall-clock ms and in the process's CPU ms (every thread: SQLite reads run
in a worker): on a shared machine the wall time mostly measures the queue for a core, the CPU
time what the page costs. `--db` keeps the filled store for the next run.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness.service import service_on
from bench.harness.timing import percentile
from mcp_memory.core.ids import iso, ulid
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.object_keys import index_key
from mcp_memory.core.service import MemoryService
from mcp_memory.stores.sqlite.store import open_sqlite
from mcp_memory.web.access import Access
from mcp_memory.web.app import View, build_ui, local_caller

TENANT = "bench"
EPOCH_MS = 1_767_225_600_000
BATCH = 2_000


def sentence(rng: random.Random, vocabulary: list[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 20))).capitalize() + "."


async def fill(service: MemoryService, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    vocabulary = [
        f"{rng.choice('bcdfghjklmnprstvz')}{rng.choice('aeiou')}{i:x}{rng.choice('aeiou')}" for i in range(2000)
    ]
    for start in range(0, count, BATCH):
        memories = []
        for i in range(start, min(count, start + BATCH)):
            at = EPOCH_MS + i * 60_000  # one a minute: ~70 days
            memories.append(
                Memory(
                    id=ulid(at, i.to_bytes(16, "big")),
                    tenant=TENANT,
                    content=sentence(rng, vocabulary),
                    memory_type="reference" if i % 50 == 7 else "project",
                    tags=(f"tag{i % 20}",) + (("rare",) if i % 5000 == 11 else ()),
                    created_at=iso(at),
                )
            )
        vectors = await service.embedder.embed([m.content for m in memories])
        await service.vectors.put_many(list(zip(memories, vectors)))
        await service.objects.put_many([(index_key(m), "") for m in memories])  # type: ignore[attr-defined]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--embedder", choices=["fake", "local"], default="fake")
    parser.add_argument("--db", type=Path, help="the SQLite file to fill (kept), instead of a scratch one")
    args = parser.parse_args()
    if args.embedder == "local":
        from mcp_memory.embedders.local import LocalEmbedder  # type: ignore[attr-defined]

        embedder = LocalEmbedder()
    else:
        from mcp_memory.embedders.fake import FakeEmbedder

        embedder = FakeEmbedder()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.db or Path(scratch) / "m.db"
        vectors, objects = await open_sqlite(path, model=embedder.model, dim=embedder.dim)
        service = service_on(vectors, objects, embedder, floor=0.2)
        stored = (await service.stats(Caller(TENANT))).total
        if stored < min(args.memories, 10_000):
            started = time.perf_counter()
            await fill(service, args.memories)
            print(f"filled {args.memories} memories in {time.perf_counter() - started:.0f} s ({embedder.provider})")
        caller = Caller(TENANT)
        access = Access.local()
        view = View(service, access, JsonLog(out=io.StringIO()), local_caller(access, caller, False), about=["bench"])
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_ui(view)), base_url="http://bench")
        assert (await client.get(f"/login?token={access.token}")).status_code == 303
        deep = None
        cursor = None
        for _ in range(args.memories // 2 // 200):
            page = await service.list(caller, limit=200, cursor=cursor)
            cursor = page.next_cursor
        deep = cursor
        sample = (await service.list(caller, limit=1, cursor=deep)).memories[0]
        query = " ".join(sample.content.rstrip(".").split()[:6])
        pages = {
            "browse, first page": "/",
            f"browse, {args.memories // 2:,} deep": f"/?cursor={deep}",
            "browse, type=reference (1 in 50)": "/?type=reference",
            "browse, tag=tag3 (1 in 20)": "/?tag=tag3",
            "a memory (with its neighbours)": f"/m/{sample.id}",
            "search page": "/search?" + httpx.QueryParams({"q": query}).__str__(),
            "stats": "/stats",
        }
        names = [*pages, "recall alone (same query)"]
        times: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        for name, path in pages.items():  # warm every path once
            answer = await client.get(path)
            assert answer.status_code == 200, (name, answer.status_code, answer.text[:300])
        for _ in range(args.rounds):
            for name, path in pages.items():
                t0, c0 = time.perf_counter(), time.process_time()
                answer = await client.get(path)
                times[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((time.process_time() - c0) * 1000)
                assert answer.status_code == 200
                if name == "search page":
                    t0, c0 = time.perf_counter(), time.process_time()
                    await service.recall(caller, query)
                    times["recall alone (same query)"].append((time.perf_counter() - t0) * 1000)
                    cpu["recall alone (same query)"].append((time.process_time() - c0) * 1000)
        print(f"\n{args.memories} memories, {args.rounds} rounds, SQLite, {embedder.provider} embedder\n")
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
        print("| page | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name in names:
            w, c = times[name], cpu[name]
            print(
                f"| {name} | {statistics.median(w):.1f} | {percentile(w, 95):.1f} | "
                f"{statistics.median(c):.1f} | {percentile(c, 95):.1f} |"
            )
        for kind, table in (("wall", times), ("CPU", cpu)):
            overhead = [s - r for s, r in zip(table["search page"], table["recall alone (same query)"])]
            print(
                f"\nsearch page minus recall ({kind}), per round: p50 {statistics.median(overhead):.1f} ms, "
                f"p95 {percentile(overhead, 95):.1f} ms"
            )
        await client.aclose()
        await service.close()


if __name__ == "__main__":
    asyncio.run(main())
