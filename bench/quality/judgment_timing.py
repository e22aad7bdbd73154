"""What the facts' write times do to the relevance model: the built-in calibration set through
`MemoryService.recall` (balanced, as an agent asks), its 36 facts remembered at one instant, one
second apart (a user's first session, an import), and one day apart, side by side in one run.

    [PROVIDER=local-multilingual] nice python -m bench.quality.judgment_timing

The second stage once read memories written within 10 minutes of each other as turns of one
conversation; it reads nothing of write times now but each memory's age, so the three timings
should agree (the calibration `calibrate --builtin` prints stores its facts at one instant).
Reported per timing: AUROC of the answer's probability,
answerable against absent, and per band the questions with their answer on top, with another on
top, and the absent questions; and what a floor on the probability would cost: the floor that
leaves at most ABSENT_TARGET absent questions above it (the issue's target), and how many
questions answered right fall at or below it (bench/RESULTS.md#what-write-times-do-to-the-relevance-model-issue-34-2026-12-06).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence

import numpy as np

TIMINGS = (("one instant", 0.0), ("1 s apart", 1000.0), ("1 day apart", 86_400_000.0))
BANDS = ("high", "medium", "low", "none")
#: Issue 34's target: at most this many of the built-in set's absent questions pass the floor.
ABSENT_TARGET = 6


class Clock:
    def __init__(self) -> None:
        self.now = 1_780_000_000_000.0

    def __call__(self) -> float:
        return self.now


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float:
    p, n = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def floor_cost(right: Sequence[float], absent: Sequence[float]) -> tuple[float, int]:
    """The floor leaving ABSENT_TARGET absent questions above it, and the right answers it drops."""
    ranked = sorted(absent, reverse=True)
    floor = ranked[ABSENT_TARGET] if len(ranked) > ABSENT_TARGET else 0.0
    return floor, sum(1 for p in right if p <= floor)


async def run(provider: str) -> list[tuple[str, float, dict[str, list[int]], tuple[float, int, int]]]:
    from bench.harness.service import in_memory_service
    from bench.quality import retrieval_eval as ev
    from mcp_memory.config import Settings
    from mcp_memory.core.calibration.calibrate import builtin_cases
    from mcp_memory.core.model import Caller
    from mcp_memory.embedders import PROVIDERS, open_embedder

    embedder = open_embedder(Settings.from_env({"EMBEDDING_PROVIDER": provider}).embedding)
    floor, high = PROVIDERS[provider].calibrated or (0.1, None)
    cases = builtin_cases()
    caller = Caller("calibration")
    out = []
    try:
        for name, step in TIMINGS:
            clock = Clock()
            service = in_memory_service(embedder, floor=floor, high=high)
            service.clock = clock
            ids = []
            for fact in cases.facts:
                ids.append((await service.remember(caller, fact.text or "")).memory.id)
                clock.now += step
            clock.now += 60_000
            answerable, absent, right_p = [], [], []
            bands = {b: [0, 0, 0] for b in BANDS}
            ev.fresh_counters(service)
            with ev.not_counted(service):  # each question cold: no answer's access count moves the next
                for i, fact in enumerate(cases.facts):
                    for question in fact.questions:
                        r = await service.recall(caller, question)
                        right = bool(r.results) and r.results[0].memory.id == ids[i]
                        answerable.append(r.probability or 0.0)
                        bands[r.confidence][0 if right else 1] += 1
                        if right:
                            right_p.append(r.probability or 0.0)
                for question in cases.absent:
                    r = await service.recall(caller, question)
                    absent.append(r.probability or 0.0)
                    bands[r.confidence][2] += 1
            cost = floor_cost(right_p, absent)  # not `floor`: the next timing's service is opened with that
            out.append((name, auroc(answerable, absent), bands, (cost[0], cost[1], len(right_p))))
    finally:
        await embedder.close()
    return out


def main(argv: Sequence[str]) -> int:
    provider = os.environ.get("PROVIDER", "local")
    for name, area, bands, (floor, dropped, right) in asyncio.run(run(provider)):
        counts = "  ".join(f"{b} {r}/{w}/{a}" for b, (r, w, a) in bands.items())
        print(f"{provider} {name:12s} AUROC {area:.3f}  (answer on top / another / absent) {counts}")
        print(
            f"  a floor just above {floor:.3f} leaves {ABSENT_TARGET} absent questions passing "
            f"and drops {dropped} of {right} right answers"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
