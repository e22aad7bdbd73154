"""A SQLite file or PostgreSQL schema written before the keyword index gains it at its first
start, once, with a progress line; its memories are then found by keyword. A SQLite file of
schema 2 (one index for the whole file, counted across tenants) rebuilds it per tenant. The old
databases are built from the previous releases' schema SQL, kept in tests/stores/fixtures/; a
file of schema 3 (rowids without the length) rebuilds it as well. Such a database gains the text
index (an import's rerun, docs/storage.md#finding-a-text-as-it-is) at the same start."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.core import keywords as core_keywords
from mcp_memory.core.model import Memory
from mcp_memory.stores.postgres import keywords as pg_keywords
from mcp_memory.stores.postgres.store import open_postgres
from mcp_memory.stores.records import to_metadata
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
        assert schema_version(backend, request) == ("4" if backend == "sqlite" else "3")
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


#: An old file's memories: two tenants and a conversation note (tenant, id, content, conversation
#: of a conversation note).
V2 = [
    ("acme", "m1", "The ledger worker logs ECONNREFUSED whenever the billing database restarts", None),
    ("acme", "m2", "Allow the app subnet in pg_hba.conf before the migration", None),
    ("acme", "m3", "배포 서버가 재시작되면 캐시를 비운다", None),
    ("acme", "m4", "Thread A chose the canary flag CANARY_77", "chat:a"),
    ("globex", "g1", "Globex also sees ECONNREFUSED from the ledger proxy", None),
    ("globex", "g2", "Globex restarts the ledger proxy after ECONNREFUSED", None),
]


def indexed_as_schema_2(conn: sqlite3.Connection) -> None:
    """Each memory's tokens in `memories_fts` beside it, as the release with the file-wide index wrote them."""
    for tenant, memory_id, content, _ in V2:
        conn.execute(
            "INSERT INTO memories_fts (keywords, id, tenant) VALUES (?, ?, ?)",
            (core_keywords.index_text(content), memory_id, tenant),
        )


def indexed_as_schema_3(conn: sqlite3.Connection) -> None:
    """The per-tenant index as schema 3 wrote it: tokens prefixed by the tenant's key, FTS5 rowids
    equal to keyword_docs' entries (no length in them)."""
    keys = {"acme": 1, "globex": 2}
    totals: dict[str, list[int]] = {tenant: [0, 0] for tenant in keys}
    for entry, (tenant, memory_id, content, conversation) in enumerate(V2, start=1):
        own = core_keywords.index_text(content).split()
        conn.execute(
            "INSERT INTO keyword_docs (entry, tenant_key, id, conversation, length) VALUES (?, ?, ?, ?, ?)",
            (entry, keys[tenant], memory_id, conversation, len(own)),
        )
        text = " ".join(f"{keys[tenant]}:{token}" for token in own)
        conn.execute("INSERT INTO keyword_fts (rowid, keywords) VALUES (?, ?)", (entry, text))
        totals[tenant][0] += 1
        totals[tenant][1] += len(own)
    conn.executemany(
        "INSERT INTO keyword_tenants (key, tenant, docs, tokens) VALUES (?, ?, ?, ?)",
        [(keys[tenant], tenant, docs, tokens) for tenant, (docs, tokens) in totals.items()],
    )


