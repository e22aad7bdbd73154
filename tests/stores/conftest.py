"""Every backend, behind one fixture, for the one contract suite.

To add a backend: write an async factory `(tmp_path, request) -> (vector store,
object store)` and add it to BACKENDS (`request` gives it fixtures it needs,
e.g. a fresh PostgreSQL schema, only when it runs). The contract suite then runs against it too; a
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
Factory = Callable[[Path, pytest.FixtureRequest], Awaitable[Stores]]


async def memory_backend(tmp_path: Path, request: pytest.FixtureRequest) -> Stores:
    return InMemoryVectorStore(), InMemoryObjectStore()


async def sqlite_backend(tmp_path: Path, request: pytest.FixtureRequest) -> Stores:
    from mcp_memory.stores.sqlite import open_sqlite

    return await open_sqlite(tmp_path / "contract" / "memory.db", model="contract-test", dim=DIM)


async def postgres_backend(tmp_path: Path, request: pytest.FixtureRequest) -> Stores:
    from mcp_memory.stores.postgres import open_postgres

    url = request.getfixturevalue("pg_url")  # a fresh schema for this test
    return await open_postgres(url, model="contract-test", dim=DIM)


BACKENDS: dict[str, Factory] = {
    "memory": memory_backend,
    "sqlite": sqlite_backend,
    "postgres": postgres_backend,
}


@pytest.fixture(params=list(BACKENDS))
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    vectors, objects = await BACKENDS[request.param](tmp_path, request)
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
