"""An export file of a large tenant for `mcp-memory import` with vectors (bench/RESULTS.md, the
million-memory section).

    .venv/bin/python -m bench.scale.million --count 1000000 --out /tmp/million.jsonl [--base 20000] [--cache DIR]

Embedding a million sentences with the local model would take hours here, so the file holds real
embeddings plus noise: the first `--base` sentences of the performance corpus (bench/harness/perf_corpus.py)
are embedded by the local model (cached), and memory i gets the unit vector of
`base[i % base] + noise` (Gaussian, `--sigma` per dimension: about 0.86 cosine to its base at the
default), so the store has the clusters and spread of real text rather than random points, which
no index finds hard. Every memory has its own corpus sentence (the keyword index sees the words a
real tenant of that corpus would). One tenant (`bench`); 10 % conversation-scoped over 20
conversations, every 7th a pattern, one of 50 tags each, a millisecond apart from 2026-01-01.

The header names the local model, so `import` with the default embedder keeps the vectors:

    MEMORY_DB_PATH=/tmp/m.db mcp-memory import /tmp/million.jsonl           # SQLite
    DATABASE_URL=postgresql://… mcp-memory import /tmp/million.jsonl        # PostgreSQL

`--sqlite-into FILE` writes them through the SQLite store's `put_many`. `--copy-into URL` writes the same memories into PostgreSQL without a file: the rows the store's
own `put_many` would write (its `_row`), sent by one binary COPY, with the keyword GIN index
dropped during the copy and built again after (as the schema creates it), the term counts
(`memory_terms`) counted again, then ANALYZE. On a
loaded 2-core machine `import` managed about 110 memories/s into PostgreSQL; this is the fill
that fits in an afternoon. No recency-index keys or counters are written (recall reads neither).

Kept out of CI: the tests run the same code paths on small stores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
from bench.harness import perf_corpus  # noqa: E402
from bench.harness.perf_fill import bench_memory as corpus_memory  # noqa: E402


def noisy(base: np.ndarray, start: int, stop: int, sigma: float, seed: int) -> np.ndarray:
    """Rows `start..stop-1`: base row i % len(base) (itself for i < len(base)) plus noise, unit length."""
    rows = base[np.arange(start, stop) % len(base)].astype(np.float32)
    rng = np.random.default_rng(seed + start)
    tail = np.arange(start, stop) >= len(base)
    rows[tail] += rng.normal(0.0, sigma, (int(tail.sum()), base.shape[1])).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def record(i: int, text: str, vector: np.ndarray) -> str:
    """Memory `i` as a line of the export file `import` reads (the exporter's own writer)."""
    from mcp_memory.core.transfer.file_format import dump_record

    return dump_record(bench_memory(i, text), None, vector)


BLOCK = 20_000


def bench_memory(i: int, text: str):
    """The performance corpus's memory `i` (bench/harness/perf_fill.py), a pattern where that one
    is a decision, with one of 50 tags."""
    return corpus_memory(i, text, every_7th="pattern", tags=(f"t{i % 50}",))


async def copy_into(
    url: str, texts: list[str], base: np.ndarray, sigma: float, start: int, step: int, finish: bool
) -> None:
    """Blocks start, start + step, … of BLOCK memories, each one COPY; `finish` builds the keyword
    index again (run several of these side by side with --start 0,1,… --step N, the last with --finish)."""
    from mcp_memory.embedders.local.embedder import DIM, MODEL_NAME
    from mcp_memory.stores.postgres import keywords
    from mcp_memory.stores.postgres.store import open_postgres

    vectors, objects = await open_postgres(url, model=MODEL_NAME, dim=DIM, hnsw_min_memories=0)
    started = time.perf_counter()
    try:
        async with vectors._db.connection("fill") as conn:
            await conn.execute("DROP INDEX IF EXISTS memories_keyword_vector")
        for block in range(start, len(texts), BLOCK * step):  # a COPY (and a commit) per block
            stop = min(len(texts), block + BLOCK)
            rows = noisy(base, block, stop, sigma, seed=13)
            async with vectors._db.connection("fill") as conn, conn.cursor(binary=True) as cursor:
                async with cursor.copy(
                    "COPY memories (tenant_id, id, embedding, metadata, keywords) FROM STDIN (FORMAT BINARY)"
                ) as copy:
                    for i in range(block, stop):
                        await copy.write_row(vectors._row(bench_memory(i, texts[i]), rows[i - block]))
            print(f"  copied {block:,}..{stop:,} ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
        if finish:
            async with vectors._db.connection("fill") as conn:
                await conn.execute(keywords.INDEX)
                # the COPY bypassed the store's statements, which keep the term counts: count again
                await conn.execute("DELETE FROM memory_terms")
                await conn.execute(f"INSERT INTO memory_terms (tenant_id, term, docs) {keywords.RECOUNT}")
                await conn.execute("ANALYZE memories")
                await conn.execute("ANALYZE memory_terms")
    finally:
        await vectors.close()
        await objects.close()
    print(f"filled in {time.perf_counter() - started:.0f} s", file=sys.stderr)


async def sqlite_into(path: str, texts: list[str], base: np.ndarray, sigma: float) -> None:
    """The same memories into an SQLite file through the store's own `put_many`, 2,000 a transaction
    (recency-index keys and counters are not written: recall reads neither)."""
    from mcp_memory.embedders.local.embedder import DIM, MODEL_NAME
    from mcp_memory.stores.sqlite.store import open_sqlite

    vectors, objects = await open_sqlite(Path(path), model=MODEL_NAME, dim=DIM)
    started = time.perf_counter()
    try:
        for block in range(0, len(texts), 2000):
            stop = min(len(texts), block + 2000)
            rows = noisy(base, block, stop, sigma, seed=13)
            await vectors.put_many([(bench_memory(i, texts[i]), rows[i - block]) for i in range(block, stop)])
            if stop % 20_000 == 0 or stop == len(texts):
                print(f"  wrote {stop:,} ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    finally:
        await vectors.close()
        await objects.close()


async def main(args: argparse.Namespace) -> None:
    from mcp_memory.embedders.local.embedder import DIM, MODEL_NAME

    texts = perf_corpus.corpus(args.count)
    base, _ = await perf_corpus.embeddings(texts[: args.base], Path(args.cache))
    if args.sqlite_into:
        await sqlite_into(args.sqlite_into, texts, base, args.sigma)
        return
    if args.copy_into:
        await copy_into(args.copy_into, texts, base, args.sigma, args.start * BLOCK, args.step, args.finish)
        return
    header = {
        "format": "mcp-memory-export",
        "version": 1,
        "exportedBy": "bench/scale/million.py",
        "exportedAt": "2026-12-01T00:00:00.000Z",
        "embedding": {"provider": "local", "model": MODEL_NAME, "dim": DIM},
        "withEmbeddings": True,
    }
    started = time.perf_counter()
    with Path(args.out).open("w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for start in range(0, args.count, 10_000):
            stop = min(args.count, start + 10_000)
            vectors = noisy(base, start, stop, args.sigma, seed=13)
            out.write("\n".join(record(i, texts[i], vectors[i - start]) for i in range(start, stop)) + "\n")
    print(f"{args.count:,} memories in {time.perf_counter() - started:.0f} s -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--base", type=int, default=20_000, help="real embeddings the rest are noisy copies of")
    parser.add_argument("--sigma", type=float, default=0.03, help="noise per dimension (0.03: ~0.86 cosine)")
    parser.add_argument("--cache", default="/tmp/mcp-memory-bench", help="where the base embeddings are cached")
    parser.add_argument("--out", help="the export file to write")
    parser.add_argument("--copy-into", help="a PostgreSQL URL to fill directly instead")
    parser.add_argument("--sqlite-into", help="an SQLite file to fill directly instead")
    parser.add_argument("--start", type=int, default=0, help="with --copy-into: the first block to write")
    parser.add_argument("--step", type=int, default=1, help="with --copy-into: write every step-th block")
    parser.add_argument("--finish", action="store_true", help="with --copy-into: build the keyword index after")
    asyncio.run(main(parser.parse_args()))
