"""Single-query latency and first-call load time of the local embedder.

    python -m bench.latency.local_embedder [--calls 200] [--rounds 3]

Each (round, thread setting) runs in a fresh process so the first call pays the
whole cold path (import onnxruntime, hash the model, build the session). Rounds
interleave the settings so a noisy neighbour hurts them all alike. Numbers go
to stdout as a Markdown table; nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

QUERY = "How often does the staging database get restored from the nightly snapshot?"  # 12 words
SETTINGS = {"1": 1, "2 (ours)": 2, "onnxruntime default": 0}

_CHILD = """
import asyncio, json, os, statistics, sys, time
from bench.harness.timing import percentile
from mcp_memory.embedders.local.embedder import LocalEmbedder

async def main(threads, calls, query):
    embedder = LocalEmbedder(intra_op_threads=threads)
    started = time.perf_counter()
    await embedder.embed([query])
    first = time.perf_counter() - started
    took = []
    cpu = time.process_time()
    for _ in range(calls):
        started = time.perf_counter()
        await embedder.embed([query])
        took.append(time.perf_counter() - started)
    cpu = time.process_time() - cpu
    await embedder.close()
    took.sort()
    print(json.dumps({"first": first, "load": embedder.load_seconds, "median": statistics.median(took),
                      "p90": percentile(took, 90), "cpu_per_call": cpu / calls}))

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[2]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in SETTINGS}
    for _ in range(args.rounds):
        for name, threads in SETTINGS.items():
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, str(threads), str(args.calls), QUERY],
                cwd=repo,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs[name].append(json.loads(out))
    print("| intra_op threads | first call (s) | of which load (s) | median (ms) | p90 (ms) | CPU/call (ms) |")
    print("|---|---|---|---|---|---|")
    for name, results in runs.items():
        med = lambda key: statistics.median(r[key] for r in results)  # noqa: E731
        print(
            f"| {name} | {med('first'):.2f} | {med('load'):.2f} | {med('median') * 1000:.1f} "
            f"| {med('p90') * 1000:.1f} | {med('cpu_per_call') * 1000:.1f} |"
        )


if __name__ == "__main__":
    main()
