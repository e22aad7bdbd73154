"""A large PostgreSQL tenant through its HNSW index against the exact scan, side by side: recall@10
and latency (bench/RESULTS.md, the million-memory section).

    PYTHONPATH=. .venv/bin/python -m bench.scale.ann_recall --database-url URL [--ef 40,100,200] [--runs 40]
    PYTHONPATH=. .venv/bin/python -m bench.scale.ann_recall --db-path FILE --skip-recall     # SQLite's latency

`--sets-first` adds the two sets before the index is built (present at build time, not inserted
after it); `--rebuild` drops the tenant's index first, so this run builds it again (`--m`,
`--ef-construction`: its build parameters).

The tenant `bench` is filled first (bench/scale/million.py, then `mcp-memory import` with vectors). This
adds the project set's facts (bench/data/project_memory) and MADial's memories, embedded by the
local model, to that tenant (once: their ids are fixed), so each set's questions are asked among a
million distractors; then:

1. **recall@10** per set (the project set's questions, MADial's dialogue queries, the performance
   corpus's questions): the ids of the index walk's ten nearest (the store's own statement, at each
   `--ef`) against the exact scan's ten, |both| / 10, averaged; and how often the store fell back;
2. **near-duplicate recall**, the duplicate check's question (`remember` asks the store for its 5
   nearest and only cares about those at cosine >= 0.75, NEAR_SIMILARITY, and >= 0.92, the dedup
   rule's): for new facts (perf_corpus.new_facts), light rewordings of the project set's facts and
   of stored corpus memories (the first `--real-prefix` of the fill, whose vectors are the model's
   own), the exact scan's top 5 at or above each threshold against the walk's top 5, the share kept;
3. **latency**, service level (`MemoryService.recall`, balanced, the local model): dense and hybrid
   retrieval, each through the index and by the exact scan, the four interleaved query by query
   (order rotating); and `remember` of new facts (its duplicate check is the same nearest query).

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from bench.data import madial_data, project_set_data
from bench.harness.timing import Stopwatch, percentile

HERE = Path(__file__).resolve().parent
from bench.harness import perf_corpus  # noqa: E402

TENANT = "bench"
EPOCH_MS = 1_700_000_000_000  # before the fill's ids: the added memories never collide with them


def ms(xs: list[float]) -> dict[str, float]:
    return {
        "p50": round(1000 * percentile(xs, 50), 1),
        "p95": round(1000 * percentile(xs, 95), 1),
        "n": len(xs),
    }


async def add_sets(service, vectors) -> dict[str, list[tuple[str, set[str]]]]:
    """The project facts and MADial memories in the tenant; returns each set's questions with the
    ids of the memories that answer them."""
    from mcp_memory.core.ids import iso, ulid
    from mcp_memory.core.model import Memory

    facts, questions = project_set_data.load()
    mad = madial_data.load()
    texts = [f.text for f in facts] + [mad.memories[i] for i in sorted(mad.memories)]
    ids = [ulid(EPOCH_MS + n, n.to_bytes(16, "big")) for n in range(len(texts))]
    present = {m.id for m in await vectors.get(TENANT, ids)}
    missing = [n for n in range(len(texts)) if ids[n] not in present]
    if missing:
        embedded = await service.embedder.embed([texts[n] for n in missing])
        items = [
            (Memory(id=ids[n], tenant=TENANT, content=texts[n], created_at=iso(EPOCH_MS + n)), embedded[k])
            for k, n in enumerate(missing)
        ]
        for start in range(0, len(items), 500):
            await vectors.put_many(items[start : start + 500])
    fact_ids = {f.id: ids[k] for k, f in enumerate(facts)}
    mad_ids = {m: ids[len(facts) + j] for j, m in enumerate(sorted(mad.memories))}
    return {
        "project set": [(q.text, {fact_ids[g] for g in q.gold}) for q in questions],
        "MADial": [(d.query, {mad_ids[g] for g in d.gold}) for d in mad.dialogues],
        "perf corpus": [(q, set()) for q in perf_corpus.queries(200)],
    }


async def nearest_ids(vectors, statement: str, embedding, k: int, settings: str | None) -> list[str]:
    params = (vectors._vector(embedding), TENANT, None, None, k)
    async with vectors._db.connection("query") as conn:
        async with conn.transaction():
            if settings:
                await conn.execute(settings)
            cursor = await conn.execute(statement, params, prepare=False)
            return [row[0] for row in await cursor.fetchall()]


async def recall_at_10(service, vectors, sets: dict, efs: list[int], per_set: int) -> dict:
    """Per set and ef: recall@10 of the walk against the exact scan; and, of the answering
    memories the exact scan ranks in its ten, the share the walk ranks in its ten too."""
    from mcp_memory.stores.postgres.ann import walk_settings

    out = {}
    for name, asked in sets.items():
        if per_set and len(asked) > per_set:  # an even spread over the set, the same every run
            asked = [asked[round(i * len(asked) / per_set)] for i in range(per_set)]
        embedded = await service.embedder.embed([q for q, _ in asked])
        per_ef: dict[int, list[float]] = {ef: [] for ef in efs}
        gold_kept: dict[int, list[float]] = {ef: [] for ef in efs}
        short = {ef: 0 for ef in efs}
        for q, (_, gold) in zip(embedded, asked):
            exact = set(await nearest_ids(vectors, vectors._query, q, 10, None))
            for ef in efs:
                approx = set(await nearest_ids(vectors, vectors._approximate, q, 10, walk_settings(ef)))
                per_ef[ef].append(len(exact & approx) / max(1, len(exact)))
                if gold & exact:
                    gold_kept[ef].append(len(gold & exact & approx) / len(gold & exact))
                short[ef] += len(approx) < 10
        out[name] = {"queries": len(asked)}
        for ef in efs:
            out[name][f"ef={ef}"] = {
                "recall@10": round(float(np.mean(per_ef[ef])), 4),
                "answers kept": round(float(np.mean(gold_kept[ef])), 4) if gold_kept[ef] else None,
                "short walks": short[ef],
            }
        print(name, json.dumps(out[name]), file=sys.stderr, flush=True)
    return out


def reworded(text: str, n: int) -> str:
    """A light edit of `text`, one of three kinds by `n`: what a user telling the same fact again writes."""
    body = text.rstrip(".")
    kind = n % 3
    if kind == 0:
        return f"Reminder: {body}."
    if kind == 1:
        return f"{body}, as agreed."
    words = body.split()
    return " ".join(words[:-1]) + "." if len(words) > 4 else f"Again: {body}."


async def nearest_with_distance(vectors, statement: str, embedding, k: int, settings: str | None) -> list[tuple]:
    params = (vectors._vector(embedding), TENANT, None, None, k)
    async with vectors._db.connection("query") as conn:
        async with conn.transaction():
            if settings:
                await conn.execute(settings)
            cursor = await conn.execute(statement, params, prepare=False)
            return [(row[0], 1.0 - float(row[2])) for row in await cursor.fetchall()]


async def near_duplicates(service, vectors, efs: list[int], per_set: int, real_prefix: int) -> dict:
    """Per kind of text and ef: of the exact scan's top 5 at cosine >= 0.75 (and >= 0.92), the share
    the walk's top 5 holds too (what remember's duplicate check would miss), and the texts whose
    nearest such neighbour the walk missed."""
    from mcp_memory.stores.postgres.ann import walk_settings

    facts, _ = project_set_data.load()
    n = per_set or 100
    corpus = perf_corpus.corpus(real_prefix)
    kinds = {
        "new facts": perf_corpus.new_facts(n, seed=4242),
        "project facts reworded": [reworded(facts[round(i * len(facts) / n) % len(facts)].text, i) for i in range(n)],
        "corpus memories reworded": [reworded(corpus[(i * 7919) % real_prefix], i) for i in range(n)],
    }
    out = {}
    for name, texts in kinds.items():
        embedded = await service.embedder.embed(texts)
        kept: dict[int, dict[float, list[int]]] = {ef: {0.75: [0, 0], 0.92: [0, 0]} for ef in efs}
        first_missed = {ef: 0 for ef in efs}
        # texts whose exact top 5 holds one at >= t, and of those, whose walk holds one too (the
        # duplicate check's verdict: "same" needs one at >= 0.92, "close" one at >= 0.75)
        verdicts: dict[int, dict[float, list[int]]] = {ef: {0.75: [0, 0], 0.92: [0, 0]} for ef in efs}
        with_near = 0
        for q in embedded:
            exact = await nearest_with_distance(vectors, vectors._query, q, 5, None)
            with_near += any(c >= 0.75 for _, c in exact)
            for ef in efs:
                walked = await nearest_with_distance(vectors, vectors._approximate, q, 5, walk_settings(ef))
                walk = {i for i, _ in walked}
                for threshold in (0.75, 0.92):
                    if any(c >= threshold for _, c in exact):
                        verdicts[ef][threshold][1] += 1
                        verdicts[ef][threshold][0] += any(c >= threshold for _, c in walked)
                for threshold in (0.75, 0.92):
                    close = [i for i, c in exact if c >= threshold]
                    kept[ef][threshold][0] += sum(i in walk for i in close)
                    kept[ef][threshold][1] += len(close)
                if exact and exact[0][1] >= 0.75 and exact[0][0] not in walk:
                    first_missed[ef] += 1
        out[name] = {"texts": len(texts), "with a neighbour >= 0.75": with_near}
        for ef in efs:
            out[name][f"ef={ef}"] = {
                **{f"kept >= {t}": (round(got / total, 4) if total else None) for t, (got, total) in kept[ef].items()},
                **{f"pairs >= {t}": total for t, (_, total) in kept[ef].items()},
                **{
                    f"verdict kept >= {t}": (round(got / total, 4) if total else None)
                    for t, (got, total) in verdicts[ef].items()
                },
                "nearest missed": first_missed[ef],
            }
        print(name, json.dumps(out[name]), file=sys.stderr, flush=True)
    return out


async def latency(service, vectors, runs: int) -> dict:
    from mcp_memory.core.model import Caller

    queries = perf_corpus.queries(runs + 5, seed=23)
    ann = getattr(vectors, "ann", None)
    ready = set(ann._ready) if ann is not None else set()
    arms = [("dense", True), ("dense", False), ("hybrid", True), ("hybrid", False)]
    if not ready:  # SQLite, or a tenant without its index: the exact scan only
        arms = [("dense", False), ("hybrid", False)]
    times: dict[str, list[float]] = {f"{r} {'index' if a else 'exact'}": [] for r, a in arms}
    for i, query in enumerate(queries):
        for retrieval, approximate in arms[i % len(arms) :] + arms[: i % len(arms)]:
            service.retrieval = retrieval
            if ann is not None:  # the index arm ranks through the index (POSTGRES_HNSW_RECALL)
                ann._ready = set(ready) if approximate else set()
                ann.ranks = approximate
            with Stopwatch() as recalling:
                await service.recall(Caller(TENANT), query)
            if i >= 5:
                times[f"{retrieval} {'index' if approximate else 'exact'}"].append(recalling.last)
    if ann is not None:  # remember's duplicate check walks the index whatever recall does
        ann._ready = set(ready)
        ann.ranks = False
    service.retrieval = "hybrid"
    remembers = Stopwatch()
    for text in perf_corpus.new_facts(runs, seed=int(time.time()) % 100_000):
        with remembers:
            await service.remember(Caller(TENANT), text)
    return {**{k: ms(v) for k, v in times.items() if v}, "remember": ms(remembers.seconds)}


async def main(args) -> None:
    from threadpoolctl import threadpool_limits

    from mcp_memory.app import open_service
    from mcp_memory.config import Settings

    threadpool_limits(1, "blas")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "DATABASE_URL", "RECALL_"))}
    # opened with the index off (no build at start-up), then switched on here, after the build
    # parameters are set and any --rebuild / --sets-first is done
    env.update({"POSTGRES_HNSW_MIN_MEMORIES": "0", "RATE_LIMIT_PER_TENANT": "100000"})
    env.update({"DATABASE_URL": args.database_url} if args.database_url else {"MEMORY_DB_PATH": args.db_path})
    service = await open_service(Settings.from_env(env))
    try:
        await service.embedder.warm_up()
        vectors = service.vectors
        result: dict = {"backend": "postgres" if args.database_url else "sqlite", "open s": 0.0}
        sets = None
        if args.database_url:
            vectors.ann.build_memory = args.build_memory
            vectors.ann.m, vectors.ann.ef_construction = args.m, args.ef_construction
            vectors.ann.min_memories = args.min
            if args.rebuild:
                from mcp_memory.stores.postgres.ann import index_name

                async with vectors._db.connection("drop") as conn:
                    await conn.execute(f'DROP INDEX IF EXISTS "{index_name(TENANT)}"')
                vectors.ann._ready.discard(TENANT)
            if args.sets_first and not args.skip_recall:
                sets = await add_sets(service, vectors)
            with Stopwatch() as waiting:
                result["index ready"] = await vectors.ann.ensure(TENANT)
            result["index wait s"] = round(waiting.last, 1)
            rows = await vectors._db.fetch("count", "SELECT count(*) FROM memories WHERE tenant_id = %s", (TENANT,))
        else:
            rows = await vectors._db.read(
                lambda conn: conn.execute("SELECT count(*) FROM memories WHERE tenant = ?", (TENANT,)).fetchall(), "n"
            )
        result["memories"] = int(rows[0][0])
        result["load"] = [os.getloadavg()[0]]
        if not args.skip_recall:
            sets = sets or await add_sets(service, vectors)
            efs = [int(e) for e in args.ef.split(",")]
            result["sets first"] = args.sets_first
            if args.database_url:  # the index's own options (an index built before this run keeps its own)
                from mcp_memory.stores.postgres.ann import index_name

                options = await vectors._db.fetch(
                    "options", "SELECT reloptions FROM pg_class WHERE relname = %s", (index_name(TENANT),)
                )
                result["index options"] = options[0][0] if options else None
            result["recall@10"] = await recall_at_10(service, vectors, sets, efs, args.per_set)
            if args.database_url:
                result["near duplicates"] = await near_duplicates(service, vectors, efs, args.per_set, args.real_prefix)
        if args.database_url and args.latency_ef:
            from mcp_memory.stores.postgres.ann import walk_settings

            vectors.ann.settings = walk_settings(args.latency_ef)
            result["latency ef"] = args.latency_ef
        if args.runs:
            result["latency"] = await latency(service, vectors, args.runs)
        result["load"].append(os.getloadavg()[0])
        print(json.dumps(result))
    finally:
        await service.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="PostgreSQL (else --db-path: SQLite, exact scan only)")
    parser.add_argument("--db-path")
    parser.add_argument("--build-memory", default="3GB", help="maintenance_work_mem of the index build")
    parser.add_argument("--min", type=int, default=100_000, help="POSTGRES_HNSW_MIN_MEMORIES for this run")
    parser.add_argument("--ef", default="40,100,200")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--skip-recall", action="store_true")
    parser.add_argument("--m", type=int, default=16, help="the HNSW build's m (pgvector's default 16)")
    parser.add_argument("--ef-construction", type=int, default=64, help="the build's ef_construction (default 64)")
    parser.add_argument("--rebuild", action="store_true", help="drop the tenant's index first and build it again")
    parser.add_argument("--sets-first", action="store_true", help="add the two sets before the index is built")
    parser.add_argument("--real-prefix", type=int, default=4096, help="the fill's first memories with real embeddings")
    parser.add_argument(
        "--latency-ef", type=int, default=0, help="hnsw.ef_search of the timed index arm (0: the store's)"
    )
    parser.add_argument("--per-set", type=int, default=0, help="ask at most this many of each set's questions")
    asyncio.run(main(parser.parse_args()))
