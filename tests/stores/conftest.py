"""Every backend, behind one fixture, for the one contract suite.

To add a backend: write an async factory `(request, tmp_path) -> (vector
store, object store)`, add it to FACTORIES and its name to BACKENDS
(tests/support/backends.py, the list every parametrised suite reads); a factory that needs a service
(the moto endpoint, a database server) asks for its fixture through
`request.getfixturevalue`. The contract suite then runs against it too; a
backend cannot opt out of a case.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore
from mcp_memory.stores.records import ObjectStore, VectorStore
from tests.support.backends import BACKENDS, CROSS_PROCESS

#: The embedding width the contract tests use.
DIM = 8

Stores = tuple[VectorStore, ObjectStore]
Factory = Callable[[pytest.FixtureRequest, Path], Awaitable[Stores]]


async def memory_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    return InMemoryVectorStore(), InMemoryObjectStore()


#: The model name the contract stores are created with.
MODEL = "contract-test"


def sqlite_where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(tmp_path / "contract" / "memory.db")


async def sqlite_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    from mcp_memory.stores.sqlite.store import open_sqlite

    return await open_sqlite(Path(sqlite_where(request, tmp_path)), model=MODEL, dim=DIM)


async def s3_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    """S3 Vectors + S3 over HTTP on the moto endpoint, fresh buckets per test."""
    from mcp_memory.stores.s3.store import open_s3
    from mcp_memory.stores.section import StoreSection
    from tests.support.moto_endpoint import REGION, make_place

    place = make_place(request.getfixturevalue("aws_endpoint"), dim=DIM)
    store = StoreSection(
        backend="s3",
        vector_bucket=place.vector_bucket,
        vector_index=place.index,
        state_bucket=place.state_bucket,
        aws_region=REGION,
    )
    return await open_s3(store, DIM, session=place.session, endpoint_url=place.endpoint)


def postgres_where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(request.getfixturevalue("pg_url"))  # a fresh schema for this test


async def postgres_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    from mcp_memory.stores.postgres.store import open_postgres

    return await open_postgres(postgres_where(request, tmp_path), model=MODEL, dim=DIM)


FACTORIES: dict[str, Factory] = {
    "memory": memory_backend,
    "sqlite": sqlite_backend,
    "s3": s3_backend,
    "postgres": postgres_backend,
}
assert set(FACTORIES) == set(BACKENDS), "every backend needs a factory here"

#: Where another process opens the same storage (tests/support/store_worker.py), for
#: the backends whose exclusive section holds across processes.
WHERE: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "sqlite": sqlite_where,
    "postgres": postgres_where,
}
assert tuple(WHERE) == CROSS_PROCESS


@pytest.fixture(params=BACKENDS)
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    vectors, objects = await FACTORIES[request.param](request, tmp_path)
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
