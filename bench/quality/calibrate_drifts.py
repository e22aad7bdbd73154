"""How far `calibrate`'s prediction of recall's answers is from what recall answers (issue 24's two drifts).

    .venv/bin/python -m bench.quality.calibrate_drifts
    PYTHONPATH=<other checkout> .venv/bin/python -m bench.quality.calibrate_drifts

Two cases, with the local model and the configured defaults (hybrid), each printed as JSON:

- `aged`: one project-set team (bench/data/project_memory) stored through the real `remember`,
  fact k written k × 6 days before the moment calibrate and recall run; calibrated on the tenant
  with one case per answerable question (its first gold fact) and the team's absent questions.
  Next to it, what recall answers at that moment at the default mode, cold and with no floor (as
  calibrate measures): how many questions get their gold fact first, and how many right and wrong
  tops are labelled HIGH at the current mark. calibrate's prediction should equal those.
- `full-width`: the built-in cases with every question's ASCII letters and digits typed full-width
  (ｗｈｅｎ …), which recall embeds as their plain twins (NFKC); the correct answers' cosine median
  and how many come first, next to the plain questions' own figures.

With PYTHONPATH pointing at another checkout it measures that checkout's `mcp_memory`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from pathlib import Path

import mcp_memory  # noqa: F401  (first: from PYTHONPATH, before this tree's bench goes on the path)
from bench.data import project_set_data
from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core import ranking
from mcp_memory.core.calibration.calibrate import builtin_cases, calibrate, parse_cases
from mcp_memory.core.model import Caller
from mcp_memory.stores.in_memory import InMemoryVectorStore

NOW_MS = 1_780_000_000_000.0
DAY_MS = 86_400_000.0
TEAM_SPACING_DAYS = 6.0


def wide(text: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if ch.isascii() and ch.isalnum() else ch for ch in text)


async def aged(env: dict[str, str]) -> dict:
    facts, questions = project_set_data.load()
    tenant = sorted({f.tenant for f in facts})[0]
    team = [f for f in facts if f.tenant == tenant]
    service = await open_service(Settings.from_env(env))
    try:
        ids: dict[str, str] = {}
        oldest = len(team) - 1
        for k, fact in enumerate(reversed(team)):  # the first fact is the newest
            written = NOW_MS - (oldest - k) * TEAM_SPACING_DAYS * DAY_MS
            service.clock = lambda at=written: at
            result = await service.remember(Caller(tenant), fact.text, memory_type=fact.memory_type)
            ids[fact.id] = result.memory.id
        service.clock = lambda: NOW_MS
        asked = [q for q in questions if q.tenant == tenant and q.gold]
        absent = [q for q in questions if q.tenant == tenant and not q.gold]
        lines = [json.dumps({"memory": ids[q.gold[0]], "questions": [q.text]}) for q in asked]
        lines += [json.dumps({"absent": q.text}) for q in absent]
        report = await service.calibrate(tenant, parse_cases("\n".join(lines), "aged", by_id=True))
        predicted = report.labelled_high(service.high)
        floor, service.floor = service.floor, 1e-9  # recall without a floor, as calibrate measures
        service.counters.record = lambda *a, **k: None  # cold: nothing is counted
        first = right_high = wrong_high = 0
        for q in asked:
            result = await service.recall(Caller(tenant), q.text, mode=ranking.DEFAULT_MODE)
            top = result.results[0].memory.id if result.results else None
            right = top == ids[q.gold[0]]
            first += right
            right_high += right and result.confidence == "high"
            wrong_high += (not right) and result.confidence == "high"
        service.floor = floor
        return {
            "tenant": tenant,
            "memories": len(team),
            "questions": len(asked),
            "absent": len(absent),
            "high": service.high,
            "calibrate": {
                "answeredFirst": report.answered_first,
                "rightHigh": predicted["correctHigh"],
                "wrongHigh": predicted["wrongHigh"],
                "suggestedHigh": report.high.high,
                "suggestedFloor": report.floor.floor,
            },
            "recall": {"answeredFirst": first, "rightHigh": right_high, "wrongHigh": wrong_high},
        }
    finally:
        await service.close()


async def full_width(env: dict[str, str]) -> dict:
    settings = Settings.from_env(env)
    service = await open_service(settings)
    out = {}
    try:
        base = builtin_cases()
        for name, transform in (("plain", str), ("full-width", wide)):
            text = "\n".join(
                [json.dumps({"fact": f.text, "questions": [transform(q) for q in f.questions]}) for f in base.facts]
                + [json.dumps({"absent": a}) for a in base.absent]
            )
            report = await calibrate(
                service.embedder,
                parse_cases(text, name),
                floor=service.floor,
                high=service.high,
                scratch=InMemoryVectorStore(),
                retrieval=settings.recall.recall_retrieval,
            )
            out[name] = {
                "questions": len(report.correct),
                "cosineMedian": round(statistics.median(report.correct_cosines), 4),
                "relevanceMedian": round(statistics.median(report.correct_relevance), 4),
                "answeredFirst": report.answered_first,
                "suggestedFloor": report.floor.floor,
                "suggestedHigh": report.high.high,
            }
    finally:
        await service.close()
    return out


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "drifts.db")}
        print(json.dumps({"aged": await aged(env), "full-width": await full_width(env)}, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
