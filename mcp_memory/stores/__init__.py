"""Storage backends behind the two ports (stores/records.py).

BACKENDS is the one table of backends (name, opener, install hint, where the
boot line says it stores, the settings it needs) that config/, the boot
lines and the tests read; adding a backend is its folder and one row here;
`open_stores(store, model, dim)` opens the one the store section chose (docs/storage.md). Backends are
imported only when chosen, so importing this package never pulls in sqlite3,
psycopg or boto3; the hook process reads the table, so even the errors load only
when a store is opened. The S3 backend takes credentials and any endpoint override
from the standard AWS chain (`AWS_ENDPOINT_URL` points it at a stand-in).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the hook process reads this table (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path
    from typing import Any

    from mcp_memory.core.ports import ObjectStore, VectorStore
    from mcp_memory.stores.section import StoreSection

    Stores = tuple[VectorStore, ObjectStore]

__all__ = ["BACKENDS", "Backend", "open_stores", "store_variables", "user_data_dir"]


#: What the postgres extra provides.
_POSTGRES_DRIVERS = frozenset({"psycopg", "psycopg_pool"})


class Backend:
    """One storage backend: its name (MEMORY_BACKEND), how it is opened (the opener
    says which extra to install when a driver is missing), where the boot line
    says it stores, and the settings it needs. config/store.py, the boot lines, the
    hooks' socket names and the tests read this table. (A plain class, not a dataclass:
    the hook process imports this module.)"""

    __slots__ = ("default_place", "default_provider", "label", "name", "open", "place", "reads", "requires", "where")

    def __init__(
        self,
        name: str,
        open: Callable[[StoreSection, str, int], Awaitable[Stores]],
        where: Callable[[StoreSection], str],
        requires: tuple[str, ...] = (),
        default_provider: str = "local",
        label: str = "",
        reads: Callable[[Callable[[str], str | None]], dict[str, Any]] | None = None,
        place: tuple[str, ...] = (),
        default_place: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        #: `open(section, model, dim)`: the two stores, for vectors of that model and width.
        self.open = open
        self.where = where
        #: The variables it cannot work without, each read into the store section's field of the
        #: same name in lower case. config/store.py refuses the backend, naming them, while any is
        #: unset; and when MEMORY_BACKEND is not set, the first backend (in table order) with one of
        #: them set is chosen. A backend that needs none is the embedded default.
        self.requires = requires
        #: The embedding provider when EMBEDDING_PROVIDER is not set.
        self.default_provider = default_provider
        #: How messages name it: "the S3 backend".
        self.label = label
        #: Settings it reads beyond `requires`, from the trimmed environment (None when unset), as
        #: fields of the store section; config reads every row's, whichever backend is chosen, so a
        #: section is whole.
        self.reads = reads
        #: The variables beyond `requires` that say which store it opens, and those its default
        #: place is worked out from: two processes that agree on them (and on MEMORY_BACKEND) open
        #: the same store, so their hooks meet at one socket (`store_variables`).
        self.place = place
        self.default_place = default_place


async def _open_sqlite(settings: StoreSection, model: str, dim: int) -> Stores:
    from mcp_memory.stores.sqlite.store import open_sqlite

    return await open_sqlite(
        settings.db_path,
        model=model,
        dim=dim,
        approximate_min_memories=settings.sqlite_ann_min_memories,
    )


def _sqlite_place(raw: Callable[[str], str | None]) -> dict[str, Any]:
    from mcp_memory.stores.sqlite.location import DATA_DIR_NAME, database_place

    return database_place(raw, user_data_dir(raw, DATA_DIR_NAME))


async def _open_postgres(settings: StoreSection, model: str, dim: int) -> Stores:
    from mcp_memory.core.errors import StartupError

    if not settings.database_url:
        raise StartupError("DATABASE_URL is required for the PostgreSQL backend")
    try:
        from mcp_memory.stores.postgres.store import open_postgres
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _POSTGRES_DRIVERS:
            raise
        from mcp_memory.core.version import install_hint

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
    from mcp_memory.core.errors import StartupError

    try:
        from mcp_memory.stores.s3.store import open_s3
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in ("boto3", "botocore"):
            raise
        from mcp_memory.core.version import install_hint

        raise StartupError(f"the S3 backend needs boto3: {install_hint('aws')}") from None
    return await open_s3(settings, dim)


def _postgres_where(settings: StoreSection) -> str:
    from mcp_memory.core.redact import redact_url

    return str(redact_url(settings.database_url or ""))


def _s3_where(settings: StoreSection) -> str:
    return f"s3vectors://{settings.vector_bucket}/{settings.vector_index}, state s3://{settings.state_bucket}"


#: Every storage backend, in the order messages list them.
BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend(
            "sqlite",
            _open_sqlite,
            lambda settings: str(settings.db_path),
            label="SQLite",
            reads=_sqlite_place,
            place=("MEMORY_DB_PATH",),
            default_place=("XDG_DATA_HOME", "HOME"),
        ),
        Backend("postgres", _open_postgres, _postgres_where, requires=("DATABASE_URL",), label="PostgreSQL"),
        Backend(
            "s3",
            _open_s3,
            _s3_where,
            requires=("VECTOR_BUCKET", "STATE_BUCKET"),
            default_provider="bedrock",
            label="S3",
            place=("AWS_REGION",),
        ),
    )
}


async def open_stores(settings: StoreSection, model: str, dim: int) -> Stores:
    """Open the configured backend's vector store and object store (close both when done), for
    vectors of `model` and `dim` (the embedding section's).

    Raises StartupError when the storage cannot be opened as configured.
    """
    from mcp_memory.core.errors import StartupError

    backend = BACKENDS.get(settings.backend)
    if backend is None:
        raise StartupError(f'unknown storage backend "{settings.backend}"')
    return await backend.open(settings, model, dim)


def store_variables() -> tuple[str, ...]:
    """Every variable that says which store a process opens, from the rows: MEMORY_BACKEND, each
    backend's required and place variables, then those default places are worked out from.
    The hooks' socket of a (store, tenant) is named by their values (server/hooks/folder.py)."""
    rows = BACKENDS.values()
    return (
        "MEMORY_BACKEND",
        *[name for row in rows for name in (*row.requires, *row.place)],
        *[name for row in rows for name in row.default_place],
    )


def user_data_dir(raw: Callable[[str], str | None], name: str) -> Path:
    """The platform's user data directory / `name`, from the variables `raw` gives (not the
    process's own: `Settings.from_env(mapping)` reads the mapping): the default database's
    (sqlite/location.py) and the hooks' folder (server/hooks/folder.py). On Linux worked out as
    platformdirs does (XDG_DATA_HOME, else ~/.local/share), since importing platformdirs would cost
    the hook a fifth of its time; elsewhere platformdirs' own."""
    import sys
    from pathlib import Path

    if sys.platform.startswith("linux"):
        xdg = raw("XDG_DATA_HOME")
        base = Path(xdg).expanduser() if xdg else Path(raw("HOME") or Path.home()) / ".local" / "share"
        return base / name
    import platformdirs

    return platformdirs.user_data_path(name, appauthor=False)
