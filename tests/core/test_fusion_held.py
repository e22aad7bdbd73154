"""Keyword evidence counts as far as the tenant's memories hold the question's words, when the
embedding has a close answer of its own (core/fusion.py keyword_reach, docs/recall.md#two-signals):
a paraphrase that shares one incidental word with an unrelated memory cannot pull it above the
answer the embedding clearly prefers, while a name or an error code the embedding cannot place
keeps the keywords' full say."""

from __future__ import annotations

import pytest

from mcp_memory.core import fusion, recall
from mcp_memory.core.keywords import KeywordAnswer, TermStats, held_share, query_terms
from mcp_memory.core.model import Hit, Memory


def memory(memory_id: str, content: str) -> Memory:
    return Memory(memory_id, "acme", content)


def fused(terms: list[str], dense: list[Hit], answer: KeywordAnswer) -> dict[str, fusion.Candidate]:
    return {c.memory.id: c for c in recall.candidates(recall.HYBRID, terms, recall.Found(dense, answer))}


def ranked(terms: list[str], dense: list[Hit], answer: KeywordAnswer) -> list[str]:
    return [i for i, c in sorted(fused(terms, dense, answer).items(), key=lambda kv: kv[1].relevance, reverse=True)]


def test_a_weak_partial_keyword_match_does_not_outrank_the_clear_dense_winner() -> None:
    answer_memory = memory("answer", "The backup job retries the upload three times before it pages anyone")
    incidental = memory("incidental", "The nightly standup moved to 9:30")
    terms = query_terms("what keeps the nightly export from stalling halfway?")
    # Of the question's words only "nightly" is stored at all (3 of the tenant's 60 memories).
    stats = TermStats(60, {"nightly": 3})
    dense = [Hit(answer_memory, 0.7), Hit(incidental, 0.35)]
    keyword = KeywordAnswer([Hit(incidental, 0.35)], stats)

    assert ranked(terms, dense, keyword) == ["answer", "incidental"]
    scores = fused(terms, dense, keyword)
    assert scores["incidental"].keyword > 0.9  # against the stored words alone it looks complete
    assert scores["incidental"].relevance < 0.7


def test_a_question_whose_words_are_all_stored_is_found_by_its_identifier_over_a_closer_meaning() -> None:
    named = memory("named", "ECONNREFUSED on api.internal:8443 means the sidecar is not up yet")
    closer = memory("closer", "Connection errors to the internal API are retried with backoff")
    terms = query_terms("ECONNREFUSED api.internal:8443")
    stats = TermStats(60, {t: 1 for t in terms})
    dense = [Hit(closer, 0.55), Hit(named, 0.3)]
    keyword = KeywordAnswer([Hit(named, 0.3)], stats)

    assert held_share(terms, stats) == 1.0
    assert ranked(terms, dense, keyword) == ["named", "closer"]


def test_an_identifier_the_embedding_cannot_place_keeps_its_full_say_beside_unstored_words() -> None:
    named = memory("named", "The ledger worker logs ECONNREFUSED whenever the billing database restarts")
    terms = query_terms("econnrefused again?")
    stats = TermStats(21, {"econnrefused": 1})
    keyword = KeywordAnswer([Hit(named, 0.02)], stats)
    (candidate,) = recall.candidates(recall.HYBRID, terms, recall.Found([Hit(named, 0.02)], keyword))
    assert 0 < held_share(terms, stats) < 0.5  # "again" is stored nowhere
    assert fusion.keyword_reach(terms, stats, 0.02) == pytest.approx(1 - 0.02 * (1 - held_share(terms, stats)))
    assert candidate.relevance > 0.02 + 0.95 * fusion.KEYWORD_WEIGHT * candidate.keyword


def test_the_held_share_is_the_idf_of_the_stored_words_over_the_idf_of_all() -> None:
    stats = TermStats(60, {"nightly": 3})
    assert held_share(["nightly", "export"], stats) == pytest.approx(
        stats.idf("nightly") / (stats.idf("nightly") + stats.idf("export"))
    )
    assert held_share(["export"], stats) == 0.0
    assert held_share([], stats) == 0.0


def test_a_conversation_passed_whole_keeps_its_keywords_full_say() -> None:
    stats = TermStats(60, {"nightly": 3})
    question = [f"word{n}" for n in range(fusion.QUESTION_TERMS - 1)] + ["nightly"]
    conversation = question + ["another"]
    assert fusion.keyword_reach(question, stats, 0.7) < 0.4
    assert fusion.keyword_reach(conversation, stats, 0.7) == 1.0
