"""The SQLite keyword index: an FTS5 table over the tokens of core/keywords.py, counted per tenant.

Each memory's token string (`keywords.index_text`) is written in the same transaction as the
memory, and removed with it. The tokens are made in Python, so SQLite, PostgreSQL and the
in-memory store index exactly the same words; FTS5's tokenizer is told to keep the identifier
punctuation our tokens carry (`pg_hba.conf` stays one token).

Three tables:

- `keyword_tenants`: one row per tenant with a small integer key, its number of indexed memories
  and their total token count (BM25's N and average length, kept up to date by every write);
- `keyword_docs`: one row per memory (its tenant key, id, conversation when it is a conversation
  note, token count), numbered by `entry`;
- `keyword_fts`: the tokens, each written as `<tenant key>:<token>`, so the index holds every
  tenant's words apart: `keyword_vocab` (fts5vocab) gives a term's document count *in this
  tenant*, and a search for a tenant's terms can only walk that tenant's postings.

So one tenant's memories never change another's counts, the keyword candidates or their order:
recall in tenant A reads nothing of tenant B, not even how common a word is there. Counts are per
tenant, over all of its memories whatever their scope (as on PostgreSQL and in the in-memory store):
a conversation's notes count in its tenant's statistics, but only a caller who may see a note can
ever get it back.

A memory's FTS5 rowid carries what ranking needs: `length << 33 | entry << 1 | note`, its token
count, its entry, and 1 for a conversation note. So candidates are ranked from the postings alone,
in one statement, by BM25 as FTS5's own bm25() computes it (its idf, k1 = 1.2, b = 0.75) but with
the tenant's N and average length instead of the whole file's: no lookup per posting, neither in
`memories` (the wide table with the embeddings) nor in `keyword_docs`, except a conversation
note's when the caller has a conversation (to compare them). Only the `top_k` chosen are looked up
for their ids. A term held by 5 % of 100,000 memories is 5,000 postings: a lookup each cost more
than the vector scan.

Why tables of their own rather than an external-content table over `memories`: external content is
joined by rowid, and `memories` has no INTEGER PRIMARY KEY, so a VACUUM may renumber its rowids and
silently point the index at other memories; a contentless table that can delete rows needs SQLite
3.43. So the index keeps its own copy of the tokens.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from collections.abc import Sequence

from mcp_memory.core import keywords

#: The punctuation our tokens carry inside them (core/keywords.py `_EDGE`), kept by the tokenizer.
_TOKENCHARS = "._:/-@#$%+\\_"
#: The Unicode categories FTS5 keeps inside a token: everything our tokens can hold, so that it
#: splits only where index_text put a space. unicode61's default (letters, numbers, Co) split
#: words at their combining marks: Hindi सर्वर became सर and वर, and was never found (nor a
#: Bengali word, Arabic with its vowel marks, or a decomposed é).
_CATEGORIES = "L* M* N* P* S* Co Cf"
_TOKENIZE = f"unicode61 remove_diacritics 0 categories '{_CATEGORIES}' tokenchars '{_TOKENCHARS}'"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS keyword_tenants (
        key INTEGER PRIMARY KEY,
        tenant TEXT NOT NULL UNIQUE,
        docs INTEGER NOT NULL DEFAULT 0,
        tokens INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS keyword_docs (
        entry INTEGER PRIMARY KEY,
        tenant_key INTEGER NOT NULL,
        id TEXT NOT NULL,
        conversation TEXT,
        length INTEGER NOT NULL,
        UNIQUE (tenant_key, id)
    )""",
    f'CREATE VIRTUAL TABLE IF NOT EXISTS keyword_fts USING fts5(keywords, tokenize = "{_TOKENIZE}")',
    "CREATE VIRTUAL TABLE IF NOT EXISTS keyword_vocab USING fts5vocab(keyword_fts, 'row')",
)
#: The index of schema 2: one FTS5 table for the whole file, counted across tenants.
OLD_TABLES = ("memories_vocab", "memories_fts")
#: This index's own tables, dropped to be built again when its tokenizer is an older one, or its
#: rowids are (schema 3: without the length).
TABLES = ("keyword_vocab", "keyword_fts", "keyword_docs", "keyword_tenants")
#: Memories indexed per statement batch while an old file is upgraded, and how often it says so.
BACKFILL_BATCH = 2000
PROGRESS_EVERY = 10_000

#: FTS5's bm25() constants, for the candidate order.
_K1 = 1.2
_B = 0.75

#: Bits of an FTS5 rowid (see the module notes): a conversation note's flag, then the entry.
_NOTE = 1
_ENTRY_BITS = 32
_LENGTH_SHIFT = _ENTRY_BITS + 1

