"""Recall's algorithm, written once: candidates, relevance, the gates, the ranking, the confidence.

Pure functions, no I/O (docs/recall.md), but for `settle`, which reads embeddings through the
function it is given. `MemoryService.recall` runs the searches, reads the access counts and calls
these in order; `calibrate` calls the same ones to predict what recall answers, so
the two cannot drift apart:

    found = Found(nearest=..., keyword=...)                    # what the two searches returned
    scored = candidates(retrieval, terms, found, readable, conversation)
    judged = judge(model, retrieval, query, terms, found, readable, scored)  # the second look: probabilities
    gated = gate(retrieval, judged.candidates, floor, mode, model)  # the floor, then the mode's keep rule
    ranked = rank(gated.keeping, stats, gated.top, mode, at)   # the composite score, best first
    shown = await settle(retrieval, ranked[:limit], gated.relevant, terms, found.keyword, read)  # newest first
    label = confidence(retrieval, shown.results, gated.relevant, terms, found.keyword, high, shown.near, model)

How the embedding and the keyword index combine into one relevance is core/fusion.py; the
probability that a candidate answers (the second stage, under hybrid retrieval) is
core/judgment.py; the composite score and its parts are core/ranking.py.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_memory.core import fusion, judgment, ranking, supersede
from mcp_memory.core.fusion import Candidate
from mcp_memory.core.ids import parse_iso
from mcp_memory.core.keywords import KeywordAnswer, bm25_scores, coverage
from mcp_memory.core.model import EMPTY_STATS, RETRIEVALS, AccessStats, Confidence, Hit, Memory, Mode, Ranked, Retrieval

if TYPE_CHECKING:  # numpy loads with the first vector
    import numpy as np

    from mcp_memory.core.ports import Embedder, VectorStore

__all__ = [
    "DENSE",
    "HYBRID",
    "KEYWORD",
    "Candidate",
    "Found",
    "Gated",
    "Judging",
    "RetrievalMode",
    "Settled",
    "candidates",
    "confidence",
    "embedding_input",
    "gate",
    "high_reach",
    "judge",
    "rank",
    "read_vectors",
    "rivals",
    "settle",
    "retrieval_mode",
]


# --------------------------------------------------------------------------- the retrieval


@dataclass(frozen=True, slots=True)
class RetrievalMode:
    """How recall finds and scores its candidates (the setting RECALL_RETRIEVAL)."""

    name: Retrieval
    #: Searches the embedding's nearest neighbours (and the floor applies) ...
    embedding: bool
    #: ... and the keyword index (and the keyword evidence decides confidence).
    keywords: bool
    #: What the floor and the HIGH mark read, in words (calibrate's report).
    reads: str

    @property
    def fused(self) -> bool:
        """Both signals, added into one relevance (core/fusion.py)."""
        return self.embedding and self.keywords

    def floor(self, floor: float) -> float:
        """The floor the gate applies: none without the embedding (every keyword hit is a candidate)."""
        return floor if self.embedding else 0.0

    def relevance(self, cosine: float, keyword: float, readable: float, reach: float) -> float:
        """One candidate's relevance from its cosine and keyword score (fusion.hybrid_relevance)."""
        if not self.keywords:
            return cosine
        if not self.embedding:
            return keyword
        return fusion.hybrid_relevance(cosine, keyword, readable, reach)

    def __str__(self) -> str:
        return self.name


HYBRID = RetrievalMode(
    "hybrid",
    embedding=True,
    keywords=True,
    reads=f"relevance = cosine + {fusion.KEYWORD_WEIGHT:g} × keyword (RECALL_RETRIEVAL=hybrid; the weight is compiled in)",
)
DENSE = RetrievalMode("dense", embedding=True, keywords=False, reads="relevance = the cosine (RECALL_RETRIEVAL=dense)")
KEYWORD = RetrievalMode(
    "keyword", embedding=False, keywords=True, reads="relevance = the keyword score (RECALL_RETRIEVAL=keyword)"
)
_MODES = {m.name: m for m in (HYBRID, DENSE, KEYWORD)}


