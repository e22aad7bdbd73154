"""What only the PostgreSQL backend promises (docs/storage.md, pg.test, seed 003): the
schema it creates and adopts, the record it stores, and the widths and models it
refuses. The contract suite (test_contract.py) and the service suite run against
it too; failures and wiring are in test_postgres_errors.py, replicas in
test_postgres_concurrency.py."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from mcp_memory.core.errors import StartupError, StoreError
from mcp_memory.core.model import Memory
from mcp_memory.stores.postgres.db import VectorParam
from mcp_memory.stores.postgres.store import PgObjectStore, PgVectorStore, open_postgres
from mcp_memory.stores.records import to_metadata
from tests.stores.test_contract import memory, note, unit
from tests.support import pg_support

DIM = 8

Pair = tuple[PgVectorStore, PgObjectStore]


async def open_pair(url: str, model: str = "test-model", dim: int = DIM, **kwargs: object) -> Pair:
    return await open_postgres(url, model=model, dim=dim, **kwargs)  # type: ignore[arg-type]


async def close_pair(pair: Pair) -> None:
    await pair[0].close()
    await pair[1].close()


def table_rows(url: str) -> dict[str, list[tuple[object, ...]]]:
    """Everything mcp-memory keeps, read behind the stores' backs."""
    return {
        "memories": pg_support.rows(
            url, "SELECT tenant_id, id, embedding::text, metadata::text FROM memories ORDER BY 1, 2"
        ),
        "objects": pg_support.rows(url, "SELECT key, body, version FROM objects ORDER BY key"),
        "meta": pg_support.rows(url, "SELECT key, value FROM mcp_memory_meta ORDER BY key"),
    }


def embedding_type(url: str) -> str:
    return pg_support.rows(
        url,
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = to_regclass('memories') AND attname = 'embedding'",
    )[0][0]


