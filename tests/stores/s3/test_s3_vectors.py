"""The S3 Vectors store (docs/storage.md, docs/memories.md, the reference's vectors.test).

Request shapes — the tenant-first filters, topK, batch sizes, the metadata a
put sends — are checked with botocore's Stubber; the round trip and the
reference layout are checked over HTTP against the moto endpoint.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import numpy as np
import pytest
from botocore.stub import Stubber

import mcp_memory.stores.s3.store as s3_module
from mcp_memory.core.errors import BudgetExceeded, StoreError
from mcp_memory.core.model import Memory
from mcp_memory.stores.records import to_metadata
from mcp_memory.stores.s3.startup import make_clients
from mcp_memory.stores.s3.store import S3VectorStore, TenantFilter, open_s3, tenant_filter
from mcp_memory.stores.section import StoreSection
from tests.support.moto_endpoint import REGION, AwsPlace, signing_session

DIM = 4
WHERE = {"vectorBucketName": "vectors", "indexName": "memories"}
ID = "01JZ3X5W8R0000000000000000"


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def record(memory_id: str, tenant: str = "acme", distance: float | None = None, **fields: Any) -> dict[str, Any]:
    """A vector as QueryVectors/GetVectors return it."""
    metadata = {
        "tenantId": tenant,
        "memoryType": "project",
        "content": f"fact {memory_id}",
        "createdAt": "2026-07-01T00:00:00.000Z",
        "trustBase": 1,
        **fields,
    }
    item: dict[str, Any] = {"key": f"{tenant}#{memory_id}", "metadata": metadata}
    if distance is not None:
        item["distance"] = distance
    return item


def answer(*items: dict[str, Any]) -> dict[str, Any]:
    return {"vectors": list(items), "distanceMetric": "cosine"}


PROJECT = {"$and": [{"tenantId": {"$eq": "acme"}}, {"scope": {"$exists": False}}]}


def conversation_of(conversation: str) -> dict[str, Any]:
    return {
        "$and": [
            {"tenantId": {"$eq": "acme"}},
            {"scope": {"$eq": "conversation"}},
            {"conversation": {"$eq": conversation}},
        ]
    }


def query_params(where: dict[str, Any], top_k: int, vector: np.ndarray) -> dict[str, Any]:
    return {
        **WHERE,
        "topK": top_k,
        "queryVector": {"float32": vector.tolist()},
        "filter": where,
        "returnMetadata": True,
        "returnDistance": True,
    }


@pytest.fixture
def stubbed() -> Iterator[tuple[S3VectorStore, Stubber]]:
    vectors_client, s3_client = make_clients(REGION, session=signing_session())
    s3_client.close()
    with Stubber(vectors_client) as stubber:
        yield S3VectorStore(vectors_client, "vectors", "memories", DIM), stubber
        stubber.assert_no_pending_responses()
    vectors_client.close()


# --------------------------------------------------------------------------- queries


async def test_a_query_outside_a_conversation_asks_for_project_memories_with_the_tenant_first(
    stubbed: tuple[S3VectorStore, Stubber],
) -> None:
    store, stubber = stubbed
    vector = unit(1, 2)
    stubber.add_response("query_vectors", answer(record("p1", distance=0.25)), query_params(PROJECT, 100, vector))

    hits = await store.query("acme", vector, 5000, None)

    assert [(h.memory.id, h.similarity) for h in hits] == [("p1", 0.75)]


async def test_a_query_in_a_conversation_also_asks_for_its_notes_and_keeps_the_nearest_overall(
    stubbed: tuple[S3VectorStore, Stubber],
) -> None:
    store, stubber = stubbed
    vector = unit(1)
    note = {"scope": "conversation", "conversation": "chat:1"}
    # The two queries run concurrently; the stubbed answers are taken in call order,
    # so both answers satisfy either query's expectations here.
    stubber.add_response("query_vectors", answer(record("p1", distance=0.1), record("p2", distance=0.5)))
    stubber.add_response(
        "query_vectors", answer(record("n1", distance=0.2, **note), record("n2", distance=0.3, **note))
    )

    hits = await store.query("acme", vector, 3, "chat:1")

    assert sorted((h.memory.id, round(h.similarity, 6)) for h in hits) == [("n1", 0.8), ("n2", 0.7), ("p1", 0.9)]


async def test_both_queries_carry_the_tenant_first_and_the_limit(stubbed: tuple[S3VectorStore, Stubber]) -> None:
    store, stubber = stubbed
    seen: list[dict[str, Any]] = []
    store._client.meta.events.register(
        "provide-client-params.s3vectors.QueryVectors", lambda params, **_: seen.append(json.loads(json.dumps(params)))
    )
    stubber.add_response("query_vectors", answer())
    stubber.add_response("query_vectors", answer())

    await store.query("acme", unit(1), 7, "chat:1")

    assert sorted(json.dumps(p["filter"], sort_keys=True) for p in seen) == sorted(
        json.dumps(f, sort_keys=True) for f in (PROJECT, conversation_of("chat:1"))
    )
    assert {(p["topK"], p["returnMetadata"], p["returnDistance"]) for p in seen} == {(7, True, True)}
    assert all(p["filter"]["$and"][0] == {"tenantId": {"$eq": "acme"}} for p in seen)


async def test_a_record_of_another_tenant_is_dropped_and_a_missing_distance_scores_zero(
    stubbed: tuple[S3VectorStore, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_response("query_vectors", answer(record("mine"), record("theirs", tenant="globex", distance=0.0)))

    hits = await store.query("acme", unit(1), 5, None)

    assert [(h.memory.id, h.similarity) for h in hits] == [("mine", 0.0)]


async def test_nothing_is_asked_for_zero_results(stubbed: tuple[S3VectorStore, Stubber]) -> None:
    store, _ = stubbed
    assert await store.query("acme", unit(1), 0, "chat:1") == []


def test_a_filter_cannot_be_built_without_a_tenant() -> None:
    with pytest.raises(ValueError, match="needs a tenant"):
        tenant_filter("")
    with pytest.raises(TypeError):
        TenantFilter("acme", {"tenantId": "acme"})
    assert tenant_filter("acme", {"x": {"$eq": 1}}).document == {
        "$and": [{"tenantId": {"$eq": "acme"}}, {"x": {"$eq": 1}}]
    }


async def test_the_query_call_refuses_a_filter_that_did_not_come_from_tenant_filter(
    stubbed: tuple[S3VectorStore, Stubber],
) -> None:
    store, _ = stubbed
    with pytest.raises(TypeError, match="TenantFilter"):
        await store._query({"tenantId": "acme"}, [1.0, 0, 0, 0], 5)  # type: ignore[arg-type]


def test_query_vectors_is_called_in_one_place_only() -> None:
    tree = ast.parse(inspect.getsource(s3_module))
    callers = [
        function.name
        for function in ast.walk(tree)
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(function)
        if isinstance(node, ast.Attribute) and node.attr == "query_vectors"
    ]
    assert callers == ["_query"]


# --------------------------------------------------------------------------- get and delete


async def test_get_asks_for_tenant_keys_a_hundred_at_a_time_and_keeps_the_order_asked(
    stubbed: tuple[S3VectorStore, Stubber],
) -> None:
    store, stubber = stubbed
    ids = [f"m{i:03d}" for i in range(250)]
    for start, end in ((0, 100), (100, 200), (200, 250)):
        chunk = ids[start:end]
        found = [record(i) for i in reversed(chunk) if i != "m150"]
        if start == 200:
            found.append(record("m249", tenant="globex"))  # never returned for acme
        stubber.add_response(
            "get_vectors", {"vectors": found}, {**WHERE, "keys": [f"acme#{i}" for i in chunk], "returnMetadata": True}
        )

    memories = await store.get("acme", ids)

    assert [m.id for m in memories] == [i for i in ids if i != "m150"]
    assert {m.tenant for m in memories} == {"acme"}


async def test_delete_sends_tenant_keys_five_hundred_at_a_time(stubbed: tuple[S3VectorStore, Stubber]) -> None:
    store, stubber = stubbed
    ids = [f"m{i:03d}" for i in range(600)]
    for start, end in ((0, 500), (500, 600)):
        stubber.add_response("delete_vectors", {}, {**WHERE, "keys": [f"acme#{i}" for i in ids[start:end]]})

    await store.delete("acme", ids)


async def test_empty_id_lists_make_no_call(stubbed: tuple[S3VectorStore, Stubber]) -> None:
    store, _ = stubbed
    assert await store.get("acme", []) == []
    await store.delete("acme", [])


# --------------------------------------------------------------------------- put


async def test_put_sends_the_reference_key_vector_and_metadata_in_order_without_empty_arrays(
    stubbed: tuple[S3VectorStore, Stubber],
) -> None:
    store, stubber = stubbed
    memory = Memory(
        id=ID,
        tenant="acme",
        content="Deploys drain first",
        memory_type="pattern",
        category="deploy",
        scope="conversation",
        conversation="chat:1",
        created_at="2026-07-01T00:00:00.000Z",
    )
    vector = unit(3, 4)
    metadata = {
        "tenantId": "acme",
        "memoryType": "pattern",
        "category": "deploy",
        "scope": "conversation",
        "conversation": "chat:1",
        "content": "Deploys drain first",
        "createdAt": "2026-07-01T00:00:00.000Z",
        "trustBase": 1,
        "contentHash": hashlib.sha256(b"Deploys drain first").hexdigest()[:32],
    }
    seen: list[list[str]] = []
    store._client.meta.events.register(
        "provide-client-params.s3vectors.PutVectors",
        lambda params, **_: seen.append(list(params["vectors"][0]["metadata"])),
    )
    expected = {**WHERE, "vectors": [{"key": f"acme#{ID}", "data": {"float32": vector.tolist()}, "metadata": metadata}]}
    stubber.add_response("put_vectors", {}, expected)

    await store.put(memory, vector)

    assert seen == [list(metadata)]  # the reference order, then ours; no "tags" key at all


BUDGET_CASES = [
    (Memory(id=ID, tenant="acme", content="x" * 32_001), BudgetExceeded, "Store the essential fact"),
    (Memory(id=ID, tenant="acme", content="한" * 10_667), BudgetExceeded, "content is 32001 bytes"),
    (
        Memory(id=ID, tenant="acme", content="ok", category="c" * 2_000),
        BudgetExceeded,
        r"filterable metadata is \d+ bytes",
    ),
    (
        Memory(id=ID, tenant="acme", content="x" * 31_000, tags=tuple("t" * 64 + str(i) for i in range(140))),
        BudgetExceeded,
        "Shorten the tags",
    ),
]


@pytest.mark.parametrize(
    ("memory", "error", "message"), BUDGET_CASES, ids=["content", "content-bytes", "filterable", "total"]
)
async def test_a_memory_over_a_budget_is_refused_before_any_call(
    stubbed: tuple[S3VectorStore, Stubber], memory: Memory, error: type[Exception], message: str
) -> None:
    store, _ = stubbed
    with pytest.raises(error, match=message):
        await store.put(memory, unit(1))


async def test_an_embedding_of_another_width_is_refused_before_any_call(stubbed: tuple[S3VectorStore, Stubber]) -> None:
    store, _ = stubbed
    with pytest.raises(StoreError, match=r"4-dimensional vectors \(EMBEDDING_DIM\)"):
        await store.put(Memory(id=ID, tenant="acme", content="x"), np.ones(3, dtype=np.float32))
    with pytest.raises(StoreError, match="non-finite"):
        await store.query("acme", np.array([np.nan, 0, 0, 1], dtype=np.float32), 5, None)


async def test_an_aws_failure_names_the_operation_and_the_code(stubbed: tuple[S3VectorStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_client_error(
        "get_vectors", "AccessDeniedException", "not authorized to perform s3vectors:GetVectors", 403
    )

    with pytest.raises(StoreError, match="^GetVectors failed: AccessDeniedException — not authorized"):
        await store.get("acme", ["m1"])


# --------------------------------------------------------------------------- the reference layout, over HTTP


@pytest.fixture
async def s3_vectors(aws: AwsPlace) -> AsyncIterator[S3VectorStore]:
    store = StoreSection(
        backend="s3",
        vector_bucket=aws.vector_bucket,
        vector_index=aws.index,
        state_bucket=aws.state_bucket,
        aws_region=REGION,
    )
    vectors, objects = await open_s3(store, aws.dim, session=aws.session, endpoint_url=aws.endpoint)
    await objects.close()
    try:
        yield vectors
    finally:
        await vectors.close()


def wide(*values: float) -> np.ndarray:
    vector = np.zeros(8, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


async def test_a_memory_lands_under_the_reference_key_with_the_reference_metadata(
    s3_vectors: S3VectorStore, aws: AwsPlace
) -> None:
    memory = Memory(
        id=ID,
        tenant="acme",
        content="배포 drains first",
        tags=("ops",),
        category="deploy",
        conversation="chat:1",
        created_at="2026-07-01T00:00:00.000Z",
    )
    await s3_vectors.put(memory, wide(1, 1))

    [stored] = aws.client("s3vectors").get_vectors(
        vectorBucketName=aws.vector_bucket,
        indexName=aws.index,
        keys=[f"acme#{ID}"],
        returnMetadata=True,
        returnData=True,
    )["vectors"]

    # The reference record, and one filterable key of ours beside it: the text's hash (same_text).
    assert stored["metadata"] == {
        **to_metadata(memory),
        "contentHash": hashlib.sha256("배포 drains first".encode()).hexdigest()[:32],
    }
    assert to_metadata(memory) == {
        "tenantId": "acme",
        "memoryType": "project",
        "category": "deploy",
        "conversation": "chat:1",
        "content": "배포 drains first",
        "createdAt": "2026-07-01T00:00:00.000Z",
        "tags": ["ops"],
        "trustBase": 1,
    }
    assert stored["data"]["float32"] == pytest.approx(wide(1, 1).tolist())


async def test_a_vector_the_reference_server_wrote_reads_back_and_is_found(
    s3_vectors: S3VectorStore, aws: AwsPlace
) -> None:
    legacy = {
        "tenantId": "acme",
        "memoryType": "reference",
        "content": "Runbooks live in the wiki",
        "createdAt": "2025-01-02T03:04:05.006Z",
        "tags": ["docs", "wiki"],
        "trustBase": 1,
    }
    aws.client("s3vectors").put_vectors(
        vectorBucketName=aws.vector_bucket,
        indexName=aws.index,
        vectors=[{"key": f"acme#{ID}", "data": {"float32": wide(0, 1).tolist()}, "metadata": legacy}],
    )

    [memory] = await s3_vectors.get("acme", [ID])
    [hit] = await s3_vectors.query("acme", wide(0, 1), 5, "chat:any")

    assert (memory.id, memory.memory_type, memory.tags, memory.scope) == (ID, "reference", ("docs", "wiki"), "project")
    assert hit.memory == memory and hit.similarity == pytest.approx(1.0, abs=1e-6)
    assert await s3_vectors.get("globex", [ID]) == []
