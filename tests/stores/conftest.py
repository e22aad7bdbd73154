"""Every backend, behind one fixture, for the one contract suite.

To add a backend: write an async factory `(tmp_path) -> (vector store, object
store)` and add it to BACKENDS. The contract suite then runs against it too; a
backend cannot opt out of a case.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from mcp_memory.stores.base import ObjectStore, VectorStore
from mcp_memory.stores.memory import InMemoryObjectStore, InMemoryVectorStore

#: The embedding width the contract tests use.
DIM = 8

Stores = tuple[VectorStore, ObjectStore]
Factory = Callable[[Path], Awaitable[Stores]]


async def memory_backend(tmp_path: Path) -> Stores:
    return InMemoryVectorStore(), InMemoryObjectStore()


async def sqlite_backend(tmp_path: Path) -> Stores:
    from mcp_memory.stores.sqlite import open_sqlite

    return await open_sqlite(tmp_path / "contract" / "memory.db", model="contract-test", dim=DIM)


BACKENDS: dict[str, Factory] = {
    "memory": memory_backend,
    "sqlite": sqlite_backend,
}


@pytest.fixture(params=list(BACKENDS))
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    vectors, objects = await BACKENDS[request.param](tmp_path)
    try:
        yield vectors, objects
    finally:
        await vectors.close()
        await objects.close()


@pytest.fixture
def vectors(stores: Stores) -> VectorStore:
    return stores[0]


@pytest.fixture
def objects(stores: Stores) -> ObjectStore:
    return stores[1]
