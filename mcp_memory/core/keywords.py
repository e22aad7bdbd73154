"""The keyword side of recall: one normaliser for every backend, and BM25 over its tokens.

Every backend indexes the same token string (`index_text`), and every query is cut into
the same terms (`query_terms`), so SQLite, PostgreSQL, S3 and the in-memory store agree on
what matches. The backends only find candidates and count documents per term; the score is
computed here, once.

Tokens (all lower-cased, NFKC):

- A word is a run of letters and digits. English words are also indexed by their Snowball
  stem ("servers" and "server" meet).
- An identifier keeps its whole form and its parts: `pg_hba.conf` gives `pg_hba.conf`,
  `pg`, `hba`, `conf`; `api.internal:8443` gives the whole, `api`, `internal`, `8443`;
  `v0.8.2` gives `v0.8.2`, `v0`, `0`, `8`, `2`; `--force` gives `--force` and `force`;
  `E1234` gives `e1234`, `e`, `1234`; `getUserName` gives the whole and `get`, `user`, `name`.
- Korean, Chinese and Japanese words are indexed whole and by overlapping character pairs,
  so a noun is found whatever particle is attached: 서버가, 서버는 and 서버를 all hold 서버.

Tokens never contain whitespace, so a token string is the tokens joined by spaces.
"""

from __future__ import annotations

import functools
import math
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from mcp_memory.core.model import Hit

__all__ = ["KeywordAnswer", "TermStats", "TextKeys", "bm25_scores", "index_text", "query_terms", "text_keys", "tokens"]

#: Characters that end a chunk: whitespace and punctuation that never sits inside an identifier.
_CHUNK = regex.compile(r"""[^\s"'`()\[\]{}<>,;!?=|&*^~\u3000-\u303f\uff01-\uff0f\uff1a-\uff20]+""")
#: Punctuation an identifier may carry inside it (pg_hba.conf, api.internal:8443, a/b, x-y, a@b, #12).
_EDGE = "._:/-@#$%+\\_"
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")
_CAMEL = regex.compile(r"\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\p{N}+|[^\p{Lu}\p{Ll}\p{N}]+")
_LETTERS_DIGITS = regex.compile(r"\p{N}+|[^\p{N}]+")
_CJK = regex.compile(r"[\p{Hangul}\p{Han}\p{Hiragana}\p{Katakana}]")
_LATIN = regex.compile(r"[a-z]+")
#: Longest token kept (longer runs are base64, hashes or minified code: no one searches them).
TOKEN_MAX = 64

