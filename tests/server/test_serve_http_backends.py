"""`mcp-memory serve-http` end to end on each remote backend and remote embedder:
one real server subprocess per test, configured only through its environment as
a deployment is, driven by the MCP SDK's own client over Streamable HTTP.

- PostgreSQL (pgserver, or TEST_DATABASE_URL): a role with a password, a fresh
  schema chosen by the URL's `options=-csearch_path=…`; the boot line shows the
  URL with the password masked, and the process never imports AWS code.
- S3 Vectors + S3 (moto on 127.0.0.1, reached through AWS_ENDPOINT_URL with
  dummy credentials): a conversation's own note is seen only by that conversation.
- An OpenAI-compatible embeddings server (the aiohttp stand-in) as the embedder.
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from mcp_memory import __version__
from tests.support import pg_support
from tests.support.http_process import clean_env, http_process, imported_modules, log_lines
from tests.support.http_support import mcp_client, text
from tests.support.standins import OpenAIStandIn

TOOLS = ["recall", "remember", "list_memories", "forget", "memory_stats"]
FACT = "Rolling deploys drain in-flight streams before the pod exits"
QUERY = "Rolling deploys drain in-flight streams before the pod"
TENANT = ("x-memory-tenant", "acme")
AWS_MODULES = ("boto3", "botocore", "s3transfer")


def stored_id(result_text: str) -> str:
    match = re.search(r"Stored as ([0-9A-Z]{26})\.", result_text)
    assert match, result_text
    return match.group(1)


# --------------------------------------------------------------------------- PostgreSQL


@contextmanager
def password_role_and_schema(admin_url: str) -> Iterator[tuple[str, str, str]]:
    """A login role with a password, owning a fresh schema; yields (DATABASE_URL, password,
    schema). The URL is the postgres:// form a deployment writes, the password in it
    (percent-encoded), the schema chosen by `options=-csearch_path=<schema>,public`
    (pgvector lives in `public`)."""
    suffix = uuid.uuid4().hex[:10]
    role, schema = f"mcpm_e2e_{suffix}", f"mcpm_e2e_{suffix}"
    password = f"pw/{secrets.token_hex(8)}@x"  # characters a URL must escape
    with pg_support.connect(admin_url) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))
        conn.execute(sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(sql.Identifier(schema), sql.Identifier(role)))
    info = conninfo_to_dict(admin_url)
    host, port, dbname = str(info.get("host") or ""), str(info.get("port") or ""), str(info.get("dbname") or "postgres")
    query = {"options": f"-csearch_path={schema},public"}
    if host.startswith("/"):  # a unix socket directory (pgserver): libpq takes it as ?host=
        netloc_host, query = "", {"host": host, **query}
    else:
        netloc_host = host + (f":{port}" if port else "")
    url = f"postgres://{role}:{quote(password, safe='')}@{netloc_host}/{dbname}?{urlencode(query)}"
    try:
        yield url, password, schema
    finally:
        with pg_support.connect(admin_url) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


async def test_on_postgres_a_client_of_either_era_uses_every_tool_and_no_aws_code_is_loaded(
    pg_admin_url: str, tmp_path: Path
) -> None:
    with password_role_and_schema(pg_admin_url) as (url, password, schema):
        in_schema = pg_support.in_schema(pg_admin_url, schema)
        env = clean_env(tmp_path, DATABASE_URL=url, EMBEDDING_PROVIDER="fake")
        async with http_process(env, tmp_path / "stderr.txt", python_flags=["-X", "importtime"]) as server:
            shown = url.replace(quote(password, safe=""), "***")
            assert server.boot[1] == f"storage: postgres {shown} — DATABASE_URL is set"
            assert re.fullmatch(
                r"storage: postgres postgres://mcpm_e2e_\w+:\*\*\*@/?\S* — DATABASE_URL is set", server.boot[1]
            )
            assert server.boot[2] == "embedder: fake:fake-bag-of-words, 64d"

            async with mcp_client(server.mcp_url, [TENANT], mode="legacy") as client:
                assert client.protocol_version != "2026-07-28"
                assert (client.server_info.name, client.server_info.version) == ("mcp-memory", __version__)
                assert [t.name for t in (await client.list_tools()).tools] == TOOLS
                memory_id = stored_id(text(await client.call_tool("remember", {"content": FACT})))
                recalled = text(await client.call_tool("recall", {"query": QUERY}))
                assert recalled.startswith(f'[MEMORY] 1 memory matched "{QUERY}"') and memory_id in recalled

            assert pg_support.rows(in_schema, "SELECT id, tenant_id FROM memories") == [(memory_id, "acme")]

            async with mcp_client(server.mcp_url, [TENANT], mode="auto") as client:
                assert client.protocol_version == "2026-07-28"
                listed = text(await client.call_tool("list_memories", {}))
                assert listed.startswith("[MEMORY] 1 memory, newest first.") and FACT in listed
                assert (
                    text(await client.call_tool("memory_stats", {}))
                    == "[MEMORY] 1 memory for this project (project: 1)."
                )
                assert text(await client.call_tool("forget", {"id": memory_id})) == f"[MEMORY] Deleted {memory_id}."
                assert text(await client.call_tool("memory_stats", {})) == "[MEMORY] This project has no memories yet."

            code, out, err = await server.stop()

        assert code == 0, err
        assert pg_support.count(in_schema, "memories") == 0
        shards = pg_support.rows(in_schema, "SELECT key FROM objects WHERE key LIKE %s", ("stats/acme/shard/%",))
        assert len(shards) == 1  # the access counters, flushed once on SIGTERM

    everything = "\n".join(server.boot) + out + "\n".join(log_lines(err))
    assert password not in everything and quote(password, safe="") not in everything
    modules = imported_modules(err)
    assert "psycopg" in modules and "uvicorn" in modules  # -X importtime saw the whole run
    assert sorted(m for m in modules if m.split(".")[0] in AWS_MODULES) == []
    assert not re.search(r"aws|boto", everything, re.IGNORECASE)


# --------------------------------------------------------------------------- S3 Vectors + S3


async def test_on_s3_a_conversation_note_is_seen_only_in_its_own_conversation(
    aws_endpoint: str, tmp_path: Path
) -> None:
    from tests.support.moto_endpoint import REGION, admin_client, make_place

    place = make_place(aws_endpoint, dim=64)
    env = clean_env(
        tmp_path,
        VECTOR_BUCKET=place.vector_bucket,
        STATE_BUCKET=place.state_bucket,
        VECTOR_INDEX=place.index,
        EMBEDDING_PROVIDER="fake",
        AWS_REGION=REGION,
        AWS_ENDPOINT_URL=place.endpoint,
        AWS_ACCESS_KEY_ID="AKIDE2ETESTING",
        AWS_SECRET_ACCESS_KEY="e2e-secret-never-shown",
    )
    note = "Ask Dana before touching the billing cron tonight"
    project_fact = "The billing cron runs at 02:00 UTC every night"
    thread_a = [TENANT, ("x-conversation-id", "chat:thread-a")]
    thread_b = [TENANT, ("x-conversation-id", "chat:thread-b")]
    async with http_process(env, tmp_path / "stderr.txt") as server:
        assert server.boot[1] == (
            f"storage: s3 s3vectors://{place.vector_bucket}/{place.index}, state s3://{place.state_bucket} "
            "— VECTOR_BUCKET and STATE_BUCKET are set"
        )
        assert server.boot[2] == "embedder: fake:fake-bag-of-words, 64d"

        async with mcp_client(server.mcp_url, thread_a, mode="legacy") as a:
            assert [t.name for t in (await a.list_tools()).tools] == TOOLS
            note_id = stored_id(text(await a.call_tool("remember", {"content": note, "scope": "conversation"})))
            fact_id = stored_id(text(await a.call_tool("remember", {"content": project_fact})))
            recalled = text(await a.call_tool("recall", {"query": note}))
            assert recalled.startswith(f'[MEMORY] 1 memory matched "{note}"') and note_id in recalled
            both = text(await a.call_tool("recall", {"query": "the billing cron", "mode": "exploratory"}))
            assert note_id in both and fact_id in both
            assert text(await a.call_tool("memory_stats", {})).startswith("[MEMORY] 2 memories")

        async with mcp_client(server.mcp_url, thread_b, mode="auto") as b:
            recalled = text(await b.call_tool("recall", {"query": note, "mode": "exploratory"}))
            assert note_id not in recalled and fact_id in recalled
            listed = text(await b.call_tool("list_memories", {}))
            assert listed.startswith("[MEMORY] 1 memory, newest first.") and note not in listed
            assert text(await b.call_tool("memory_stats", {})) == "[MEMORY] 1 memory for this project (project: 1)."
            assert text(await b.call_tool("forget", {"id": note_id})).startswith(
                f"[MEMORY] No memory with id {note_id} exists"
            )

        async with mcp_client(server.mcp_url, thread_a, mode="auto") as a:
            assert note in text(await a.call_tool("list_memories", {}))
            assert text(await a.call_tool("forget", {"id": note_id})) == f"[MEMORY] Deleted {note_id}."
            assert text(await a.call_tool("memory_stats", {})) == "[MEMORY] 1 memory for this project (project: 1)."

        code, out, err = await server.stop()

    assert code == 0, err
    keys = [
        v["key"]
        for v in admin_client(aws_endpoint, "s3vectors").list_vectors(
            vectorBucketName=place.vector_bucket, indexName=place.index
        )["vectors"]
    ]
    assert keys and all(fact_id in key for key in keys)  # the note is gone from the index
    state = admin_client(aws_endpoint, "s3").list_objects_v2(Bucket=place.state_bucket, Prefix="stats/acme/shard/")
    assert state.get("KeyCount") == 1  # the access counters, flushed once on SIGTERM
    everything = "\n".join(server.boot) + out + err
    assert "e2e-secret-never-shown" not in everything and "AKIDE2ETESTING" not in everything
    assert note not in everything and "thread-a" not in everything


# --------------------------------------------------------------------------- an OpenAI-compatible embedder


@pytest.fixture
async def embeddings() -> AsyncIterator[OpenAIStandIn]:
    stand_in = OpenAIStandIn(dim=64)
    await stand_in.start()
    yield stand_in
    await stand_in.stop()


async def test_with_an_openai_compatible_embedder_remember_and_recall_embed_through_it(
    embeddings: OpenAIStandIn, tmp_path: Path
) -> None:
    key = "sk-e2e-http-key-never-logged"
    env = clean_env(
        tmp_path,
        MEMORY_DB_PATH=str(tmp_path / "m.db"),
        EMBEDDING_PROVIDER="openai",
        EMBEDDING_BASE_URL=f"http://127.0.0.1:{embeddings.port}/v1/",
        EMBEDDING_API_KEY=key,
        EMBEDDING_MODEL="test-embed",
        EMBEDDING_DIM="64",
    )
    async with http_process(env, tmp_path / "stderr.txt") as server:
        assert server.boot[2] == "embedder: openai:test-embed, 64d"
        async with mcp_client(server.mcp_url, [("x-tenant-id", "acme")]) as client:
            memory_id = stored_id(text(await client.call_tool("remember", {"content": FACT})))
            recalled = text(await client.call_tool("recall", {"query": QUERY}))
        code, out, err = await server.stop()

    assert code == 0, err
    assert recalled.startswith(f'[MEMORY] 1 memory matched "{QUERY}"') and memory_id in recalled
    assert [(r.path, r.body["input"]) for r in embeddings.received] == [
        ("/v1/embeddings", FACT),
        ("/v1/embeddings", QUERY),
    ]
    assert {r.headers["Authorization"] for r in embeddings.received} == {f"Bearer {key}"}
    assert {r.body["model"] for r in embeddings.received} == {"test-embed"}
    assert key not in "\n".join(server.boot) + out + err
