"""The store section of the settings: which backend, where, and how it is tuned (docs/storage.md).

Its shape lives with the stores that read it, so a backend's opener takes it as it is; its
reader is config/store.py, which checks each variable against the rows of stores.BACKENDS.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mcp_memory.core.redact import redact_url


@dataclass(frozen=True)
class StoreSection:
    """Where memories are kept."""

    backend: str = "sqlite"
    #: Why this storage was chosen (printed at start-up).
    backend_reason: str = "embedded default"
    db_path: Path = Path("memory.db")
    #: One line for stderr about where the database lives, when it is not the default place.
    db_path_notice: str | None = None
    database_url: str | None = field(default=None, repr=False)
    #: POSTGRES_HNSW_MIN_MEMORIES: a PostgreSQL tenant this large gets an HNSW index (0: never;
    #: docs/storage.md#large-tenants; stores/postgres/ann.py's DEFAULT_MIN_MEMORIES, not imported:
    #: the settings never load the driver).
    postgres_hnsw_min_memories: int = 100_000
    #: POSTGRES_HNSW_EF_SEARCH: the candidates one index walk keeps (pgvector's hnsw.ef_search, 1..1000).
    postgres_hnsw_ef_search: int = 200
    #: POSTGRES_HNSW_RECALL: recall ranks through the index too, not only remember's duplicate check.
    postgres_hnsw_recall: bool = False
    #: SQLITE_ANN_MIN_MEMORIES: an SQLite tenant this large answers remember's duplicate check
    #: from an approximate index (0: never, the default until its measured recall is 0.99;
    #: docs/storage.md#large-tenants-in-sqlite).
    sqlite_ann_min_memories: int = 0
    vector_bucket: str | None = None
    vector_index: str = "memories"
    state_bucket: str | None = None
    knowledge_base_id: str | None = None
    aws_region: str = "ap-northeast-2"

    @property
    def redacted_database_url(self) -> str | None:
        return redact_url(self.database_url) if self.database_url else None
