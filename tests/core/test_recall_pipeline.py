"""Recall's pipeline (core/recall.py) is the one place the retrieval is told apart, and its steps
say what recall does: the floor and the ratio gate, the ranking by composite score, and the
confidence judged on the top result by that score."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mcp_memory.core import recall
from mcp_memory.core.fusion import Candidate
from mcp_memory.core.ids import iso
from mcp_memory.core.keywords import KeywordAnswer, TermStats
from mcp_memory.core.model import RETRIEVALS, Hit, Memory

PACKAGE = Path(recall.__file__).resolve().parent.parent
NOW = 1_780_000_000_000.0
DAY = 86_400_000.0


def test_no_module_but_the_pipeline_compares_the_retrieval_by_its_name() -> None:
    compared = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(recall.__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Constant) and s.value in RETRIEVALS for s in sides):
                    compared.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert compared == []


def test_a_retrieval_is_found_by_its_name_and_a_wrong_name_is_refused_naming_the_choices() -> None:
    assert [recall.retrieval_mode(name) for name in RETRIEVALS] == [recall.HYBRID, recall.DENSE, recall.KEYWORD]
    with pytest.raises(ValueError, match=r"one of hybrid, dense, keyword, got 'sparse'"):
        recall.retrieval_mode("sparse")  # type: ignore[arg-type]


def memory(memory_id: str, content: str = "text", *, age_days: float = 0.0, conversation: str | None = None) -> Memory:
    return Memory(
        memory_id,
        "acme",
        content,
        created_at=iso(NOW - age_days * DAY),
        scope="conversation" if conversation else "project",
        conversation=conversation,
    )


def candidate(memory_id: str, relevance: float, **kw: float) -> Candidate:
    return Candidate(memory(memory_id, age_days=kw.get("age_days", 0.0)), relevance, 0.0, relevance)


def test_the_gate_drops_what_is_below_the_floor_then_what_is_below_the_ratio_of_the_top() -> None:
    scored = [candidate("top", 0.8), candidate("kept", 0.5), candidate("ratio", 0.45), candidate("floor", 0.2)]
    gated = recall.gate(recall.DENSE, scored, 0.3, 0.6)
    assert [c.memory.id for c in gated.relevant] == ["top", "kept", "ratio"]
    assert [c.memory.id for c in gated.keeping] == ["top", "kept"]
    assert (gated.top, gated.gated) == (0.8, 2)


def test_keyword_retrieval_reads_no_floor_but_still_drops_what_scores_nothing() -> None:
    scored = [candidate("weak", 0.05), candidate("none", 0.0)]
    assert [c.memory.id for c in recall.gate(recall.KEYWORD, scored, 0.3, 0.0).keeping] == ["weak"]
    assert recall.gate(recall.HYBRID, scored, 0.3, 0.0).keeping == []


def test_the_candidates_a_conversation_cannot_see_are_left_out_after_scoring() -> None:
    mine, theirs = memory("mine", conversation="c1"), memory("theirs", conversation="c2")
    found = recall.Found([Hit(mine, 0.5), Hit(theirs, 0.6), Hit(memory("project"), 0.4)])
    assert [c.memory.id for c in recall.candidates(recall.DENSE, [], found, conversation="c1")] == ["mine", "project"]


def test_a_much_newer_memory_nearly_as_relevant_ranks_first_and_the_confidence_is_judged_on_it() -> None:
    old = Memory("old", "acme", "deploy window thursday", created_at=iso(NOW - 365 * DAY))
    new = Memory("new", "acme", "deploy freeze friday", created_at=iso(NOW))
    relevant = [Candidate(old, 0.9, 1.0, 0.9), Candidate(new, 0.7, 0.0, 0.7)]
    results = recall.rank(relevant, {}, 0.9, "balanced", NOW)
    assert [r.memory.id for r in results] == ["new", "old"]
    stats = TermStats(2, {"deploy": 2, "window": 1, "thursday": 1})
    answer = KeywordAnswer([Hit(old, 0.9), Hit(new, 0.7)], stats)
    terms = ["deploy", "window", "thursday"]
    # the new memory holds one of three terms, the common one: not HIGH, although the old one
    # (the top by relevance) holds them all and stands 0.2 clear
    assert recall.high_reach(recall.HYBRID, results, relevant, terms, answer) == 0.0
    assert recall.confidence(recall.HYBRID, results, relevant, terms, answer, 0.5) == "medium"
    alone = recall.rank(relevant[:1], {}, 0.9, "balanced", NOW)
    assert recall.confidence(recall.HYBRID, alone, relevant[:1], terms, answer, 0.5) == "high"


def test_without_keyword_evidence_the_confidence_is_the_top_cosine_against_the_mark() -> None:
    results = recall.rank([candidate("a", 0.65)], {}, 0.65, "balanced", NOW)
    assert recall.high_reach(recall.DENSE, results, [], [], None) == 0.65
    assert recall.confidence(recall.DENSE, results, [], [], None, 0.6) == "high"
    assert recall.confidence(recall.DENSE, results, [], [], None, 0.7) == "medium"
    assert recall.confidence(recall.DENSE, [], [], [], None, 0.6) == "none"


def test_remember_and_recall_embed_the_nfkc_form() -> None:
    assert recall.embedding_input("ｐｙｔｈｏｎ ﬁle") == "python file"
    assert recall.embedding_input("plain text") == "plain text"
