"""Buckets are interchangeable with the reference server's (docs/storage.md, docs/counters.md).

One direction: objects and vectors laid out by hand exactly as the reference
writes them are read by the service. The other: what the service writes is
exactly the reference layout, key for key and byte for byte, with one metadata key of ours
beside it (`contentHash`, which the reference does not read).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator

import pytest

from mcp_memory.core.ids import parse_iso
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.render import text as shown
from tests.conftest import Clock, Env
from tests.support.moto_endpoint import seed_objects

T = parse_iso("2026-07-01T00:00:00.000Z")
ID = "01KWDFKD000123456789ABCDEF"  # ulid(T)
NOTE = "01KWDFKD00ZZZZZZZZZZZZZZZZ"  # same instant, a conversation note
INVERTED = "7YC3JGCJZZ"  # inverted_time(T), 10 chars: newer sorts first
DIGEST = "74e97b2be403fbde"  # first 16 hex of sha256("chat:1")
ACME = Caller("acme")
THREAD = Caller("acme", "chat:1")


@pytest.fixture
async def env(clock: Clock, aws_endpoint: str) -> AsyncIterator[Env]:
    from tests.support.s3_env import make_s3_env

    aws_env = make_s3_env(clock, aws_endpoint)
    try:
        yield aws_env
    finally:
        await aws_env.vectors.close()
        await aws_env.objects.close()


def raw(env: Env, service: str):
    return env.objects._client if service == "s3" else env.vectors._client  # type: ignore[attr-defined]


async def test_memories_counters_and_index_the_reference_wrote_are_read(env: Env) -> None:
    vectors, bucket = env.vectors, env.objects.bucket  # type: ignore[attr-defined]
    embed = env.embedder.embed
    raw(env, "s3vectors").put_vectors(
        vectorBucketName=vectors.bucket,
        indexName=vectors.index,  # type: ignore[attr-defined]
        vectors=[
            {
                "key": f"acme#{ID}",
                "data": {"float32": (await embed(["Release trains leave every Tuesday"]))[0].tolist()},
                "metadata": {
                    "tenantId": "acme",
                    "memoryType": "project",
                    "content": "Release trains leave every Tuesday",
                    "createdAt": "2026-07-01T00:00:00.000Z",
                    "tags": ["release"],
                    "trustBase": 1,
                },
            },
            {
                "key": f"acme#{NOTE}",
                "data": {"float32": (await embed(["Summaries in bullet points please"]))[0].tolist()},
                "metadata": {
                    "tenantId": "acme",
                    "memoryType": "conversation",
                    "scope": "conversation",
                    "conversation": "chat:1",
                    "content": "Summaries in bullet points please",
                    "createdAt": "2026-07-01T00:00:00.000Z",
                    "trustBase": 1,
                },
            },
        ],
    )
    seed_objects(
        bucket,
        [
            (f"index/acme/{INVERTED}#{ID}#project", ""),
            (f"index/acme/{INVERTED}#{NOTE}#conversation#{DIGEST}", ""),
            (
                f"stats/acme/shard/{ID}-web-1a2b3c4d.json",
                json.dumps({ID: {"access": 2, "lastAt": "2026-07-01T00:00:05.000Z"}}),
            ),
            (
                "stats/acme/merged.json",
                json.dumps(
                    {
                        "counts": {ID: {"access": 3, "lastAt": "2026-07-01T00:00:01.000Z"}},
                        "watermark": f"{'0' * 26}-web-00000000.json",
                    }
                ),
            ),
        ],
    )

    assert shown(await env.service.stats(ACME)) == "[MEMORY] 1 memory for this project (project: 1)."
    assert shown(await env.service.stats(THREAD)) == (
        "[MEMORY] 2 memories for this project (project: 1, conversation: 1)."
    )
    listed = shown(await env.service.list(THREAD))
    assert listed.startswith("[MEMORY] 2 memories, newest first.") and "Release trains" in listed and "bullet" in listed
    [result] = (await env.service.recall(ACME, "when do release trains leave")).results
    assert result.memory.id == ID and result.stats.access_count == 5
    assert result.stats.last_accessed_at == "2026-07-01T00:00:05.000Z"


async def test_what_the_service_writes_is_the_reference_layout(env: Env, clock: Clock) -> None:
    env.service.new_id = lambda ms: ID if ms == T else NOTE  # type: ignore[method-assign]
    await env.service.remember(ACME, "Release trains leave every Tuesday", tags=["release"], category="process")
    await env.service.recall(ACME, "when do release trains leave")
    await env.counters.flush()

    keys = await env.objects.list("")
    [shard] = [k for k in keys if k.startswith("stats/")]
    assert keys == [f"index/acme/{INVERTED}#{ID}#project", shard]
    assert (await env.objects.get(keys[0])).body == ""  # type: ignore[union-attr]
    assert shard.startswith("stats/acme/shard/") and shard.endswith("-test-pod.json") and len(shard) == 17 + 26 + 14
    assert (await env.objects.get(shard)).body == (  # type: ignore[union-attr]
        f'{{"{ID}":{{"access":1,"lastAt":"2026-07-01T00:00:00.000Z"}}}}'
    )
    [vector] = raw(env, "s3vectors").get_vectors(
        vectorBucketName=env.vectors.bucket,
        indexName=env.vectors.index,  # type: ignore[attr-defined]
        keys=[f"acme#{ID}"],
        returnMetadata=True,
    )["vectors"]
    assert vector["metadata"] == {
        "tenantId": "acme",
        "memoryType": "project",
        "category": "process",
        "content": "Release trains leave every Tuesday",
        "createdAt": "2026-07-01T00:00:00.000Z",
        "tags": ["release"],
        "trustBase": 1,
        "contentHash": hashlib.sha256(b"Release trains leave every Tuesday").hexdigest()[:32],  # ours, beside them
    }


async def test_a_conversation_note_is_indexed_with_the_conversation_digest(env: Env) -> None:
    env.service.new_id = lambda ms: NOTE  # type: ignore[method-assign]
    await env.service.remember(THREAD, "Summaries in bullet points please", scope="conversation")

    assert await env.objects.list("index/") == [f"index/acme/{INVERTED}#{NOTE}#project#{DIGEST}"]
