"""Storage backends behind the two ports (stores/records.py).

BACKENDS is the one table of backends (name, opener, install hint, where the
boot line says it stores, the settings it needs) that config/, the boot
lines and the tests read; adding a backend is its folder and one row here;
`open_stores(settings)` opens the one `Settings` chose (docs/storage.md). Backends are
imported only when chosen, so importing this package never pulls in sqlite3,
psycopg or boto3. The S3 backend takes credentials and any endpoint override
from the standard AWS chain (`AWS_ENDPOINT_URL` points it at a stand-in).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_memory.core.errors import StartupError
from mcp_memory.core.ports import ObjectStore, VectorStore
from mcp_memory.core.redact import redact_url
from mcp_memory.core.version import install_hint

if TYPE_CHECKING:
    from mcp_memory.stores.section import StoreSection

__all__ = ["BACKENDS", "Backend", "open_stores"]


#: What the postgres extra provides.
_POSTGRES_DRIVERS = frozenset({"psycopg", "psycopg_pool"})

Stores = tuple[VectorStore, ObjectStore]


@dataclass(frozen=True)
class Backend:
    """One storage backend: its name (MEMORY_BACKEND), how it is opened (the opener
    says which extra to install when a driver is missing), where the boot line
    says it stores, and the settings it needs. config/store.py, the boot lines and the
    tests read this table."""

    name: str
    #: `open(section, model, dim)`: the two stores, for vectors of that model and width.
    open: Callable[[StoreSection, str, int], Awaitable[Stores]]
    where: Callable[[StoreSection], str]
    #: The variables it cannot work without, each read into the Settings field of the same
    #: name in lower case. config/store.py refuses the backend, naming them, while any is unset; and
    #: when MEMORY_BACKEND is not set, the first backend (in table order) with one of them set
    #: is chosen. A backend that needs none is the embedded default.
    requires: tuple[str, ...] = ()
    #: The embedding provider when EMBEDDING_PROVIDER is not set.
    default_provider: str = "local"
    #: How messages name it: "the S3 backend".
    label: str = ""
    #: Settings it reads beyond `requires`, from the trimmed environment (None when unset), as
    #: Settings fields; config reads every row's, whichever backend is chosen, so a Settings is whole.
    reads: Callable[[Callable[[str], str | None]], dict[str, Any]] | None = None


async def _open_sqlite(settings: StoreSection, model: str, dim: int) -> Stores:
    from mcp_memory.stores.sqlite.store import open_sqlite

    return await open_sqlite(
        settings.db_path,
        model=model,
        dim=dim,
        approximate_min_memories=settings.sqlite_ann_min_memories,
    )


def _sqlite_place(raw: Callable[[str], str | None]) -> dict[str, Any]:
    from mcp_memory.stores.sqlite.location import database_place

    return database_place(raw)


async def _open_postgres(settings: StoreSection, model: str, dim: int) -> Stores:
    if not settings.database_url:
        raise StartupError("DATABASE_URL is required for the PostgreSQL backend")
    try:
        from mcp_memory.stores.postgres.store import open_postgres
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _POSTGRES_DRIVERS:
            raise
        raise StartupError(
            f"the PostgreSQL backend needs the postgres extra ({exc.name} is not installed): {install_hint('postgres')}"
        ) from None

    return await open_postgres(
        settings.database_url,
        model=model,
        dim=dim,
        hnsw_min_memories=settings.postgres_hnsw_min_memories,
        hnsw_ef_search=settings.postgres_hnsw_ef_search,
        hnsw_recall=settings.postgres_hnsw_recall,
    )


async def _open_s3(settings: StoreSection, model: str, dim: int) -> Stores:
    try:
        from mcp_memory.stores.s3.store import open_s3
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in ("boto3", "botocore"):
            raise
        raise StartupError(f"the S3 backend needs boto3: {install_hint('aws')}") from None
    return await open_s3(settings, dim)


def _s3_where(settings: StoreSection) -> str:
    return f"s3vectors://{settings.vector_bucket}/{settings.vector_index}, state s3://{settings.state_bucket}"


#: Every storage backend, in the order messages list them.
BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend("sqlite", _open_sqlite, lambda settings: str(settings.db_path), label="SQLite", reads=_sqlite_place),
        Backend(
            "postgres",
            _open_postgres,
            lambda settings: str(redact_url(settings.database_url or "")),
            requires=("DATABASE_URL",),
            label="PostgreSQL",
        ),
        Backend(
            "s3",
            _open_s3,
            _s3_where,
            requires=("VECTOR_BUCKET", "STATE_BUCKET"),
            default_provider="bedrock",
            label="S3",
        ),
    )
}


async def open_stores(settings: StoreSection, model: str, dim: int) -> Stores:
    """Open the configured backend's vector store and object store (close both when done), for
    vectors of `model` and `dim` (the embedding section's).

    Raises StartupError when the storage cannot be opened as configured.
    """
    backend = BACKENDS.get(settings.backend)
    if backend is None:
        raise StartupError(f'unknown storage backend "{settings.backend}"')
    return await backend.open(settings, model, dim)
