"""Latency of `recall` and `remember` through MemoryService on the embedded default
(SQLite file + the local all-MiniLM-L6-v2 model), the path every MCP tool call takes.

    .venv/bin/python -m bench.latency.service_latency [--memories 1000] [--runs 200]

The store is filled first through the real `remember` (so the index keys and the
dedup check are real too); then `recall` and `remember` are timed one call at a
time, each with a different sentence, after a warm-up. Medians and p95 in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench.harness.timing import percentile
from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core.model import Caller

SUBJECTS = [
    "the billing service",
    "staging",
    "the nightly backup",
    "the search index",
    "our CI pipeline",
    "the mobile app",
    "the payments webhook",
    "the data warehouse",
    "the auth proxy",
    "release trains",
]
VERBS = [
    "is restored from",
    "retries",
    "is rebuilt after",
    "pages the on-call when",
    "is deployed with",
    "reads its settings from",
    "is rate-limited by",
    "writes audit logs to",
    "is owned by",
    "times out after",
]
OBJECTS = [
    "the Monday snapshot",
    "three attempts with jitter",
    "every schema change",
    "latency passes 2 seconds",
    "a blue-green switch",
    "the shared config bucket",
    "the edge gateway",
    "the compliance archive",
    "the platform team",
    "thirty seconds of silence",
]


def sentence(rng: random.Random, i: int) -> str:
    return f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})."


async def main(memories: int, runs: int) -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"MEMORY_DB_PATH": str(Path(tmp) / "bench.db"), "HOME": tmp}
        service = await open_service(Settings.from_env(env))
        caller = Caller("bench")
        try:
            started = time.perf_counter()
            for i in range(memories):
                await service.remember(caller, sentence(rng, i))
            fill = time.perf_counter() - started
            for i in range(20):  # warm-up: model loaded, caches filled
                await service.recall(caller, sentence(rng, 10_000 + i))
            recall_ms, remember_ms = [], []
            for i in range(runs):
                t = time.perf_counter()
                await service.recall(caller, f"what do we know about {rng.choice(SUBJECTS)} and {rng.choice(OBJECTS)}?")
                recall_ms.append((time.perf_counter() - t) * 1000)
            for i in range(runs):
                t = time.perf_counter()
                await service.remember(caller, sentence(rng, 20_000 + i))
                remember_ms.append((time.perf_counter() - t) * 1000)
        finally:
            await service.close()
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}")
    print(f"filled {memories} memories through remember in {fill:.1f} s")
    for name, values in (("recall", recall_ms), ("remember", remember_ms)):
        print(
            f"{name:8s} n={len(values)} median {statistics.median(values):.2f} ms  "
            f"p95 {percentile(values, 95):.2f} ms  min {min(values):.2f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.memories, args.runs))
