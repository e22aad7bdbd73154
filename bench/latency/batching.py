"""The micro-batchers' own cost, two trees side by side: before/after ratios that share the noise.

    python -m bench.latency.batching BEFORE_TREE AFTER_TREE [--rounds 5] [--calls 300]

Each (round, tree) runs in a fresh process, alternating A, B, A, B, so background
load falls on both alike. A tree is any directory holding an `mcp_memory` package
(e.g. `git archive <commit> | tar -x -C DIR`). Per process:

- the SQLite store's batcher shape (`Batcher(run, 32, parallel=2)` awaited on the
  loop) around a `run` that only yields once: CPU microseconds per request (CPU
  time, so a busy machine moves it little), one caller at a time and 16 at once;
- the local embedder (real model, 2 intra-op threads): a 12-word query's median
  latency one call at a time, and texts per second with 16 concurrent callers,
  each with the process's CPU time (all threads) per call, the steadier figure on
  a busy machine.

Prints a Markdown table of the medians over rounds and the B/A ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

_CHILD = """
import asyncio, json, statistics, sys, time
from mcp_memory.runtime.batching import Batcher
from mcp_memory.embedders.local.embedder import LocalEmbedder

CALLS = int(sys.argv[1])
QUERY = "How often does the staging database get restored from the nightly snapshot?"

async def store_shape():
    async def run(requests):
        await asyncio.sleep(0)
        return requests
    batcher = Batcher(run, 32, parallel=2)
    for i in range(200):
        await batcher.submit(i)
    started = time.process_time()
    for i in range(CALLS * 20):
        await batcher.submit(i)
    lone = (time.process_time() - started) / (CALLS * 20)
    async def client(n):
        for i in range(n):
            await batcher.submit(i)
    started = time.process_time()
    await asyncio.gather(*(client(CALLS * 5) for _ in range(16)))
    crowd = (time.process_time() - started) / (CALLS * 5 * 16)
    return lone, crowd

async def embedder():
    embedder = LocalEmbedder(intra_op_threads=2)
    await embedder.warm_up()
    for _ in range(20):
        await embedder.embed([QUERY])
    took = []
    cpu = time.process_time()
    for _ in range(CALLS):
        started = time.perf_counter()
        await embedder.embed([QUERY])
        took.append(time.perf_counter() - started)
    cpu_single = (time.process_time() - cpu) / CALLS
    texts = [f"{QUERY} ({i})" for i in range(CALLS * 2)]
    async def client(mine):
        for text in mine:
            await embedder.embed([text])
    cpu = time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(client(texts[k::16]) for k in range(16)))
    per_s = len(texts) / (time.perf_counter() - started)
    cpu_crowd = (time.process_time() - cpu) / len(texts)
    await embedder.close()
    return statistics.median(took), cpu_single, per_s, cpu_crowd

async def main():
    lone, crowd = await store_shape()
    single, cpu_single, per_s, cpu_crowd = await embedder()
    print(json.dumps({"store_lone_us": lone * 1e6, "store_16_us": crowd * 1e6,
                      "embed_p50_ms": single * 1000, "embed_cpu_ms": cpu_single * 1000,
                      "embed_16_per_s": per_s, "embed_16_cpu_ms": cpu_crowd * 1000}))

asyncio.run(main())
"""

ROWS = [
    ("store batcher, one caller (CPU µs per request)", "store_lone_us"),
    ("store batcher, 16 callers (CPU µs per request)", "store_16_us"),
    ("local embedder, one call at a time (ms, median)", "embed_p50_ms"),
    ("local embedder, one call at a time (CPU ms per call, all threads)", "embed_cpu_ms"),
    ("local embedder, 16 concurrent callers (texts/s)", "embed_16_per_s"),
    ("local embedder, 16 concurrent callers (CPU ms per text, all threads)", "embed_16_cpu_ms"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    trees = {"A": Path(args.before).resolve(), "B": Path(args.after).resolve()}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    load_start = os.getloadavg()[0]
    for _ in range(args.rounds):
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, str(args.calls)],
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs[name].append(json.loads(out))
    load_end = os.getloadavg()[0]
    print(
        f"\nA = {trees['A']}, B = {trees['B']}; {args.rounds} rounds; load {load_start:.2f} → {load_end:.2f}; "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}\n"
    )
    print("| figure | A (before) | B (after) | B ÷ A |")
    print("|---|---:|---:|---:|")
    for label, key in ROWS:
        a = statistics.median(r[key] for r in runs["A"])
        b = statistics.median(r[key] for r in runs["B"])
        print(f"| {label} | {a:.2f} | {b:.2f} | {b / a:.2f} |")


if __name__ == "__main__":
    main()
