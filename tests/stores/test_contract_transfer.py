"""The contract of the two store methods export and import use: `scan` and `put_many`.
Runs once per backend (memory, sqlite, postgres, s3)."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory.core.errors import BudgetExceeded
from mcp_memory.core.model import Memory
from mcp_memory.stores.records import CONTENT_MAX_BYTES, VectorStore
from tests.stores.conftest import DIM


def vector(seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return values / np.linalg.norm(values)


def memory(i: int, tenant: str = "acme", **fields: object) -> Memory:
    return Memory(id=f"01J{i:023d}", tenant=tenant, content=f"fact number {i}", **fields)  # type: ignore[arg-type]


async def scanned(vectors: VectorStore, tenant: str, batch: int) -> dict[str, tuple[Memory, np.ndarray]]:
    found: dict[str, tuple[Memory, np.ndarray]] = {}
    async for page in vectors.scan(tenant, batch):
        assert 0 < len(page) <= batch
        for memory_, embedding in page:
            assert memory_.id not in found
            found[memory_.id] = (memory_, embedding)
    return found


async def test_scan_returns_every_memory_of_the_tenant_once_with_its_embedding(vectors: VectorStore) -> None:
    ours = [
        memory(i, memory_type="pattern", tags=("a", "b"), scope="conversation", conversation=f"c{i}")
        if i % 3 == 0
        else memory(i, category="decision", trust_base=0.5, created_at="2026-01-02T03:04:05.006Z")
        for i in range(23)
    ]
    await vectors.put_many([(m, vector(i)) for i, m in enumerate(ours)])
    await vectors.put(memory(99, tenant="other"), vector(99))

    found = await scanned(vectors, "acme", batch=5)

    assert sorted(found) == sorted(m.id for m in ours)
    for i, m in enumerate(ours):
        assert found[m.id][0] == m
        np.testing.assert_allclose(found[m.id][1], vector(i), rtol=1e-6, atol=1e-7)
    assert list(await scanned(vectors, "other", batch=500)) == [memory(99, tenant="other").id]


async def test_scan_of_a_tenant_without_memories_yields_nothing(vectors: VectorStore) -> None:
    await vectors.put(memory(1), vector(1))
    assert await scanned(vectors, "nobody", batch=10) == {}


async def test_put_many_makes_memories_that_recall_finds_and_get_returns(vectors: VectorStore) -> None:
    batch = [(memory(i), vector(i)) for i in range(12)]
    await vectors.put_many(batch)

    hits = await vectors.query("acme", vector(7), 1, None)
    assert [h.memory.id for h in hits] == [memory(7).id]
    assert sorted(m.id for m in await vectors.get("acme", [m.id for m, _ in batch])) == sorted(m.id for m, _ in batch)


async def test_put_many_of_an_id_already_stored_replaces_it(vectors: VectorStore) -> None:
    await vectors.put(memory(1), vector(1))
    replacement = Memory(id=memory(1).id, tenant="acme", content="rewritten")
    await vectors.put_many([(replacement, vector(2))])
    assert await vectors.get("acme", [memory(1).id]) == [replacement]


async def test_put_many_with_one_memory_over_budget_writes_none_of_them(vectors: VectorStore) -> None:
    too_big = Memory(id=memory(2).id, tenant="acme", content="x" * (CONTENT_MAX_BYTES + 1))
    with pytest.raises(BudgetExceeded):
        await vectors.put_many([(memory(1), vector(1)), (too_big, vector(2))])
    assert await vectors.get("acme", [memory(1).id, memory(2).id]) == []


async def test_memories_written_by_put_many_are_found_by_their_keywords(vectors: VectorStore) -> None:
    from mcp_memory.core.keywords import query_terms

    batch = [(memory(i), vector(i)) for i in range(6)]
    batch.append((Memory(id=f"01J{99:023d}", tenant="acme", content="the zeppelin hangar opens at dawn"), vector(99)))
    await vectors.put_many(batch)

    answer = await vectors.keyword_query("acme", vector(1), query_terms("zeppelin hangar"), 5, None)

    assert [h.memory.id for h in answer.hits] == [f"01J{99:023d}"]


async def test_index_keys_written_in_bulk_are_listed_and_readable(objects) -> None:
    await objects.put("index/acme/k0001", "old")
    keys = [f"index/acme/k{i:04d}" for i in range(40)]

    await objects.put_many([(key, "") for key in keys])

    assert await objects.list("index/acme/", 100) == keys
    assert (await objects.get("index/acme/k0001")).body == ""  # replaced, unconditionally
    before = await objects.get("index/acme/k0002")
    await objects.put("index/acme/k0002", "changed", if_match=before.etag)
    assert (await objects.get("index/acme/k0002")).body == "changed"
