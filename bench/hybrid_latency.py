"""Recall and remember latency of one mcp-memory tree, next to the embed+scan floor: the reduced
probe behind the before/after latency figures of the hybrid retrieval.

    PYTHONPATH=<tree> .venv/bin/python bench/hybrid_latency.py --backend sqlite --size 10000 [--runs 100]

`<tree>` is the checkout whose `mcp_memory` is measured (run it once with the tree before the
change and once with the tree after, one after the other, on the same machine). One tenant is
filled to `--size` memories with the performance corpus's sentences (bench/perf_corpus.py) and
random unit embeddings (only the keyword index needs real words; the scan costs the same for any
vectors), through the stores' `put` (bench/perf_fill.py). Then, one call at a time: the floor
(the model runtime on the query + an exact numpy scan of the same vectors; perf_probes.py), the
service's `recall` (balanced, the configured retrieval), and `remember` of new sentences.
PostgreSQL is BENCH_DATABASE_URL, else a throwaway pgserver. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def p50(xs: list[float]) -> float:
    return round(1000 * statistics.median(xs), 2)


def p95(xs: list[float]) -> float:
    return round(1000 * sorted(xs)[int(0.95 * (len(xs) - 1))], 2)


async def measure(args, where: dict[str, str], tmp: str) -> dict:
    import perf_corpus
    import perf_fill
    from perf_probes import ServiceProbe

    texts = perf_corpus.corpus(args.size)
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((args.size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    fill_where = (
        {"db_path": where["MEMORY_DB_PATH"]} if args.backend == "sqlite" else {"database_url": where["DATABASE_URL"]}
    )
    started = time.perf_counter()
    await perf_fill.fill_to(args.backend, args.size, texts, vectors, 0, **fill_where)
    fill_s = time.perf_counter() - started
    started = time.perf_counter()
    probe = await ServiceProbe.open(where, vectors)
    open_s = time.perf_counter() - started
    queries = perf_corpus.queries(args.runs + 10)
    facts = perf_corpus.new_facts(args.runs, seed=3)
    floor, service, remember = [], [], []
    try:
        for q in queries[:10]:
            await probe.recall(q)
        for q in queries[10:]:
            model, scan = probe.floor(q)
            floor.append(model + scan)
            service.append(await probe.recall(q))
        for text in facts:
            took, _ = await probe.remember(text)
            remember.append(took)
    finally:
        await probe.close()
    return {
        "tree": os.environ.get("PYTHONPATH", ""),
        "retrieval": os.environ.get("RECALL_RETRIEVAL", "(default)"),
        "backend": args.backend,
        "size": args.size,
        "fill_s": round(fill_s, 1),
        "open_s": round(open_s, 2),
        "floor_p50_ms": p50(floor),
        "recall_p50_ms": p50(service),
        "recall_p95_ms": p95(service),
        "recall_to_floor": round(statistics.median(service) / statistics.median(floor), 2),
        "remember_p50_ms": p50(remember),
        "load": os.getloadavg()[0],
    }


async def main(args) -> None:
    with tempfile.TemporaryDirectory(prefix="mcp-memory-hybrid-latency-") as tmp:
        where = {"HOME": tmp, "EMBEDDING_PROVIDER": "local"}
        if os.environ.get("RECALL_RETRIEVAL"):
            where["RECALL_RETRIEVAL"] = os.environ["RECALL_RETRIEVAL"]
        server = None
        if args.backend == "sqlite":
            where["MEMORY_DB_PATH"] = str(Path(tmp) / "memory.db")
        else:
            url = os.environ.get("BENCH_DATABASE_URL")
            if not url:
                import pgserver

                server = pgserver.get_server(tempfile.mkdtemp(prefix="mcp-memory-bench-pg-"), cleanup_mode="delete")
                url = server.get_uri()
            where["DATABASE_URL"] = url
        try:
            print(json.dumps(await measure(args, where, tmp)), flush=True)
        finally:
            if server is not None:
                server.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=100)
    asyncio.run(main(parser.parse_args()))
