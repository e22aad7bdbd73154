"""A separate OS process working on a shared store (used by test_sqlite.py and the
contract suite's cross-process `exclusive` test).

    python -m tests.support.store_worker <backend> <where> <model> <dim> <mode> <name> <count>

`backend` is sqlite (`where` is the database file) or postgres (`where` is the
database URL); `model` and `dim` must match what the store was created with.

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
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.core.model import Memory

REPO = Path(__file__).resolve().parents[2]


async def open_store(backend: str, where: str, model: str, dim: int):  # -> (VectorStore, ObjectStore)
    if backend == "sqlite":
        from mcp_memory.stores.sqlite.store import open_sqlite

        return await open_sqlite(Path(where), model=model, dim=dim)
    if backend == "postgres":
        from mcp_memory.stores.postgres.store import open_postgres

        return await open_postgres(where, model=model, dim=dim)
    raise SystemExit(f"no worker for backend {backend}")


async def main(backend: str, where: str, model: str, dim: int, mode: str, name: str, count: int) -> None:
    vectors, objects = await open_store(backend, where, model, dim)
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


def run_workers(backend: str, where: str, model: str, dim: int, mode: str, names: list[str], count: int) -> None:
    """Start one OS process per name, release them together, and require a clean exit from each."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.store_worker",
                backend,
                where,
                model,
                str(dim),
                mode,
                name,
                str(count),
            ],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdin is not None
            if proc.stdout.readline().strip() != "ready":
                _, err = proc.communicate(timeout=60)
                pytest.fail(f"a worker failed to open the store:\n{err}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, f"a worker failed:\n{err}"
            assert "locked" not in err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


if __name__ == "__main__":
    backend, where, model, dim, mode, name, count = sys.argv[1:8]
    asyncio.run(main(backend, where, model, int(dim), mode, name, int(count)))
