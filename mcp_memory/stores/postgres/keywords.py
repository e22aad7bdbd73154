"""The PostgreSQL keyword index: a generated tsvector over the tokens of core/keywords.py.

`memories.keywords` holds the memory's token string (`keywords.index_text`), written by the
same statement as the memory. `keyword_vector` is generated from it with `array_to_tsvector`,
which takes our tokens verbatim as lexemes, and a GIN index serves `@@`. No text-search
configuration re-parses them: `to_tsvector('simple', …)` would run PostgreSQL's own parser,
which cuts `pg_hba.conf`, `v0.8.2` or `api.internal:8443` its own way (as files, versions and
hosts), and this backend would then disagree with SQLite about what matches. The lexemes of a
query are quoted here (`lexeme`), so nothing in a query is tsquery syntax.

Document counts are the tenant's own, kept in `memory_terms` (one row per tenant and term, and
the row of the empty term: the tenant's memory count) by the statements that write the memories,
in the same transaction (`PUT`, `DELETE`), so a recall reads them by primary key instead of
counting the tenant's rows and each term's postings. A commoner term than the search limit
(core/keywords.py `TermStats.searchable`) counts as held by one more memory than that limit, so it
weighs as the commonest searched term would (as when they were counted through the GIN index).
Every write to a tenant first takes the tenant's write lock (`WRITE_LOCK`), so the row it replaces
or deletes is read as committed and the counts stay exact under concurrent writers; a table that
predates them is counted once at start-up (`ensure_counts`). Zero counts stay as rows.
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

#: The table of counts; the empty term (never a token) holds the tenant's memory count.
TERMS = (
    "CREATE TABLE memory_terms (tenant_id text NOT NULL, term text NOT NULL, docs bigint NOT NULL, "
    "PRIMARY KEY (tenant_id, term))"
)
#: Taken first by every transaction that writes memories, for each tenant it writes, in key order
#: (so two multi-tenant batches cannot deadlock). The two-key form never meets the one-key
#: advisory locks of `exclusive` and the schema.
WRITE_LOCK = (
    "SELECT pg_advisory_xact_lock(7304, k) FROM (SELECT DISTINCT hashtext(current_schema() || '/' || t) AS k "
    "FROM unnest(%s::text[]) AS t ORDER BY k) AS keys"
)
_APPLY = (
    "INSERT INTO memory_terms (tenant_id, term, docs) SELECT {tenant}, term, d FROM ("
    "SELECT term, sum(d)::bigint AS d FROM changes GROUP BY term HAVING sum(d) <> 0) AS delta ORDER BY term "
    "ON CONFLICT (tenant_id, term) DO UPDATE SET docs = memory_terms.docs + EXCLUDED.docs"
)
#: Write one memory (insert or replace) and move the counts from its old tokens to its new ones.
PUT = (
    "WITH old AS (SELECT keywords FROM memories WHERE tenant_id = %(tenant)s AND id = %(id)s), "
    "put AS (INSERT INTO memories (tenant_id, id, embedding, metadata, keywords) "
    "VALUES (%(tenant)s, %(id)s, %(embedding)b, %(metadata)s, %(keywords)s) "
    "ON CONFLICT (tenant_id, id) DO UPDATE SET embedding = EXCLUDED.embedding, metadata = EXCLUDED.metadata, "
    "keywords = EXCLUDED.keywords RETURNING 1), "
    "changes AS (SELECT t AS term, -1 AS d FROM old, unnest(string_to_array(old.keywords, ' ')) AS t WHERE t <> '' "
    "UNION ALL SELECT t, 1 FROM unnest(string_to_array(%(keywords)s::text, ' ')) AS t WHERE t <> '' "
    "UNION ALL SELECT '', 1 - (SELECT count(*) FROM old)::int) " + _APPLY.format(tenant="%(tenant)s")
)
#: Delete memories and take their tokens off the counts.
DELETE = (
    "WITH gone AS (DELETE FROM memories WHERE tenant_id = %(tenant)s AND id = ANY(%(ids)s::text[]) RETURNING keywords), "
    "changes AS (SELECT t AS term, -1 AS d FROM gone, unnest(string_to_array(gone.keywords, ' ')) AS t WHERE t <> '' "
    "UNION ALL SELECT '', -(SELECT count(*) FROM gone)::int) " + _APPLY.format(tenant="%(tenant)s")
)
#: Every count, from the memories themselves (the fill of `ensure_counts`, and the recount tests compare with).
RECOUNT = (
    "SELECT tenant_id, t, count(*) FROM memories, unnest(string_to_array(keywords, ' ')) AS t WHERE t <> '' "
    "GROUP BY 1, 2 UNION ALL SELECT tenant_id, '', count(*) FROM memories GROUP BY 1"
)

_VISIBLE = "(scope = 'project' OR (%s::text IS NOT NULL AND scope = 'conversation' AND conversation = %s))"

#: The tenant's memory count (the empty term) and each term's, read by primary key.
STATS = "SELECT term, docs FROM memory_terms WHERE tenant_id = %s AND term = ANY(%s::text[]) AND docs > 0"
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
    # Looked up first: CREATE INDEX IF NOT EXISTS takes a SHARE lock on the table before it finds the
    # index there, so at every start it would wait behind a large tenant's CREATE INDEX CONCURRENTLY
    # (stores/postgres/ann.py: minutes) and queue every other process's writes behind it; the build,
    # waiting for this transaction in turn, is then ended by PostgreSQL's deadlock detector.
    cursor = await conn.execute(
        "SELECT to_regclass(quote_ident(current_schema()) || '.memories_keyword_vector') IS NULL"
    )
    missing = await cursor.fetchone()
    if missing is None or missing[0]:
        await conn.execute(INDEX)


async def ensure_counts(conn: psycopg.AsyncConnection[Any]) -> None:
    """Inside the start-up transaction: a database without `memory_terms` (schema 2 or older, or
    a restore of the memories alone) gets it, counted from its memories."""
    cursor = await conn.execute("SELECT to_regclass(quote_ident(current_schema()) || '.memory_terms') IS NOT NULL")
    row = await cursor.fetchone()
    if row and row[0]:
        return
    await conn.execute(TERMS)
    cursor = await conn.execute("SELECT count(*) FROM memories")
    row = await cursor.fetchone()
    total = int(row[0]) if row else 0
    if total >= PROGRESS_EVERY:
        print(f"mcp-memory: counting the keyword index's terms of {total} memories", file=sys.stderr)
    await conn.execute(f"INSERT INTO memory_terms (tenant_id, term, docs) {RECOUNT}")


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
