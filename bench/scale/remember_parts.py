"""Where a remember's time goes: each port call `MemoryService.remember` makes, timed, in one
process over N new facts (bench/RESULTS.md, "A million memories in one tenant, both backends").

    PYTHONPATH=. .venv/bin/python -m bench.scale.remember_parts FILE N

FILE is an SQLite store of `bench/scale/million.py --sqlite-into`. Prints one JSON object: the
remember p50 and each call's p50 (ms) with how many times it ran.
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
    wrap(service.vectors, "put_with_index", "put_with_index")
    await service.recall(Caller("bench"), "warm the cache")
    print("open+first recall", round(opening.running(), 2), file=sys.stderr)
    times.clear()
    total = Stopwatch()
    for text in perf_corpus.new_facts(n, seed=int(time.time()) % 100_000):
        with total:
            await service.remember(Caller("bench"), text)
    out = {"remember": round(1000 * statistics.median(total.seconds), 1), "load": os.getloadavg()[0]}
    for k, v in times.items():
        out[k] = (round(1000 * statistics.median(v), 1), len(v))
    print(json.dumps(out))
    await service.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