def retrieval_mode(retrieval: Retrieval | RetrievalMode) -> RetrievalMode:
    """The retrieval named `retrieval` (one of RETRIEVALS); ValueError names a wrong one."""
    if isinstance(retrieval, RetrievalMode):
        return retrieval
    try:
        return _MODES[retrieval]
    except (KeyError, TypeError):
        raise ValueError(f"retrieval must be one of {', '.join(RETRIEVALS)}, got {retrieval!r}") from None


def embedding_input(text: str) -> str:
    """What is embedded for `text`, by remember and recall alike: its NFKC form. A tokenizer reads
    full-width letters and ligatures (ｐｙｔｈｏｎ, ﬁle) as unknown words, so the same fact typed
    with them would land far away; plain text is unchanged."""
    return unicodedata.normalize("NFKC", text)


async def read_vectors(
    store: VectorStore, embedder: Embedder, tenant: str, memories: Sequence[Memory]
) -> dict[str, np.ndarray]:
    """These memories' embeddings for the `near` rule (core/supersede.py): the store's own (no
    embedding call), or, from a store that keeps no readable vectors, computed again from their
    texts. What `settle` reads through, for recall and calibrate alike."""
    ids = [m.id for m in memories]
    if not ids:
        return {}
    vectors = await store.vectors(tenant, ids)
    if vectors is None:
        texts = [embedding_input(m.content) for m in memories]
        vectors = dict(zip(ids, await embedder.embed(texts)))
    return vectors


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True, slots=True)
class Found:
    """What recall's two searches returned: the nearest memories by cosine, and the keyword
    index's answer (None when the keyword index was not searched)."""

    nearest: Sequence[Hit] = ()
    keyword: KeywordAnswer | None = None


def candidates(
    retrieval: RetrievalMode,
    terms: Sequence[str],
    found: Found,
    readable: float = 1.0,
    conversation: str | None = None,
) -> list[Candidate]:
    """Every candidate of either search once, with its cosine, keyword score and relevance,
    keeping those visible to `conversation` (nearest first, then the keyword hits, in store order).

    Dense scores by the cosine alone, keyword by the keyword score alone (over the keyword hits
    only); hybrid adds them, the cosine weighed by `readable` (fusion.readable_share) and the
    keyword evidence by how far the query's words are held at all (fusion.keyword_reach).
    """
    pool: dict[str, Hit] = {}
    for hit in found.nearest if retrieval.embedding else ():
        pool.setdefault(hit.memory.id, hit)
    answer = found.keyword if retrieval.keywords else None
    for hit in answer.hits if answer is not None else ():
        pool.setdefault(hit.memory.id, hit)
    if answer is not None:
        scores = bm25_scores(terms, {i: h.memory.content for i, h in pool.items()}, answer.stats)
        dense_top = readable * max((h.similarity for h in found.nearest), default=0.0) if retrieval.fused else 0.0
        reach = fusion.keyword_reach(terms, answer.stats, dense_top)
    else:
        scores, reach = {}, 0.0
    out = []
    for memory_id, hit in pool.items():
        keyword = scores.get(memory_id, 0.0)
        relevance = retrieval.relevance(hit.similarity, keyword, readable, reach)
        out.append(Candidate(hit.memory, hit.similarity, keyword, relevance))
    return [c for c in out if c.memory.visible_to(conversation)]


# --------------------------------------------------------------------------- the gates


@dataclass(frozen=True, slots=True)
class Gated:
    """The candidates through recall's two gates."""

    #: Every visible candidate.
    candidates: Sequence[Candidate]
    #: Those above zero and at or above the floor: what the confidence compares the top with.
    relevant: Sequence[Candidate]
    #: Those the mode keeps: what is ranked.
    keeping: Sequence[Candidate]
    #: The best relevance among the relevant (0 when none is).
    top: float
    #: Whether the most probable candidate fell below the model's floor: nothing stored answers
    #: the question (then nothing is kept).
    unanswered: bool = False

    @property
    def gated(self) -> int:
        """How many candidates the floor and the mode's gate dropped."""
        return len(self.candidates) - len(self.keeping)

    @property
    def dropped(self) -> tuple[Candidate, ...]:
        """The candidates the floor and the mode's gate dropped, in candidate order."""
        kept = {c.memory.id for c in self.keeping}
        return tuple(c for c in self.candidates if c.memory.id not in kept)


