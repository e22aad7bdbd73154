"""Ranking math (docs/recall.md, docs/memories.md)."""

from __future__ import annotations

import math

import pytest

from mcp_memory.core.ranking import (
    DAY_MS,
    MODE_TABLE,
    access_score,
    candidate_count,
    composite,
    confidence,
    decayed_trust,
    default_high_similarity,
    percent,
    recency_score,
    relative_similarity,
    relative_standing,
    round_half_up,
)

NOW = 1_782_864_000_000  # 2026-07-01T00:00:00.000Z
MODES = ("precision", "balanced", "exploratory")


def days_ago(days: float) -> float:
    return NOW - days * DAY_MS


# --------------------------------------------------------------------------- recency


def test_recency_is_one_when_just_touched() -> None:
    assert recency_score(NOW, NOW) == 1.0


def test_recency_halves_every_thirty_days() -> None:
    assert recency_score(NOW, days_ago(30)) == pytest.approx(0.5)
    assert recency_score(NOW, days_ago(60)) == pytest.approx(0.25)


def test_a_timestamp_in_the_future_counts_as_just_touched() -> None:
    assert recency_score(NOW, NOW + 5 * DAY_MS) == 1.0


# --------------------------------------------------------------------------- trust


def test_a_conversation_type_memory_loses_three_quarters_of_its_trust_in_sixty_days() -> None:
    assert decayed_trust(NOW, 1.0, days_ago(60), "conversation", 0) == pytest.approx(0.25)


def test_a_project_memory_keeps_more_trust_than_a_conversation_one_of_the_same_age() -> None:
    last = days_ago(60)
    assert decayed_trust(NOW, 1.0, last, "project", 0) > decayed_trust(NOW, 1.0, last, "conversation", 0)


def test_type_half_lives_order_project_reference_pattern_conversation() -> None:
    last = days_ago(90)
    trusts = [decayed_trust(NOW, 1.0, last, t, 0) for t in ("project", "reference", "pattern", "conversation")]
    assert trusts == sorted(trusts, reverse=True)
    assert len(set(trusts)) == 4


def test_a_well_used_pattern_keeps_more_trust_than_an_unused_one() -> None:
    last = days_ago(60)
    assert decayed_trust(NOW, 1.0, last, "pattern", 50) > decayed_trust(NOW, 1.0, last, "pattern", 0)


def test_heavy_use_never_lifts_trust_above_one() -> None:
    assert decayed_trust(NOW, 1.0, NOW, "pattern", 10_000) == 1.0


def test_trust_never_exceeds_its_base() -> None:
    assert decayed_trust(NOW, 0.5, NOW, "pattern", 10_000) <= 0.5
    assert decayed_trust(NOW, 0.5, days_ago(10), "pattern", 10_000) <= 0.5


def test_a_project_memory_ninety_days_old_used_four_times_has_trust_0_82091() -> None:
    # decay 2^(-90/180) = 0.70711, usage 1 + 0.1 ln 5 = 1.16094
    assert 2 ** (-90 / 180) == pytest.approx(0.70711, abs=5e-6)
    assert decayed_trust(NOW, 1.0, days_ago(90), "project", 4) == pytest.approx(0.82091, abs=5e-6)


def test_the_usage_boost_saturates_at_one_and_a_half_from_about_148_accesses() -> None:
    last = days_ago(120)  # pattern half-life 60 days: decay 0.25, so the boost shows uncapped
    assert decayed_trust(NOW, 1.0, last, "pattern", 147) < 0.375
    assert decayed_trust(NOW, 1.0, last, "pattern", 148) == pytest.approx(0.375)
    assert decayed_trust(NOW, 1.0, last, "pattern", 100_000) == pytest.approx(0.375)


def test_an_unknown_type_decays_like_a_project_memory() -> None:
    last = days_ago(90)
    assert decayed_trust(NOW, 1.0, last, "legacy", 0) == decayed_trust(NOW, 1.0, last, "project", 0)


@pytest.mark.parametrize(("now", "last"), [(NOW, math.nan), (math.nan, NOW), (math.nan, math.nan)])
def test_an_unreadable_timestamp_sinks_a_memory_instead_of_poisoning_the_sort(now: float, last: float) -> None:
    recency = recency_score(now, last)
    trust = decayed_trust(now, 1.0, last, "project", 1000)
    assert recency == 0.0
    assert trust == 0.0
    assert not math.isnan(composite("balanced", 1.0, recency, 1.0, trust))


# --------------------------------------------------------------------------- access, similarity, standing


