"""The keyword index's counts that PostgreSQL keeps in `memory_terms` (stores/postgres/keywords.py):
the same transaction as each write keeps them equal to a recount of the memories, under
replacement, deletion, batches across tenants and concurrent writers; a schema 2 database is
counted at its first start; and a recall reads them instead of counting."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcp_memory.core import keywords as core_keywords
from mcp_memory.core.model import Memory
from mcp_memory.stores.postgres import keywords as pg_keywords
from mcp_memory.stores.postgres.store import PgVectorStore, open_postgres
from mcp_memory.stores.records import to_metadata
from tests.stores.test_contract import unit
from tests.support import pg_support

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def kept(url: str) -> dict[tuple[str, str], int]:
    """The counts as stored (zero counts are rows that hold nothing)."""
    rows = pg_support.rows(url, "SELECT tenant_id, term, docs FROM memory_terms")
    return {(tenant, term): int(docs) for tenant, term, docs in rows if docs}


def recount(url: str) -> dict[tuple[str, str], int]:
    return {(tenant, term): int(docs) for tenant, term, docs in pg_support.rows(url, pg_keywords.RECOUNT)}


def fact(memory_id: str, content: str, tenant: str = "acme") -> Memory:
    return Memory(id=memory_id, tenant=tenant, content=content)


async def test_writes_replacements_and_deletes_keep_the_counts_equal_to_a_recount(pg_url: str) -> None:
    vectors, objects = await open_postgres(pg_url, model="test-model", dim=8)
    try:
        await vectors.put(fact("m1", "The billing service listens on port 8443"), unit(1))
        await vectors.put(fact("m2", "Deploys of billing run on Tuesday"), unit(0, 1))
        assert kept(pg_url)[("acme", "")] == 2
        assert kept(pg_url)[("acme", "billing")] == 2
        await vectors.put(fact("m1", "The ledger service listens on port 9000"), unit(1))  # replaced
        await vectors.put_many(
            [
                (fact("m3", "Ledger backups run nightly", tenant="globex"), unit(1, 1)),
                (fact("m4", "Ledger exports are gzip", tenant="acme"), unit(1, 2)),
                (fact("m4", "Ledger exports are zstd", tenant="acme"), unit(1, 2)),  # twice in one batch
            ]
        )
        counts = kept(pg_url)
        assert counts == recount(pg_url)
        assert counts[("acme", "")] == 3 and counts[("globex", "")] == 1
        assert ("acme", "8443") not in counts and counts[("acme", "9000")] == 1
        assert counts[("acme", "zstd")] == 1 and ("acme", "gzip") not in counts
        await vectors.delete("acme", ["m2", "m2", "absent"])
        assert kept(pg_url) == recount(pg_url)
        assert ("acme", "billing") not in kept(pg_url)
    finally:
        await vectors.close()
        await objects.close()


async def test_concurrent_writers_of_the_same_memories_leave_exact_counts(pg_url: str) -> None:
    stores = [await open_postgres(pg_url, model="test-model", dim=8) for _ in range(3)]
    try:

        async def writer(k: int, vectors: PgVectorStore) -> None:
            for round_ in range(6):
                await vectors.put(fact(f"m{round_ % 3}", f"writer{k} round{round_} shared words"), unit(1, k))
                if round_ % 2:
                    await vectors.delete("acme", [f"m{(round_ + k) % 3}"])
                await vectors.put_many([(fact(f"b{i}", f"batch{k} item{i} shared"), unit(1, i)) for i in range(3)])

        await asyncio.gather(*(writer(k, vectors) for k, (vectors, _) in enumerate(stores)))
        assert kept(pg_url) == recount(pg_url)
        assert kept(pg_url)[("acme", "")] == len(pg_support.rows(pg_url, "SELECT id FROM memories"))
    finally:
        for vectors, objects in stores:
            await vectors.close()
            await objects.close()


async def test_a_schema_2_database_is_counted_at_its_first_start(pg_url: str) -> None:
    with pg_support.connect(pg_url) as conn:
        conn.execute((FIXTURES / "postgres_schema_v2.sql").read_text())
        for n, content in enumerate(["ECONNREFUSED on port 5432", "port 8443 is open", ""], start=1):
            record = Memory(id=f"m{n}", tenant="acme", content=content or "x")
            conn.execute(
                "INSERT INTO memories (tenant_id, id, embedding, metadata, keywords) "
                "VALUES ('acme', %s, %s::vector, %s::jsonb, %s)",
                (
                    f"m{n}",
                    json.dumps(unit(1, n).tolist()),
                    json.dumps(to_metadata(record)),
                    core_keywords.index_text(content),
                ),
            )
    vectors, objects = await open_postgres(pg_url, model="test-model", dim=8)
    try:
        counts = kept(pg_url)
        assert counts == recount(pg_url)
        assert counts[("acme", "")] == 3 and counts[("acme", "port")] == 2
        assert pg_support.rows(pg_url, "SELECT value FROM mcp_memory_meta WHERE key = 'schema_version'") == [("3",)]
        await vectors.put(fact("m4", "port 22 for ssh"), unit(1, 4))
        assert kept(pg_url)[("acme", "port")] == 3
    finally:
        await vectors.close()
        await objects.close()


async def test_a_recall_reads_the_kept_counts_capped_past_the_search_limit(pg_url: str) -> None:
    vectors, objects = await open_postgres(pg_url, model="test-model", dim=8)
    try:
        await vectors.put_many(
            [(fact(f"m{i:02}", f"common word{i}" + (" rare" if i == 7 else "")), unit(1, i)) for i in range(30)]
        )
        answer = await vectors.keyword_query("acme", unit(1), ["common", "rare", "absent"], 5, None)
        limit = core_keywords.search_limit(30)
        assert answer.stats.docs == 30
        assert answer.stats.frequency == {"common": limit + 1, "rare": 1}
        assert [h.memory.id for h in answer.hits] == ["m07"]
        # the counts are what a recall reads: a count changed behind the store's back shows
        with pg_support.connect(pg_url) as conn:
            conn.execute("UPDATE memory_terms SET docs = 2 WHERE term = 'rare'")
        again = await vectors.keyword_query("acme", unit(1), ["rare"], 5, None)
        assert again.stats.frequency == {"rare": 2}
    finally:
        await vectors.close()
        await objects.close()
