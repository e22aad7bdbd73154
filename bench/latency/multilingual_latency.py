"""Embedding time through the two local embedders, interleaved: MiniLM against multilingual-e5-small.

    nice .venv/bin/python -m bench.latency.multilingual_latency [--rounds 100]

One process, both embedders warmed up, each round embedding a 12-word question and a 20-word fact
with each (`LocalEmbedder.embed` / `MultilingualEmbedder.embed`, one text per call, as recall and
remember do); p50 per text and model, and the ratio. Interleaving shares the machine's load
between the two, but on a box oversubscribed many times over, wall time is mostly waiting for a
core and the ratio shrinks towards 1; so the CPU time each call costs the process (all its
threads: the worker and the model's own) is printed too, which the load hardly moves.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from bench.data import madial_data as md
from mcp_memory.embedders.local.embedder import LocalEmbedder
from mcp_memory.embedders.local.multilingual import MultilingualEmbedder

TEXTS = {
    "12-word question": "which version of python does the ci pipeline run on this week",
    "20-word fact": "Deploys to production happen every Friday at 3pm after the freeze is lifted by the release manager on duty.",
}


async def main(rounds: int) -> None:
    minilm, e5 = LocalEmbedder(), MultilingualEmbedder()
    try:
        for text in TEXTS.values():
            await minilm.embed([text])
            await e5.embed([text])
        times: dict[tuple[str, str], list[float]] = {(n, m): [] for n in TEXTS for m in ("minilm", "e5")}
        cpu: dict[tuple[str, str], list[float]] = {(n, m): [] for n in TEXTS for m in ("minilm", "e5")}
        for _ in range(rounds):
            for name, text in TEXTS.items():
                for model, embedder in (("minilm", minilm), ("e5", e5)):
                    started, cpu_started = time.perf_counter(), time.process_time()
                    await embedder.embed([text])
                    times[name, model].append(time.perf_counter() - started)
                    cpu[name, model].append(time.process_time() - cpu_started)
        print(f"{rounds} rounds, {md.machine()}\n")
        print("| text | measure | MiniLM p50 ms | e5 p50 ms | e5 / MiniLM |\n|---|---|---|---|---|")
        for name in TEXTS:
            for measure, table in (("wall", times), ("CPU", cpu)):
                a = 1000 * statistics.median(table[name, "minilm"])
                b = 1000 * statistics.median(table[name, "e5"])
                print(f"| {name} | {measure} | {a:.1f} | {b:.1f} | {b / a:.2f} |")
    finally:
        await minilm.close()
        await e5.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    asyncio.run(main(parser.parse_args().rounds))
