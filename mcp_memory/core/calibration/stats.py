"""The statistics behind `calibrate` (docs/recall.md): pure functions over lists of scores, no I/O.

Two clusters decide the relevance floor: *correct* — the relevance (what recall's
floor reads: the cosine plus the weighted keyword evidence under hybrid retrieval,
the cosine under dense) of the memory that answers a question — and *absent* — for
a question about something not stored, the relevance of its most relevant memory. A floor at or below a
correct answer keeps it; a floor at or below an absent question's nearest
memory admits that question (it gets a weak match instead of "nothing stored").

The two ways of being wrong are not equally quiet. A dropped correct answer is
invisible: the model is told nothing matched and guesses. An admitted absent
question comes back as a match the confidence label can still call MEDIUM
("check it applies"). So the suggestions are:

- **floor**: the midpoint between the lowest correct answer and the highest
  absent question below it (or 0 when none is). When the clusters are
  separated that is the midpoint of the gap between them; when they overlap it
  keeps every correct answer and admits the absent questions above it, and the
  report says how many and what the fewest-misclassifications floor would cost.
  Never 0 or less: a floor of 0 admits every hit and, because HIGH confidence
  is a multiple of the floor, labels every result HIGH CONFIDENCE.
- **high**: measured against recall's whole HIGH rule (core/fusion.py: the mark,
  the question's coverage and the lead over the next candidate), each case at the
  highest mark that still labels it HIGH: the midpoint between the highest absent
  question or wrong top result any mark labels HIGH (the floor when none is) and
  the lowest right answer above it, so that nothing unrelated is labelled HIGH and
  every right answer the rule allows is; always between the floor and 1.

Both are rounded to the fewest decimals (2 to 6) that classify every measured
case exactly as the unrounded value does.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: The smallest floor ever suggested (0 is refused: see the module docstring).
MIN_FLOOR = 0.01
#: Histogram bin width, in cosine.
BIN_WIDTH = 0.05
ZERO_REFUSED = (
    "a floor of 0 or less would admit every hit and, because HIGH confidence is a multiple of "
    "the floor, label every result HIGH CONFIDENCE"
)


@dataclass(frozen=True, slots=True)
class Summary:
    n: int
    min: float
    median: float
    max: float


def summarise(values: Sequence[float]) -> Summary | None:
    """n, min, median, max; None for no values."""
    if not values:
        return None
    return Summary(len(values), min(values), statistics.median(values), max(values))


def spread(correct: Sequence[float], absent: Sequence[float]) -> float | None:
    """How far the median cosine of a right answer stands above that of an absent question's
    nearest memory, to 3 decimals: the width the embedder-agnostic relevance model reads cosines
    on (RECALL_COSINE_SPREAD, docs/recall.md#an-embedder-without-a-model-of-its-own). None
    without both kinds of case, or when it is not above 0."""
    if not correct or not absent:
        return None
    value = round(statistics.median(correct) - statistics.median(absent), 3)
    return value if value > 0 else None


def drops(correct: Sequence[float], floor: float) -> int:
    """Correct answers a floor drops: those with a cosine below it."""
    return sum(1 for c in correct if c < floor)


def admits(absent: Sequence[float], floor: float) -> int:
    """Absent questions a floor admits: those whose nearest memory is at or above it."""
    return sum(1 for a in absent if a >= floor)


def _rounded(value: float, keeps: Callable[[float], bool]) -> float:
    """`value` with the fewest decimals (2..6) for which `keeps(rounded)` holds."""
    for decimals in range(2, 7):
        candidate = round(value, decimals)
        if keeps(candidate):
            return candidate
    return value


@dataclass(frozen=True, slots=True)
class FloorSuggestion:
    floor: float
    #: The rule that produced it, in words, with the numbers it used.
    rule: str
    #: True when every correct answer is above every absent question.
    separated: bool
    drops: int
    admits: int
    #: Why the rule's value was raised to MIN_FLOOR, or None.
    clamped: str | None = None


@dataclass(frozen=True, slots=True)
class Threshold:
    """A floor and what it costs on the measured cases."""

    floor: float
    drops: int
    admits: int


def suggest_floor(correct: Sequence[float], absent: Sequence[float]) -> FloorSuggestion:
    """The suggested RECALL_MIN_SIMILARITY (see the module docstring for the rule)."""
    if not correct or not absent:
        raise ValueError("calibration needs at least one correct answer and one absent question")
    lowest = min(correct)
    separated = lowest > max(absent)
    below = [a for a in absent if a < lowest]
    neighbour = max(below) if below else 0.0
    raw = (lowest + neighbour) / 2
    if below:
        what = "the highest absent question below it"
        rule = f"midpoint between the lowest correct answer ({lowest:.3f}) and {what} ({neighbour:.3f})"
    else:
        rule = f"midpoint between the lowest correct answer ({lowest:.3f}) and 0 (no absent question is below it)"
    if not separated:
        rule += ": the clusters overlap, so the floor keeps every correct answer and leaves the rest to the confidence label"
    clamped = None
    if raw < MIN_FLOOR:
        clamped = f"the rule gives {raw:.3f}; {ZERO_REFUSED}, so the suggestion is {MIN_FLOOR} instead"
        floor = MIN_FLOOR
    else:
        floor = min(1.0, raw)
        counts = (drops(correct, floor), admits(absent, floor))
        floor = _rounded(floor, lambda r: MIN_FLOOR <= r <= 1 and (drops(correct, r), admits(absent, r)) == counts)
    return FloorSuggestion(floor, rule, separated, drops(correct, floor), admits(absent, floor), clamped)


def fewest_errors(correct: Sequence[float], absent: Sequence[float]) -> Threshold:
    """The floor with the fewest misclassifications (drops + admits); ties go to the lower
    floor, which keeps more correct answers. Candidates sit midway between neighbouring
    measured values, so no case lies exactly on one. Never below MIN_FLOOR."""
    values = sorted(set(correct) | set(absent))
    candidates = [(x + y) / 2 for x, y in zip(values, values[1:])]
    candidates += [values[0] - BIN_WIDTH / 10, values[-1] + BIN_WIDTH / 10]
    candidates = sorted({min(1.0, max(MIN_FLOOR, c)) for c in candidates})
    best = min(candidates, key=lambda t: (drops(correct, t) + admits(absent, t), drops(correct, t), t))
    counts = (drops(correct, best), admits(absent, best))
    best = _rounded(best, lambda r: MIN_FLOOR <= r <= 1 and (drops(correct, r), admits(absent, r)) == counts)
    return Threshold(best, *counts)


@dataclass(frozen=True, slots=True)
class HighSuggestion:
    high: float
    rule: str
    #: Correct answers at or above it (labelled HIGH), and absent questions at or above it.
    correct_high: int
    absent_high: int


def suggest_high(correct: Sequence[float], wrong: Sequence[float], floor: float) -> HighSuggestion:
    """The suggested RECALL_HIGH_SIMILARITY: floor ≤ high ≤ 1 (see the module docstring).

    Each value is the highest mark at which recall's whole HIGH rule labels a case HIGH (0 or
    less: no mark does): `correct` for the questions whose right answer is the top result,
    `wrong` for the absent questions and the questions whose top result is another memory."""
    reachable = [c for c in correct if c > 0]
    if not reachable:
        rule = "1: no correct answer is labelled HIGH at any mark (none holds its question or stands out enough)"
        return HighSuggestion(1.0, rule, 0, admits([w for w in wrong if w > 0], 1.0))
    labelled = [w for w in wrong if w > 0]
    if labelled:
        start = max(labelled)
        what = f"the highest absent question or wrong answer any mark labels HIGH ({start:.3f})"
    else:
        start = floor
        what = f"the floor ({floor:.3f}; no absent question or wrong answer is labelled HIGH at any mark)"
    above = [c for c in reachable if c > start]
    upper = min(above) if above else 1.0
    raw = (start + upper) / 2
    rule = f"midpoint between {what} and " + (
        f"the lowest correct answer above it ({upper:.3f})" if above else "1 (no correct answer is above it)"
    )
    high = min(1.0, max(floor, raw))
    counts = (admits(reachable, high), admits(labelled, high))
    high = _rounded(high, lambda r: floor <= r <= 1 and (admits(reachable, r), admits(labelled, r)) == counts)
    return HighSuggestion(high, rule, admits(reachable, high), admits(labelled, high))


@dataclass(frozen=True, slots=True)
class Bin:
    low: float
    high: float
    correct: int
    absent: int


def histogram(
    correct: Sequence[float], absent: Sequence[float], *, marks: Sequence[float] = (), width: float = BIN_WIDTH
) -> list[Bin]:
    """Counts of both clusters in bins of `width`, lowest first, from the bin of the lowest
    value (or mark, e.g. a floor to show) to the bin of the highest. A value on a boundary
    belongs to the bin above it."""
    values = [*correct, *absent, *marks]
    if not values:
        return []
    first = math.floor(round(min(values) / width, 9))
    last = math.floor(round(max(values) / width, 9))
    bins = []
    for i in range(first, last + 1):
        low, high = round(i * width, 10), round((i + 1) * width, 10)

        def inside(v: float, i: int = i) -> bool:
            return math.floor(round(v / width, 9)) == i

        bins.append(Bin(low, high, sum(1 for c in correct if inside(c)), sum(1 for a in absent if inside(a))))
    return bins
