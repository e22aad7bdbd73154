"""How recall combines the embedding and the keyword index: the formulas (pure functions, no I/O;
core/recall.py applies them to every candidate).

Candidates come from both: the nearest memories by cosine, and the memories holding the
query's rarer words (a memory the embedding ranks 300th is still reachable by a rare name).
Every candidate is then scored the same way:

    relevance = cosine + KEYWORD_WEIGHT × h × keyword

where `keyword` is BM25 over the candidates, divided by what a memory holding once every query
term that some memory holds would score (core/keywords.py): about 1 when those are all there, a
small fraction when only the common ones are, since each term counts by how rare it is (its idf).
`h` (keyword_reach) is `1 − top × (1 − held)`: `held` the idf of the query terms any of the
tenant's memories holds over the idf of all of them, `top` the best candidate's cosine. The terms
no memory holds cost the keyword evidence as far as the embedding has a close answer of its own:
a paraphrase sharing one incidental word with an unrelated memory (a `keyword` near 1 against the
held words alone) does not lift it over an answer the embedding clearly prefers, while a name or
an error code the embedding cannot place keeps its full say. A conversation passed whole (more
than QUESTION_TERMS terms) keeps h = 1: most of its words are not its subject.
A plain rank fusion (RRF) would give a weak keyword list as much say as a strong embedding list;
this adds keyword evidence in proportion to how discriminative it is.

KEYWORD_WEIGHT was chosen on the plateau measured on MADial-Bench, not at its peak
(bench/RESULTS.md#fusion-cosine--w--keyword-not-rrf-benchqualityfusion_probepy).

The cosine only counts as far as the embedder can read the query (`readable_share`): an
English-only model's cosine for a Korean question is noise, so for the share of the query's
letters in scripts it does not read, the keyword score stands in for the cosine:

    relevance = r × cosine + (1 − r) × keyword + KEYWORD_WEIGHT × h × keyword

with r the readable share (1 for a model that reads every script, and for a query without letters).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import regex

from mcp_memory.core.keywords import TermStats, held_share
from mcp_memory.core.model import Confidence, Memory

KEYWORD_WEIGHT = 0.6


@dataclass(frozen=True, slots=True)
class Candidate:
    memory: Memory
    similarity: float
    keyword: float
    relevance: float
    #: The second stage's probability that it answers the question (core/judgment.py); None
    #: where no model judged it (dense or keyword retrieval).
    probability: float | None = None


_LETTER = regex.compile(r"\p{L}")


def readable_share(query: str, scripts: Collection[str] | None) -> float:
    """The share of the query's letters written in `scripts` (Unicode script names such as
    "Latin", "Hangul", "Han"), the scripts the embedder was trained on; None reads every script.

    Only letters count: digits, punctuation and spaces read the same in every script. A query
    with no letters at all is fully readable. "Unknown" script names are refused, so a typo in
    an embedder's declaration cannot silently turn its cosine off.
    """
    if scripts is None:
        return 1.0
    letters = _LETTER.findall(query)
    if not letters:
        return 1.0
    reads = _script_class(frozenset(scripts))
    return sum(1 for ch in letters if reads.match(ch)) / len(letters)


def check_scripts(names: Collection[str]) -> frozenset[str]:
    """`names` as a set of Unicode script names, each one checked; ValueError names a bad one."""
    for name in names:
        try:
            regex.compile(rf"\p{{Script={name}}}")
        except regex.error:
            raise ValueError(f'"{name}" is not a Unicode script name (e.g. Latin, Hangul, Han, Cyrillic)') from None
    return frozenset(names)


_SCRIPT_CLASSES: dict[frozenset[str], regex.Pattern[str]] = {}


def _script_class(scripts: frozenset[str]) -> regex.Pattern[str]:
    if scripts not in _SCRIPT_CLASSES:
        if not scripts:
            _SCRIPT_CLASSES[scripts] = regex.compile(r"(?!)")
        else:
            try:
                _SCRIPT_CLASSES[scripts] = regex.compile(
                    "[" + "".join(rf"\p{{Script={name}}}" for name in sorted(scripts)) + "]"
                )
            except regex.error as exc:
                raise ValueError(f"unknown script name in {sorted(scripts)}: {exc}") from None
    return _SCRIPT_CLASSES[scripts]


def hybrid_relevance(cosine: float, keyword: float, readable: float = 1.0, reach: float = 1.0) -> float:
    """The hybrid relevance of one candidate: the cosine as far as the embedder reads the query,
    the keyword score standing in for the rest, plus the keyword evidence as far as it counts for
    this query (`reach`, keyword_reach: the h of the formula above)."""
    return readable * cosine + (1.0 - readable) * keyword + KEYWORD_WEIGHT * reach * keyword


def keyword_reach(terms: Sequence[str], stats: TermStats, dense_top: float = 0.0) -> float:
    """How far keyword evidence counts for this query: `1 − dense_top × (1 − held)`, with `held`
    the share of the question's information the tenant's memories hold at all
    (keywords.held_share) and `dense_top` the best candidate's cosine (as far as the embedder reads
    the query). The part of a question no memory holds costs its keyword evidence as far as the
    embedding has a close answer of its own: a paraphrase the model reads well is not outranked
    by one incidental shared word, while a name or an error code the model cannot place keeps the
    keywords' full say. A conversation or a pasted text (more than QUESTION_TERMS terms) keeps it
    in full: most of its words are not its subject, so their absence says nothing."""
    if len(terms) > QUESTION_TERMS:
        return 1.0
    return 1.0 - min(1.0, max(0.0, dense_top)) * (1.0 - held_share(terms, stats))


#: HIGH needs the top result to hold this share of the query's information (keywords.coverage) ...
COVERAGE_HIGH = 0.7
#: ... and to stand this far above the next candidate's relevance.
MARGIN_HIGH = 0.1
#: A query with more informative terms than this (distinct words, stop words left out) is a
#: conversation or a pasted text rather than a question: most of its words are not its subject.
QUESTION_TERMS = 20


def confidence(
    top: float,
    runner_up: float,
    covered: float,
    high: float,
    *,
    terms: int = 0,
    cosine: float = 0.0,
    cosine_runner_up: float = 0.0,
) -> Confidence:
    """HIGH when the evidence for the top result is strong; MEDIUM otherwise (docs/recall.md).

    A question (at most QUESTION_TERMS informative terms) is HIGH when its top result is relevant
    (`high`), holds most of what the question names (`covered`), and stands clear of the next
    candidate. A longer query is also HIGH when its meaning alone is decisive: the top result's
    cosine reaches `high` and stands MARGIN_HIGH clear of every other candidate's cosine.

    Measured (bench/quality/confidence_rules.py, bench/RESULTS.md#the-high-rule): a high cosine alone is no sign of a right
    answer when a question names something nothing stored says: a near miss ("MySQL 8.4" where
    8.0 is stored) is as similar as the answer would be, and only the missing words give it away.
    A whole dialogue asked as one query never covers 70 % of its words (they are mostly
    conversation), so coverage cannot judge it; there the clear lead in meaning is the evidence.
    """
    return label(
        high_reach(top, runner_up, covered, terms=terms, cosine=cosine, cosine_runner_up=cosine_runner_up), high
    )


def label(reach: float, high: float) -> Confidence:
    """HIGH when the evidence reaches the HIGH mark `high` (`high_reach`), MEDIUM otherwise."""
    return "high" if reach > 0 and reach >= high else "medium"


def high_reach(
    top: float, runner_up: float, covered: float, *, terms: int = 0, cosine: float = 0.0, cosine_runner_up: float = 0.0
) -> float:
    """The highest HIGH mark (RECALL_HIGH_SIMILARITY) at which `confidence` calls this evidence
    HIGH, or 0 when no mark would: what `calibrate` measures a HIGH mark against."""
    reach = 0.0
    if covered >= COVERAGE_HIGH and _lead(top, runner_up) >= MARGIN_HIGH:
        reach = top
    if terms > QUESTION_TERMS and _lead(cosine, cosine_runner_up) >= MARGIN_HIGH:
        reach = max(reach, cosine)
    return reach


def clear_of(top: float, next_best: float) -> bool:
    """Whether `top` stands MARGIN_HIGH clear of `next_best` (as `high_reach` judges it)."""
    return _lead(top, next_best) >= MARGIN_HIGH


def _lead(top: float, next_best: float) -> float:
    """How far the top stands above the next, rounded to 12 decimals so that float noise does not
    decide a tie with the margin (0.7 − 0.6 is 0.09999999999999998)."""
    return round(top - next_best, 12)
