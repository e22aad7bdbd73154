"""Remember's duplicate check through the SQLite approximate index against the exact scan, on the
same queries (bench/RESULTS.md, "Remember at a million memories in SQLite").

    PYTHONPATH=. .venv/bin/python -m bench.scale.near_recall --db-path FILE [--queries 200]

FILE is a store of `bench/scale/million.py --sqlite-into`. The run builds the tenant's index (or
maps the one saved beside FILE; `--rebuild` deletes it first), then asks, for new facts
(perf_corpus.new_facts) and for rewordings of stored memories, the store's `near` (the index) and
`query` (the exact scan) for the 5 nearest, as a project request and as one of the stored
conversations; with `--late N`, N new facts are written after the graph (a catch-up adds them)
and rewordings of them asked. Near-duplicate recall: of the exact top 5 with cosine >= 0.75 (and >= 0.92), the
share `near` returns too. Prints one JSON object: build seconds, resident memory (MB) before and
after, the recall figures, each path's p50 (ms) and how often the exact scan answered `near`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import time
from pathlib import Path

from bench.harness import perf_corpus
from bench.harness.perf_fill import TENANT


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def reword_fact(text: str) -> str:
    """A new fact (perf_corpus.new_facts) said another way: its parts in another order."""
    head, rest = text.split(": ", 1)
    who_moved, when = rest.rsplit(" on day ", 1)
    return f"On day {when.rstrip('.')}, {who_moved} ({head.lower()})."


def rewordings(count: int, seed: int) -> list[str]:
    """Stored memories said another way: the base sentences of the store, reworded."""
    rng = random.Random(seed)
    texts = perf_corpus.corpus(4096)
    shapes = [
        lambda t: f"Remember that {t[0].lower()}{t[1:]}",
        lambda t: t.replace(".", "!").replace(" says ", " said "),
        lambda t: f"FYI: {t}",
        lambda t: t.rstrip(".") + " (as agreed).",
    ]
    return [rng.choice(shapes)(rng.choice(texts)) for _ in range(count)]


async def main(args: argparse.Namespace) -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, "blas")
    from mcp_memory.embedders.local.embedder import DIM, MODEL_NAME, LocalEmbedder
    from mcp_memory.stores.sqlite import ann
    from mcp_memory.stores.sqlite.store import open_sqlite

    ann.CONNECTIVITY, ann.EXPANSION_ADD = args.connectivity, args.expansion_add  # for a build this run
    path = Path(args.db_path)
    if args.rebuild:
        for file in path.with_name(path.name + ".vectors").glob("*.hnsw*"):
            file.unlink()
    embedder = LocalEmbedder()
    facts = perf_corpus.new_facts(args.queries, seed=args.seed)
    reworded = rewordings(args.queries, args.seed)
    sets = {"new facts": await embedder.embed(facts), "rewordings": await embedder.embed(reworded)}
    out: dict = {"load_before": os.getloadavg()[0]}

    vectors, objects = await open_sqlite(path, model=MODEL_NAME, dim=DIM, approximate_min_memories=1)
    try:
        out["rss_mb_open"] = round(rss_mb())
        started = time.perf_counter()
        await vectors.warm(TENANT)
        out["cache_load_s"] = round(time.perf_counter() - started, 2)
        out["rss_mb_cache"] = round(rss_mb())
        started = time.perf_counter()
        await vectors.near(TENANT, sets["new facts"][0], 5, None)  # schedules the build (or maps the file)
        vectors._indexes.wait()
        out["index_ready_s"] = round(time.perf_counter() - started, 2)
        out["rss_mb_index"] = round(rss_mb())
        out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3)
        before = (vectors._indexes.answered, vectors._indexes.fell_back)
        graph = vectors._indexes._graphs[TENANT]
        asked = []  # (key, embedding, conversation, the exact top 5 as (id, cosine))
        exact_ms = []
        for name, embeddings in sets.items():
            for conversation in (None, "conv-9"):
                key = f"{name}, {'project' if conversation is None else 'a conversation'}"
                for embedding in embeddings:
                    t = time.perf_counter()
                    exact = await vectors.query(TENANT, embedding, 5, conversation)
                    exact_ms.append(time.perf_counter() - t)
                    asked.append((key, embedding, conversation, [(h.memory.id, h.similarity) for h in exact]))
        out["exact_p50_ms"] = round(1000 * statistics.median(exact_ms), 2)
        for ef in args.ef:
            graph.index.expansion_search = ef
            tallies: dict = {}
            near_ms = []
            for key, embedding, conversation, exact in asked:
                t = time.perf_counter()
                approx = {h.memory.id for h in await vectors.near(TENANT, embedding, 5, conversation)}
                near_ms.append(time.perf_counter() - t)
                for floor in (0.75, 0.92):
                    tally = tallies.setdefault((key, floor), [0, 0])
                    wanted = [i for i, similarity in exact if similarity >= floor]
                    tally[0] += sum(1 for i in wanted if i in approx)
                    tally[1] += len(wanted)
            out[f"ef={ef}"] = {
                "near_p50_ms": round(1000 * statistics.median(near_ms), 2),
                **{
                    f"{key}: recall>={floor}": (round(hit / total, 4) if total else None, total)
                    for (key, floor), (hit, total) in tallies.items()
                },
            }
        graph.index.expansion_search = ann.EXPANSION_SEARCH
        if args.late:
            # Memories unlike the bulk, written after the graph: enough to bring it up to date
            # (a catch-up adds them to the graph), then rewordings of them asked.
            from mcp_memory.core.model import Memory

            late = perf_corpus.new_facts(args.late, seed=args.seed + 1)
            late_vectors = await embedder.embed(late)
            await vectors.put_many(
                [
                    (Memory(id=f"late-{i:06d}", tenant=TENANT, content=text, created_at="2026-12-01T00:00:00.000Z"), e)
                    for i, (text, e) in enumerate(zip(late, late_vectors))
                ]
            )
            started = time.perf_counter()
            await vectors.near(TENANT, late_vectors[0], 5, None)  # schedules the catch-up
            vectors._indexes.wait()
            out["catch_up_s"] = round(time.perf_counter() - started, 2)
            asked = await embedder.embed([reword_fact(text) for text in late[: args.queries]])
            found = {0.75: [0, 0], 0.92: [0, 0]}
            for embedding in asked:
                exact = await vectors.query(TENANT, embedding, 5, None)
                approx = {h.memory.id for h in await vectors.near(TENANT, embedding, 5, None)}
                for floor, tally in found.items():
                    wanted = [h.memory.id for h in exact if h.similarity >= floor]
                    tally[0] += sum(1 for i in wanted if i in approx)
                    tally[1] += len(wanted)
            out["rewordings of memories written after the graph"] = {
                f"recall>={floor}": (round(hit / total, 4) if total else None, total)
                for floor, (hit, total) in found.items()
            }
        out["answered_by_index"] = vectors._indexes.answered - before[0]
        out["fell_back"] = vectors._indexes.fell_back - before[1]
        out["rss_mb_end"] = round(rss_mb())
        out["connectivity"], out["expansion_add"] = ann.CONNECTIVITY, ann.EXPANSION_ADD
    finally:
        await vectors.close()
        await objects.close()
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))


def ann_default_ef() -> int:
    from mcp_memory.stores.sqlite import ann

    return ann.EXPANSION_SEARCH


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db-path", required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true", help="delete the saved index first")
    parser.add_argument("--ef", type=lambda raw: [int(x) for x in raw.split(",")], default=[ann_default_ef()])
    parser.add_argument("--connectivity", type=int, default=16, help="HNSW M of a graph built this run")
    parser.add_argument("--expansion-add", type=int, default=128, help="efConstruction of a graph built this run")
    parser.add_argument("--late", type=int, default=0, help="memories to write after the graph, then ask about")
    asyncio.run(main(parser.parse_args()))
