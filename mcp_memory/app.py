"""The composition root: settings in, a ready MemoryService out.

This is the one place that knows every room: it opens the configured stores
and embedder, builds the access counters and hands them to the service. The
edges (server/, cli/) call `open_service` and then talk to the service only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from mcp_memory.core.logs import JsonLog, NullLog
from mcp_memory.core.ports import Embedder, VectorStore
from mcp_memory.core.service import MemoryService

if TYPE_CHECKING:
    from mcp_memory.config import Settings
    from mcp_memory.core.calibration.calibrate import CalibrationReport, Cases, Progress

__all__ = ["Instruments", "backup_sqlite", "calibrate_scratch", "open_service", "storage_where"]


class Instruments(Protocol):
    """What `open_service` needs of metrics (serve-http's server/http/metrics.py `Metrics`)."""

    def timed_vectors(self, vectors: VectorStore) -> VectorStore: ...
    def timed_embedder(self, embedder: Embedder) -> Embedder: ...
    def counter_outcome(self, operation: str, ok: bool) -> None: ...


if TYPE_CHECKING:
    from pathlib import Path

    from mcp_memory.stores.sqlite.backup import BackupResult


def backup_sqlite(source: Path, target: Path) -> BackupResult:
    """Copy the SQLite store at `source` to `target` with SQLite's online backup API (blocking)."""
    from mcp_memory.stores.sqlite.backup import backup_sqlite as backup

    return backup(source, target)


def storage_where(settings: Settings) -> str:
    """Where the configured backend stores, for the boot line (a database URL without its password)."""
    from mcp_memory.stores import BACKENDS

    return BACKENDS[settings.store.backend].where(settings.store)


async def open_service(
    settings: Settings | None = None, *, log: JsonLog | None = None, metrics: Instruments | None = None
) -> MemoryService:
    """Storage, embedder, counters and the service, as configured.

    Without `settings`, only the sections a service uses are read from the environment (the
    store, embedding, recall and counters; config.SERVICE_SECTIONS): a script that remembers is
    not refused over a serve-http variable. Storage is opened (and its schema checked) here, so
    a bad database stops the process before anything is served. The embedding model loads lazily.
    Given `metrics` (serve-http's), the store and the embedder are handed over timed and the
    counters report their flushes and compactions to it.
    """
    from mcp_memory.core.counters.tracker import AccessCounters, new_pod_id
    from mcp_memory.embedders import open_embedder
    from mcp_memory.stores import open_stores

    if settings is None:
        from mcp_memory import config

        settings = config.Settings.from_env(sections=config.SERVICE_SECTIONS)
    log = log or NullLog()
    vectors, objects = await open_stores(
        settings.store, settings.embedding.embedding_model, settings.embedding.embedding_dim
    )
    try:
        embedder = open_embedder(settings.embedding, settings.store.aws_region)
    except BaseException:
        await vectors.close()
        await objects.close()
        raise
    if metrics is not None:
        vectors, embedder = metrics.timed_vectors(vectors), metrics.timed_embedder(embedder)
    counters = AccessCounters(
        objects,
        pod_id=new_pod_id(settings.counters.hostname),
        log=log,
        compact_threshold=settings.counters.stats_compact_threshold,
        on_outcome=metrics.counter_outcome if metrics is not None else None,
    )
    return MemoryService(
        vectors,
        objects,
        embedder,
        counters,
        floor=settings.recall.recall_min_similarity,
        high=settings.recall.recall_high_similarity,
        log=log,
        retrieval=settings.recall.recall_retrieval,
        scale=settings.recall.agnostic_scale,
        min_probability=settings.recall.recall_min_probability,
    )


async def calibrate_scratch(settings: Settings, cases: Cases, *, progress: Progress | None = None) -> CalibrationReport:
    """Calibrate text cases with the configured embedder and floors, opening no storage at all:
    the facts go into a scratch in-memory store (what `calibrate` does without --tenant)."""
    from mcp_memory.core.calibration.calibrate import calibrate
    from mcp_memory.embedders import open_embedder
    from mcp_memory.stores.in_memory import InMemoryVectorStore

    embedder = open_embedder(settings.embedding, settings.store.aws_region)
    try:
        return await calibrate(
            embedder,
            cases,
            floor=settings.recall.recall_min_similarity,
            high=settings.recall.recall_high_similarity,
            scratch=InMemoryVectorStore(),
            progress=progress,
            retrieval=settings.recall.recall_retrieval,
            min_probability=settings.recall.recall_min_probability,
        )
    finally:
        await embedder.close()


def sqlite_exposure_warning(path: Path) -> str | None:
    """The warning for an embedded database file that group or others can read, if any."""
    from mcp_memory.stores.sqlite.files import exposure_warning

    return exposure_warning(path)
