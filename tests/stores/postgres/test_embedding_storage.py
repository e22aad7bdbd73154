"""PostgreSQL keeps each embedding in its row, beside the keyword columns, so the exact scan never
fetches vectors from the TOAST table; a table created before (schema 2) is rewritten so at its
first start, once, its memories intact."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.core import keywords as core_keywords
from mcp_memory.core.model import Memory
from mcp_memory.stores.postgres import keywords as pg_keywords
from mcp_memory.stores.postgres.store import open_postgres
from mcp_memory.stores.records import to_metadata
from tests.stores.test_contract import unit
from tests.support import pg_support

FIXTURES = Path(__file__).parents[1] / "fixtures"
DIM = 384
LONG = " ".join(f"word{n} ECONNREFUSED port {8000 + n}" for n in range(60))  # a row far past 2 kB


def heap_bytes(url: str) -> int:
    return int(pg_support.rows(url, "SELECT pg_relation_size('memories')")[0][0])


async def test_wide_memories_keep_their_embeddings_in_the_table_itself(pg_url: str) -> None:
    vectors, objects = await open_postgres(pg_url, model="test-model", dim=DIM)
    rng = np.random.default_rng(3)
    try:
        embeddings = rng.standard_normal((40, DIM)).astype(np.float32)
        embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
        await vectors.put_many([(Memory(id=f"m{n}", tenant="acme", content=LONG), embeddings[n]) for n in range(40)])
        hits = await vectors.query("acme", embeddings[7], 1, None)
        assert [h.memory.id for h in hits] == ["m7"]
        # 40 vectors of 384 float4 are 61,440 bytes: held in the heap, not in the TOAST table.
        assert heap_bytes(pg_url) >= 40 * DIM * 4
    finally:
        await vectors.close()
        await objects.close()


def old_v2(url: str) -> None:
    with pg_support.connect(url) as conn:
        conn.execute((FIXTURES / "postgres_schema_v2.sql").read_text())
        for n, content in enumerate(["ECONNREFUSED on port 5432", "port 8443 is open", "Seoul region"], start=1):
            record = Memory(id=f"m{n}", tenant="acme", content=content)
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


async def test_a_schema_2_table_keeps_its_embeddings_inline_after_its_first_start_once(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    old_v2(pg_url)
    monkeypatch.setattr(pg_keywords, "PROGRESS_EVERY", 2)
    storage = "SELECT attstorage FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
    assert pg_support.rows(pg_url, storage) != [("m",)]
    before = pg_support.rows(pg_url, "SELECT id, embedding::text, metadata::text, keywords FROM memories ORDER BY id")
    for start in (1, 2):
        vectors, objects = await open_postgres(pg_url, model="test-model", dim=8)
        try:
            err = capfd.readouterr().err
            line = "mcp-memory: keeping the embeddings inline: rewriting 3 memories"
            assert (line in err) == (start == 1)
            assert pg_support.rows(pg_url, storage) == [("m",)]
            after = pg_support.rows(
                pg_url, "SELECT id, embedding::text, metadata::text, keywords FROM memories ORDER BY id"
            )
            assert after == before
            answer = await vectors.keyword_query("acme", unit(1, 1), ["econnrefused"], 10, None)
            assert [h.memory.id for h in answer.hits] == ["m1"]
            assert answer.hits[0].similarity == pytest.approx(1.0, abs=1e-5)
        finally:
            await vectors.close()
            await objects.close()
