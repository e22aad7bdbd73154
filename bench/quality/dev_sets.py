"""Recall on the update set and the conversational set (bench/data/updates, bench/data/conversations):
R@1/5/10, how often the newer of two near facts comes first, and HIGH's share and precision.

    RETS=dense,hybrid [SETS=updates,conversations] nice .venv/bin/python -m bench.quality.dev_sets

Each fact or turn is stored through the real `remember` at its own instant (the service's clock is
set to it), in time order, one tenant for the update set and one per chat; every question is then
asked cold at one instant a day after the last memory, balanced mode, limit 50, nothing counted.
Update set: `newer first` is the share of questions where the newer fact ranks above the older one
(or the older one is not returned); `older first (past)` the same for the questions about the
earlier state, where the older fact is the right answer. A pair that `remember` merged is reported,
not scored. With PYTHONPATH pointing at another checkout it measures that checkout's `mcp_memory`
on this tree's data (how the side-by-side figures in bench/RESULTS.md are taken).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

import mcp_memory  # noqa: F401  (first: from PYTHONPATH, before this tree is put on the path)
from bench.data import conversation_set_data, update_set_data
from bench.quality import retrieval_eval as ev
from mcp_memory.core.arguments import LIMIT_MAX
from mcp_memory.core.ids import parse_iso
from mcp_memory.core.model import Caller

DAY_MS = 86_400_000
UPDATES = "updates"


async def remember_at(service, items: list[tuple[float, str, str, str]]) -> ev.Stored:
    """(instant, tenant, external id, text) stored in time order, each at its own instant."""
    stored = ev.Stored()
    for at, tenant, ext, text in sorted(items, key=lambda item: item[0]):
        service.clock = lambda at=at: at
        result = await service.remember(Caller(tenant), text)
        owners = stored.back.setdefault(result.memory.id, [])
        if not result.created:
            stored.merged.append((ext, owners[0]))
        owners.append(ext)
    return stored


async def ask(service, probes: list[ev.Probe], stored: ev.Stored, now: float) -> list[tuple[ev.Outcome, list]]:
    service.clock = lambda: now
    ev.fresh_counters(service)
    out = []
    with ev.not_counted(service):
        for p in probes:
            result = await service.recall(Caller(p.tenant), p.query, limit=LIMIT_MAX)
            ranked = [ext for r in result.results for ext in stored.back[r.memory.id]]
            superseded = [getattr(r, "superseded_by", None) is not None for r in result.results]
            out.append((ev.Outcome(ranked, result.confidence, not result.results), superseded))
    return out


def first_of(ranked: list, a, b) -> bool:
    """Whether `a` ranks above `b` (or `b` is not returned while `a` is)."""
    if a not in ranked:
        return False
    return b not in ranked or ranked.index(a) < ranked.index(b)


def summary(outcomes: list[ev.Outcome], probes: list[ev.Probe]) -> dict:
    q = ev.quality([o.ranked for o in outcomes], probes)
    conf = ev.confidence(outcomes, probes)
    high = conf.get("high", {"n": 0, "precision": float("nan")})
    return {
        **{f"R@{k}": round(q[f"R@{k}"], 1) for k in ev.KS},
        "n": q["n"],
        "high_share": round(100 * high["n"] / max(1, len(probes)), 1),
        "high_precision": round(high["precision"], 1),
        "labels": {k: v for k, v in conf.items() if k != "absent"},
    }


async def updates(service) -> dict:
    pairs = update_set_data.load()
    items = []
    for p in pairs:
        items.append((parse_iso(p.old_at), UPDATES, (p.id, "old"), p.old))
        items.append((parse_iso(p.new_at), UPDATES, (p.id, "new"), p.new))
    stored = await remember_at(service, items)
    merged = {ext[0] for pair in stored.merged for ext in pair}
    scored = [p for p in pairs if p.id not in merged]
    probes = [ev.Probe(UPDATES, p.question, frozenset({(p.id, "new")}), (p.kind,)) for p in scored]
    past = [p for p in scored if p.past_question]
    past_probes = [ev.Probe(UPDATES, p.past_question, frozenset({(p.id, "old")}), ("past",)) for p in past]
    now = max(at for at, *_ in items) + DAY_MS
    answers = await ask(service, probes + past_probes, stored, now)
    current, earlier = answers[: len(probes)], answers[len(probes) :]
    newer = [first_of(o.ranked, (p.id, "new"), (p.id, "old")) for (o, _), p in zip(current, scored)]
    by_kind = {
        kind: round(
            100 * sum(n for n, p in zip(newer, scored) if p.kind == kind) / sum(p.kind == kind for p in scored), 1
        )
        for kind in update_set_data.KINDS
    }
    older = [first_of(o.ranked, (p.id, "old"), (p.id, "new")) for (o, _), p in zip(earlier, past)]
    flagged = 0
    for (o, superseded), p in zip(current, scored):
        if (p.id, "old") in o.ranked and (p.id, "new") in o.ranked:
            flagged += bool(superseded[o.ranked.index((p.id, "old"))])
    return {
        "pairs": len(pairs),
        "merged_by_remember": sorted(merged),
        **summary([o for o, _ in current], probes),
        "newer_first": round(100 * sum(newer) / len(newer), 1),
        "newer_first_by_kind": by_kind,
        "older_first_past": f"{sum(older)}/{len(older)}",
        "old_shown_superseded": flagged,
    }


async def conversations(service) -> dict:
    turns, questions = conversation_set_data.load()
    stored = await remember_at(service, [(parse_iso(t.at), f"chat-{t.chat}", t.id, t.text) for t in turns])
    probes = [ev.Probe(f"chat-{q.chat}", q.text, frozenset(q.gold), (q.lang,)) for q in questions]
    now = max(parse_iso(t.at) for t in turns) + DAY_MS
    answers = await ask(service, probes, stored, now)
    return {"turns": len(turns), "merged_by_remember": len(stored.merged), **summary([o for o, _ in answers], probes)}


async def main() -> None:
    rets = os.environ.get("RETS", "dense,hybrid").split(",")
    sets = os.environ.get("SETS", "updates,conversations").split(",")
    for name in rets:
        for which in sets:
            with tempfile.TemporaryDirectory() as tmp:
                env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "d.db")}
                service = await ev.open_retrieval(env, name)
                if service is None:
                    continue
                row = await (updates(service) if which == "updates" else conversations(service))
                await ev.close(service)
            print(json.dumps({"retrieval": name, "set": which, **row}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