@dataclass(frozen=True, slots=True)
class Judging:
    """The candidates after the second look, and what weighed most for the most probable."""

    candidates: list[Candidate]
    reasons: tuple[judgment.Reason, ...] = ()


def judge(
    model: judgment.Model | None,
    retrieval: RetrievalMode,
    query: str,
    terms: Sequence[str],
    found: Found,
    readable: float,
    scored: Sequence[Candidate],
) -> Judging:
    """The second look at the top (core/judgment.py): under hybrid retrieval, the SECOND_LOOK most
    relevant candidates, each with the probability that it answers the question, most probable
    first (the rest are left out: they could not be shown). Without a model, or under dense or
    keyword retrieval, the candidates as they are."""
    if model is None or not retrieval.fused or not scored:
        return Judging(list(scored))
    shown = sorted(scored, key=lambda c: c.relevance, reverse=True)[: judgment.SECOND_LOOK]
    stats = found.keyword.stats if found.keyword is not None else None
    judged = model.judge(query, terms, stats, readable, shown)
    probabilities = judged.probabilities.tolist()  # floats once, not a numpy scalar per candidate
    ordered = [_judged(shown[i], probabilities[i]) for i in judged.order.tolist()]
    return Judging(ordered, judged.reasons)


def _judged(candidate: Candidate, probability: float) -> Candidate:
    """`candidate` with its probability (built directly: dataclasses.replace costs more, per candidate)."""
    return Candidate(candidate.memory, candidate.similarity, candidate.keyword, candidate.relevance, probability)


def gate(
    retrieval: RetrievalMode,
    scored: Sequence[Candidate],
    floor: float,
    mode: Mode | float,
    model: judgment.Model | None = None,
) -> Gated:
    """What the mode keeps of the candidates.

    With probabilities (`judge`): when no candidate reaches the relevance floor, or the most
    probable is below the model's floor, nothing is kept (nothing stored answers the question);
    else precision mode keeps the candidates from the MEDIUM band up (and always the most
    probable), balanced and exploratory every judged one. Without (dense, keyword retrieval): the
    relevance floor (none without the embedding), then those within the mode's ratio of the most
    relevant (`mode` may be that ratio itself)."""
    if model is None or not any(c.probability is not None for c in scored):
        floor = retrieval.floor(floor)
        relevant = [c for c in scored if c.relevance >= floor and c.relevance > 0]
        top = max((c.relevance for c in relevant), default=0.0)
        ratio = mode if isinstance(mode, float) else ranking.MODE_TABLE[mode].keep_ratio
        keeping = [c for c in relevant if c.relevance >= top * ratio]
        return Gated(scored, relevant, keeping, top)
    # judged: a candidate below the relevance floor may still be shown (a short reply such as
    # "Twenty-nine kilos." answers a question it shares no word with), but only when some candidate
    # reaches it: when nothing is even near the question, nothing stored answers it, however the
    # model reads the rest (it was fitted on tenants with many memories, not on one lone note)
    relevant = list(scored)
    top = max((c.relevance for c in relevant), default=0.0)
    best = max((c.probability or 0.0 for c in relevant), default=0.0)
    near = top >= retrieval.floor(floor) and top > 0
    if not relevant or not near or best < model.bands.floor:
        return Gated(scored, relevant, [], top, unanswered=bool(relevant))
    if mode == "precision":
        keeping = [c for c in relevant if (c.probability or 0.0) >= min(best, model.bands.medium)]
    else:
        keeping = list(relevant)
    return Gated(scored, relevant, keeping, top)


