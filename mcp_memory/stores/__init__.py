"""Storage backends behind the two ports (stores/base.py).

`open_stores(settings)` picks the backend `Settings` chose (A2). Backends are
imported only when chosen, so importing this package never pulls in sqlite3,
psycopg or boto3. The S3 backend takes credentials and any endpoint override
from the standard AWS chain (`AWS_ENDPOINT_URL` points it at a stand-in).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from mcp_memory.core.errors import StartupError
from mcp_memory.core.ports import ObjectStore, VectorStore

__all__ = ["StoreSettings", "open_stores"]


class StoreSettings(Protocol):
    """The settings the backends read (config.Settings has them all)."""

    @property
    def backend(self) -> str: ...
    @property
    def db_path(self) -> Path: ...
    @property
    def database_url(self) -> str | None: ...
    @property
    def vector_bucket(self) -> str | None: ...
    @property
    def vector_index(self) -> str: ...
    @property
    def state_bucket(self) -> str | None: ...
    @property
    def aws_region(self) -> str: ...
    @property
    def embedding_model(self) -> str: ...
    @property
    def embedding_dim(self) -> int: ...


#: What `pip install 'mcp-memory[postgres]'` provides.
_POSTGRES_DRIVERS = frozenset({"psycopg", "psycopg_pool"})


async def open_stores(settings: StoreSettings) -> tuple[VectorStore, ObjectStore]:
    """Open the configured backend's vector store and object store (close both when done).

    Raises StartupError when the storage cannot be opened as configured.
    """
    if settings.backend == "sqlite":
        from mcp_memory.stores.sqlite.store import open_sqlite

        return await open_sqlite(settings.db_path, model=settings.embedding_model, dim=settings.embedding_dim)
    if settings.backend == "s3":
        try:
            from mcp_memory.stores.s3.store import open_s3
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] not in ("boto3", "botocore"):
                raise
            raise StartupError("the S3 backend needs boto3: pip install 'mcp-memory[aws]'") from None
        return await open_s3(settings)
    if settings.backend == "postgres":
        if not settings.database_url:
            raise StartupError("DATABASE_URL is required for the PostgreSQL backend")
        try:
            from mcp_memory.stores.postgres.store import open_postgres
        except ImportError as exc:
            if (exc.name or "").split(".")[0] not in _POSTGRES_DRIVERS:
                raise
            raise StartupError(
                f"the PostgreSQL backend needs the postgres extra ({exc.name} is not installed): "
                "pip install 'mcp-memory[postgres]'"
            ) from None

        return await open_postgres(settings.database_url, model=settings.embedding_model, dim=settings.embedding_dim)
    raise StartupError(f'unknown storage backend "{settings.backend}"')
