"""What the second stage costs a recall, side by side: the long-chat set's first 80 questions asked
three rounds through `MemoryService.recall` (limit 10, in-memory stores, embeddings cached so only
recall's own work is timed), each question with the second stage on and off in turn, the order
swapped every round.

    nice python -m bench.quality.judgment_cost
"""

from __future__ import annotations

import asyncio
import time

from bench.quality import judgment_data as jd


async def main() -> None:
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller
    from mcp_memory.embedders import open_embedder

    embedder = open_embedder(Settings.from_env({"EMBEDDING_PROVIDER": "local"}).embedding)
    vectors = jd.Vectors("local", embedder)
    (devset,) = jd.dev_sets(["long-chats"])
    service = await jd.open_set_service("local", devset, vectors)
    model = service.judge
    times: dict[str, list[float]] = {"on": [], "off": []}
    for round_ in range(3):
        for q in devset.questions[:80]:
            for name in ("on", "off") if round_ % 2 == 0 else ("off", "on"):
                service.judge = model if name == "on" else None
                started = time.perf_counter()
                await service.recall(Caller(q.tenant), q.text, limit=10)
                times[name].append((time.perf_counter() - started) * 1000)
    for name, values in times.items():
        values.sort()
        print(
            f"second stage {name:3s}: p50 {values[len(values) // 2]:.2f} ms, p95 {values[int(len(values) * 0.95)]:.2f} ms"
        )
    await embedder.close()


if __name__ == "__main__":
    asyncio.run(main())