# --------------------------------------------------------------------------- the ranking


def rank(
    keeping: Sequence[Candidate], stats: Mapping[str, AccessStats], top: float, mode: Mode, at: float
) -> list[Ranked]:
    """The composite score of each kept candidate (ranking.composite), best first; ties keep
    their order. `stats`: the access counts (missing ones are zero); `at`: now, in ms."""
    max_access = max((stats.get(c.memory.id, EMPTY_STATS).access_count for c in keeping), default=0)
    most_probable = max((c.probability or 0.0 for c in keeping), default=0.0)
    scored: list[tuple[float, Candidate, AccessStats]] = []
    for hit in keeping:
        s = stats.get(hit.memory.id, EMPTY_STATS)
        usage = ranking.access_score(s.access_count, max_access)
        if hit.probability is not None:
            # the second stage's order: the probability against the most probable's; the model
            # reads a memory's age itself, so recency and trust add nothing (usage breaks ties),
            # and neither is worked out
            rel_sim = ranking.relative_similarity(hit.probability, most_probable)
            score = ranking.composite(mode, rel_sim, 0.0, usage * ranking.usage_band(rel_sim), 0.0)
        else:
            last = parse_iso(s.last_accessed_at) if s.last_accessed_at else parse_iso(hit.memory.created_at)
            trust = ranking.decayed_trust(at, hit.memory.trust_base, last, hit.memory.memory_type, s.access_count)
            rel_sim = ranking.relative_similarity(hit.relevance, top)
            score = ranking.composite(
                mode, rel_sim, ranking.recency_score(at, last), usage * ranking.usage_band(rel_sim), trust
            )
        scored.append((score, hit, s))
    scored.sort(key=lambda r: r[0], reverse=True)  # stable: ties keep store order
    top_score = scored[0][0] if scored else 0.0
    return [
        Ranked(
            hit.memory,
            hit.similarity,
            score,
            ranking.relative_standing(score, top_score),
            s,
            keyword=hit.keyword,
            relevance=hit.relevance,
            probability=hit.probability,
        )
        for score, hit, s in scored
    ]


# --------------------------------------------------------------------------- the confidence


#: Whether two memories (by id) are near: the rule newest-first moves by (core/supersede.py).
Near = Callable[[str, str], bool]
#: Reads the stored embeddings of these memories (by id; one it cannot read is left out).
ReadVectors = Callable[[Sequence[Memory]], Awaitable[Mapping[str, "np.ndarray"]]]


