"""Latency of `recall` and `remember` through MemoryService on the embedded default
(SQLite file + the local all-MiniLM-L6-v2 model), the path every MCP tool call takes.

    .venv/bin/python -m bench.latency.service_latency [--memories 1000] [--runs 200]

The store is filled first through the real `remember` (so the index keys and the
dedup check are real too) with the performance corpus's sentences (bench/harness/perf_corpus.py);
then `recall` (the corpus's questions) and `remember` (new facts) are timed one call at a
time after a warm-up. Medians and p95 in ms (bench/harness/timing.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
from pathlib import Path

from bench.harness import perf_corpus
from bench.harness.timing import Stopwatch
from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core.model import Caller


async def main(memories: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"MEMORY_DB_PATH": str(Path(tmp) / "bench.db"), "HOME": tmp}
        service = await open_service(Settings.from_env(env))
        caller = Caller("bench")
        recall, remember = Stopwatch(), Stopwatch()
        try:
            with Stopwatch() as filling:
                for text in perf_corpus.corpus(memories):
                    await service.remember(caller, text)
            fill = filling.last
            questions = perf_corpus.queries(20 + runs)
            for question in questions[:20]:  # warm-up: model loaded, caches filled
                await service.recall(caller, question)
            for question in questions[20:]:
                with recall:
                    await service.recall(caller, question)
            for fact in perf_corpus.new_facts(runs, seed=5):
                with remember:
                    await service.remember(caller, fact)
        finally:
            await service.close()
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}")
    print(f"filled {memories} memories through remember in {fill:.1f} s")
    for name, watch in (("recall", recall), ("remember", remember)):
        print(
            f"{name:8s} n={len(watch.seconds)} median {watch.p(50):.2f} ms  "
            f"p95 {watch.p(95):.2f} ms  min {watch.p(0):.2f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.memories, args.runs))
