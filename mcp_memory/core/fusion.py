"""How recall combines the embedding and the keyword index (pure functions, no I/O).

Candidates come from both: the nearest memories by cosine, and the memories holding the
query's rarer words (a memory the embedding ranks 300th is still reachable by a rare name).
Every candidate is then scored the same way:

    relevance = cosine + KEYWORD_WEIGHT × keyword

where `keyword` is BM25 over the candidates, divided by what a memory holding every query
term once would score (core/keywords.py): about 1 when all of the query's words are there,
a small fraction when only its common ones are, since each term counts by how rare it is
(its idf). A plain rank fusion (RRF) would give a weak keyword list as much say as a strong
embedding list; this adds keyword evidence in proportion to how discriminative it is.

KEYWORD_WEIGHT was chosen on the plateau measured by bench/fusion_probe.py on MADial-Bench
(R@5 within a point of its best from 0.4 to 1.0; RESULTS.md), not at its peak.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcp_memory.core.keywords import KeywordAnswer, bm25_scores
from mcp_memory.core.model import Confidence, Hit, Memory, Retrieval

KEYWORD_WEIGHT = 0.6


@dataclass(frozen=True, slots=True)
class Candidate:
    memory: Memory
    similarity: float
    keyword: float
    relevance: float


def fuse(
    retrieval: Retrieval, terms: Sequence[str], dense: Sequence[Hit], answer: KeywordAnswer | None
) -> list[Candidate]:
    """Every candidate of either signal once, with its cosine, keyword score and relevance.

    `dense` mode scores by cosine alone, `keyword` mode by the keyword score alone (over the
    keyword hits only); `hybrid` adds them.
    """
    pool: dict[str, Hit] = {}
    for hit in dense if retrieval != "keyword" else ():
        pool.setdefault(hit.memory.id, hit)
    for hit in answer.hits if answer is not None and retrieval != "dense" else ():
        pool.setdefault(hit.memory.id, hit)
    if answer is not None and retrieval != "dense":
        scores = bm25_scores(terms, {i: h.memory.content for i, h in pool.items()}, answer.stats)
    else:
        scores = {}
    out = []
    for memory_id, hit in pool.items():
        keyword = scores.get(memory_id, 0.0)
        if retrieval == "dense":
            relevance = hit.similarity
        elif retrieval == "keyword":
            relevance = keyword
        else:
            relevance = hit.similarity + KEYWORD_WEIGHT * keyword
        out.append(Candidate(hit.memory, hit.similarity, keyword, relevance))
    return out


#: HIGH needs the top result to hold this share of the query's information (keywords.coverage) ...
COVERAGE_HIGH = 0.7
#: ... and to stand this far above the next candidate's relevance.
MARGIN_HIGH = 0.1


def confidence(top: float, runner_up: float, covered: float, high: float) -> Confidence:
    """HIGH when the top result is relevant (`high`), holds most of what the query names, and
    stands clear of the next candidate; MEDIUM otherwise.

    Measured (bench/confidence_probe.py, RESULTS.md): a high cosine alone is no sign of a right
    answer when the question names something nothing stored says — a near miss ("MySQL 8.4" where
    8.0 is stored) is as similar as the answer would be. What separates them is whether the
    question's distinctive words are there, and whether one memory stands out.
    """
    if top >= high and covered >= COVERAGE_HIGH and top - runner_up >= MARGIN_HIGH:
        return "high"
    return "medium"