def test_access_score_is_the_share_of_the_busiest_memory() -> None:
    assert access_score(5, 10) == 0.5
    assert access_score(10, 10) == 1.0


def test_access_score_is_capped_at_one() -> None:
    assert access_score(20, 10) == 1.0


def test_access_score_is_zero_when_nothing_was_ever_used() -> None:
    assert access_score(0, 0) == 0.0


def test_relative_similarity_is_measured_against_the_top_hit() -> None:
    assert relative_similarity(0.4, 0.4) == 1.0
    assert relative_similarity(0.2, 0.4) == 0.5


def test_relative_similarity_is_zero_without_a_positive_top() -> None:
    assert relative_similarity(0.2, 0.0) == 0.0
    assert relative_similarity(-0.1, -0.05) == 0.0


def test_relative_standing_never_increases_as_the_score_falls() -> None:
    scores = [1.0, 0.9, 0.825, 0.5, 0.1, 0.0]
    standings = [relative_standing(s, scores[0]) for s in scores]
    assert standings[0] == 1.0
    assert standings == sorted(standings, reverse=True)


def test_relative_standing_is_zero_without_a_positive_top_score() -> None:
    assert relative_standing(0.5, 0.0) == 0.0


# --------------------------------------------------------------------------- composite


@pytest.mark.parametrize("mode", MODES)
def test_composite_rises_with_similarity_in_every_mode(mode: str) -> None:
    scores = [composite(mode, sim, 0.5, 0.5, 0.5) for sim in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert scores == sorted(scores)
    assert len(set(scores)) == len(scores)


def test_precision_weighs_similarity_most_and_exploratory_least() -> None:
    gain = {m: composite(m, 1.0, 0, 0, 0) - composite(m, 0.0, 0, 0, 0) for m in MODES}
    assert gain["precision"] > gain["balanced"] > gain["exploratory"]
    assert {m: MODE_TABLE[m].w_sim for m in MODES} == {"precision": 0.85, "balanced": 0.70, "exploratory": 0.50}


def test_a_better_match_beats_a_fresher_one_in_balanced_mode() -> None:
    better = composite("balanced", relative_similarity(0.4, 0.4), 0.0, 0.0, 1.0)
    fresher = composite("balanced", relative_similarity(0.15, 0.4), 1.0, 0.0, 1.0)
    assert better == pytest.approx(0.8)
    assert fresher == pytest.approx(0.5625)
    assert better > fresher


def test_two_fresh_unused_memories_score_one_and_0_825() -> None:
    top = 0.4
    scores = [
        composite(
            "balanced",
            relative_similarity(sim, top),
            recency_score(NOW, NOW),
            access_score(0, 0),
            decayed_trust(NOW, 1.0, NOW, "project", 0),
        )
        for sim in (0.4, 0.3)
    ]
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] == pytest.approx(0.825)
    assert confidence(0.4, default_high_similarity(0.1)) == "high"


# --------------------------------------------------------------------------- candidates


@pytest.mark.parametrize(
    ("limit", "count"), [(1, 30), (5, 30), (10, 30), (11, 33), (20, 60), (33, 99), (34, 100), (100, 100)]
)
def test_recall_asks_the_store_for_at_least_30_and_at_most_100_candidates(limit: int, count: int) -> None:
    assert candidate_count(limit) == count


# --------------------------------------------------------------------------- confidence (docs/recall.md)


def test_no_result_means_low_confidence() -> None:
    assert confidence(None, default_high_similarity(0.1)) == "none"


@pytest.mark.parametrize(("similarity", "label"), [(0.33, "high"), (0.15, "medium"), (0.9, "high")])
def test_confidence_with_the_default_floor(similarity: float, label: str) -> None:
    assert confidence(similarity, default_high_similarity(0.1)) == label


def test_a_similarity_of_exactly_three_times_the_default_floor_is_high() -> None:
    assert confidence(0.3, default_high_similarity(0.1)) == "high"
    assert confidence(0.29, default_high_similarity(0.1)) == "medium"


def test_high_confidence_is_reachable_with_a_floor_of_0_7_under_a6() -> None:
    # The reference demanded 3 × 0.7 = 2.1 (unreachable, so "medium"); this project caps it at (1 + 0.7) / 2.
    high = default_high_similarity(0.7)
    assert high == pytest.approx(0.85)
    assert confidence(0.9, high) == "high"
    assert confidence(0.84, high) == "medium"


@pytest.mark.parametrize(("floor", "high"), [(0.1, 0.3), (0.2, 0.6), (0.5, 0.75), (1.0, 1.0)])
def test_the_default_high_similarity_is_three_times_the_floor_capped_halfway_to_one(floor: float, high: float) -> None:
    assert default_high_similarity(floor) == high


