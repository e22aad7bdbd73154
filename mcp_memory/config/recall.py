"""The recall section: the relevance floor, the HIGH mark and the retrieval (docs/recall.md).

A model we ship has a floor and HIGH mark measured by `mcp-memory calibrate --builtin`
(docs/calibration.md); other providers default to DEFAULT_FLOOR and the HIGH rule of
docs/recall.md#confidence: their model is the deployment's choice, and only it can measure it.
RECALL_COSINE_SPREAD, measured by `calibrate` too, gives such an embedder a probability: the
embedder-agnostic relevance model reads its cosines on it (docs/recall.md#an-embedder-without-a-model-of-its-own).
RECALL_MIN_PROBABILITY moves that model's floor to what `calibrate` measured on the deployment's own
cases (docs/calibration.md#a-probability-floor-of-your-own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_memory.config import Env
from mcp_memory.core.errors import ConfigError
from mcp_memory.core.model import RETRIEVALS, Retrieval
from mcp_memory.core.ranking import default_high_similarity
from mcp_memory.embedders import PROVIDERS

DEFAULT_FLOOR = 0.1
#: The calibrated (floor, HIGH mark) of every provider that has one.
CALIBRATED_DEFAULTS: dict[str, tuple[float, float]] = {
    p.name: p.calibrated for p in PROVIDERS.values() if p.calibrated is not None
}
_LOCAL = CALIBRATED_DEFAULTS["local"]  # the default provider's


@dataclass(frozen=True)
class RecallSection:
    """What recall keeps and how sure it says it is."""

    recall_min_similarity: float = _LOCAL[0]
    recall_high_similarity: float = _LOCAL[1]
    #: RECALL_RETRIEVAL: "hybrid" (the default), "dense" or "keyword" (docs/recall.md).
    recall_retrieval: Retrieval = "hybrid"
    #: RECALL_COSINE_SPREAD: how far a right answer's cosine stands above an unrelated memory's for
    #: this embedder (`calibrate` measures it); an embedder with no relevance model of its own
    #: reads the embedder-agnostic one on it, without it the rule-based label.
    recall_cosine_spread: float | None = None
    #: RECALL_MIN_PROBABILITY: the relevance model's floor for this deployment, below which nothing
    #: stored answers (`calibrate` measures it on the operator's own cases); None: the model's own.
    recall_min_probability: float | None = None

    @property
    def agnostic_scale(self) -> tuple[float, float] | None:
        """The scale the embedder-agnostic model reads cosines on, (floor, floor + spread), or
        None without a spread (core/judgment.py `generic_model`)."""
        spread = self.recall_cosine_spread
        return None if spread is None else (self.recall_min_similarity, self.recall_min_similarity + spread)


def relevance(env: Env, provider: str, model: str = "") -> dict[str, Any]:
    """The floor and the HIGH mark: what is set, else the shipped model's calibrated pair; the
    spread and the probability floor when set (`model`: the embedder's, whose bands that floor
    must fit in)."""
    calibrated = PROVIDERS[provider].calibrated
    floor_set = env.raw("RECALL_MIN_SIMILARITY") is not None
    floor = env.ratio("RECALL_MIN_SIMILARITY", calibrated[0] if calibrated else DEFAULT_FLOOR)
    fallback = calibrated[1] if calibrated and not floor_set else default_high_similarity(floor)
    spread = env.ratio("RECALL_COSINE_SPREAD", 1.0) if env.raw("RECALL_COSINE_SPREAD") is not None else None
    return {
        "recall_min_similarity": floor,
        "recall_high_similarity": _high(env, floor, fallback),
        "recall_cosine_spread": spread,
        "recall_min_probability": _min_probability(env, provider, model, spread),
    }


def _min_probability(env: Env, provider: str, model: str, spread: float | None) -> float | None:
    """RECALL_MIN_PROBABILITY, refused when the relevance model this embedder reads (its own, else
    the embedder-agnostic one once a spread is set) cannot hold it below where MEDIUM starts."""
    if env.raw("RECALL_MIN_PROBABILITY") is None:
        return None
    value = env.ratio("RECALL_MIN_PROBABILITY", 1.0)
    from mcp_memory.core import judgment  # only when it is set: most commands read no model here

    fitted = judgment.load_model(judgment.model_key(provider, model))
    if fitted is None and spread is not None:
        fitted = judgment.generic_model((0.0, spread))
    if fitted is not None:
        fitted.with_floor(value)  # ConfigError naming the setting and the limit
    return value


def retrieval(env: Env) -> dict[str, Any]:
    raw = env.raw("RECALL_RETRIEVAL")
    if raw is None:
        return {"recall_retrieval": RecallSection.recall_retrieval}
    for name in RETRIEVALS:
        if raw == name:
            return {"recall_retrieval": name}
    raise ConfigError(f'RECALL_RETRIEVAL must be "hybrid", "dense" or "keyword", got "{raw}"')


def _high(env: Env, floor: float, fallback: float) -> float:
    raw = env.raw("RECALL_HIGH_SIMILARITY")
    if raw is None:
        return fallback
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not floor <= value <= 1:
        raise ConfigError(
            f'RECALL_HIGH_SIMILARITY must be at least RECALL_MIN_SIMILARITY ({floor:g}) and at most 1, got "{raw}"'
        )
    return value
