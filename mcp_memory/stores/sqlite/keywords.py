"""The SQLite keyword index: an FTS5 table over the tokens of core/keywords.py.

Each memory's token string (`keywords.index_text`) is written to `memories_fts` in the same
transaction as the memory, and removed with it. The tokens are made in Python, so SQLite,
PostgreSQL and the in-memory store index exactly the same words; FTS5's tokenizer is told to
keep the identifier punctuation our tokens carry (`pg_hba.conf` stays one token).

Why a table of its own rather than an external-content table over `memories`: external content
is joined by rowid, and `memories` has no INTEGER PRIMARY KEY, so a VACUUM may renumber its
rowids and silently point the index at other memories; a contentless table that can delete rows
needs SQLite 3.43. So the index keeps its own copy of the tokens, and finds a memory's entry
through its id, which is an indexed column.

Document counts come from `memories_vocab` (fts5vocab): they are counted over the whole file,
every tenant together. For a file with one tenant (the usual embedded case) that is exact; with
several it only shifts how rare a word looks, never what a tenant can see.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence

from mcp_memory.core import keywords

#: The punctuation our tokens carry inside them (core/keywords.py `_EDGE`), kept by the tokenizer.
_TOKENCHARS = "._:/-@#$%+\\_"

SCHEMA = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5("
    "keywords, id, tenant UNINDEXED, "
    f"tokenize = \"unicode61 remove_diacritics 0 tokenchars '{_TOKENCHARS}'\")",
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_vocab USING fts5vocab(memories_fts, 'col')",
)
#: Memories indexed per statement batch while an old file is upgraded, and how often it says so.
BACKFILL_BATCH = 2000
PROGRESS_EVERY = 10_000

_VISIBLE = "(m.scope = 'project' OR (? IS NOT NULL AND m.scope = 'conversation' AND m.conversation = ?))"


def phrase(term: str) -> str:
    """`term` as an FTS5 string: data, never query syntax (quotes doubled)."""
    return '"' + term.replace('"', '""') + '"'


def _entry(conn: sqlite3.Connection, tenant: str, memory_id: str) -> list[int]:
    rows = conn.execute(
        "SELECT rowid, tenant, id FROM memories_fts WHERE memories_fts MATCH ?",
        (f"id : {phrase(memory_id)}",),
    ).fetchall()
    return [rowid for rowid, row_tenant, row_id in rows if row_tenant == tenant and row_id == memory_id]


def remove(conn: sqlite3.Connection, tenant: str, ids: Sequence[str]) -> None:
    """Inside a write transaction: drop these memories' index entries."""
    for memory_id in ids:
        for rowid in _entry(conn, tenant, memory_id):
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))


def write(conn: sqlite3.Connection, tenant: str, memory_id: str, content: str, *, replacing: bool) -> None:
    """Inside the write transaction that stores the memory: index its tokens (`replacing`: the id
    was stored before, so its old entry goes first)."""
    if replacing:
        remove(conn, tenant, [memory_id])
    conn.execute(
        "INSERT INTO memories_fts (keywords, id, tenant) VALUES (?, ?, ?)",
        (keywords.index_text(content), memory_id, tenant),
    )


def stats(conn: sqlite3.Connection, terms: Sequence[str]) -> keywords.TermStats:
    """The file's memory count and each term's document count."""
    frequency: dict[str, int] = {}
    for start in range(0, len(terms), 200):
        chunk = list(terms[start : start + 200])
        marks = ", ".join("?" * len(chunk))
        for term, doc in conn.execute(
            f"SELECT term, doc FROM memories_vocab WHERE col = 'keywords' AND term IN ({marks})", chunk
        ):
            frequency[term] = int(doc)
    (docs,) = conn.execute("SELECT count(*) FROM memories").fetchone()
    return keywords.TermStats(int(docs), frequency)


def search(
    conn: sqlite3.Connection, tenant: str, terms: Sequence[str], top_k: int, conversation: str | None
) -> list[str]:
    """The ids of up to `top_k` of `tenant`'s memories visible to `conversation` holding any of
    `terms`, best BM25 first (tenant and visibility before the limit)."""
    if not terms or top_k <= 0:
        return []
    match = "keywords : (" + " OR ".join(phrase(t) for t in terms) + ")"
    rows = conn.execute(
        "SELECT f.id FROM memories_fts f JOIN memories m ON m.tenant = f.tenant AND m.id = f.id "
        f"WHERE memories_fts MATCH ? AND f.tenant = ? AND {_VISIBLE} ORDER BY f.rank LIMIT ?",
        (match, tenant, conversation, conversation, top_k),
    ).fetchall()
    return [row[0] for row in rows]


def missing(conn: sqlite3.Connection) -> bool:
    """True when the file has no keyword index yet (written by a release before it)."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'").fetchone()
    return row is None


def backfill(conn: sqlite3.Connection) -> int:
    """Inside the start-up transaction: index every stored memory; returns how many.

    Says how far it got on stderr every PROGRESS_EVERY memories (counts only: no content and
    no tenant names), so a large file's first start is not mistaken for a hang.
    """
    (total,) = conn.execute("SELECT count(*) FROM memories").fetchone()
    done = 0
    cursor = conn.execute("SELECT tenant, id, content FROM memories")
    while batch := cursor.fetchmany(BACKFILL_BATCH):
        conn.executemany(
            "INSERT INTO memories_fts (keywords, id, tenant) VALUES (?, ?, ?)",
            [(keywords.index_text(content), memory_id, tenant) for tenant, memory_id, content in batch],
        )
        before, done = done, done + len(batch)
        crossed = done // PROGRESS_EVERY > before // PROGRESS_EVERY or done == total
        if total >= PROGRESS_EVERY and crossed:
            print(f"mcp-memory: building the keyword index: {done} of {total} memories", file=sys.stderr)
    return int(total)
