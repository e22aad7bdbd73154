"""S3 recall through two mcp-memory trees side by side: before/after ratios that share the noise.

    python -m bench.latency.s3_recall_ab BEFORE_TREE AFTER_TREE [--memories 500] [--dim 64] [--rounds 10] [--calls 20]

One moto endpoint (tests/support/moto_endpoint.py: S3 and S3 Vectors over HTTP
on 127.0.0.1, one request at a time) holds one tenant's memories, written once.
Each tree runs in its own worker process (PYTHONPATH=tree) that opens the S3
backend with `open_s3` as the server does and waits. Then, alternating A, B,
A, B so background load falls on both alike, each worker times `--calls`:

- `recall`: `MemoryService.recall` with a precomputed query vector (QueryVectors
  and the counters' reads: the whole S3 path of a recall);
- `get`: one `VectorStore.get` of one id (one GetVectors: the per-call cost of
  the client path, with little work on the endpoint).

Prints the medians (ms) per tree and the B/A ratios. A tree is any directory
holding an `mcp_memory` package (e.g. `git archive <commit> | tar -x -C DIR`).
Not part of the test suite; results go in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TENANT = "bench"


def _unit_rows(count: int, dim: int, seed: int) -> list[list[float]]:
    import numpy as np

    rows = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).tolist()


# --------------------------------------------------------------------------- the worker (one tree)


async def worker(place: dict, dim: int) -> None:
    import boto3
    import numpy as np

    from mcp_memory.config import Settings
    from mcp_memory.core.counters.tracker import AccessCounters
    from mcp_memory.core.logs import NullLog
    from mcp_memory.core.model import Caller
    from mcp_memory.core.ports import Embedder
    from mcp_memory.core.service import MemoryService
    from mcp_memory.stores.s3.store import open_s3

    queries = np.asarray(_unit_rows(60, dim, 11), dtype=np.float32)

    class Precomputed(Embedder):
        provider, model = "bench", "precomputed"

        def __init__(self) -> None:
            self.dim = dim

        async def embed(self, texts: list[str]) -> np.ndarray:
            return np.stack([queries[int(text[1:]) % len(queries)] for text in texts])

        async def close(self) -> None:
            return None

    session = boto3.session.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name=place["region"])
    settings = Settings(
        backend="s3",
        vector_bucket=place["vector_bucket"],
        vector_index="memories",
        state_bucket=place["state_bucket"],
        embedding_dim=dim,
        aws_region=place["region"],
    )
    vectors, objects = await open_s3(settings, session=session, endpoint_url=place["endpoint"])
    counters = AccessCounters(objects, pod_id=f"bench-{os.getpid()}", log=NullLog())
    service = MemoryService(vectors, objects, Precomputed(), counters, floor=0.01)
    caller = Caller(TENANT)
    print("ready", flush=True)
    i = 0
    for line in sys.stdin:
        what, calls = line.split()
        times = []
        for _ in range(int(calls)):
            i += 1
            started = time.perf_counter()
            if what == "recall":
                result = await service.recall(caller, f"q{i}")
                assert result.results
            else:
                assert await vectors.get(TENANT, [f"m{i % place['memories']:07d}"])
            times.append((time.perf_counter() - started) * 1000)
        print(json.dumps(times), flush=True)
    await service.close()


# --------------------------------------------------------------------------- the driver


def fill(endpoint: str, count: int, dim: int) -> dict:
    sys.path.insert(0, str(HERE.parents[1]))
    from tests.support.moto_endpoint import REGION, admin_client, make_place

    place = make_place(endpoint, dim=dim)
    rows = _unit_rows(count, dim, 7)
    client = admin_client(endpoint, "s3vectors")
    for start in range(0, count, 500):
        client.put_vectors(
            vectorBucketName=place.vector_bucket,
            indexName=place.index,
            vectors=[
                {
                    "key": f"{TENANT}#m{i:07d}",
                    "data": {"float32": rows[i]},
                    "metadata": {
                        "tenantId": TENANT,
                        "memoryType": "fact",
                        "content": f"memory number {i}",
                        "createdAt": "2026-01-01T00:00:00.000Z",
                        "trustBase": 0.5,
                    },
                }
                for i in range(start, min(count, start + 500))
            ],
        )
    return {
        "endpoint": endpoint,
        "region": REGION,
        "vector_bucket": place.vector_bucket,
        "state_bucket": place.state_bucket,
        "memories": count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--memories", type=int, default=500)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        asyncio.run(worker(json.loads(args.worker), args.dim))
        return

    sys.path.insert(0, str(HERE.parents[1]))
    from tests.support.moto_endpoint import MotoEndpoint

    endpoint = MotoEndpoint()
    try:
        place = fill(endpoint.url, args.memories, args.dim)
        trees = {"A": Path(args.before).resolve(), "B": Path(args.after).resolve()}
        workers = {}
        for name, tree in trees.items():
            command = [sys.executable, __file__, "x", "y", "--dim", str(args.dim), "--worker", json.dumps(place)]
            env = {**os.environ, "PYTHONPATH": str(tree)}
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
            workers[name] = process
        load = [os.getloadavg()[0]]
        times: dict[tuple[str, str], list[float]] = {(n, w): [] for n in trees for w in ("recall", "get")}
        for round_ in range(args.rounds + 1):  # round 0 warms up
            for what in ("recall", "get"):
                for name, process in workers.items():
                    assert process.stdin is not None and process.stdout is not None
                    process.stdin.write(f"{what} {args.calls}\n")
                    process.stdin.flush()
                    answer = json.loads(process.stdout.readline())
                    if round_:
                        times[(name, what)] += answer
        load.append(os.getloadavg()[0])
        for process in workers.values():
            assert process.stdin is not None
            process.stdin.close()
            process.wait(30)
    finally:
        endpoint.stop()
    print(f"\n{args.memories} memories, {args.dim} dimensions; {args.rounds}×{args.calls} calls each, alternating")
    print(f"load average {load[0]:.2f} → {load[1]:.2f}\n")
    print("| call | A p50 ms | B p50 ms | B/A |")
    print("| --- | ---: | ---: | ---: |")
    for what in ("recall", "get"):
        a, b = statistics.median(times[("A", what)]), statistics.median(times[("B", what)])
        print(f"| {what} | {a:.2f} | {b:.2f} | {b / a:.3f} |")


if __name__ == "__main__":
    main()
