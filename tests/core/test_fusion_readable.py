"""The cosine counts only as far as the embedder can read the query (core/fusion.py): for the
share of a query's letters in scripts the model was not trained on, the keyword score stands in
for the cosine."""

from __future__ import annotations

import pytest

from mcp_memory.core import fusion, recall
from mcp_memory.core.keywords import KeywordAnswer, TermStats, held_share, query_terms
from mcp_memory.core.model import Hit, Memory

LATIN = frozenset({"Latin"})


@pytest.mark.parametrize(
    ("query", "share"),
    [
        ("why did we move search to Elasticsearch?", 1.0),
        ("배송 검색을 왜 옮겼어?", 0.0),
        ("포트 8080", 0.0),
        ("8080 3306 --", 1.0),  # no letters: nothing the model cannot read
        ("", 1.0),
        ("MySQL 버전", 5 / 7),  # 5 Latin letters, 2 Hangul
        ("デプロイ server", 6 / 10),
    ],
)
def test_the_readable_share_counts_the_letters_in_the_scripts_the_embedder_reads(query: str, share: float) -> None:
    assert fusion.readable_share(query, LATIN) == pytest.approx(share)


def test_an_embedder_that_declares_no_scripts_reads_every_script() -> None:
    assert fusion.readable_share("배송 검색을 왜 옮겼어?", None) == 1.0
    assert fusion.readable_share("배송 검색", frozenset({"Hangul", "Latin"})) == 1.0


def test_an_unknown_script_name_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="Lattin"):
        fusion.readable_share("hello", frozenset({"Lattin"}))


def memory(memory_id: str, content: str) -> Memory:
    return Memory(memory_id, "acme", content)


def test_an_unreadable_query_ranks_by_its_keywords_and_a_readable_one_by_both() -> None:
    right = memory("right", "배포 서버가 재시작되면 캐시를 비운다")
    noise = memory("noise", "점심 메뉴는 금요일에 정한다")
    terms = query_terms("서버를 재시작")
    stats = TermStats(2, {t: 1 for t in terms if t in {"서버", "재시", "시작", "재시작"}})
    # The model's cosine puts the unrelated memory first; only the keyword index holds the words.
    dense = [Hit(noise, 0.9), Hit(right, 0.1)]
    answer = KeywordAnswer([Hit(right, 0.1)], stats)

    unread = {
        c.memory.id: c for c in recall.candidates(recall.HYBRID, terms, recall.Found(dense, answer), readable=0.0)
    }
    assert unread["noise"].relevance == 0.0  # its cosine is noise, and it holds no query word
    assert unread["right"].relevance == pytest.approx((1 + fusion.KEYWORD_WEIGHT) * unread["right"].keyword)

    read = {
        c.memory.id: c for c in recall.candidates(recall.HYBRID, terms, recall.Found(dense, answer))
    }  # readable=1: as before
    assert read["noise"].relevance == pytest.approx(0.9)
    # 서버를 is held by no memory, and the model reads a close answer of its own (0.9): the keyword
    # evidence counts as far as fusion.keyword_reach says
    reach = 1 - 0.9 * (1 - held_share(terms, stats))
    assert 0 < reach < 1
    assert read["right"].relevance == pytest.approx(0.1 + fusion.KEYWORD_WEIGHT * reach * read["right"].keyword)
    assert read["noise"].relevance > read["right"].relevance


def test_dense_and_keyword_modes_ignore_the_readable_share() -> None:
    hit = Hit(memory("m", "server restart clears the cache"), 0.5)
    terms = query_terms("server restart")
    answer = KeywordAnswer([hit], TermStats(1, {"server": 1, "restart": 1}))
    (dense,) = recall.candidates(recall.DENSE, terms, recall.Found([hit], answer), readable=0.0)
    (keyword,) = recall.candidates(recall.KEYWORD, terms, recall.Found([hit], answer), readable=0.0)
    assert dense.relevance == 0.5
    assert keyword.relevance == keyword.keyword > 0
