"""The one timer and the one percentile every benchmark reports with.

`percentile(values, 95)` interpolates linearly between the two nearest ranks: position
q/100 × (n − 1) in the sorted values, the rule of numpy's default and of
`statistics.quantiles(method="inclusive")`, so p50 is `statistics.median` exactly and a
p95 of 20 samples is not the largest one. bench/RESULTS.md ("Percentiles") says which
older figures used which rule.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0 ≤ q ≤ 100) of `values`, linearly interpolated between ranks."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within 0..100, got {q}")
    position = q / 100 * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summary(seconds: Iterable[float]) -> dict[str, float]:
    """n, p5/p25/p50/p75/p95, min and max of a series of seconds, in ms."""
    ordered = sorted(seconds)
    if not ordered:
        return {"n": 0}
    out: dict[str, float] = {"n": len(ordered)}
    for q in (50, 95, 25, 75, 5):
        out[f"p{q}_ms"] = percentile(ordered, q) * 1000
    out["min_ms"] = ordered[0] * 1000
    out["max_ms"] = ordered[-1] * 1000
    return out


class Stopwatch:
    """Wall-clock seconds of each timed block, kept in order: `with watch: ...` then `watch.seconds`."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._started = 0.0

    @classmethod
    def started(cls) -> Stopwatch:
        """A stopwatch running from now, for a span too long for a `with` block: read `running()`."""
        watch = cls()
        watch._started = time.perf_counter()
        return watch

    def __enter__(self) -> Stopwatch:
        self._started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds.append(time.perf_counter() - self._started)

    @property
    def last(self) -> float:
        """Seconds of the latest finished block: `with Stopwatch() as fill: ...` then `fill.last`."""
        return self.seconds[-1]

    def running(self) -> float:
        """Seconds since the current block began, for a progress line inside it."""
        return time.perf_counter() - self._started

    def ms(self) -> list[float]:
        """Each block's time in ms, in order."""
        return [s * 1000 for s in self.seconds]

    def p(self, q: float) -> float:
        """The q-th percentile of the blocks so far, in ms."""
        return percentile(self.seconds, q) * 1000
