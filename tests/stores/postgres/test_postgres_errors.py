"""PostgreSQL failures a user meets — an unreachable database, a restart in the
middle of a run — and how the backend is wired in (open_stores, open_service,
the postgres extra, no AWS code on this path)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_memory.config import Settings
from mcp_memory.config.recall import RecallSection
from mcp_memory.core.errors import StartupError, StoreError
from mcp_memory.core.model import Caller
from mcp_memory.embedders import EmbeddingSection
from mcp_memory.server.protocol.render import text as shown
from mcp_memory.stores import open_stores
from mcp_memory.stores.postgres.db import scrub
from mcp_memory.stores.section import StoreSection
from tests.stores.postgres.test_postgres import close_pair, embedding_type, open_pair
from tests.stores.test_contract import memory, unit
from tests.support import pg_support

REPO = Path(__file__).resolve().parents[3]


# --------------------------------------------------------------------------- errors and restarts


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("postgresql://postgres:hunter2-secret@/postgres?host=/nonexistent-dir", "hunter2-secret"),
        ("postgresql://postgres:hunter2-secret@127.0.0.1:1/postgres", "hunter2-secret"),
        ("postgresql://postgres:p@ss/w0rd#x@/postgres?host=/nonexistent-dir", "p@ss/w0rd#x"),
        ("postgresql://postgres:p%40ss%2Fw0rd@/postgres?host=/nonexistent-dir", "p@ss/w0rd"),
        ("postgresql://postgres@/postgres?host=/nonexistent-dir&password=s3cr3t-param", "s3cr3t-param"),
        ("postgresql://postgres:hunter2-secret@/postgres?host=/nonexistent-dir&bogus=1", "hunter2-secret"),
        ("host=/nonexistent-dir user=postgres password='kv secret' dbname=postgres", "kv secret"),
    ],
)
async def test_a_database_that_cannot_be_reached_is_a_clear_error_without_the_password(url: str, secret: str) -> None:
    with pytest.raises(StartupError, match="cannot connect to PostgreSQL at ") as failed:
        await open_pair(url)

    message = str(failed.value)
    assert secret not in message and "w0rd" not in message
    if url.startswith("postgresql://postgres:hunter2"):
        assert "postgres:***@" in message


def test_scrubbing_removes_every_spelling_of_the_password() -> None:
    url = "postgresql://app:s%3Acret%2Fpw@db:5432/mem?password=other-one"
    message = f"failed for {url}: password s:cret/pw, s%3Acret%2Fpw, other-one"

    scrubbed = scrub(message, url)

    assert "cret" not in scrubbed and "other-one" not in scrubbed
    assert "postgresql://app:***@db:5432/mem" in scrubbed


async def test_the_next_call_works_after_every_connection_was_terminated(pg_url: str, pg_admin_url: str) -> None:
    vectors, objects = await open_pair(pg_url)
    try:
        await vectors.put(memory("m1"), unit(1))
        await objects.put("k", "v")
        async with vectors.exclusive("acme"):
            pass
        killed = pg_support.rows(
            pg_admin_url,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND datname = current_database()",
        )[0][0]
        assert killed >= 2  # the main pool's and the lock pool's

        assert [h.memory.id for h in await vectors.query("acme", unit(1), 5, None)] == ["m1"]
        stored = await objects.get("k")
        assert stored is not None and stored.body == "v"
        async with vectors.exclusive("acme"):
            await objects.put("k", "w")
    finally:
        await close_pair((vectors, objects))


async def test_a_restart_of_the_database_fails_calls_clearly_meanwhile_and_is_survived() -> None:
    server = await asyncio.to_thread(pg_support.start_pgserver)
    try:
        url = server.get_uri().replace("postgres:@", "postgres:hunter2-secret@")
        vectors, objects = await open_pair(url, timeout=3.0)
        try:
            await objects.put("k", "before")
            await asyncio.to_thread(pg_support.stop_pgserver, server)

            with pytest.raises(StoreError) as failed:
                await objects.get("k")
            message = str(failed.value)
            assert "no connection to PostgreSQL at " in message and "is the database running" in message
            assert "postgres:***@" in message and "hunter2-secret" not in message

            await asyncio.to_thread(pg_support.restart_pgserver, server)
            stored = await objects.get("k")
            assert stored is not None and stored.body == "before"
            await vectors.put(memory("after"), unit(1))
            assert [m.id for m in await vectors.get("acme", ["after"])] == ["after"]
        finally:
            await close_pair((vectors, objects))
    finally:
        await asyncio.to_thread(server.cleanup)


# --------------------------------------------------------------------------- wiring


async def test_open_service_on_postgres_runs_the_reference_end_to_end(pg_url: str) -> None:
    from mcp_memory.app import open_service

    settings = Settings(
        store=StoreSection(backend="postgres", database_url=pg_url),
        embedding=EmbeddingSection(embedding_provider="fake", embedding_model="fake-bag-of-words", embedding_dim=64),
        recall=RecallSection(recall_min_similarity=0.1),
    )
    acme = Caller("acme")
    service = await open_service(settings)
    try:
        first = await service.remember(acme, "Rolling deploys drain in-flight streams before the pod exits")
        await service.remember(acme, "Run make test-all before every release", memory_type="pattern")

        recalled = shown(await service.recall(acme, "Rolling deploys drain in-flight streams"))
        assert "1 memory matched" in recalled or "2 memories matched" in recalled
        assert first.memory.id in recalled
        assert shown(await service.list(acme)).startswith("[MEMORY] 2 memories, newest first.")
        assert "make test-all" in shown(await service.list(acme, memory_type="pattern"))
        assert shown(await service.stats(acme)) == "[MEMORY] 2 memories for this project (project: 1, pattern: 1)."
        assert await service.counters.flush() >= 1
        assert len(await service.objects.list("stats/acme/shard/")) == 1
        assert shown(await service.forget(acme, first.memory.id)) == f"[MEMORY] Deleted {first.memory.id}."
        assert shown(await service.list(Caller("globex"))) == "[MEMORY] This project has no memories yet."
    finally:
        await service.close()


def test_the_postgres_path_never_loads_aws_code(pg_url: str) -> None:
    probe = (
        "import asyncio, sys\n"
        "from mcp_memory.stores import open_stores\n"
        "from mcp_memory.stores.section import StoreSection\n"
        "async def main():\n"
        f"    v, o = await open_stores(StoreSection(backend='postgres', database_url={pg_url!r}), 'm', 384)\n"
        "    await v.close(); await o.close()\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'aiobotocore', 's3transfer')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_without_the_postgres_extra_start_up_says_what_to_install() -> None:
    probe = (
        "import asyncio, sys\n"
        "sys.modules['psycopg'] = None  # as if the extra were not installed\n"
        "from mcp_memory.stores import open_stores\n"
        "from mcp_memory.stores.section import StoreSection\n"
        "from mcp_memory.core.errors import StartupError\n"
        "try:\n"
        "    asyncio.run(open_stores(StoreSection(backend='postgres', database_url='postgresql://db/x'), 'm', 384))\n"
        "except StartupError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip().endswith(
        "from a checkout, pip install '.[postgres]' (once released: pip install 'mcp-tenant-memory[postgres]')"
    ), result.stderr


async def test_open_stores_opens_postgres_from_the_database_url(pg_url: str) -> None:
    store = StoreSection(backend="postgres", database_url=pg_url)

    vectors, objects = await open_stores(store, "all-MiniLM-L6-v2", 384)
    try:
        await objects.put("key", "body")
    finally:
        await vectors.close()
        await objects.close()
    assert embedding_type(pg_url) == "vector(384)"
