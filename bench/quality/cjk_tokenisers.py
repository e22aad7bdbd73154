"""How to index Korean for keyword recall, measured: character pairs (ours), FTS5's trigram
tokenizer, whole words, and PostgreSQL's pg_trgm, on the Korean questions of the project set.

    .venv/bin/python -m bench.quality.cjk_tokenisers [--pg-url URL]

Every option ranks the Korean team's 55 facts (its own tenant, as the service stores them) for
each Korean question, and the report gives R@1/5/10 for the questions written first (93), the
hard paraphrases (22) and all 115. To compare tokenisations and nothing else, every SQLite option
is ranked by FTS5's own bm25() over its own tokens, with the query as an OR of its distinct
tokens; pg_trgm ranks by word_similarity(query, fact) (and, as the other reading, similarity).

The particle probe: for common nouns of the facts (배송, 송장, 기사, …), the noun with each of
its usual particles attached (배송이, 배송은, 배송을, 배송에서, 배송의, …) as a query; gold is
every fact holding the noun. It shows which option finds a noun whatever particle is attached.

Cost, on 5,500 memories (the 55 facts repeated 100 times with a number each, so the index has
realistic postings): index size in bytes (SQLite: the FTS5 shadow tables, from dbstat;
PostgreSQL: the GIN index), time to write the index per memory, and time per query (50 results).

pg_trgm needs a PostgreSQL with the extension: pgserver (the test suite's PostgreSQL) does not
ship it, so pass --pg-url to a server that does (e.g. Debian's postgresql package); without it the
pg_trgm rows are left out.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import time
from collections.abc import Callable, Sequence

from bench.data import project_set_data
from mcp_memory.core import keywords

NOUNS = ("배송", "송장", "기사", "정산", "토픽", "캐시", "배포", "장애", "주소", "택배사", "스테이징", "마이그레이션")
PARTICLES = ("이", "가", "은", "는", "을", "를", "에서", "의", "으로", "로", "도", "만")
SCALE = 100
_RUN = re.compile(r"[\uac00-\ud7a3\u3040-\u30ff\u4e00-\u9fff]+")


def josa(noun: str, particle: str) -> str | None:
    """`noun` + `particle` when the particle fits the noun's last syllable (받침 or not)."""
    last = ord(noun[-1]) - 0xAC00
    final = last % 28 != 0 if 0 <= last < 11172 else False
    pairs = {"이": True, "가": False, "은": True, "는": False, "을": True, "를": False, "으로": True, "로": False}
    if particle in pairs and pairs[particle] != final:
        return None
    return noun + particle


# --------------------------------------------------------------------------- tokenisations


def ours(text: str) -> list[str]:
    return list(keywords.tokens(text))


def whole_words(text: str) -> list[str]:
    """Our tokens with the CJK pairs left out: a Korean word (어절) only as written."""
    out = []
    for token in keywords.tokens(text):
        if _RUN.fullmatch(token) and len(token) == 2 and token not in _words(text):
            continue
        out.append(token)
    return out


def _words(text: str) -> set[str]:
    return {m.group(0).casefold() for m in re.finditer(r"[^\W_]+", text)}


def pairs_only(text: str) -> list[str]:
    """Our tokens with a Korean word of three or more syllables left out (its pairs stay)."""
    return [t for t in keywords.tokens(text) if not (_RUN.fullmatch(t) and len(t) > 2)]


TOKENISERS: dict[str, Callable[[str], list[str]]] = {
    "words and pairs (ours)": ours,
    "pairs only": pairs_only,
    "whole words only (어절)": whole_words,
}

SCHEMA = "CREATE VIRTUAL TABLE {name} USING fts5(body, ext UNINDEXED, tokenize = {tokenize})"
TOKENS_TOKENIZE = "\"unicode61 remove_diacritics 0 tokenchars '._:/-@#$%+\\_'\""