_SEARCH = (
    "SELECT f.rowid FROM json_each(?) AS q "
    "JOIN keyword_fts AS f ON f.keyword_fts MATCH q.key "
    "WHERE (f.rowid & 1) = 0 OR (? IS NOT NULL AND EXISTS (SELECT 1 FROM keyword_docs AS d "
    f"WHERE d.entry = (f.rowid >> 1) & {(1 << _ENTRY_BITS) - 1} AND d.conversation = ?)) "
    f"GROUP BY f.rowid ORDER BY sum(q.value) / (? + ? * ((f.rowid >> {_LENGTH_SHIFT}) + 1)) DESC, f.rowid LIMIT ?"
)


def _rowid(entry: int, length: int, conversation: str | None) -> int:
    """The FTS5 rowid of a memory: its length, its entry and whether it is a conversation note."""
    if entry >= 1 << _ENTRY_BITS:
        raise ValueError("the keyword index has numbered 2^32 entries; rebuild it (schema upgrade)")
    return length << _LENGTH_SHIFT | entry << 1 | (_NOTE if conversation is not None else 0)


def phrase(term: str) -> str:
    """`term` as an FTS5 string: data, never query syntax (quotes doubled)."""
    return '"' + term.replace('"', '""') + '"'


def _tenant_key(conn: sqlite3.Connection, tenant: str) -> tuple[int, int, int] | None:
    """The tenant's key, memory count and token count in the index (None: nothing indexed yet)."""
    row = conn.execute("SELECT key, docs, tokens FROM keyword_tenants WHERE tenant = ?", (tenant,)).fetchone()
    return (int(row[0]), int(row[1]), int(row[2])) if row else None


def _new_key(conn: sqlite3.Connection, tenant: str) -> int:
    conn.execute("INSERT OR IGNORE INTO keyword_tenants (tenant) VALUES (?)", (tenant,))
    found = _tenant_key(conn, tenant)
    assert found is not None
    return found[0]


def _tokens(key: int, content: str) -> tuple[str, int]:
    """The FTS5 text of `content` in the tenant `key`, and how many tokens it holds."""
    own = keywords.index_text(content).split()
    return " ".join(f"{key}:{token}" for token in own), len(own)


def remove(conn: sqlite3.Connection, tenant: str, ids: Sequence[str]) -> None:
    """Inside a write transaction: drop these memories' index entries."""
    found = _tenant_key(conn, tenant)
    if found is not None:
        for memory_id in ids:
            _drop(conn, found[0], memory_id)


def _drop(conn: sqlite3.Connection, key: int, memory_id: str) -> None:
    row = conn.execute(
        "SELECT entry, length, conversation FROM keyword_docs WHERE tenant_key = ? AND id = ?", (key, memory_id)
    ).fetchone()
    if row is None:
        return
    entry, length, conversation = row
    conn.execute("DELETE FROM keyword_fts WHERE rowid = ?", (_rowid(entry, length, conversation),))
    conn.execute("DELETE FROM keyword_docs WHERE entry = ?", (entry,))
    conn.execute("UPDATE keyword_tenants SET docs = docs - 1, tokens = tokens - ? WHERE key = ?", (int(length), key))


def write(conn: sqlite3.Connection, tenant: str, memory_id: str, content: str, conversation: str | None) -> None:
    """Inside the write transaction that stores the memory: index its tokens, replacing the entry
    the id had (`conversation`: `visibility_key` of the memory)."""
    key = _new_key(conn, tenant)
    _drop(conn, key, memory_id)
    text, length = _tokens(key, content)
    cursor = conn.execute(
        "INSERT INTO keyword_docs (tenant_key, id, conversation, length) VALUES (?, ?, ?, ?)",
        (key, memory_id, conversation, length),
    )
    entry = int(cursor.lastrowid or 0)
    conn.execute("INSERT INTO keyword_fts (rowid, keywords) VALUES (?, ?)", (_rowid(entry, length, conversation), text))
    conn.execute("UPDATE keyword_tenants SET docs = docs + 1, tokens = tokens + ? WHERE key = ?", (length, key))


def visibility_key(scope: str, conversation: str | None) -> str | None:
    """What `keyword_docs.conversation` holds: None for a project memory; a conversation note's
    conversation ('' when it has none, which no caller matches)."""
    return (conversation or "") if scope == "conversation" else None


