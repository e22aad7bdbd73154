"""Where a recall's CPU goes under concurrency: the server's and the client's CPU per recall.

    .venv/bin/python -m bench.latency.throughput_cpu [--memories 10000] [--seconds 10] [--clients 1,16,16]

Fills one tenant of a SQLite file (in a temporary directory) with the performance corpus
(bench/harness/perf_corpus.py; embeddings cached like run_performance.sh's), starts `serve-http`
as perf_probes.HttpServer does, and for each burst of concurrent recalls reads the server's
CPU time from /proc/<pid>/stat and this process's own from getrusage: cores kept busy, and
milliseconds of CPU per recall for each side. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
from pathlib import Path

from bench.harness.perf_corpus import corpus, embeddings
from bench.harness.perf_corpus import queries as make_queries
from bench.harness.perf_fill import fill_to
from bench.harness.perf_probes import HttpServer

TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", default="1,16,16")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "mcp-memory-bench-cache"))
    args = parser.parse_args()
    source = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as root:
        db = Path(root) / "bench.db"
        texts = corpus(args.memories)
        vectors, _ = await embeddings(texts, Path(args.cache))
        await fill_to("sqlite", args.memories, texts, vectors, 0, db_path=str(db))
        http = await HttpServer.start({"MEMORY_DB_PATH": str(db)}, source)
        try:
            queries = make_queries(400)
            for query in queries[:20]:
                await http.call("recall", {"query": query})
            print(f"{args.memories:,} memories, load {os.getloadavg()[0]:.1f}")
            for clients in (int(c) for c in args.clients.split(",")):
                server0, client0, started = process_cpu(http.process.pid), own_cpu(), time.perf_counter()
                result = await http.throughput(clients, queries, args.seconds, 1_000_000)
                server = process_cpu(http.process.pid) - server0
                client = own_cpu() - client0
                wall = time.perf_counter() - started
                calls = result["calls"]
                print(
                    f"{clients:2d} clients: {result['per_s']:.0f} recalls/s, p50 {result['p50_ms']:.1f} ms; "
                    f"server {server / wall:.2f} cores ({server / calls * 1000:.1f} ms CPU per recall), "
                    f"client {client / wall:.2f} cores ({client / calls * 1000:.1f} ms); "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        finally:
            await http.close()


if __name__ == "__main__":
    asyncio.run(main())
