"""The PostgreSQL keyword index: a generated tsvector over the tokens of core/keywords.py.

`memories.keywords` holds the memory's token string (`keywords.index_text`), written by the
same statement as the memory. `keyword_vector` is generated from it with `array_to_tsvector`,
which takes our tokens verbatim as lexemes, and a GIN index serves `@@`. No text-search
configuration re-parses them: `to_tsvector('simple', …)` would run PostgreSQL's own parser,
which cuts `pg_hba.conf`, `v0.8.2` or `api.internal:8443` its own way (as files, versions and
hosts), and this backend would then disagree with SQLite about what matches. The lexemes of a
query are quoted here (`lexeme`), so nothing in a query is tsquery syntax.

Document counts are the tenant's own, counted through the GIN index up to the search limit
(core/keywords.py `TermStats.searchable`): a commoner term counts as held by one more memory than
that limit, so it weighs as the commonest searched term would, and no query walks the postings
of a word half the tenant holds.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import psycopg

from mcp_memory.core import keywords

COLUMN = "keywords text NOT NULL DEFAULT ''"
VECTOR = "keyword_vector tsvector GENERATED ALWAYS AS (array_to_tsvector(string_to_array(keywords, ' '))) STORED"
#: fastupdate off: each insert updates the index itself (about a millisecond), instead of queueing
#: entries that some later insert or query must merge (a stall of many milliseconds after a bulk load).
INDEX = (
    "CREATE INDEX IF NOT EXISTS memories_keyword_vector ON memories USING gin (keyword_vector) WITH (fastupdate = off)"
)
BACKFILL_BATCH = 2000
PROGRESS_EVERY = 10_000

_VISIBLE = "(scope = 'project' OR (%s::text IS NOT NULL AND scope = 'conversation' AND conversation = %s))"

#: The tenant's memory count, and each term's, counted up to a cap: past the search limit a term is
#: not searched, so its exact count would only cost an index walk over a large part of the tenant.
STATS = (
    "WITH n AS (SELECT count(*) AS docs FROM memories WHERE tenant_id = %s) "
    "SELECT NULL::text, docs FROM n UNION ALL "
    "SELECT q.term, (SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.tenant_id = %s "
    "AND m.keyword_vector @@ q.query LIMIT (SELECT greatest(%s, floor(docs * %s))::bigint + 1 FROM n)) AS held) "
    "FROM unnest(%s::text[], %s::tsquery[]) AS q(term, query)"
)
#: The rows holding any searched term, by the summed idf of the terms they hold (each term tested
#: against the row's tsvector, a binary search, rather than splitting its token string again).
SEARCH = (
    "SELECT id, metadata, embedding <=> %b AS distance FROM memories "
    f"WHERE tenant_id = %s AND {_VISIBLE} AND keyword_vector @@ %s::tsquery "
    "ORDER BY (SELECT coalesce(sum(q.weight), 0) FROM unnest(%s::tsquery[], %s::float8[]) AS q(query, weight) "
    "WHERE keyword_vector @@ q.query) DESC, id LIMIT %s"
)


def lexeme(term: str) -> str:
    """`term` as one quoted tsquery lexeme: data, never query syntax."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def any_of(terms: Sequence[str]) -> str:
    return " | ".join(lexeme(t) for t in terms)


async def upgrade(conn: psycopg.AsyncConnection[Any], columns: dict[str, Any]) -> None:
    """Inside the start-up transaction: give a table written before the keyword index its column,
    its tokens, the generated vector and the GIN index (once; the advisory lock is held)."""
    if "keywords" not in columns:
        await conn.execute(f"ALTER TABLE memories ADD COLUMN {COLUMN}")
        await _backfill(conn)
    if "keyword_vector" not in columns:
        await conn.execute(f"ALTER TABLE memories ADD COLUMN {VECTOR}")
    await conn.execute(INDEX)


async def _backfill(conn: psycopg.AsyncConnection[Any]) -> None:
    cursor = await conn.execute("SELECT count(*) FROM memories")
    row = await cursor.fetchone()
    total = int(row[0]) if row else 0
    done = 0
    async with conn.cursor(name="mcp_memory_keyword_backfill") as rows:
        await rows.execute("SELECT tenant_id, id, metadata->>'content' FROM memories")
        while batch := await rows.fetchmany(BACKFILL_BATCH):
            tenants, ids, texts = [], [], []
            for tenant, memory_id, content in batch:
                tenants.append(tenant)
                ids.append(memory_id)
                texts.append(keywords.index_text(content if isinstance(content, str) else ""))
            await conn.execute(
                "UPDATE memories m SET keywords = v.keywords "
                "FROM unnest(%s::text[], %s::text[], %s::text[]) AS v(tenant_id, id, keywords) "
                "WHERE m.tenant_id = v.tenant_id AND m.id = v.id",
                (tenants, ids, texts),
            )
            before, done = done, done + len(batch)
            crossed = done // PROGRESS_EVERY > before // PROGRESS_EVERY or done == total
            if total >= PROGRESS_EVERY and crossed:
                print(f"mcp-memory: building the keyword index: {done} of {total} memories", file=sys.stderr)
