"""What an acknowledged `remember` survives (docs/backends.md, "Durability"): the answer is
sent only once the write is committed, so a `kill -9` of the server right after
it loses nothing, on SQLite and on PostgreSQL; and SQLite commits with
`synchronous=FULL` on a WAL journal, so the commit is on disk, not only in the
OS's cache, when the answer goes out (what an OS crash would test)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from mcp_memory.stores.sqlite.store import open_sqlite
from tests.support.http_process import clean_env, http_process
from tests.support.http_support import mcp_client, text

TENANT = [("x-memory-tenant", "acme")]
FACTS = [f"Release {i} ships only after the canary has run for {i + 2} hours" for i in range(5)]


@pytest.fixture(params=["sqlite", "postgres"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    if request.param == "sqlite":
        return {"MEMORY_DB_PATH": str(tmp_path / "memory.db")}
    return {"DATABASE_URL": request.getfixturevalue("pg_url")}


async def test_every_acknowledged_remember_survives_a_kill_9_of_the_server(
    tmp_path: Path, storage: dict[str, str]
) -> None:
    env = clean_env(tmp_path, EMBEDDING_PROVIDER="fake", **storage)
    async with http_process(env, tmp_path / "first.log") as server:
        async with mcp_client(server.mcp_url, TENANT) as client:
            for fact in FACTS:
                assert not (await client.call_tool("remember", {"content": fact})).is_error
        server.process.send_signal(signal.SIGKILL)  # no shutdown, no flush: the process just ends
        assert server.process.wait(timeout=30) == -signal.SIGKILL
    async with http_process(env, tmp_path / "second.log") as server:
        async with mcp_client(server.mcp_url, TENANT) as client:
            listed = text(await client.call_tool("list_memories", {}))
        await server.stop()
    for fact in FACTS:
        assert fact in listed


async def test_sqlite_commits_to_disk_before_answering(tmp_path: Path) -> None:
    vectors, objects = await open_sqlite(tmp_path / "m.db", model="fake", dim=8)
    db = vectors._db  # the connection every write goes through
    try:
        mode, synchronous = await db.read(
            lambda conn: (
                conn.execute("PRAGMA journal_mode").fetchone()[0],
                conn.execute("PRAGMA synchronous").fetchone()[0],
            ),
            "pragmas",
        )
    finally:
        await vectors.close()
        await objects.close()
    assert mode == "wal"
    assert synchronous == 2  # FULL: every commit fsyncs the WAL
