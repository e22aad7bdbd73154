"""The relevance model (core/judgment.py, docs/recall.md#the-probability): its bands, its shipped
weights (reproduced by the bench command), and a lone candidate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mcp_memory.core import judgment


def test_a_higher_probability_is_never_a_lower_band() -> None:
    order = {"none": 0, "low": 1, "medium": 2, "high": 3}
    for key in ("local/all-MiniLM-L6-v2", "local-multilingual/multilingual-e5-small-q4"):
        model = judgment.load_model(key)
        assert model is not None
        bands = model.bands
        assert 0 < bands.floor <= bands.medium <= bands.high < 1
        labels = [order[bands.label(p)] for p in np.linspace(0, 1, 1001)]
        assert labels == sorted(labels) and labels[0] == 0 and labels[-1] == 3


def test_an_embedder_without_a_fitted_model_gets_none_of_its_own() -> None:
    assert judgment.load_model("openai/text-embedding-3-small") is None


class _Embedder:
    def __init__(self, provider: str, model: str) -> None:
        self.provider, self.model = provider, model


def test_an_embedder_without_a_model_reads_the_agnostic_one_on_its_spread_and_only_then() -> None:
    openai = _Embedder("openai", "text-embedding-3-small")
    assert judgment.model_for(openai) is None  # no spread measured: the rule-based label
    model = judgment.model_for(openai, (0.3, 0.3 + 0.12))
    assert model is not None and model.key == judgment.GENERIC and model.scale == (0.3, 0.42)
    assert judgment.generic_model((0.3, 0.3)) is None  # an empty scale reads nothing
    # a local model keeps its own, whatever scale is given
    own = judgment.model_for(_Embedder("local", "all-MiniLM-L6-v2"), (0.3, 0.42))
    assert own is not None and own.key == "local/all-MiniLM-L6-v2" and own.scale == (0.2, 0.6)


def test_every_feature_is_placed_as_the_agnostic_model_reads_it() -> None:
    """A cosine level does not carry from one embedder's scale to another's, a lead does in units of
    the spread: a feature added to FEATURES must say which it is (bench/quality/judgment_fit.py)."""
    from bench.quality import judgment_fit as jf

    placed = [*jf.LEVELS, *jf.WIDTHS, *jf.UNSCALED]
    assert sorted(placed) == sorted(judgment.FEATURES), (
        "place each feature in judgment_fit.LEVELS, WIDTHS or UNSCALED: "
        f"unplaced {sorted(set(judgment.FEATURES) - set(placed))}, unknown {sorted(set(placed) - set(judgment.FEATURES))}"
    )


def test_the_agnostic_models_bands_are_monotone_and_it_reads_no_absolute_closeness() -> None:
    from bench.quality import judgment_fit as jf

    model = judgment.generic_model((0.3, 0.42))
    assert model is not None
    order = {"none": 0, "low": 1, "medium": 2, "high": 3}
    bands = model.bands
    assert 0 < bands.floor <= bands.medium <= bands.high < 1
    labels = [order[bands.label(p)] for p in np.linspace(0, 1, 1001)]
    assert labels == sorted(labels) and labels[0] == 0 and labels[-1] == 3
    # the levels one embedder's scale does not carry to another's weigh nothing, so moving the
    # floor moves no probability
    for name in jf.LEVELS:
        assert model.ranker.weights[judgment.FEATURES.index(name)] == 0.0
    rng = np.random.default_rng(7)
    x = rng.normal(size=(6, len(judgment.FEATURES)))
    held = [frozenset({str(i)}) for i in range(6)]
    a = judgment.generic_model((0.1, 0.22)).judge_features(x, held)  # type: ignore[union-attr]
    b = model.judge_features(x, held)
    assert np.allclose(a.probabilities, b.probabilities) and list(a.order) == list(b.order)
    assert (0 < b.probabilities).all() and (b.probabilities < 1).all()


def test_the_shipped_weights_are_what_the_bench_command_refits_from_the_committed_tables() -> None:
    from bench.quality import judgment_fit as jf

    text = jf.weights_file({p: jf.load_table(p) for p in jf.PROVIDERS})
    assert jf.WEIGHTS.read_text(encoding="utf-8") == text
    shipped = json.loads(text)
    assert shipped["features"] == list(judgment.FEATURES)
    assert set(shipped["models"]) == {"local/all-MiniLM-L6-v2", "local-multilingual/multilingual-e5-small-q4"}
    assert set(shipped[judgment.GENERIC]) == {"ranker", "calibrator", "bands", "fitted_on"}  # no scale of its own
    assert shipped[judgment.GENERIC]["fitted_on"]["questions"] == sum(
        m["fitted_on"]["questions"] for m in shipped["models"].values()
    )


def test_a_lone_candidate_reads_the_typical_gap_not_a_made_up_lead() -> None:
    model = judgment.load_model("local/all-MiniLM-L6-v2")
    assert model is not None
    x = np.zeros((1, len(judgment.FEATURES)))
    row = judgment.top_row(x, np.array([0.0]), np.array([0]), lambda i, j: False)
    assert np.isnan(row[judgment.TOP_FEATURES.index("score_gap")])
    judged = model.judge_features(x, [frozenset()])
    assert 0.0 < float(judged.probabilities[0]) < 1.0


def test_the_numbers_a_text_writes_are_read_as_written_in_any_language() -> None:
    assert judgment.numbers_in("Upgrade Kubernetes to 1.31 on port 3306으로, by 6월 30일") == {
        "1.31",
        "3306",
        "6",
        "30",
    }
    assert judgment.numbers_in("no digits here") == frozenset()


def test_a_memory_holding_another_number_when_nothing_found_holds_the_one_asked_is_in_conflict() -> None:
    asked = frozenset({"1.31"})
    found = frozenset({"1.29", "1.30", "2024"})
    assert judgment.number_match(asked, frozenset({"1.29", "1.30"}), found) == (1.0, 1.0)  # another version
    assert judgment.number_match(asked, frozenset(), found) == (1.0, 0.0)  # no number at all: lacking, no conflict
    # another memory found holds 1.31: this one lacks it but is no sign that nothing answers
    assert judgment.number_match(asked, frozenset({"1.29"}), found | {"1.31"}) == (1.0, 0.0)
    assert judgment.number_match(asked, frozenset({"1.31", "2024"}), found | {"1.31"}) == (0.0, 0.0)
    assert judgment.number_match(frozenset(), frozenset({"5"}), found) == (0.0, 0.0)  # the question names none
    assert judgment.number_match(frozenset({"3306", "8"}), frozenset({"3306"}), frozenset({"3306"})) == (0.5, 0.0)


def test_a_memory_that_speaks_to_someone_reads_as_a_reply() -> None:
    assert judgment.traits("Congratulations! What kind of soil do you have?").addressed
    assert judgment.traits("Tom: That's rough. Do you at least get some time off now?").addressed
    assert judgment.traits("당신이 말한 그 카페 말이야").addressed
    assert not judgment.traits("Money amounts are stored as integer cents.").addressed
    assert not judgment.traits("Youth football starts in May; 너무 덥다").addressed


@pytest.mark.parametrize(
    ("text", "number", "name", "numbers"),
    [
        ("The standup is on Monday.", True, True, frozenset()),
        ("the cache is warm", False, False, frozenset()),
        ("Bob: the cache is warm", False, False, frozenset()),
        ("Port 5432, since 2024.", True, False, frozenset({"5432", "2024"})),
        ("회의는 다섯 시에 시작한다", True, True, frozenset()),
        ("민수: 내일 보자", True, True, frozenset()),
        ("Minsu: 그 카페 말이야", False, True, frozenset()),
        ("민수: the cache is warm", False, False, frozenset()),
    ],
)
def test_a_texts_number_name_and_numbers_are_read_in_english_and_korean(
    text: str, number: bool, name: bool, numbers: frozenset[str]
) -> None:
    marks = judgment.traits(text)

    assert (marks.number, marks.name, marks.numbers) == (number, name, numbers)


def test_the_number_and_reply_features_of_two_candidates_are_what_their_texts_say() -> None:
    from mcp_memory.core.fusion import Candidate
    from mcp_memory.core.keywords import TermStats
    from mcp_memory.core.model import Memory

    texts = ("Production runs Kubernetes 1.29; staging was upgraded to 1.30.", "Did you see the Kubernetes notes?")
    candidates = [
        Candidate(Memory(id=f"m{i}", tenant="t", content=t, created_at="2026-01-01T00:00:00.000Z"), 0.5, 0.5, 0.5)
        for i, t in enumerate(texts)
    ]
    x = judgment.features(
        "When do we move production to Kubernetes 1.31?",
        ["production", "kubernetes", "1.31"],
        TermStats(2, {"production": 1, "kubernetes": 2, "1.31": 1}),
        1.0,
        candidates,
        (0.1, 0.5),
    )
    column = {name: x[:, i].tolist() for i, name in enumerate(judgment.FEATURES)}
    assert column["number_unmatched"] == [1.0, 1.0]  # neither holds 1.31
    assert column["number_conflict"] == [1.0, 0.0]  # the first holds 1.29 and 1.30 instead
    assert column["addressed"] == [0.0, 1.0]
