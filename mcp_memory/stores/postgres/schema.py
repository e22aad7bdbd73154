"""The PostgreSQL schema, created (or checked) by every process at start-up (docs/storage.md).

Everything runs in one transaction under one advisory lock, so several
replicas booting at once create it exactly once (`IF NOT EXISTS` alone races),
and a refusal rolls back: a database that is refused is left as it was.

Tables:

- `memories`: the reference record (`metadata` is exactly `to_metadata`) with
  the embedding in a `vector(EMBEDDING_DIM)` column (seed 003: a fixed width, so
  vectors of another model can never be mixed in), plus two generated columns
  read from the metadata so visibility is applied in SQL, before the LIMIT (docs/memories.md).
- `objects`: keys in `COLLATE "C"` (byte order), ETags from one global
  sequence (never reissued, even for a recreated key).
- `memory_terms`: each tenant's memory count and each term's (stores/postgres/keywords.py),
  written by the same statements as the memories.
- `mcp_memory_meta`: the embedding model and width the database was created
  with, so another model of the same width is refused too (as SQLite does).

An existing database is adopted: the reference server's width-less `vector`
column is converted when every stored vector has the configured width, and
the generated columns are added. A width or model that disagrees is refused
with both named, and nothing is changed.
"""

from __future__ import annotations

import sys
from typing import Any

import psycopg
from psycopg import sql

from mcp_memory.core.errors import StartupError
from mcp_memory.stores.postgres import keywords

__all__ = ["SCHEMA_LOCK_KEY", "SCHEMA_VERSION", "create_schema"]

#: The reference server's key: replicas of either implementation serialise their boots on it.
SCHEMA_LOCK_KEY = 7304592118001
#: 2 added the keyword index (stores/postgres/keywords.py); a schema of version 1 gains it at start.
#: 3 added the term counts (`memory_terms`, kept by every write); an older schema is counted at start.
SCHEMA_VERSION = 3

_SCOPE = "CASE WHEN metadata->>'scope' = 'conversation' THEN 'conversation' ELSE 'project' END"
_GENERATED = {
    "scope": f"text GENERATED ALWAYS AS ({_SCOPE}) STORED",
    "conversation": "text GENERATED ALWAYS AS (metadata->>'conversation') STORED",
}

_MEMORIES = """CREATE TABLE memories (
    tenant_id text NOT NULL,
    id text NOT NULL,
    embedding {vector}({dim}) NOT NULL,
    metadata jsonb NOT NULL,
    scope {scope},
    conversation {conversation},
    {keywords},
    {keyword_vector},
    PRIMARY KEY (tenant_id, id)
)"""

#: The embedding stays in the row (MAIN storage: compressed or moved out only as a last resort).
#: pgvector's default lets PostgreSQL move it to the TOAST table once the row passes ~2 kB, which the
#: keyword columns made the common case: the exact scan then fetched every vector from there, three
#: times slower (bench/RESULTS.md#postgresql-hybrid-recall-the-embedding-kept-in-the-row-2026-12-01).
#: The other wide columns (metadata, keywords, keyword_vector) are moved out first instead.
_INLINE = "ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN"

#: A text looked up as it is (VectorStore.same_text: an import's rerun), by its md5: a btree
#: entry holds at most ~2.7 kB, and a memory's text may be 32,000 bytes. A table made before it
#: gains it at start.
_TEXT_INDEX = "CREATE INDEX IF NOT EXISTS memories_by_text ON memories (tenant_id, md5(metadata->>'content'))"

_OBJECTS = (
    "CREATE SEQUENCE IF NOT EXISTS objects_version",
    """CREATE TABLE IF NOT EXISTS objects (
        key text COLLATE "C" PRIMARY KEY,
        body text NOT NULL,
        version bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
    )""",
    "CREATE TABLE IF NOT EXISTS mcp_memory_meta (key text PRIMARY KEY, value text NOT NULL)",
)

_EXTENSION_ADVICE = (
    "the pgvector extension is not installed in this database and could not be created. "
    "Run `CREATE EXTENSION vector;` as a superuser in this database (once), or use a PostgreSQL "
    "image that ships pgvector (e.g. pgvector/pgvector:pg16)"
)


