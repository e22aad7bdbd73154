"""The confidence rule over the fused evidence (docs/recall.md#confidence), at its edges."""

from __future__ import annotations

import pytest

from mcp_memory.core import fusion

HIGH = 0.6
#: A top result whose meaning leads every other candidate by 0.2 but holds little of the query.
MEANING_LEADS = {"cosine": 0.7, "cosine_runner_up": 0.5}


@pytest.mark.parametrize(("terms", "label"), [(3, "medium"), (20, "medium"), (21, "high"), (60, "high")])
def test_only_a_query_of_more_than_twenty_terms_can_be_high_by_meaning_alone(terms: int, label: str) -> None:
    assert fusion.confidence(0.75, 0.6, 0.1, HIGH, terms=terms, **MEANING_LEADS) == label


@pytest.mark.parametrize(
    ("cosine", "runner_up", "label"), [(0.7, 0.6, "high"), (0.7, 0.61, "medium"), (0.59, 0.2, "medium")]
)
def test_a_long_query_needs_the_high_mark_and_a_tenth_of_lead_in_cosine(cosine, runner_up, label) -> None:
    evidence = {"terms": 40, "cosine": cosine, "cosine_runner_up": runner_up}
    assert fusion.confidence(cosine, runner_up, 0.0, HIGH, **evidence) == label


@pytest.mark.parametrize(
    ("top", "runner_up", "covered", "label"),
    [(0.9, 0.8, 0.7, "high"), (0.9, 0.81, 0.9, "medium"), (0.9, 0.5, 0.69, "medium"), (0.59, 0.1, 1.0, "medium")],
)
def test_a_question_needs_the_high_mark_most_of_its_information_and_a_lead(top, runner_up, covered, label) -> None:
    assert fusion.confidence(top, runner_up, covered, HIGH, terms=5, cosine=top, cosine_runner_up=0.0) == label
