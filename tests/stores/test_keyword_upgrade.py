"""A SQLite file or PostgreSQL schema written before the keyword index gains it at its first
start, once, with a progress line; its memories are then found by keyword. The old databases
are built from the previous release's schema SQL, kept in tests/stores/fixtures/."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.core.model import Memory
from mcp_memory.stores.base import to_metadata
from mcp_memory.stores.postgres import keywords as pg_keywords
from mcp_memory.stores.postgres.store import open_postgres
from mcp_memory.stores.sqlite import keywords as sqlite_keywords
from mcp_memory.stores.sqlite.store import open_sqlite
from tests.stores.test_contract import unit
from tests.support import pg_support

FIXTURES = Path(__file__).parent / "fixtures"
OLD = {
    "m1": "The ledger worker logs ECONNREFUSED whenever the billing database restarts",
    "m2": "Allow the app subnet in pg_hba.conf before the migration",
    "m3": "배포 서버가 재시작되면 캐시를 비운다",
}
PROGRESS = "mcp-memory: building the keyword index: {} of 3 memories"


def old_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.executescript((FIXTURES / "sqlite_schema_v1.sql").read_text())
        for rev, (memory_id, content) in enumerate(OLD.items(), start=1):
            conn.execute(
                "INSERT INTO memories (tenant, id, content, memory_type, tags, created_at, scope, trust_base, "
                "embedding, rev) VALUES ('acme', ?, ?, 'project', '[]', '2026-07-01T00:00:00.000Z', 'project', 1.0, "
                "?, ?)",
                (memory_id, content, unit(1, rev).astype("<f4").tobytes(), rev),
            )
        conn.execute("INSERT INTO tenants (tenant, generation, purged) VALUES ('acme', 3, 0)")
        conn.commit()
    finally:
        conn.close()


def old_postgres(url: str) -> None:
    with pg_support.connect(url) as conn:
        conn.execute((FIXTURES / "postgres_schema_v1.sql").read_text())
        for rev, (memory_id, content) in enumerate(OLD.items(), start=1):
            record = Memory(id=memory_id, tenant="acme", content=content)
            conn.execute(
                "INSERT INTO memories (tenant_id, id, embedding, metadata) VALUES ('acme', %s, %s::vector, %s::jsonb)",
                (memory_id, json.dumps(unit(1, rev).tolist()), json.dumps(to_metadata(record))),
            )


async def open_old(backend: str, request: pytest.FixtureRequest):
    if backend == "sqlite":
        path = request.getfixturevalue("tmp_path") / "old.db"
        if not path.exists():
            old_sqlite(path)
        return await open_sqlite(path, model="test-model", dim=8)
    url = request.getfixturevalue("pg_url")
    if not pg_support.rows(url, "SELECT to_regclass('memories') IS NOT NULL")[0][0]:
        old_postgres(url)
    return await open_postgres(url, model="test-model", dim=8)


def schema_version(backend: str, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        conn = sqlite3.connect(request.getfixturevalue("tmp_path") / "old.db")
        try:
            return conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        finally:
            conn.close()
    url = request.getfixturevalue("pg_url")
    return pg_support.rows(url, "SELECT value FROM mcp_memory_meta WHERE key = 'schema_version'")[0][0]


async def found(vectors, query_terms: list[str]) -> list[str]:
    answer = await vectors.keyword_query("acme", unit(0, 0, 1), query_terms, 10, None)
    return [hit.memory.id for hit in answer.hits]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_an_old_database_gains_its_keyword_index_at_first_start_once(
    backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    for module in (sqlite_keywords, pg_keywords):
        monkeypatch.setattr(module, "PROGRESS_EVERY", 2)
        monkeypatch.setattr(module, "BACKFILL_BATCH", 2)
    vectors, objects = await open_old(backend, request)
    try:
        err = capfd.readouterr().err
        assert PROGRESS.format(2) in err and PROGRESS.format(3) in err
        assert schema_version(backend, request) == "2"
        assert await found(vectors, ["econnrefused"]) == ["m1"]
        assert await found(vectors, ["pg_hba.conf"]) == ["m2"]
        assert await found(vectors, ["서버"]) == ["m3"]
        answer = await vectors.keyword_query("acme", unit(1, 1), ["econnrefused"], 10, None)
        assert answer.hits[0].similarity == pytest.approx(float(np.dot(unit(1, 1), unit(1, 1))), abs=1e-5)
        await vectors.put(Memory(id="m4", tenant="acme", content="Retry E1234 after the coupon refresh"), unit(1, 4))
        assert await found(vectors, ["e1234"]) == ["m4"]
        await vectors.delete("acme", ["m1"])
        assert await found(vectors, ["econnrefused"]) == []
    finally:
        await vectors.close()
        await objects.close()
    vectors, objects = await open_old(backend, request)  # the second start finds the index in place
    try:
        assert "building the keyword index" not in capfd.readouterr().err
        assert await found(vectors, ["pg_hba.conf"]) == ["m2"]
        assert await found(vectors, ["e1234"]) == ["m4"]
    finally:
        await vectors.close()
        await objects.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_repeated_id_replaces_its_keyword_entry(backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "sqlite":
        vectors, objects = await open_sqlite(request.getfixturevalue("tmp_path") / "new.db", model="test-model", dim=8)
    else:
        vectors, objects = await open_postgres(request.getfixturevalue("pg_url"), model="test-model", dim=8)
    try:
        await vectors.put(Memory(id="m1", tenant="acme", content="The worker logs ECONNREFUSED"), unit(1))
        await vectors.put(Memory(id="m1", tenant="acme", content="Checkout fails with E1234"), unit(1))
        assert await found(vectors, ["econnrefused"]) == []
        assert await found(vectors, ["e1234"]) == ["m1"]
    finally:
        await vectors.close()
        await objects.close()