#: Query words that carry no keyword evidence (English function words). Documents keep them:
#: an index entry costs little, and a phrase search may want them one day.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves s t don ll ve re d m
    do does did i'm it's what's that's there's let's oh ok okay yes yeah""".split()
)


_per_thread = threading.local()


def _stemmer() -> Any:
    """This thread's stemmer: a Snowball stemmer keeps its word in itself, so two threads
    (a long query is tokenised in a worker, the SQLite store indexes in its own) cannot share one."""
    stemmer = getattr(_per_thread, "stemmer", None)
    if stemmer is None:
        import snowballstemmer  # imported here: only keyword work needs it

        stemmer = _per_thread.stemmer = snowballstemmer.stemmer("english")
    return stemmer


def warm_up() -> None:
    """Import the stemmer now (serve-stdio's warm-up, in a worker thread): a process's first
    recall would otherwise wait for the import (bench/RESULTS.md, "Recall's first stage without
    regular expressions for plain words")."""
    import snowballstemmer  # noqa: F401


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    stemmed: str = _stemmer().stemWord(word)
    return stemmed


def _cjk_pairs(word: str) -> list[str]:
    """Overlapping pairs of the CJK characters in `word` (the word itself when it has one)."""
    out: list[str] = []
    for run in regex.findall(r"[\p{Hangul}\p{Han}\p{Hiragana}\p{Katakana}]+", word):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def _word_tokens(word: str, out: list[str], *, stem: bool = True) -> None:
    """A plain word (letters and digits only, already lower-cased)."""
    if len(word) > TOKEN_MAX:
        return
    out.append(word)
    if _CJK.search(word):
        pairs = _cjk_pairs(word)
        out.extend(p for p in pairs if p != word)
        return
    if stem and _LATIN.fullmatch(word) and len(word) > 3:
        stemmed = _stem(word)
        if stemmed != word:
            out.append(stemmed)


def _parts(raw: str) -> list[str]:
    """The pieces of one run of letters and digits: camelCase and letter/digit boundaries."""
    pieces = [p for p in _CAMEL.findall(raw) if _WORD.fullmatch(p)]
    out: list[str] = []
    for piece in pieces:
        out.extend(_LETTERS_DIGITS.findall(piece) if not _CJK.search(piece) else [piece])
    return out


@functools.lru_cache(maxsize=32_768)
def tokens(text: str) -> tuple[str, ...]:
    """Every token of `text`, repeated as often as it occurs (term frequency counts)."""
    out: list[str] = []
    for chunk in _CHUNK.findall(unicodedata.normalize("NFKC", text)):
        out.extend(_chunk_tokens(chunk))
    return tuple(out)


@functools.lru_cache(maxsize=65_536)
def _chunk_tokens(chunk: str) -> tuple[str, ...]:
    """The tokens of one chunk (a word, an identifier, a --flag), once per chunk: texts share most
    of their words, so a text met for the first time is mostly chunks met before (recall cuts
    every new candidate text: bench/RESULTS.md, "Recall's first stage without regular expressions
    for plain words")."""
    out: list[str] = []
    flag = chunk.startswith("--") and len(chunk) > 2 and chunk[2:3].isalnum()
    core = chunk.strip(_EDGE)
    if not core:
        return ()
    whole = ("--" + core if flag else core).casefold()
    # one ASCII run of letters and digits is what _WORD would find in it: no regular expression
    runs = [core] if core.isascii() and core.isalnum() else _WORD.findall(core)
    if len(runs) == 1 and runs[0] == core:  # a plain word, perhaps camelCase or E1234, or a --flag
        if flag and len(whole) <= TOKEN_MAX:
            out.append(whole)
        _run_tokens(core, out)
        return tuple(out)
    if len(whole) <= TOKEN_MAX:
        out.append(whole)
    for run in runs:
        _run_tokens(run, out)
    return tuple(out)


def _run_tokens(run: str, out: list[str]) -> None:
    """One run of letters and digits: the word, its stem or CJK pairs, and its camel/digit parts.

    Most runs are plain ASCII words (lower-case, capitalised or all capitals) or numbers: those
    take a path of str methods that gives exactly what `_general_run_tokens`' regular expressions
    give them (one part, no CJK), several times faster; recall cuts every candidate text it has
    not met before into tokens (bench/RESULTS.md, "Recall's first stage without regular
    expressions for plain words")."""
    if run.isascii():
        if run.isdigit():
            if len(run) <= TOKEN_MAX:
                out.append(run)
            return
        if run.isalpha() and (run.islower() or run.isupper() or run[1:].islower()):
            lowered = run.lower()
            if len(lowered) > TOKEN_MAX:
                return
            out.append(lowered)
            if len(lowered) > 3 and not run.isupper():
                stemmed = _stem(lowered)
                if stemmed != lowered:
                    out.append(stemmed)
            return
    _general_run_tokens(run, out)


def _general_run_tokens(run: str, out: list[str]) -> None:
    """`_run_tokens` for any run: camelCase, letters with digits, any script."""
    lowered = run.casefold()
    parts = [p.casefold() for p in _parts(run)]
    _word_tokens(lowered, out, stem=len(parts) <= 1 and not run.isupper())
    if len(parts) > 1:
        out.extend(p for p in parts if p != lowered and len(p) <= TOKEN_MAX)


def index_text(text: str) -> str:
    """What a backend indexes for `text`: its distinct tokens, space-separated."""
    return " ".join(dict.fromkeys(tokens(text)))


def query_terms(text: str) -> list[str]:
    """The distinct tokens of a query that can carry keyword evidence (no stop words)."""
    return [t for t in dict.fromkeys(tokens(text)) if t not in STOPWORDS]


# --------------------------------------------------------------------------- scoring

#: BM25's usual constants.
K1 = 1.2
B = 0.75
#: The keyword index is searched for the terms held by at most this share of a tenant's memories
#: (and at least SEARCH_MIN_DOCS of them): the ones that can single a memory out. Commoner terms
#: still score every candidate; they are only not worth an index walk (ranking a term held by a
#: tenth of 100,000 memories costs more than the whole vector scan).
COMMON_SHARE = 0.05
SEARCH_MIN_DOCS = 20
#: At most this many postings are walked per query (the rarest terms first).
POSTINGS_BUDGET = 1000
#: A term held by more memories than this is never walked, whatever the tenant's size: 5 % of
#: 100,000, so nothing changes up to there, and above it a query's walk stays bounded
#: (bench/RESULTS.md#a-large-tenant-on-sqlite-float16-scan-snapshot-files-bounded-keyword-walk-issue-27-2026-12-01).
#: Such a term still scores every candidate the vectors bring.
WALK_MAX_DOCS = 5000


def search_limit(docs: int) -> int:
    """The most memories a term may be held by and still be searched for in the index."""
    return max(SEARCH_MIN_DOCS, int(COMMON_SHARE * docs))


@dataclass(frozen=True, slots=True)
class TermStats:
    """How many memories a tenant has, and how many hold each query term (as a backend counts)."""

    docs: int
    frequency: Mapping[str, int]

    def idf(self, term: str) -> float:
        """BM25's idf, never negative (Lucene's form)."""
        n = self.frequency.get(term, 0)
        return math.log(1.0 + (self.docs - n + 0.5) / (n + 0.5))

    def searchable(self, terms: Iterable[str]) -> list[str]:
        """The terms worth an index walk: held by some memory and by not too many (search_limit),
        rarest first while their postings add up to at most POSTINGS_BUDGET (the rarest always),
        so a query costs about the same in a tenant of 1,000 memories as in one of 1,000,000
        (no term held by more than WALK_MAX_DOCS)."""
        limit = min(search_limit(self.docs), WALK_MAX_DOCS)
        held = sorted(
            (self.frequency.get(t, 0), t) for t in dict.fromkeys(terms) if 0 < self.frequency.get(t, 0) <= limit
        )
        chosen: list[str] = []
        walked = 0
        for count, term in held:
            if chosen and walked + count > POSTINGS_BUDGET:
                break
            chosen.append(term)
            walked += count
        return chosen


@dataclass(frozen=True, slots=True)
class KeywordAnswer:
    """What a store's keyword query found: hits (each with its cosine) and the terms' counts."""

    hits: list[Hit]
    stats: TermStats


def pool_answer(pool: Sequence[Hit], terms: Sequence[str], top_k: int) -> KeywordAnswer:
    """Keyword candidates scored within a pool of vector candidates, for a store without a
    keyword index (S3 Vectors): document counts are the pool's own, so a term is rare or common
    *within the pool*, and nothing outside the pool can be found."""
    frequency: Counter[str] = Counter()
    wanted = set(terms)
    holding: list[Hit] = []
    for hit in pool:
        held = wanted.intersection(text_keys(hit.memory.content).held)
        frequency.update(held)
        if held:
            holding.append(hit)
    stats = TermStats(len(pool), frequency)
    scores = bm25_scores(list(terms), {h.memory.id: h.memory.content for h in holding}, stats)
    holding.sort(key=lambda h: scores[h.memory.id], reverse=True)
    return KeywordAnswer(holding[: max(0, top_k)], stats)


@dataclass(frozen=True, slots=True)
class TextKeys:
    """The keyword side of one stored text: each token's count, how many tokens it has, and the
    set of them. Computed once per text and kept (`text_keys`), so a memory that comes back as a
    candidate again is not cut into tokens again."""

    counts: Counter[str]
    length: int
    held: frozenset[str]


@functools.lru_cache(maxsize=65_536)
def text_keys(text: str) -> TextKeys:
    """`text`'s TextKeys, shared by every query and every scoring that reads it."""
    found = tokens(text)
    counts = Counter(found)
    return TextKeys(counts, len(found), frozenset(counts))


def coverage(terms: Sequence[str], text: str, stats: TermStats) -> float:
    """The share of the query's information `text` holds: the idf of the query terms it holds over
    the idf of all of them. A term no memory holds counts at full rarity, so a question naming
    something nothing stored mentions ("MySQL 8.4" where only 8.0 is stored) is not well covered."""
    held = text_keys(text).held
    total = sum(stats.idf(t) for t in terms)
    return sum(stats.idf(t) for t in terms if t in held) / total if total > 0 else 0.0


def held_share(terms: Sequence[str], stats: TermStats) -> float:
    """The share of the query's information that any of the tenant's memories holds: the idf of
    the query terms some memory holds over the idf of all of them (a term nobody holds at full
    rarity, as in `coverage`). A paraphrase in other words than the facts' has a small share:
    what keywords can say about it, they say about its few incidental words."""
    total = sum(stats.idf(t) for t in dict.fromkeys(terms))
    held = sum(stats.idf(t) for t in dict.fromkeys(terms) if stats.frequency.get(t, 0) > 0)
    return held / total if total > 0 else 0.0


def bm25_scores(terms: Sequence[str], texts: Mapping[str, str], stats: TermStats) -> dict[str, float]:
    """Each text's BM25 score for `terms` divided by what a text holding once every term that some
    memory holds would score: 0 when nothing matches, about 1 when all of those match, more for
    repeated rare terms (fusion.keyword_reach says how much of the query those terms are).

    Dividing by the query's own best makes the score comparable across queries (a long query
    does not outscore a short one by its length), which is what lets it be added to a cosine.
    """
    weights = {t: stats.idf(t) for t in terms if stats.frequency.get(t, 0) > 0}
    if not weights or not texts:
        return {key: 0.0 for key in texts}
    ideal = sum(weights.values())
    counted = {key: text_keys(text) for key, text in texts.items()}
    avg_len = max(1.0, sum(k.length for k in counted.values()) / len(counted))
    out: dict[str, float] = {}
    for key, keys in counted.items():
        counts, length = keys.counts, keys.length
        norm = K1 * (1 - B + B * length / avg_len)
        score = 0.0
        for term, weight in weights.items():
            tf = counts.get(term, 0)
            if tf:
                score += weight * tf * (K1 + 1) / (tf + norm)
        out[key] = score / ideal
    return out