def quoted(terms: Sequence[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in dict.fromkeys(terms))


class TokenIndex:
    """FTS5 over a tokenisation's token string (how the service's SQLite index works)."""

    def __init__(self, db: sqlite3.Connection, name: str, tokenise: Callable[[str], list[str]]) -> None:
        self.db, self.name, self.tokenise = db, name, tokenise
        db.execute(SCHEMA.format(name=name, tokenize=TOKENS_TOKENIZE))

    def add(self, ext: str, text: str) -> None:
        body = " ".join(dict.fromkeys(self.tokenise(text)))
        self.db.execute(f"INSERT INTO {self.name} (body, ext) VALUES (?, ?)", (body, ext))

    def query(self, text: str, limit: int = 50) -> list[tuple[str, float]]:
        terms = [t for t in self.tokenise(text) if t not in keywords.STOPWORDS]
        if not terms:
            return []
        sql = f"SELECT ext, bm25({self.name}) FROM {self.name} WHERE {self.name} MATCH ? ORDER BY bm25({self.name}) LIMIT ?"
        return [(e, -s) for e, s in self.db.execute(sql, (quoted(terms), limit))]


class TrigramIndex:
    """FTS5's built-in trigram tokenizer over the raw text; the query is an OR of its trigrams
    (a word shorter than three characters has none, so it cannot match)."""

    def __init__(self, db: sqlite3.Connection, name: str) -> None:
        self.db, self.name = db, name
        db.execute(SCHEMA.format(name=name, tokenize="'trigram'"))

    def add(self, ext: str, text: str) -> None:
        self.db.execute(f"INSERT INTO {self.name} (body, ext) VALUES (?, ?)", (text, ext))

    def query(self, text: str, limit: int = 50) -> list[tuple[str, float]]:
        grams = [w[i : i + 3] for w in re.findall(r"[^\W_]+", text.lower()) for i in range(len(w) - 2)]
        if not grams:
            return []
        sql = f"SELECT ext, bm25({self.name}) FROM {self.name} WHERE {self.name} MATCH ? ORDER BY bm25({self.name}) LIMIT ?"
        return [(e, -s) for e, s in self.db.execute(sql, (quoted(grams), limit))]


class Combined:
    """Ours plus a trigram index beside it: the sum of the two BM25 scores."""

    def __init__(self, a, b) -> None:
        self.a, self.b = a, b

    def add(self, ext: str, text: str) -> None:
        self.a.add(ext, text)
        self.b.add(ext, text)

    def query(self, text: str, limit: int = 50) -> list[tuple[str, float]]:
        total: dict[str, float] = {}
        for index in (self.a, self.b):
            for ext, score in index.query(text, limit):
                total[ext] = total.get(ext, 0.0) + score
        return sorted(total.items(), key=lambda kv: kv[1], reverse=True)[:limit]


class PgTrgm:
    """pg_trgm: a GIN trigram index; rank by word_similarity(query, body) (or similarity)."""

    def __init__(self, url: str, name: str, function: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.name, self.function = name, function
        self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        self.conn.execute(f"DROP TABLE IF EXISTS {name}")
        self.conn.execute(f"CREATE TABLE {name} (ext text, body text)")
        self.conn.execute(f"CREATE INDEX {name}_trgm ON {name} USING gin (body gin_trgm_ops)")

    def add(self, ext: str, text: str) -> None:
        self.conn.execute(f"INSERT INTO {self.name} VALUES (%s, %s)", (ext, text))

    def query(self, text: str, limit: int = 50) -> list[tuple[str, float]]:
        if self.function == "word_similarity":  # `<%`: uses the index, threshold 0.6 by default: lowered to 0.1
            sql = (
                f"SELECT ext, word_similarity(%s, body) AS s FROM {self.name} WHERE %s <%% body "
                "ORDER BY s DESC LIMIT %s"
            )
        else:
            sql = f"SELECT ext, similarity(body, %s) AS s FROM {self.name} WHERE body %% %s ORDER BY s DESC LIMIT %s"
        with self.conn.transaction():
            self.conn.execute("SET LOCAL pg_trgm.word_similarity_threshold = 0.1")
            self.conn.execute("SET LOCAL pg_trgm.similarity_threshold = 0.05")
            return [(e, s) for e, s in self.conn.execute(sql, (text, text, limit))]

    def size(self) -> int:
        return int(self.conn.execute(f"SELECT pg_relation_size('{self.name}_trgm')").fetchone()[0])

    def close(self) -> None:
        self.conn.execute(f"DROP TABLE IF EXISTS {self.name}")
        self.conn.close()


def fts_size(db: sqlite3.Connection, name: str) -> int:
    row = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE ?", (name + "%",)).fetchone()
    return int(row[0] or 0)


# --------------------------------------------------------------------------- measuring


def recall_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold)


def quality(index, probes: Sequence[tuple[str, set[str]]]) -> tuple[float, float, float]:
    ranked = [[e for e, _ in index.query(q)] for q, _ in probes]
    return tuple(100 * sum(recall_at(r, g, k) for r, (_, g) in zip(ranked, probes)) / len(probes) for k in (1, 5, 10))  # type: ignore[return-value]


def options(pg_url: str | None, tag: str):
    db = sqlite3.connect(":memory:")
    out: dict[str, object] = {}
    for n, (label, tokenise) in enumerate(TOKENISERS.items()):
        out[label] = TokenIndex(db, f"t{n}_{tag}", tokenise)
    out["FTS5 trigram tokenizer"] = TrigramIndex(db, f"tri_{tag}")
    out["ours + trigram index beside it"] = Combined(TokenIndex(db, f"ca_{tag}", ours), TrigramIndex(db, f"cb_{tag}"))
    if pg_url:
        out["pg_trgm word_similarity"] = PgTrgm(pg_url, f"pgw_{tag}", "word_similarity")
        out["pg_trgm similarity"] = PgTrgm(pg_url, f"pgs_{tag}", "similarity")
    return db, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-url", help="a PostgreSQL with pg_trgm available (for the pg_trgm rows)")
    args = parser.parse_args()
    facts, questions = project_set_data.load()
    korean = [f for f in facts if f.project == "bada"]
    asked = [q for q in questions if q.project == "bada" and q.gold]
    groups = {
        "first 93": [(q.text, set(q.gold)) for q in asked if q.kind != "paraphrase-hard"],
        "hard 22": [(q.text, set(q.gold)) for q in asked if q.kind == "paraphrase-hard"],
        "all 115": [(q.text, set(q.gold)) for q in asked],
    }
    particle = []
    for noun in NOUNS:
        gold = {f.id for f in korean if noun in f.text}
        for p in PARTICLES:
            query = josa(noun, p)
            if query and gold:
                particle.append((query, gold))

    db, quality_options = options(args.pg_url, "q")
    for index in quality_options.values():
        for f in korean:
            index.add(f.id, f.text)
    db_cost, cost_options = options(args.pg_url, "c")
    print(
        f"Korean questions: {', '.join(f'{g} {len(p)}' for g, p in groups.items())}; particle probe: "
        f"{len(particle)} queries over {len(NOUNS)} nouns. Cost on {len(korean) * SCALE} memories.\n"
    )
    print(
        "| option | R@1 / R@5 / R@10, first 93 | hard 22 | all 115 | particle probe R@5 | index bytes | write µs/memory | query ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, index in quality_options.items():
        cells = [" / ".join(f"{x:.1f}" for x in quality(index, p)) for p in groups.values()]
        probe = quality(index, particle)[1]
        cost = cost_options[label]
        keywords.tokens.cache_clear()  # every option pays for its own tokenising
        started = time.perf_counter()
        for copy in range(SCALE):
            for f in korean:
                cost.add(f"{f.id}#{copy}", f"{f.text} ({copy})")
        write = (time.perf_counter() - started) / (len(korean) * SCALE) * 1e6
        size = (
            cost.size()
            if isinstance(cost, PgTrgm)
            else sum(fts_size(db_cost, i.name) for i in ((cost.a, cost.b) if isinstance(cost, Combined) else (cost,)))
        )
        probes = [q for q, _ in groups["all 115"]]
        keywords.tokens.cache_clear()
        started = time.perf_counter()
        for q in probes:
            cost.query(q)
        query = (time.perf_counter() - started) / len(probes) * 1e3
        print(f"| {label} | {' | '.join(cells)} | {probe:.1f} | {size:,} | {write:.0f} | {query:.2f} |")
    for index in (*quality_options.values(), *cost_options.values()):
        if isinstance(index, PgTrgm):
            index.close()


if __name__ == "__main__":
    main()