def _not_near(a: str, b: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Settled:
    """The results as recall shows them, and the `near` rule over them and the top's rivals."""

    results: list[Ranked]
    near: Near


async def settle(
    retrieval: RetrievalMode,
    ranked: Sequence[Ranked],
    relevant: Sequence[Candidate],
    terms: Sequence[str],
    answer: KeywordAnswer | None,
    read: ReadVectors,
) -> Settled:
    """The ranked results (already cut to the limit) newest first with their standings as shown
    (supersede.settle), and the `near` rule `confidence` skips the top's restatements by. The
    embeddings come from `read`: the results' (when there are two to compare), then those of the
    top's `rivals` not among them, only when HIGH is judged on a runner-up (keyword evidence) and
    their nearness could change the label."""
    vectors = dict(await read([r.memory for r in ranked])) if len(ranked) >= 2 else {}
    memories = {r.memory.id: r.memory for r in ranked}
    near = supersede.nearness(vectors, memories.values())
    results = supersede.settle(ranked, near)
    if not results or not retrieval.keywords or answer is None:
        return Settled(results, near)
    contenders = rivals(results, relevant, terms)
    missing = [m for m in (results[0].memory, *(c.memory for c in contenders)) if m.id not in vectors]
    if contenders and missing and _unread_rivals_matter(retrieval, results, relevant, terms, answer, near):
        vectors.update(await read(missing))
        memories.update((c.memory.id, c.memory) for c in contenders)
        near = supersede.nearness(vectors, memories.values())
    return Settled(results, near)


def _unread_rivals_matter(
    retrieval: RetrievalMode,
    results: Sequence[Ranked],
    relevant: Sequence[Candidate],
    terms: Sequence[str],
    answer: KeywordAnswer | None,
    near: supersede.Nearness,
) -> bool:
    """Whether reading the rivals' embeddings could change the label: the reach with every
    rival not yet read counted against the top, and with every one skipped, differ (skipping a
    candidate can only raise the reach, so when the two agree, so does the truth)."""

    def unread_skipped(a: str, b: str) -> bool:
        return near(a, b) or not (near.knows(a) and near.knows(b))

    counted = high_reach(retrieval, results, relevant, terms, answer, near)
    return counted != high_reach(retrieval, results, relevant, terms, answer, unread_skipped)


def rivals(results: Sequence[Ranked], relevant: Sequence[Candidate], terms: Sequence[str]) -> list[Candidate]:
    """The relevant candidates that could decide whether the top result stands clear (within
    fusion.MARGIN_HIGH of it in relevance, or, for a longer query, in cosine): the ones whose
    nearness to the top `high_reach` asks about. Without results, none."""
    if not results:
        return []
    top = results[0]
    long_query = len(terms) > fusion.QUESTION_TERMS
    return [
        c
        for c in relevant
        if c.memory.id != top.memory.id
        and (
            not fusion.clear_of(top.relevance, c.relevance)
            or (long_query and not fusion.clear_of(top.similarity, c.similarity))
        )
    ]


def high_reach(
    retrieval: RetrievalMode,
    results: Sequence[Ranked],
    relevant: Sequence[Candidate],
    terms: Sequence[str],
    answer: KeywordAnswer | None,
    near: Near = _not_near,
) -> float:
    """The highest HIGH mark (RECALL_HIGH_SIMILARITY) at which `confidence` labels these results
    HIGH, or 0 when none would: what `calibrate` measures a mark against. It is judged on the top
    result (as shown, newest first) against the other relevant candidates: without keyword
    evidence the top's cosine, else fusion.high_reach. A candidate `near` the top (the same fact
    said again, or an update of it: core/supersede.py) is no rival to it, so the runner-up is the
    best of the others."""
    if not results:
        return 0.0
    top = results[0]
    if not retrieval.keywords or answer is None:
        return top.similarity
    others = [c for c in relevant if c.memory.id != top.memory.id and not near(top.memory.id, c.memory.id)]
    return fusion.high_reach(
        top.relevance,
        max((c.relevance for c in others), default=0.0),
        coverage(terms, top.memory.content, answer.stats),
        terms=len(terms),
        cosine=top.similarity,
        cosine_runner_up=max((c.similarity for c in others), default=0.0),
    )


def confidence(
    retrieval: RetrievalMode,
    results: Sequence[Ranked],
    relevant: Sequence[Candidate],
    terms: Sequence[str],
    answer: KeywordAnswer | None,
    high: float,
    near: Near = _not_near,
    model: judgment.Model | None = None,
) -> Confidence:
    """ "none" without results; with probabilities (`judge`), the band of the answer's probability
    (`answer_probability`); else HIGH when the top result's evidence reaches `high`, MEDIUM below
    (docs/recall.md#confidence)."""
    if not results:
        return "none"
    probability = answer_probability(results)
    if model is not None and probability is not None:
        label: Confidence = model.bands.label(probability)  # type: ignore[assignment]
        return label
    if not retrieval.keywords or answer is None:
        return ranking.confidence(results[0].similarity, high)
    return fusion.label(high_reach(retrieval, results, relevant, terms, answer, near), high)


def answer_probability(results: Sequence[Ranked]) -> float | None:
    """The probability that the answer holds what the question asks: the highest of its results'
    (the first result's, unless newest-first put a newer restatement above it); None without a
    model."""
    known = [r.probability for r in results if r.probability is not None]
    return max(known) if known else None
