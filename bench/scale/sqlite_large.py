"""One large SQLite tenant at the store level: open + first recall, dense query p50, resident memory
(bench/RESULTS.md, "A large tenant on SQLite").

    PYTHONPATH=. .venv/bin/python -m bench.scale.sqlite_large --db-path FILE [--queries 40] [--exact-check 40]

The store is `bench/scale/million.py --sqlite-into FILE`'s tenant `bench`. Run once per code version
(PYTHONPATH=<checkout>) in fresh processes, alternately, to compare them side by side. Queries are
the fill's own base embeddings plus fresh noise (no model in the timing). `--exact-check N` also
compares each answer's ids with an exact float32 scan of every stored embedding (read once from
the database, numpy): recall@10 = |both| / 10. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
from pathlib import Path

import numpy as np

from bench.harness.timing import Stopwatch, percentile

TENANT = "bench"


def rss_mb() -> tuple[float, float]:
    """Resident now and at peak (MB), from /proc."""
    now = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            now = int(line.split()[1]) / 1024
    return round(now, 1), round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def queries(db_path: str, count: int, seed: int) -> np.ndarray:
    import sqlite3

    conn = sqlite3.connect(db_path)
    ids = [f"{n}" for n in range(count)]
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, 4096, count)
    rows = []
    for n in picks.tolist():  # rows of the first 4,096 (the real embeddings), by rowid
        (blob,) = conn.execute("SELECT embedding FROM memories WHERE rowid = ?", (int(n) + 1,)).fetchone()
        rows.append(np.frombuffer(blob, "<f4"))
    conn.close()
    q = np.stack(rows) + rng.normal(0, 0.05, (len(ids), len(rows[0]))).astype(np.float32)
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


async def main(args: argparse.Namespace) -> None:
    from mcp_memory.embedders.local.embedder import DIM, MODEL_NAME
    from mcp_memory.stores.sqlite.store import open_sqlite

    asked = queries(args.db_path, args.queries + 1, args.seed)
    started = Stopwatch.started()
    vectors, objects = await open_sqlite(Path(args.db_path), model=MODEL_NAME, dim=DIM)
    try:
        first = await vectors.query(TENANT, asked[0], 10, None)
        open_first = started.running()
        watch, answers = Stopwatch(), []
        for q in asked[1:]:
            with watch:
                hits = await vectors.query(TENANT, q, 10, None)
            answers.append([h.memory.id for h in hits])
        times = watch.seconds
        result = {
            "code": os.environ.get("PYTHONPATH", ""),
            "open + first query s": round(open_first, 3),
            "first hits": len(first),
            "query p50 ms": round(1000 * percentile(times, 50), 1),
            "query p95 ms": round(1000 * percentile(times, 95), 1),
            "rss MB (now, peak)": rss_mb(),
            "load": os.getloadavg()[0],
        }
        if args.exact_check:
            import sqlite3

            conn = sqlite3.connect(args.db_path)
            ids, blobs = [], []
            for memory_id, scope, blob in conn.execute(
                "SELECT id, scope, embedding FROM memories WHERE tenant = ?", (TENANT,)
            ):
                if scope == "project":
                    ids.append(memory_id)
                    blobs.append(blob)
            conn.close()
            matrix = np.frombuffer(b"".join(blobs), "<f4").reshape(len(blobs), -1)
            del blobs
            overlap = []
            for q, got in zip(asked[1 : 1 + args.exact_check], answers):
                scores = matrix @ q
                top = np.argpartition(scores, len(scores) - 10)[-10:]
                overlap.append(len({ids[i] for i in top} & set(got)) / 10)
            result["recall@10 vs exact float32"] = round(float(np.mean(overlap)), 4)
            result["queries checked"] = len(overlap)
        print(json.dumps(result), flush=True)
    finally:
        await vectors.close()
        await objects.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-path", required=True)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--exact-check", type=int, default=0)
    parser.add_argument("--seed", type=int, default=7)
    asyncio.run(main(parser.parse_args()))
