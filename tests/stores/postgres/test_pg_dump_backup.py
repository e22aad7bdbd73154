"""The PostgreSQL backup docs/backup_and_migration.md shows: pg_dump of mcp-memory's tables, restored with psql into an
empty database, is a working store again (memories, counters, and new writes)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.stores.postgres.store import open_postgres
from tests.conftest import Clock
from tests.support.pg_support import fresh_database

ACME = Caller("acme")
#: The command docs/backup_and_migration.md shows, table for table.
TABLES = ("memories", "objects", "objects_version", "mcp_memory_meta")


def client(name: str) -> str:
    import pgserver

    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


async def run(command: list[str], stdin: bytes | None = None) -> bytes:
    """A client program's stdout, off the event loop; a failure fails the test."""
    done = await asyncio.to_thread(subprocess.run, command, input=stdin, capture_output=True, check=True, timeout=120)
    return done.stdout


async def service(url: str, clock: Clock) -> MemoryService:
    embedder = FakeEmbedder()
    vectors, objects = await open_postgres(url, model=embedder.model, dim=embedder.dim)
    counters = AccessCounters(objects, pod_id="test-pod", log=NullLog(), clock=clock)
    return MemoryService(vectors, objects, embedder, counters, floor=0.3, clock=clock)


async def test_a_pg_dump_of_the_tables_restores_into_a_working_store(pg_admin_url: str, clock: Clock) -> None:
    with fresh_database(pg_admin_url) as source_url, fresh_database(pg_admin_url) as target_url:
        source = await service(source_url, clock)
        try:
            stored = await source.remember(ACME, "The billing service listens on port 8443")
            clock.advance(1000)
            await source.remember(ACME, "Releases are cut from main every Tuesday", memory_type="pattern")
            again = await source.remember(ACME, "The billing service listens on port 8443")  # a use, counted
            assert not again.created
        finally:
            await source.close()

        dump = await run([client("pg_dump"), *(f"--table={t}" for t in TABLES), source_url])
        psql = [client("psql"), "--quiet", "-v", "ON_ERROR_STOP=1", target_url]
        await run([*psql, "-c", "CREATE EXTENSION IF NOT EXISTS vector"])
        await run(psql, dump)

        target = await service(target_url, clock)
        try:
            listed = await target.list(ACME)
            assert [m.content for m in listed.memories] == [
                "Releases are cut from main every Tuesday",
                "The billing service listens on port 8443",
            ]
            answer = await target.recall(ACME, "which port does billing listen on")
            assert answer.results[0].memory.id == stored.memory.id
            assert answer.results[0].stats.access_count == 1
            clock.advance(1000)
            fresh = await target.remember(ACME, "Staging is rebuilt every night at two")
            assert fresh.created and len((await target.list(ACME)).memories) == 3
        finally:
            await target.close()
