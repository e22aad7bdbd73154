"""The relevance model (core/judgment.py, docs/recall.md#the-probability): its bands, its shipped
weights (reproduced by the bench command), and a lone candidate."""

from __future__ import annotations

import json

import numpy as np

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


def test_an_embedder_without_a_fitted_model_gets_no_probability() -> None:
    assert judgment.load_model("openai/text-embedding-3-small") is None


def test_the_shipped_weights_are_what_the_bench_command_refits_from_the_committed_tables() -> None:
    from bench.quality import judgment_fit as jf

    text = jf.weights_file({p: jf.load_table(p) for p in jf.PROVIDERS})
    assert jf.WEIGHTS.read_text(encoding="utf-8") == text
    shipped = json.loads(text)
    assert shipped["features"] == list(judgment.FEATURES)
    assert set(shipped["models"]) == {"local/all-MiniLM-L6-v2", "local-multilingual/multilingual-e5-small-q4"}


def test_a_lone_candidate_reads_the_typical_gap_not_a_made_up_lead() -> None:
    model = judgment.load_model("local/all-MiniLM-L6-v2")
    assert model is not None
    x = np.zeros((1, len(judgment.FEATURES)))
    row = judgment.top_row(x, np.array([0.0]), np.array([0]), lambda i, j: False)
    assert np.isnan(row[judgment.TOP_FEATURES.index("score_gap")])
    judged = model.judge_features(x, [frozenset()])
    assert 0.0 < float(judged.probabilities[0]) < 1.0
