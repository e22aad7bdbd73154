"""Where a remember's time goes: each port call `MemoryService.remember` makes, timed, in one
process over N new facts (bench/RESULTS.md, "A million memories in one tenant, both backends").

    PYTHONPATH=. .venv/bin/python -m bench.scale.remember_parts FILE N

FILE is an SQLite store of `bench/scale/million.py --sqlite-into`. Prints one JSON object: the
remember p50 and each call's p50 (ms) with how many times it ran (`near` is the duplicate check),
open + first recall (s) and resident memory now and at peak (MB). SQLITE_ANN_MIN_MEMORIES from the
environment applies (0: the exact scan for the duplicate check too).
"""

import asyncio
import json
import os
import statistics
import sys
import time
from collections import defaultdict

from bench.harness import perf_corpus
from bench.harness.timing import Stopwatch


async def main(db, n):
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, "blas")
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "DATABASE_URL", "RECALL_"))}
    env.update({"MEMORY_DB_PATH": db, "RATE_LIMIT_PER_TENANT": "100000"})
    opening = Stopwatch.started()
    service = await open_service(Settings.from_env(env))
    await service.embedder.warm_up()
    times = defaultdict(list)

    def wrap(obj, name, label):
        f = getattr(obj, name)

        async def g(*a, **k):
            call = Stopwatch()  # one per call: the wrapped calls may overlap
            try:
                with call:
                    return await f(*a, **k)
            finally:
                times[label].append(call.last)

        setattr(obj, name, g)

    wrap(service.embedder, "embed", "embed")
    wrap(service.vectors, "query", "query")
    wrap(service.vectors, "near", "near")
    wrap(service.vectors, "put_with_index", "put_with_index")
    await service.recall(Caller("bench"), "warm the cache")
    first_recall = round(opening.running(), 2)
    print("open+first recall", first_recall, file=sys.stderr)
    store = getattr(service.vectors, "inner", service.vectors)
    if getattr(store, "_approximate_min", 0) > 0:  # SQLITE_ANN_MIN_MEMORIES: the graph file is checked
        # (or the graph built) on a thread of its own, the exact scan answering until then: wait for it.
        await store.near("bench", (await service.embedder.embed(["warm the index"]))[0], 5, None)
        store._indexes.wait()
    times.clear()
    total = Stopwatch()
    for text in perf_corpus.new_facts(n, seed=int(time.time()) % 100_000):
        with total:
            await service.remember(Caller("bench"), text)
    out = {"remember": round(1000 * statistics.median(total.seconds), 1), "load": os.getloadavg()[0]}
    out["open_first_recall_s"] = first_recall
    with open("/proc/self/status") as status:  # resident now and at peak, MB
        fields = dict(line.split(":", 1) for line in status if line.startswith(("VmRSS", "VmHWM")))
    out["rss_mb"] = round(int(fields["VmRSS"].split()[0]) / 1024)
    out["peak_rss_mb"] = round(int(fields["VmHWM"].split()[0]) / 1024)
    for k, v in times.items():
        out[k] = (round(1000 * statistics.median(v), 1), len(v))
    print(json.dumps(out))
    await service.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
