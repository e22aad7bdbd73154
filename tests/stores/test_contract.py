"""The contract every storage backend keeps (docs/storage.md, docs/memories.md). Runs once per backend."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.core.errors import BudgetExceeded, PreconditionFailed
from mcp_memory.core.model import Memory
from mcp_memory.stores.records import ObjectStore, VectorStore
from tests.stores.conftest import DIM, FACTORIES, MODEL, WHERE
from tests.support import store_worker
from tests.support.backends import CROSS_PROCESS


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def axis(i: int) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[i] = 1.0
    return vector


def memory(memory_id: str, tenant: str = "acme", **fields: object) -> Memory:
    return Memory(id=memory_id, tenant=tenant, content=f"fact {memory_id}", **fields)  # type: ignore[arg-type]


def note(memory_id: str, conversation: str, tenant: str = "acme") -> Memory:
    return memory(memory_id, tenant, scope="conversation", conversation=conversation)


async def let_other_tasks_run() -> None:
    """Yield to the event loop a number of times (not a timed wait)."""
    for _ in range(50):
        await asyncio.sleep(0)


# --------------------------------------------------------------------------- memories


async def test_a_memory_comes_back_with_every_field_as_written(vectors: VectorStore) -> None:
    full = Memory(
        id="01J0000000000000000000FULL",
        tenant="acme",
        content="Deploys drain connections first — 배포",
        memory_type="pattern",
        category="deploy/rollout",
        tags=("ops", "kubernetes", "배포"),
        created_at="2026-03-04T05:06:07.089Z",
        scope="conversation",
        conversation="thread-42",
        trust_base=0.75,
    )
    bare = Memory(id="01J0000000000000000000BARE", tenant="acme", content="plain", conversation="provenance")
    await vectors.put(full, unit(1))
    await vectors.put(bare, unit(0, 1))

    assert sorted(await vectors.get("acme", [full.id, bare.id]), key=lambda m: m.id) == [bare, full]


async def test_putting_an_existing_id_again_replaces_the_memory(vectors: VectorStore) -> None:
    await vectors.put(memory("m1"), axis(0))
    await vectors.query("acme", axis(0), 5, None)
    replacement = Memory(id="m1", tenant="acme", content="rewritten", scope="conversation", conversation="c1")
    await vectors.put(replacement, axis(1))

    assert await vectors.get("acme", ["m1"]) == [replacement]
    hits = await vectors.query("acme", axis(1), 5, "c1")
    assert [(h.memory, round(h.similarity, 5)) for h in hits] == [(replacement, 1.0)]
    assert await vectors.query("acme", axis(1), 5, None) == []


async def test_get_drops_ids_that_do_not_exist(vectors: VectorStore) -> None:
    await vectors.put(memory("m1"), unit(1))

    found = await vectors.get("acme", ["missing-1", "m1", "missing-2"])

    assert [m.id for m in found] == ["m1"]
    assert await vectors.get("acme", []) == []


async def test_same_text_finds_the_tenants_memories_that_hold_a_text_word_for_word(vectors: VectorStore) -> None:
    long_text = "배포 전에 연결을 비운다. " * 800  # 28,000 bytes: past any index's key-size limit
    ours = [
        Memory(id="m1", tenant="acme", content="Deploys drain connections first"),
        Memory(id="m2", tenant="acme", content=long_text, tags=("ops",)),
        Memory(
            id="m3", tenant="acme", content="Deploys drain connections first", scope="conversation", conversation="c1"
        ),
        Memory(id="m4", tenant="acme", content="deploys drain connections first"),
    ]
    await vectors.put_many([(m, unit(1, i)) for i, m in enumerate(ours)])
    await vectors.put(Memory(id="g1", tenant="globex", content="Deploys drain connections first"), unit(1))

    found = await vectors.same_text("acme", ["Deploys drain connections first", long_text, "never stored"])

    assert found is not None
    assert sorted(found, key=lambda m: m.id) == ours[:3]
    assert await vectors.same_text("acme", ["Deploys drain connections first."]) == []
    assert await vectors.same_text("initech", ["Deploys drain connections first"]) == []
    assert await vectors.same_text("acme", []) == []
    await vectors.delete("acme", ["m1"])
    assert [m.id for m in await vectors.same_text("acme", ["Deploys drain connections first"]) or []] == ["m3"]


async def test_delete_removes_the_given_ids_and_ignores_unknown_ones(vectors: VectorStore) -> None:
    for i in range(3):
        await vectors.put(memory(f"m{i}"), unit(1, i))

    await vectors.delete("acme", ["m0", "never-existed", "m2"])
    await vectors.delete("acme", [])

    assert [m.id for m in await vectors.get("acme", ["m0", "m1", "m2"])] == ["m1"]
    assert [h.memory.id for h in await vectors.query("acme", unit(1), 10, None)] == ["m1"]


async def test_a_tenant_never_reaches_another_tenants_memories(vectors: VectorStore) -> None:
    await vectors.put(memory("shared-id", "acme"), unit(1))
    await vectors.put(memory("globex-only", "globex"), unit(1))

    assert [h.memory.id for h in await vectors.query("acme", unit(1), 10, None)] == ["shared-id"]
    assert await vectors.get("acme", ["globex-only"]) == []
    assert await vectors.query("initech", unit(1), 10, None) == []

    await vectors.delete("globex", ["shared-id"])
    assert [m.tenant for m in await vectors.get("acme", ["shared-id"])] == ["acme"]


async def test_query_returns_the_nearest_top_k(vectors: VectorStore) -> None:
    rng = np.random.default_rng(3)
    embeddings = rng.standard_normal((40, DIM)).astype(np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    for i, embedding in enumerate(embeddings):
        await vectors.put(memory(f"m{i:02d}"), embedding)
    query = unit(*rng.standard_normal(DIM))

    hits = await vectors.query("acme", query, 5, None)

    nearest = {f"m{i:02d}" for i in np.argsort(embeddings @ query)[-5:]}
    assert {h.memory.id for h in hits} == nearest
    for hit in hits:
        assert hit.similarity == pytest.approx(float(embeddings[int(hit.memory.id[1:])] @ query), abs=1e-5)


async def test_query_asks_for_more_than_there_is_and_gets_everything(vectors: VectorStore) -> None:
    await vectors.put(memory("m1"), unit(1))
    await vectors.put(memory("m2"), unit(0, 1))

    assert {h.memory.id for h in await vectors.query("acme", unit(1), 100, None)} == {"m1", "m2"}
    assert await vectors.query("acme", unit(1), 0, None) == []


async def test_similarity_is_one_for_the_same_direction_and_zero_for_orthogonal(vectors: VectorStore) -> None:
    await vectors.put(memory("same"), unit(3, 4))
    await vectors.put(memory("orthogonal"), unit(4, -3))

    similarity = {h.memory.id: h.similarity for h in await vectors.query("acme", unit(3, 4), 2, None)}

    assert similarity["same"] == pytest.approx(1.0, abs=1e-6)
    assert similarity["orthogonal"] == pytest.approx(0.0, abs=1e-6)


@pytest.fixture
async def busy_conversation(vectors: VectorStore) -> VectorStore:
    """50 notes of conversation "busy" nearer the query (axis 0) than 3 project memories."""
    for i in range(50):
        await vectors.put(note(f"note{i:02d}", "busy"), unit(1, 0.001 * i))
    for i in range(3):
        await vectors.put(memory(f"project{i}"), unit(1, 1 + i))
    return vectors


async def test_a_busy_conversation_cannot_crowd_project_memories_out_of_a_query(
    busy_conversation: VectorStore,
) -> None:
    for conversation in (None, "another"):
        hits = await busy_conversation.query("acme", axis(0), 3, conversation)
        assert {h.memory.id for h in hits} == {"project0", "project1", "project2"}


async def test_a_request_without_a_conversation_never_sees_scoped_notes(busy_conversation: VectorStore) -> None:
    hits = await busy_conversation.query("acme", axis(0), 100, None)

    assert {h.memory.scope for h in hits} == {"project"}
    assert len(hits) == 3


async def test_query_never_returns_another_conversations_notes(busy_conversation: VectorStore) -> None:
    await busy_conversation.put(note("mine", "quiet"), unit(1, 2))

    hits = await busy_conversation.query("acme", axis(0), 100, "quiet")

    assert {h.memory.id for h in hits} == {"mine", "project0", "project1", "project2"}


async def test_the_owning_conversation_sees_its_notes_and_the_project_memories(
    busy_conversation: VectorStore,
) -> None:
    everything = await busy_conversation.query("acme", axis(0), 100, "busy")
    nearest = await busy_conversation.query("acme", axis(0), 3, "busy")

    assert len(everything) == 53
    assert {h.memory.id for h in nearest} == {"note00", "note01", "note02"}


async def test_a_memory_over_the_content_budget_is_refused_before_anything_is_written(
    vectors: VectorStore,
) -> None:
    too_big = Memory(id="big", tenant="acme", content="x" * 32_001)

    with pytest.raises(BudgetExceeded, match="Store the essential fact"):
        await vectors.put(too_big, unit(1))

    assert await vectors.get("acme", ["big"]) == []
    assert await vectors.query("acme", unit(1), 10, None) == []


# --------------------------------------------------------------------------- exclusive


async def test_exclusive_admits_one_task_at_a_time_per_tenant(vectors: VectorStore) -> None:
    first_inside, release, second_trying, second_inside = (asyncio.Event() for _ in range(4))

    async def first() -> None:
        async with vectors.exclusive("acme"):
            first_inside.set()
            await release.wait()

    async def second() -> None:
        await first_inside.wait()
        second_trying.set()
        async with vectors.exclusive("acme"):
            second_inside.set()

    tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
    await second_trying.wait()
    await vectors.put(memory("m1"), unit(1))  # the store's own I/O while the lock is held
    await vectors.query("acme", unit(1), 1, None)
    await let_other_tasks_run()
    assert not second_inside.is_set()

    release.set()
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
    assert second_inside.is_set()


async def test_exclusive_makes_read_modify_write_lose_no_update(stores: tuple[VectorStore, ObjectStore]) -> None:
    vectors, objects = stores
    await objects.put("counter", "0")

    async def increment() -> None:
        for _ in range(10):
            async with vectors.exclusive("acme"):
                current = await objects.get("counter")
                assert current is not None
                await let_other_tasks_run()
                await objects.put("counter", str(int(current.body) + 1))

    await asyncio.wait_for(asyncio.gather(*(increment() for _ in range(4))), timeout=60)

    final = await objects.get("counter")
    assert final is not None and final.body == "40"


@pytest.mark.parametrize("backend", CROSS_PROCESS)
async def test_exclusive_excludes_another_process(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    # Two OS processes increment one object 50 times each, every read-modify-write inside
    # exclusive("shared") with the event loop yielding between the read and the write.
    vectors, objects = await FACTORIES[backend](request, tmp_path)
    try:
        await objects.put("counter", "0")
    finally:
        await vectors.close()
        await objects.close()

    where = WHERE[backend](request, tmp_path)
    store_worker.run_workers(backend, where, MODEL, DIM, "increment", ["alpha", "beta"], 50)

    vectors, objects = await FACTORIES[backend](request, tmp_path)
    try:
        counter = await objects.get("counter")
        assert counter is not None and counter.body == "100"
    finally:
        await vectors.close()
        await objects.close()


async def test_exclusive_for_one_tenant_does_not_block_another(vectors: VectorStore) -> None:
    acme_inside, globex_inside = asyncio.Event(), asyncio.Event()

    async def acme() -> None:
        async with vectors.exclusive("acme"):
            acme_inside.set()
            await globex_inside.wait()

    async def globex() -> None:
        await acme_inside.wait()
        async with vectors.exclusive("globex"):
            globex_inside.set()

    await asyncio.wait_for(asyncio.gather(acme(), globex()), timeout=30)


# --------------------------------------------------------------------------- objects


async def test_getting_a_missing_object_returns_none(objects: ObjectStore) -> None:
    assert await objects.get("stats/acme/merged.json") is None


async def test_every_write_of_new_content_returns_a_new_etag_and_get_returns_the_latest(objects: ObjectStore) -> None:
    etags = [await objects.put("key", f"body {i}") for i in range(3)]

    assert len(set(etags)) == 3
    stored = await objects.get("key")
    assert stored is not None and (stored.body, stored.etag) == ("body 2", etags[-1])


async def test_a_compare_and_swap_on_the_etag_just_read_applies(objects: ObjectStore) -> None:
    await objects.put("merged", "same body")
    await objects.put("merged", "same body")  # on S3 the ETag is the body's MD5: unchanged
    current = await objects.get("merged")
    assert current is not None

    etag = await objects.put("merged", "next", if_match=current.etag)

    stored = await objects.get("merged")
    assert stored is not None and (stored.body, stored.etag) == ("next", etag)


async def test_if_none_match_creates_only_once(objects: ObjectStore) -> None:
    await objects.put("lease", "first", if_none_match=True)

    with pytest.raises(PreconditionFailed):
        await objects.put("lease", "second", if_none_match=True)

    stored = await objects.get("lease")
    assert stored is not None and stored.body == "first"


async def test_of_two_writers_holding_the_same_etag_exactly_one_wins(objects: ObjectStore) -> None:
    etag = await objects.put("merged", "v0")

    results = await asyncio.gather(
        objects.put("merged", "writer A", if_match=etag),
        objects.put("merged", "writer B", if_match=etag),
        return_exceptions=True,
    )

    winners = [r for r in results if isinstance(r, str)]
    assert len(winners) == 1
    assert sum(isinstance(r, PreconditionFailed) for r in results) == 1
    stored = await objects.get("merged")
    assert stored is not None and stored.etag == winners[0] and stored.body in ("writer A", "writer B")


async def test_a_conditional_write_to_an_absent_key_fails(objects: ObjectStore) -> None:
    with pytest.raises(PreconditionFailed):
        await objects.put("absent", "body", if_match="1")

    assert await objects.get("absent") is None


async def test_an_etag_from_before_a_delete_does_not_match_the_recreated_key(objects: ObjectStore) -> None:
    stale = await objects.put("key", "old")
    await objects.delete(["key"])
    fresh = await objects.put("key", "new")

    assert fresh != stale
    with pytest.raises(PreconditionFailed):
        await objects.put("key", "overwrite", if_match=stale)
    stored = await objects.get("key")
    assert stored is not None and stored.body == "new"


BYTE_ORDERED = [
    "index/t/1#Z",
    "index/t/1#z",
    "index/t/10#a",
    "index/t/9#b",
    "index/t/é",  # U+00E9: 2 UTF-8 bytes
    "index/t/中",  # U+4E2D: 3 bytes
    "index/t/～",  # U+FF5E: 3 bytes, sorts before U+1F600 in byte order (after it in UTF-16)
    "index/t/😀",  # U+1F600: 4 bytes
]


async def test_listing_is_in_byte_order(objects: ObjectStore) -> None:
    for key in reversed(BYTE_ORDERED):
        await objects.put(key, "")
    await objects.put("index/tt/other", "")
    await objects.put("index/s/before", "")

    assert await objects.list("index/t/") == BYTE_ORDERED
    assert BYTE_ORDERED == sorted(BYTE_ORDERED, key=lambda k: k.encode("utf-8"))


async def test_listing_pages_with_limit_and_start_after(objects: ObjectStore) -> None:
    for key in BYTE_ORDERED:
        await objects.put(key, "")

    first = await objects.list("index/t/", limit=3)
    rest = await objects.list("index/t/", limit=100, start_after=first[-1])

    assert first == BYTE_ORDERED[:3]
    assert rest == BYTE_ORDERED[3:]
    assert await objects.list("index/t/", start_after="index/t/9#b") == BYTE_ORDERED[4:]
    assert await objects.list("index/t/", limit=0) == []


async def test_a_prefix_is_literal_even_with_underscore_and_percent(objects: ObjectStore) -> None:
    for key in ("a_b/1", "axb/1", "a%b/1", "azzzb/1", "a_b", "A_b/1"):
        await objects.put(key, "")

    assert await objects.list("a_b/") == ["a_b/1"]
    assert await objects.list("a%") == ["a%b/1"]
    assert await objects.list("a_") == ["a_b", "a_b/1"]
    assert await objects.list("") == ["A_b/1", "a%b/1", "a_b", "a_b/1", "axb/1", "azzzb/1"]


async def test_delete_removes_only_the_given_keys(objects: ObjectStore) -> None:
    for key in ("stats/a", "stats/b", "stats/c"):
        await objects.put(key, "{}")

    await objects.delete(["stats/a", "stats/c", "stats/never"])
    await objects.delete([])

    assert await objects.list("stats/") == ["stats/b"]


async def test_listing_after_a_tenant_name_and_zero_skips_exactly_that_tenants_keys(objects: ObjectStore) -> None:
    # How `stats` and `compact --all-tenants` step from tenant to tenant (tenants.py):
    # `0` sorts right after `/`, and a tenant name never holds `/`.
    keys = [
        "index/ab-c/9#x",
        "index/ab.c/1#x",
        "index/ab/1#x",
        "index/ab/9#y",
        "index/ab0/1#x",
        "index/ab_c/1#x",
        "index/b/1#x",
    ]
    for key in keys:
        await objects.put(key, "")

    assert await objects.list("index/", 1) == ["index/ab-c/9#x"]
    assert await objects.list("index/", 1, "index/ab-c0") == ["index/ab.c/1#x"]
    assert await objects.list("index/", 1, "index/ab.c0") == ["index/ab/1#x"]
    assert await objects.list("index/", 1, "index/ab0") == ["index/ab0/1#x"]
    assert await objects.list("index/", 1, "index/ab00") == ["index/ab_c/1#x"]
    assert await objects.list("index/", 1, "index/ab_c0") == ["index/b/1#x"]
    assert await objects.list("index/", 1, "index/b0") == []