def old_indexed_sqlite(path: Path, schema: int) -> None:
    """A file as the release of `schema` (2 or 3) wrote it: its schema SQL, the memories, their index."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript((FIXTURES / f"sqlite_schema_v{schema}.sql").read_text())
        for rev, (tenant, memory_id, content, conversation) in enumerate(V2, start=1):
            conn.execute(
                "INSERT INTO memories (tenant, id, content, memory_type, tags, created_at, scope, conversation, "
                "trust_base, embedding, rev) VALUES (?, ?, ?, 'project', '[]', '2026-07-01T00:00:00.000Z', ?, ?, "
                "1.0, ?, ?)",
                (
                    tenant,
                    memory_id,
                    content,
                    "conversation" if conversation else "project",
                    conversation,
                    unit(1, rev).astype("<f4").tobytes(),
                    rev,
                ),
            )
        (indexed_as_schema_2 if schema == 2 else indexed_as_schema_3)(conn)
        conn.execute("INSERT INTO tenants (tenant, generation, purged) VALUES ('acme', 4, 0), ('globex', 2, 0)")
        conn.commit()
    finally:
        conn.close()


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


@pytest.mark.parametrize("schema", [2, 3])
async def test_an_older_sqlite_keyword_index_is_rebuilt_per_tenant_at_first_start_once(
    schema: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sqlite_keywords, "PROGRESS_EVERY", 4)
    monkeypatch.setattr(sqlite_keywords, "BACKFILL_BATCH", 4)
    path = tmp_path / f"schema{schema}.db"
    old_indexed_sqlite(path, schema)
    vectors, objects = await open_sqlite(path, model="test-model", dim=8)
    try:
        err = capfd.readouterr().err
        assert "building the keyword index: 4 of 6 memories" in err
        assert "building the keyword index: 6 of 6 memories" in err
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "4"
        finally:
            conn.close()
        assert "memories_fts" not in tables(path)
        acme = await vectors.keyword_query("acme", unit(0, 0, 1), ["econnrefused"], 10, None)
        assert [hit.memory.id for hit in acme.hits] == ["m1"]
        assert (acme.stats.docs, dict(acme.stats.frequency)) == (4, {"econnrefused": 1})  # acme's own counts
        globex = await vectors.keyword_query("globex", unit(0, 0, 1), ["econnrefused"], 10, None)
        assert sorted(hit.memory.id for hit in globex.hits) == ["g1", "g2"]
        assert (globex.stats.docs, dict(globex.stats.frequency)) == (2, {"econnrefused": 2})
        assert await found(vectors, ["pg_hba.conf"]) == ["m2"]
        assert await found(vectors, ["서버"]) == ["m3"]
        assert await found(vectors, ["canary_77"]) == []  # a conversation note stays in its conversation
        note = await vectors.keyword_query("acme", unit(0, 0, 1), ["canary_77"], 10, "chat:a")
        assert [hit.memory.id for hit in note.hits] == ["m4"]
        await vectors.put(Memory(id="m5", tenant="acme", content="Retry E1234 after the coupon refresh"), unit(1, 7))
        await vectors.delete("acme", ["m1"])
        assert await found(vectors, ["e1234"]) == ["m5"]
        assert await found(vectors, ["econnrefused"]) == []
        assert (await vectors.keyword_query("acme", unit(0, 0, 1), ["e1234"], 10, None)).stats.docs == 4
    finally:
        await vectors.close()
        await objects.close()
    vectors, objects = await open_sqlite(path, model="test-model", dim=8)  # the second start finds it in place
    try:
        assert "building the keyword index" not in capfd.readouterr().err
        assert await found(vectors, ["e1234"]) == ["m5"]
        globex = await vectors.keyword_query("globex", unit(0, 0, 1), ["econnrefused"], 10, None)
        assert sorted(hit.memory.id for hit in globex.hits) == ["g1", "g2"]
    finally:
        await vectors.close()
        await objects.close()


#: The FTS5 tokenizer the keyword index was first created with: it split words at combining marks.
FIRST_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '._:/-@#$%+\\_'"


async def test_a_sqlite_index_that_split_words_at_combining_marks_is_rebuilt_once_and_finds_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "first.db"
    vectors, objects = await open_sqlite(path, model="test-model", dim=8)
    try:
        await vectors.put(Memory(id="m1", tenant="acme", content="बिलिंग सर्वर हर रात पुनः आरंभ होता है"), unit(1))
        await vectors.put(Memory(id="m2", tenant="acme", content="Allow the app subnet in pg_hba.conf"), unit(1, 1))
    finally:
        await vectors.close()
        await objects.close()
    conn = sqlite3.connect(path)  # as a release with the old tokenizer left the file
    try:
        rows = conn.execute("SELECT rowid, keywords FROM keyword_fts").fetchall()
        conn.execute("DROP TABLE keyword_vocab")
        conn.execute("DROP TABLE keyword_fts")
        conn.execute(f'CREATE VIRTUAL TABLE keyword_fts USING fts5(keywords, tokenize = "{FIRST_TOKENIZER}")')
        conn.execute("CREATE VIRTUAL TABLE keyword_vocab USING fts5vocab(keyword_fts, 'row')")
        conn.executemany("INSERT INTO keyword_fts (rowid, keywords) VALUES (?, ?)", rows)
        conn.commit()
    finally:
        conn.close()
    for _ in range(2):  # the first start rebuilds the index; the second finds it in place
        vectors, objects = await open_sqlite(path, model="test-model", dim=8)
        try:
            assert await found(vectors, ["सर्वर"]) == ["m1"]
            assert await found(vectors, ["pg_hba.conf"]) == ["m2"]
        finally:
            await vectors.close()
            await objects.close()
    conn = sqlite3.connect(path)
    try:
        (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'keyword_fts'").fetchone()
        assert "categories" in sql
        assert conn.execute("SELECT count(*) FROM keyword_docs").fetchone()[0] == 2  # rebuilt, not doubled
    finally:
        conn.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_an_old_database_gains_its_text_index_at_first_start_and_finds_its_memories_by_text(
    backend: str, request: pytest.FixtureRequest
) -> None:
    vectors, objects = await open_old(backend, request)
    try:
        found = await vectors.same_text("acme", [OLD["m3"], OLD["m1"], "never stored"])
        assert sorted(m.id for m in found or []) == ["m1", "m3"]
    finally:
        await vectors.close()
        await objects.close()
    if backend == "sqlite":
        conn = sqlite3.connect(request.getfixturevalue("tmp_path") / "old.db")
        try:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_by_text'").fetchone()
        finally:
            conn.close()
        assert sql is not None and "(tenant, content)" in sql[0]
    else:
        url = request.getfixturevalue("pg_url")
        [(definition,)] = pg_support.rows(url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_by_text'")
        assert "md5((metadata ->> 'content'::text))" in definition