def test_an_explicit_high_similarity_is_used_as_given() -> None:
    assert confidence(0.5, 0.5) == "high"
    assert confidence(0.49, 0.5) == "medium"


# --------------------------------------------------------------------------- rounding (docs/memories.md)


@pytest.mark.parametrize(("value", "rounded"), [(12.5, 13), (0.5, 1), (2.5, 3), (1.49, 1), (0.0, 0), (99.5, 100)])
def test_round_half_up_rounds_halves_up_not_to_even(value: float, rounded: int) -> None:
    assert round_half_up(value) == rounded


@pytest.mark.parametrize(
    ("fraction", "shown"), [(1.0, 100), (0.8, 80), (0.125, 13), (0.005, 1), (0.995, 100), (0.0, 0), (0.825, 83)]
)
def test_percent_shows_a_fraction_as_a_whole_percentage_rounded_half_up(fraction: float, shown: int) -> None:
    assert percent(fraction) == shown


# --------------------------------------------------------------------------- dedup math (docs/remember.md)

from mcp_memory.core.ranking import DEDUP_SIMILARITY, word_overlap  # noqa: E402
from tests.core.dedup_pairs import is_duplicate  # noqa: E402


def test_word_overlap_is_the_jaccard_of_the_word_sets() -> None:
    # {the, cache, is, warm} vs {the, cache, is, cold}: 3 shared of 5 distinct
    assert word_overlap("The cache is warm", "the CACHE is cold") == pytest.approx(3 / 5)


def test_word_overlap_ignores_repeats_and_punctuation() -> None:
    assert word_overlap("deploy, deploy; DEPLOY!", "deploy") == 1.0


def test_word_overlap_counts_numbers_as_words() -> None:
    assert word_overlap("retry 3 times", "retry 5 times") == pytest.approx(2 / 4)


def test_word_overlap_of_an_empty_text_is_zero() -> None:
    assert word_overlap("", "anything") == 0.0
    assert word_overlap("!!! ---", "anything") == 0.0


def test_word_overlap_works_on_korean_text() -> None:
    same = "배포는 매주 화요일 오전에 진행한다"
    assert word_overlap(same, same) == 1.0
    assert word_overlap(same, "결제 서비스는 웹훅을 세 번 재시도한다") == 0.0
    assert word_overlap(same, "배포는 매주 목요일 오전에 진행한다") == pytest.approx(4 / 6)


def test_a_duplicate_needs_both_the_cosine_and_half_the_words() -> None:
    text = "Staging is restored from the Monday snapshot"
    assert is_duplicate(DEDUP_SIMILARITY, text, text)
    assert not is_duplicate(0.9199, text, text)
    assert not is_duplicate(0.99, text, "Invoices are archived after ninety days")
    # Jaccard exactly 0.5 (3 shared of 6) is enough; 2 of 7 is not
    assert is_duplicate(0.95, "alpha beta gamma", "alpha beta gamma delta epsilon zeta")
    assert not is_duplicate(0.95, "alpha beta gamma", "alpha beta delta epsilon zeta eta")


# --------------------------------------------------------------------------- usage only breaks ties (bench/RESULTS.md)

from mcp_memory.core.ranking import USAGE_BAND, usage_band  # noqa: E402


def test_usage_counts_only_for_a_relevance_equal_to_the_top() -> None:
    assert usage_band(1.0) == 1.0
    assert usage_band(1.0 - USAGE_BAND / 10) == 1.0  # float noise is still a tie
    assert usage_band(1.0 - USAGE_BAND) == 0.0
    assert usage_band(0.999999) == 0.0
    assert usage_band(0.5) == 0.0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rel_sim", [0.5, 0.95, 0.99, 0.999, 0.99999])
def test_the_busiest_memory_never_outscores_a_more_relevant_unused_one(mode: str, rel_sim: float) -> None:
    unused = composite(mode, 1.0, 1.0, access_score(0, 200) * usage_band(1.0), 1.0)
    busiest = composite(mode, rel_sim, 1.0, access_score(200, 200) * usage_band(rel_sim), 1.0)
    assert busiest < unused


def test_usage_still_orders_memories_of_equal_relevance() -> None:
    used = composite("balanced", 1.0, 1.0, access_score(3, 3) * usage_band(1.0), 1.0)
    unused = composite("balanced", 1.0, 1.0, access_score(0, 3) * usage_band(1.0), 1.0)
    assert used > unused
