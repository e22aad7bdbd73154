"""A separate OS process working on a shared SQLite store (used by test_sqlite.py).

    python -m tests.support.sqlite_worker <db path> <dim> <mode> <name> <count>

It opens the store, prints "ready", and waits for one line on stdin before it
starts, so the test can release several workers at the same moment. Modes:

- write: put `count` memories (tenant "shared", ids "<name>-<i>") and `count`
  objects ("objects/<name>/<i>").
- increment: `count` times, inside exclusive("shared"): read the object
  "counter" and write its value + 1 with if_match, yielding to the event loop
  between the read and the write so an unprotected run would interleave.

Any exception ends the process with a non-zero status and the error on stderr.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import numpy as np

from mcp_memory.core.model import Memory
from mcp_memory.stores.sqlite.store import open_sqlite


async def main(path: Path, dim: int, mode: str, name: str, count: int) -> None:
    vectors, objects = await open_sqlite(path, model="worker-test", dim=dim)
    try:
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        if mode == "write":
            rng = np.random.default_rng(abs(hash(name)) % 2**32)
            for i in range(count):
                embedding = rng.standard_normal(dim).astype(np.float32)
                embedding /= np.linalg.norm(embedding)
                await vectors.put(Memory(id=f"{name}-{i}", tenant="shared", content=f"{name} {i}"), embedding)
                await objects.put(f"objects/{name}/{i:04d}", str(i))
        elif mode == "increment":
            for _ in range(count):
                async with vectors.exclusive("shared"):
                    current = await objects.get("counter")
                    assert current is not None, "the counter object is missing"
                    for _ in range(5):
                        await asyncio.sleep(0)
                    await objects.put("counter", str(int(current.body) + 1), if_match=current.etag)
        else:
            raise SystemExit(f"unknown mode {mode}")
    finally:
        await vectors.close()
        await objects.close()


if __name__ == "__main__":
    db, dim, mode, name, count = sys.argv[1:6]
    asyncio.run(main(Path(db), int(dim), mode, name, int(count)))