def random_unit(dim: int, seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


# --------------------------------------------------------------------------- the schema


async def test_opening_twice_creates_the_schema_once_and_both_tables_exist(pg_url: str) -> None:
    await close_pair(await open_pair(pg_url))
    await close_pair(await open_pair(pg_url))

    tables = {
        row[0] for row in pg_support.rows(pg_url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    }
    assert {"memories", "objects", "mcp_memory_meta"} <= tables
    assert embedding_type(pg_url) == "vector(8)"
    assert dict(table_rows(pg_url)["meta"]) == {
        "embedding_dim": "8",
        "embedding_model": "test-model",
        "schema_version": "3",
    }


async def test_the_stored_record_is_the_reference_metadata_beside_the_vector(pg_url: str) -> None:
    vectors, objects = await open_pair(pg_url)
    full = Memory(
        id="01J0000000000000000000FULL",
        tenant="acme",
        content="Deploys drain connections first — 배포",
        memory_type="pattern",
        category="deploy/rollout",
        tags=("ops", "배포"),
        created_at="2026-03-04T05:06:07.089Z",
        scope="conversation",
        conversation="thread-42",
        trust_base=0.75,
    )
    try:
        await vectors.put(full, unit(1, 2))
    finally:
        await close_pair((vectors, objects))

    [(metadata, scope, conversation)] = pg_support.rows(pg_url, "SELECT metadata, scope, conversation FROM memories")
    assert metadata == to_metadata(full)
    assert (scope, conversation) == ("conversation", "thread-42")


async def test_an_embedding_travels_in_binary_and_is_stored_bit_exact(pg_url: str) -> None:
    from pgvector import Vector

    embedding = random_unit(DIM, 5)
    assert VectorParam(embedding).data == Vector(embedding).to_binary()  # pgvector's own wire format
    vectors, objects = await open_pair(pg_url)
    try:
        await vectors.put(memory("m1"), embedding)
    finally:
        await close_pair((vectors, objects))

    [(text,)] = pg_support.rows(pg_url, "SELECT embedding::text FROM memories")
    assert np.array_equal(np.asarray(json.loads(text), dtype=np.float32), embedding)


@pytest.mark.parametrize("dim", [1536, 2560])
async def test_wide_vectors_are_stored_and_found(pg_url: str, dim: int) -> None:
    vectors, objects = await open_pair(pg_url, dim=dim)
    try:
        near, far = random_unit(dim, 1), random_unit(dim, 2)
        await vectors.put(memory("near"), near)
        await vectors.put(memory("far"), far)

        hits = {h.memory.id: h.similarity for h in await vectors.query("acme", near, 2, None)}

        assert hits["near"] == pytest.approx(1.0, abs=1e-6)
        assert hits["far"] == pytest.approx(float(near @ far), abs=1e-5)
        assert embedding_type(pg_url) == f"vector({dim})"
    finally:
        await close_pair((vectors, objects))


async def test_a_database_of_another_width_is_refused_naming_both_and_left_untouched(pg_url: str) -> None:
    vectors, objects = await open_pair(pg_url)
    await vectors.put(note("m1", "c1"), unit(1))
    await objects.put("stats/acme/merged.json", "{}")
    await close_pair((vectors, objects))
    before = table_rows(pg_url)

    with pytest.raises(StartupError) as refused:
        await open_pair(pg_url, dim=16)

    message = str(refused.value)
    assert "8-dimensional" in message and "EMBEDDING_DIM is 16" in message
    assert "nothing was changed" in message
    assert table_rows(pg_url) == before
    assert embedding_type(pg_url) == "vector(8)"


async def test_another_model_of_the_same_width_is_refused_naming_both(pg_url: str) -> None:
    await close_pair(await open_pair(pg_url, model="model-a"))

    with pytest.raises(StartupError) as refused:
        await open_pair(pg_url, model="model-b")

    assert '"model-a" (8 dimensions)' in str(refused.value)
    assert '"model-b" (8 dimensions)' in str(refused.value)
    assert dict(table_rows(pg_url)["meta"])["embedding_model"] == "model-a"


def create_reference_table(url: str, embeddings: dict[str, np.ndarray]) -> None:
    """The reference server's v0.8 layout: a width-less vector column, no generated columns."""
    with pg_support.connect(url) as conn:
        conn.execute(
            "CREATE TABLE memories (tenant_id text NOT NULL, id text NOT NULL, embedding vector NOT NULL, "
            "metadata jsonb NOT NULL, PRIMARY KEY (tenant_id, id))"
        )
        for memory_id, embedding in embeddings.items():
            record = note(memory_id, "c1") if memory_id.startswith("note") else memory(memory_id)
            conn.execute(
                "INSERT INTO memories VALUES (%s, %s, %s::vector, %s::jsonb)",
                ("acme", memory_id, json.dumps(embedding.tolist()), json.dumps(to_metadata(record))),
            )


async def test_a_reference_width_less_column_is_given_the_width_when_the_data_agrees(pg_url: str) -> None:
    create_reference_table(pg_url, {"old": unit(1), "note-old": unit(1, 1)})

    vectors, objects = await open_pair(pg_url)
    try:
        assert embedding_type(pg_url) == "vector(8)"
        assert [m.id for m in await vectors.get("acme", ["old", "note-old"])] == ["old", "note-old"]
        assert [h.memory.id for h in await vectors.query("acme", unit(1), 5, None)] == ["old"]
        assert {h.memory.id for h in await vectors.query("acme", unit(1), 5, "c1")} == {"old", "note-old"}
    finally:
        await close_pair((vectors, objects))


async def test_a_reference_column_holding_another_width_is_refused_and_left_width_less(pg_url: str) -> None:
    create_reference_table(pg_url, {"old": unit(1)})
    before = pg_support.rows(pg_url, "SELECT tenant_id, id, embedding::text, metadata::text FROM memories")

    with pytest.raises(StartupError, match="holds 8-dimensional embeddings but EMBEDDING_DIM is 384"):
        await open_pair(pg_url, dim=384)

    assert embedding_type(pg_url) == "vector"
    assert pg_support.rows(pg_url, "SELECT tenant_id, id, embedding::text, metadata::text FROM memories") == before
    assert pg_support.rows(pg_url, "SELECT to_regclass('objects') IS NULL")[0][0] is True


async def test_a_memories_table_mcp_memory_did_not_create_is_refused_untouched(pg_url: str) -> None:
    with pg_support.connect(pg_url) as conn:
        conn.execute("CREATE TABLE memories (tenant_id text, id text, content text)")
        conn.execute("INSERT INTO memories VALUES ('acme', 'x', 'someone else''s data')")

    with pytest.raises(StartupError, match="did not create"):
        await open_pair(pg_url)

    assert pg_support.rows(pg_url, "SELECT * FROM memories") == [("acme", "x", "someone else's data")]


async def test_without_pgvector_and_without_superuser_start_up_names_the_statement_to_run(
    pg_admin_url: str,
) -> None:
    with pg_support.plain_role(pg_admin_url) as role, pg_support.fresh_database(pg_admin_url, owner=role) as db_url:
        with pytest.raises(StartupError) as refused:
            await open_pair(pg_support.with_options(db_url, user=role))

        message = str(refused.value)
        assert "pgvector extension is not installed" in message
        assert "CREATE EXTENSION vector" in message and "as a superuser" in message
        assert "pgvector/pgvector" in message
        assert pg_support.rows(db_url, "SELECT to_regclass('memories'), to_regclass('objects')") == [(None, None)]


# --------------------------------------------------------------------------- store behaviour


async def test_text_that_looks_like_sql_is_only_ever_data(pg_url: str) -> None:
    vectors, objects = await open_pair(pg_url)
    sly = "x'); DROP TABLE memories; --"
    try:
        await vectors.put(Memory(id=sly, tenant="o'neil", content="%s %(x)s $1 \\", conversation=sly), unit(1))
        await objects.put(f"index/{sly}/%_", "{'a': 1}")

        [found] = await vectors.get("o'neil", [sly])
        assert (found.content, found.conversation) == ("%s %(x)s $1 \\", sly)
        assert await objects.list(f"index/{sly}/") == [f"index/{sly}/%_"]
    finally:
        await close_pair((vectors, objects))


async def test_etags_come_from_one_sequence_across_keys_and_stores(pg_url: str) -> None:
    one, two = await open_pair(pg_url), await open_pair(pg_url)
    try:
        etags = [int(await store.put(f"k{i}", "b")) for i in range(3) for store in (one[1], two[1])]
        assert etags == sorted(etags) and len(set(etags)) == 6
    finally:
        await close_pair(one)
        await close_pair(two)


async def test_of_two_stores_racing_one_cas_exactly_one_wins_each_round(pg_url: str) -> None:
    one, two = await open_pair(pg_url), await open_pair(pg_url)
    try:
        etag = await one[1].put("merged", "0")
        for round_ in range(20):
            results = await asyncio.gather(
                one[1].put("merged", f"one {round_}", if_match=etag),
                two[1].put("merged", f"two {round_}", if_match=etag),
                return_exceptions=True,
            )
            winners = [r for r in results if isinstance(r, str)]
            assert len(winners) == 1, results
            etag = winners[0]
    finally:
        await close_pair(one)
        await close_pair(two)


async def test_an_embedding_of_another_width_or_a_nul_character_is_refused(pg_url: str) -> None:
    vectors, objects = await open_pair(pg_url)
    try:
        with pytest.raises(StoreError, match="8-dimensional"):
            await vectors.put(memory("m1"), np.ones(4, dtype=np.float32) / 2)
        with pytest.raises(StoreError, match="8-dimensional"):
            await vectors.query("acme", np.ones(9, dtype=np.float32), 5, None)
        with pytest.raises(StoreError, match="NUL character"):
            await vectors.put(Memory(id="m2", tenant="acme", content="a\x00b"), unit(1))
        assert await vectors.get("acme", ["m1", "m2"]) == []
    finally:
        await close_pair((vectors, objects))


async def test_a_zero_embedding_has_no_similarity_instead_of_an_error(pg_url: str) -> None:
    vectors, objects = await open_pair(pg_url)
    try:
        await vectors.put(memory("zero"), np.zeros(DIM, dtype=np.float32))
        [hit] = await vectors.query("acme", unit(1), 5, None)
        assert (hit.memory.id, hit.similarity) == ("zero", 0.0)
    finally:
        await close_pair((vectors, objects))


async def test_closing_twice_is_harmless_and_a_closed_store_refuses_work(pg_url: str) -> None:
    vectors, objects = await open_pair(pg_url)
    await close_pair((vectors, objects))
    await close_pair((vectors, objects))

    with pytest.raises(StoreError, match="closed"):
        await objects.get("key")
    with pytest.raises(StoreError, match="closed"):
        async with vectors.exclusive("acme"):
            pass
