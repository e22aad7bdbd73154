"""Every recall answer in full, to show a change leaves recall's results, order and confidence alone.

    .venv/bin/python -m bench.quality.recall_identity > after.jsonl
    PYTHONPATH=<other checkout> .venv/bin/python -m bench.quality.recall_identity > before.jsonl
    .venv/bin/python -m bench.quality.recall_identity --compare before.jsonl after.jsonl

On the project set and MADial-Bench, each stored through the real `remember` on SQLite with the
local model (bench/quality/retrieval_eval.py: one fixed clock, limit 50), every retrieval (dense, keyword,
hybrid) and mode is asked every question cold, then warm: an agent's round at the mode's default
limit that counts as production counts, and the measured limit-50 call. Each answer is one JSON
line: the question, the results in order (external ids), each result's cosine, keyword score,
relevance, composite score, standing and probability (as `repr`, so a last-bit change shows), the
confidence (the label), the answer's probability and whether nothing answers,
how many candidates were gated, and whether anything was near. `--compare` says how many lines
differ and shows the first few. With PYTHONPATH pointing at another checkout it measures that
checkout's `mcp_memory` on this tree's data (bench/quality/project_groups.py does the same).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Hashable, Sequence
from pathlib import Path

import mcp_memory  # noqa: F401  (first: from PYTHONPATH, before this tree's bench goes on the path)
from bench.data import madial_data as md
from bench.data import project_set_data
from bench.quality import madial
from bench.quality import project_set as ps
from bench.quality import retrieval_eval as ev
from mcp_memory.core.arguments import LIMIT_MAX
from mcp_memory.core.model import Caller


def answer_line(dataset: str, retrieval: str, mode: str, call: str, probe: ev.Probe, result, stored: ev.Stored) -> str:
    def ext(memory_id: str) -> Hashable:
        return stored.back[memory_id][0]

    return json.dumps(
        {
            "set": dataset,
            "retrieval": retrieval,
            "mode": mode,
            "call": call,
            "tenant": probe.tenant,
            "query": probe.query[:80],
            "results": [
                [
                    ext(r.memory.id),
                    repr(r.similarity),
                    repr(r.keyword),
                    repr(r.relevance),
                    repr(r.score),
                    repr(r.standing),
                    repr(r.probability),
                ]
                for r in result.results
            ],
            "confidence": result.confidence,
            "probability": repr(result.probability),
            "unanswered": result.unanswered,
            "gated": result.gated,
            "found_any": result.found_any,
        },
        ensure_ascii=False,
    )


async def answers(
    dataset: str, env: dict[str, str], items: Sequence[tuple[str, Hashable, str, str]], probes: Sequence[ev.Probe]
) -> None:
    stored: ev.Stored | None = None
    for retrieval in ev.RETRIEVALS:
        service = await ev.open_retrieval(env, retrieval)
        if service is None:
            continue
        try:
            stored = stored or await ev.store(service, items)
            for mode in ev.MODES:
                for warm in (False, True):
                    ev.fresh_counters(service)
                    for p in probes:
                        caller = Caller(p.tenant)
                        if warm:  # the agent's call, counted
                            result = await service.recall(caller, p.query, mode=mode)
                            print(answer_line(dataset, retrieval, mode, "warm agent", p, result, stored))
                        with ev.not_counted(service):
                            result = await service.recall(caller, p.query, limit=LIMIT_MAX, mode=mode)
                        call = "warm measured" if warm else "cold"
                        print(answer_line(dataset, retrieval, mode, call, p, result, stored))
        finally:
            await ev.close(service)


async def main() -> None:
    facts, questions = project_set_data.load()
    project_items = [(f.tenant, f.id, f.text, f.memory_type) for f in facts]
    data = md.load()
    madial_items = [
        (madial.tenant(user), mid, data.memories[mid], "project")
        for user, pool in sorted(data.pools.items())
        for mid in pool
    ]
    madial_probes = [ev.Probe(madial.tenant(d.user), d.query, d.gold) for d in data.dialogues]
    with tempfile.TemporaryDirectory() as tmp:
        for name, items, probes in (
            ("project", project_items, ps.probes(questions, False)),
            ("madial", madial_items, madial_probes),
        ):
            env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / f"{name}.db")}
            await answers(name, env, items, probes)


def compare(before: Path, after: Path) -> int:
    a = before.read_text(encoding="utf-8").splitlines()
    b = after.read_text(encoding="utf-8").splitlines()
    differ = [(x, y) for x, y in zip(a, b) if x != y]
    print(f"{len(a)} answers before, {len(b)} after; {len(differ)} differ")
    for x, y in differ[:5]:
        print("-", x, "\n+", y)
    return 0 if len(a) == len(b) and not differ else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    asyncio.run(main())