class Index:
    """One read of the tenant's counts, then searches against them (inside one read transaction)."""

    def __init__(self, conn: sqlite3.Connection, tenant: str, terms: Sequence[str]) -> None:
        self._conn = conn
        found = _tenant_key(conn, tenant)
        self._key, docs, self._tokens = found if found is not None else (0, 0, 0)
        frequency: dict[str, int] = {}
        if found is not None:
            prefix = f"{self._key}:"
            own = list(dict.fromkeys(terms))
            for start in range(0, len(own), 200):
                chunk = [prefix + t for t in own[start : start + 200]]
                marks = ", ".join("?" * len(chunk))
                for term, doc in conn.execute(f"SELECT term, doc FROM keyword_vocab WHERE term IN ({marks})", chunk):
                    frequency[term[len(prefix) :]] = int(doc)
        #: The tenant's memory count and each term's document count.
        self.stats = keywords.TermStats(docs, frequency)

    def search(self, terms: Sequence[str], top_k: int, conversation: str | None) -> list[str]:
        """The ids of up to `top_k` of the tenant's memories visible to `conversation` holding any
        of `terms`, best BM25 first (visibility before the limit)."""
        docs = self.stats.docs
        if not terms or top_k <= 0 or docs <= 0:
            return []
        weights = {}
        for term in dict.fromkeys(terms):
            held = self.stats.frequency.get(term, 0)
            idf = math.log((docs - held + 0.5) / (held + 0.5))
            weights[phrase(f"{self._key}:{term}")] = idf if idf > 0 else 1e-6  # FTS5's floor
        # A row's length counts one token more than its keywords, as schema 2's rows did with their
        # id column: a one-tenant file orders its candidates as it did before.
        average = (self._tokens + docs) / docs
        conversation = conversation or None
        rowids = [
            row[0]
            for row in self._conn.execute(
                _SEARCH,
                (json.dumps(weights), conversation, conversation, 1 + _K1 * (1 - _B), _K1 * _B / average, top_k),
            )
        ]
        entries = [(rowid >> 1) & ((1 << _ENTRY_BITS) - 1) for rowid in rowids]
        marks = ", ".join("?" * len(entries))
        ids = dict(self._conn.execute(f"SELECT entry, id FROM keyword_docs WHERE entry IN ({marks})", entries))
        return [ids[entry] for entry in entries if entry in ids]


def missing(conn: sqlite3.Connection) -> bool:
    """True when the file has no per-tenant keyword index yet (written by a release before it),
    or one whose tokenizer splits words at their combining marks (made before _CATEGORIES): that
    one is dropped here, inside the start-up transaction, for `build` to make again."""
    docs = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'keyword_docs'").fetchone()
    fts = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'keyword_fts'").fetchone()
    if docs is not None and fts is not None and f"categories '{_CATEGORIES}'" in fts[0]:
        return False
    for table in TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    return True


def build(conn: sqlite3.Connection) -> int:
    """Inside the start-up transaction: drop an older index (schema 2 or 3), create this one and
    index every stored memory; returns how many.

    Says how far it got on stderr every PROGRESS_EVERY memories (counts only: no content and
    no tenant names), so a large file's first start is not mistaken for a hang.
    """
    for table in OLD_TABLES + TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT OR IGNORE INTO keyword_tenants (tenant) SELECT DISTINCT tenant FROM memories")
    tenant_keys = {tenant: int(key) for key, tenant in conn.execute("SELECT key, tenant FROM keyword_tenants")}
    counts: dict[int, list[int]] = {key: [0, 0] for key in tenant_keys.values()}
    (total,) = conn.execute("SELECT count(*) FROM memories").fetchone()
    done = 0
    cursor = conn.execute("SELECT tenant, id, scope, conversation, content FROM memories")
    while batch := cursor.fetchmany(BACKFILL_BATCH):
        docs, texts = [], []
        for n, (tenant, memory_id, scope, conversation, content) in enumerate(batch, start=done + 1):
            key = tenant_keys[tenant]
            text, length = _tokens(key, content)
            visibility = visibility_key(scope, conversation)
            docs.append((n, key, memory_id, visibility, length))
            texts.append((_rowid(n, length, visibility), text))
            counts[key][0] += 1
            counts[key][1] += length
        conn.executemany(
            "INSERT INTO keyword_docs (entry, tenant_key, id, conversation, length) VALUES (?, ?, ?, ?, ?)", docs
        )
        conn.executemany("INSERT INTO keyword_fts (rowid, keywords) VALUES (?, ?)", texts)
        before, done = done, done + len(batch)
        crossed = done // PROGRESS_EVERY > before // PROGRESS_EVERY or done == total
        if total >= PROGRESS_EVERY and crossed:
            print(f"mcp-memory: building the keyword index: {done} of {total} memories", file=sys.stderr)
    conn.executemany(
        "UPDATE keyword_tenants SET docs = ?, tokens = ? WHERE key = ?",
        [(n, length, key) for key, (n, length) in counts.items()],
    )
    return int(total)
