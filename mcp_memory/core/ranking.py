"""Ranking math (docs/recall.md). Pure functions, no I/O.

Every function is NaN-safe: an unparseable timestamp sinks a memory (recency 0,
trust 0) instead of poisoning a sort.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_memory.core.model import Confidence, MemoryType, Mode

if TYPE_CHECKING:
    import regex

DAY_MS = 86_400_000
MAX_SAFE_INTEGER = 2**53 - 1
CANDIDATE_CAP = 100
RECENCY_HALF_LIFE_DAYS = 30.0
TRUST_WEIGHT = 0.1
HIGH_CONFIDENCE_MULTIPLE = 3.0
TRUST_HALF_LIFE_DAYS: dict[str, float] = {
    "project": 180.0,
    "reference": 120.0,
    "pattern": 60.0,
    "conversation": 30.0,
}


@dataclass(frozen=True, slots=True)
class ModeWeights:
    keep_ratio: float
    limit: int
    w_sim: float
    w_rec: float
    w_acc: float


MODE_TABLE: dict[str, ModeWeights] = {
    "precision": ModeWeights(0.80, 3, 0.85, 0.10, 0.05),
    "balanced": ModeWeights(0.60, 5, 0.70, 0.20, 0.10),
    "exploratory": ModeWeights(0.35, 10, 0.50, 0.30, 0.20),
}
DEFAULT_MODE: Mode = "balanced"


def candidate_count(limit: int) -> int:
    """How many nearest neighbours to ask the store for: min(100, max(30, 3 × limit))."""
    return min(CANDIDATE_CAP, max(30, 3 * limit))


def days_between(now_ms: float, then_ms: float) -> float:
    """Whole days from `then` to `now`, never negative; NaN means infinitely old."""
    delta = now_ms - then_ms
    if not math.isfinite(delta):
        return float(MAX_SAFE_INTEGER)
    return max(0.0, delta / DAY_MS)


def recency_score(now_ms: float, last_ms: float) -> float:
    """2^(-days/30): 1 when just touched, 0.5 at 30 days, 0.25 at 60."""
    return float(2.0 ** (-days_between(now_ms, last_ms) / RECENCY_HALF_LIFE_DAYS))


def decayed_trust(
    now_ms: float, base: float, last_ms: float, memory_type: MemoryType | str, access_count: int
) -> float:
    """Trust decayed by type half-life, boosted by use, never above `base`."""
    half_life = TRUST_HALF_LIFE_DAYS.get(memory_type, TRUST_HALF_LIFE_DAYS["project"])
    decay = 2.0 ** (-days_between(now_ms, last_ms) / half_life)
    usage = min(1.5, 1.0 + 0.1 * math.log(max(1.0, access_count + 1.0)))
    adjusted = decay * usage if decay < 1 else decay
    return float(base * min(1.0, adjusted))


def access_score(count: int, max_access: int) -> float:
    if max_access <= 0:
        return 0.0
    return min(1.0, count / max_access)


#: Usage only breaks ties: the access term counts for candidates whose relevance equals the top's,
#: within this fraction of it (float noise), and for nothing else.
USAGE_BAND = 1e-9


def usage_band(rel_sim: float) -> float:
    """How much of the access term a candidate gets: 1 when its relevance equals the top's (float
    noise aside), else 0, so being used never lifts a memory over a more relevant one.

    Measured on MADial-Bench and the project set: with usage counted in full (the reference) warm
    recall fell far below cold (bench/RESULTS.md#recall-quality-on-madial-bench-benchqualitymadialpy);
    confined to near-ties within 5 % of the top it still broke near-ties for memories that were
    confident answers to other questions, and warm R@1 fell below cold (`bench/quality/usage_rules.py`,
    bench/RESULTS.md#usage-only-breaks-ties-warm-against-cold-per-usage-rule-issue-15-item-4-2026-12-01). Any band wider than a tie trades one
    question's right answer for another's; a tie-breaker cannot make warm worse than cold.
    """
    return 1.0 if rel_sim > 1.0 - USAGE_BAND else 0.0


def relative_similarity(similarity: float, top: float) -> float:
    if top <= 0:
        return 0.0
    return min(1.0, similarity / top)


def relative_standing(score: float, top_score: float) -> float:
    if top_score <= 0:
        return 0.0
    return min(1.0, score / top_score)


def composite(mode: Mode | str, rel_sim: float, recency: float, access: float, trust: float) -> float:
    """The composite score, evaluated in the reference's order for float parity."""
    w = MODE_TABLE[mode]
    return rel_sim * w.w_sim + recency * w.w_rec + access * w.w_acc + trust * TRUST_WEIGHT


def default_high_similarity(floor: float) -> float:
    """HIGH is reachable for every floor (docs/recall.md#confidence): min(3 × floor, (1 + floor) / 2).

    Rounded to 12 decimals so float noise does not move the threshold: 3 × 0.1 is
    0.30000000000000004, which would label a similarity of exactly 0.3 MEDIUM
    against the documented "HIGH from 0.3" and print that noise wherever the
    threshold is shown.
    """
    return round(min(HIGH_CONFIDENCE_MULTIPLE * floor, (1.0 + floor) / 2.0), 12)


def confidence(top_similarity: float | None, high: float) -> Confidence:
    """HIGH when the top-scored result is at least `high`; MEDIUM below; none without results."""
    if top_similarity is None:
        return "none"
    return "high" if top_similarity >= high else "medium"


def round_half_up(x: float) -> int:
    """JavaScript's Math.round for the non-negative values we print."""
    return math.floor(x + 0.5)


def percent(fraction: float) -> int:
    return round_half_up(fraction * 100)


# --------------------------------------------------------------------------- dedup (docs/remember.md)

#: remember treats a new memory as already known above this cosine (docs/remember.md, compiled in) ...
DEDUP_SIMILARITY = 0.92
#: ... and only when the two texts also share half their words (Jaccard).
DEDUP_WORD_OVERLAP = 0.5


@functools.lru_cache(maxsize=8_192)
def _word_set(text: str) -> frozenset[str]:
    """`text`'s words, once per text: recall's newest-first rule asks about the same candidates'
    pairs (bench/RESULTS.md, "Recall's first stage without regular expressions for plain words")."""
    return frozenset(w for w in _non_word().split(text.lower()) if w)


@functools.cache
def _non_word() -> regex.Pattern[str]:
    """What separates words, compiled once (not looked up in regex's cache for every text)."""
    import regex  # imported here: only remember and recall's near rule need Unicode word classes

    return regex.compile(r"[^\p{L}\p{N}]+")


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' sets of words (letters and numbers, any script)."""
    words_a = _word_set(a)
    words_b = _word_set(b)
    if not words_a or not words_b:
        return 0.0
    shared = len(words_a & words_b)
    return shared / (len(words_a) + len(words_b) - shared)