async def create_schema(conn: psycopg.AsyncConnection[Any], *, model: str, dim: int, where: str) -> str:
    """Create or check the schema for embeddings of `model` with `dim` dimensions.

    Returns the schema pgvector is installed in. pgvector is one extension per
    database, in whichever schema the first deployment's search_path put it,
    so its type and functions are always named with that schema: a deployment
    whose search_path does not reach it (another schema of the same database)
    still starts.

    `conn` is in autocommit mode; the work happens in one transaction of its own.
    Raises StartupError (naming `where`, the redacted URL) on any refusal or failure.
    """
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
        vector_schema = await _ensure_extension(conn, where)
        await _ensure_memories(conn, dim, where, vector_schema)
        for statement in _OBJECTS:
            await conn.execute(statement)
        await _check_model(conn, model, dim, where)
    return vector_schema


async def extension_schema(conn: psycopg.AsyncConnection[Any]) -> str | None:
    """The schema pgvector is installed in (pg_extension), None when it is not installed."""
    cursor = await conn.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    )
    row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def _ensure_extension(conn: psycopg.AsyncConnection[Any], where: str) -> str:
    found = await extension_schema(conn)
    if found is not None:
        return found
    try:
        async with conn.transaction():  # a savepoint: the refusal is reported, not the aborted transaction
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        reason = getattr(exc.diag, "message_primary", None) or type(exc).__name__
        raise StartupError(f"{_EXTENSION_ADVICE} (PostgreSQL at {where} said: {reason})") from None
    found = await extension_schema(conn)
    assert found is not None
    return found


async def _columns(conn: psycopg.AsyncConnection[Any]) -> dict[str, tuple[str, int]]:
    """The `memories` table's columns as name → (type name, typmod); empty when there is no table."""
    cursor = await conn.execute(
        "SELECT a.attname, t.typname, a.atttypmod FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE a.attrelid = to_regclass(quote_ident(current_schema()) || '.memories') AND a.attnum > 0 AND NOT a.attisdropped"
    )
    return {name: (type_name, typmod) for name, type_name, typmod in await cursor.fetchall()}


async def _ensure_memories(conn: psycopg.AsyncConnection[Any], dim: int, where: str, vector_schema: str) -> None:
    columns = await _columns(conn)
    vector = sql.Identifier(vector_schema, "vector")
    if not columns:
        text = _MEMORIES.format(
            dim="{dim}", vector="{vector}", keywords=keywords.COLUMN, keyword_vector=keywords.VECTOR, **_GENERATED
        )
        await conn.execute(sql.SQL(text).format(dim=sql.Literal(dim), vector=vector))
        await conn.execute(_INLINE)
        await conn.execute(keywords.INDEX)
        await conn.execute(_TEXT_INDEX)
        await keywords.ensure_counts(conn)
        return
    if columns.get("metadata", ("",))[0] != "jsonb" or columns.get("embedding", ("",))[0] != "vector":
        raise StartupError(
            f"the database at {where} has a table named memories that mcp-memory did not create "
            "(it lacks a jsonb metadata column or a vector embedding column); nothing was changed. "
            "Point DATABASE_URL at another database, or set the schema with "
            "options=-csearch_path=<schema> in the URL"
        )
    width = columns["embedding"][1]
    if width != dim:
        widths = [width] if width > 0 else await _stored_widths(conn, vector_schema)
        if any(w != dim for w in widths):
            raise StartupError(_width_refusal(widths, dim, where))
        # The reference server's width-less column, and every stored vector fits: fix the width.
        await conn.execute(
            sql.SQL("ALTER TABLE memories ALTER COLUMN embedding TYPE {vector}({dim})").format(
                vector=vector, dim=sql.Literal(dim)
            )
        )
    for name, definition in _GENERATED.items():
        if name not in columns:
            await conn.execute(f"ALTER TABLE memories ADD COLUMN {name} {definition}")
    await keywords.upgrade(conn, columns)
    await keywords.ensure_counts(conn)
    await _ensure_text_index(conn)
    await _embeddings_inline(conn, vector, dim)


async def _ensure_text_index(conn: psycopg.AsyncConnection[Any]) -> None:
    """The text index for a table made before it. Looked up first, for the reason
    keywords.upgrade gives: CREATE INDEX IF NOT EXISTS would wait behind a large tenant's
    CREATE INDEX CONCURRENTLY at every start."""
    cursor = await conn.execute("SELECT to_regclass(quote_ident(current_schema()) || '.memories_by_text') IS NULL")
    missing = await cursor.fetchone()
    if missing is None or missing[0]:
        await conn.execute(_TEXT_INDEX)


async def _embeddings_inline(conn: psycopg.AsyncConnection[Any], vector: sql.Identifier, dim: int) -> None:
    """Once, for a table created before the embedding was kept inline: mark it so and rewrite the
    stored vectors (a fresh value, so the row is laid out again by the new rule)."""
    cursor = await conn.execute(
        "SELECT attstorage FROM pg_attribute WHERE attrelid = to_regclass(quote_ident(current_schema()) || '.memories') AND attname = 'embedding'"
    )
    row = await cursor.fetchone()
    if row is None or row[0] == "m":
        return
    await conn.execute(_INLINE)
    cursor = await conn.execute("SELECT count(*) FROM memories")
    counted = await cursor.fetchone()
    total = int(counted[0]) if counted else 0
    if total >= keywords.PROGRESS_EVERY:
        print(f"mcp-memory: keeping the embeddings inline: rewriting {total} memories", file=sys.stderr)
    await conn.execute(
        sql.SQL("UPDATE memories SET embedding = embedding::real[]::{vector}({dim})").format(
            vector=vector, dim=sql.Literal(dim)
        )
    )


async def _stored_widths(conn: psycopg.AsyncConnection[Any], vector_schema: str) -> list[int]:
    dims = sql.Identifier(vector_schema, "vector_dims")
    cursor = await conn.execute(sql.SQL("SELECT DISTINCT {}(embedding) FROM memories ORDER BY 1").format(dims))
    return [int(row[0]) for row in await cursor.fetchall()]


def _width_refusal(widths: list[int], dim: int, where: str) -> str:
    held = " and ".join(str(w) for w in widths)
    return (
        f"the memories table at {where} holds {held}-dimensional embeddings but EMBEDDING_DIM is {dim}; "
        "embeddings of different widths cannot be compared, and nothing was changed. Configure the "
        "original embedder again (EMBEDDING_PROVIDER, EMBEDDING_MODEL, EMBEDDING_DIM), or point "
        "DATABASE_URL at a new database (or re-embed every memory) to change models"
    )


async def _check_model(conn: psycopg.AsyncConnection[Any], model: str, dim: int, where: str) -> None:
    cursor = await conn.execute("SELECT key, value FROM mcp_memory_meta")
    recorded = dict(await cursor.fetchall())
    if not recorded.get("embedding_model"):
        for key, value in (
            ("schema_version", str(SCHEMA_VERSION)),
            ("embedding_model", model),
            ("embedding_dim", str(dim)),
        ):
            await conn.execute(
                "INSERT INTO mcp_memory_meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (key, value),
            )
        return
    version = int(recorded.get("schema_version") or 0)
    if version > SCHEMA_VERSION:
        raise StartupError(
            f"the database at {where} was set up by a newer mcp-memory (schema {version}, this one "
            f"reads {SCHEMA_VERSION}); upgrade mcp-memory or point DATABASE_URL at another database"
        )
    old_model, old_dim = recorded["embedding_model"], recorded.get("embedding_dim", "?")
    if old_model != model or old_dim != str(dim):
        raise StartupError(
            f'the database at {where} holds embeddings from "{old_model}" ({old_dim} dimensions) but the '
            f'configured embedder is "{model}" ({dim} dimensions); embeddings from different models '
            "cannot be compared, and nothing was changed. Configure the original model again "
            "(EMBEDDING_PROVIDER, EMBEDDING_MODEL, EMBEDDING_DIM), or point DATABASE_URL at a new "
            "database to start a fresh memory"
        )
    if version < SCHEMA_VERSION:
        await conn.execute("UPDATE mcp_memory_meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
