"""HIGH's share and precision on every dev set: how often recall says HIGH CONFIDENCE, and how often
its top result is then a right answer, with R@1/5/10 beside them.

    [RETS=hybrid,dense] [SETS=project,madial,conversations,updates] nice .venv/bin/python -m bench.quality.high_evidence

Each set is stored through the real `remember` on SQLite with the local model and asked cold,
balanced mode, limit 50, nothing counted: the project set and MADial-Bench at one fixed instant
(bench/quality/retrieval_eval.py), the conversational and update sets each memory at its own
instant and the questions a day after the last (bench/quality/dev_sets.py). Besides the whole set,
each row gives the two halves of its questions (even and odd positions in the set's order), so a
rule chosen on one half can be reported on the other. `share`: answerable questions labelled HIGH
over all answerable questions; `precision`: of those, the share whose top result is gold; `absent
HIGH`: questions without an answer labelled HIGH. With PYTHONPATH pointing at another checkout it
measures that checkout's `mcp_memory` on this tree's data.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import mcp_memory  # noqa: F401  (first: from PYTHONPATH, before this tree is put on the path)
from bench.data import conversation_set_data, project_set_data, update_set_data
from bench.data import madial_data as md
from bench.quality import dev_sets, madial
from bench.quality import project_set as ps
from bench.quality import retrieval_eval as ev
from mcp_memory.core.ids import parse_iso

SETS = ("project", "madial", "conversations", "updates")


def high(outcomes: Sequence[ev.Outcome], probes: Sequence[ev.Probe]) -> dict:
    """HIGH's share of the answerable probes, its precision, and the absent probes it labels."""
    answerable = [(o, p) for o, p in zip(outcomes, probes) if p.gold]
    got = [(o, p) for o, p in answerable if o.confidence == "high"]
    right = sum(bool(o.ranked) and o.ranked[0] in p.gold for o, p in got)
    absent = sum(o.confidence == "high" for o, p in zip(outcomes, probes) if not p.gold)
    return {
        "n": len(answerable),
        "high": len(got),
        "share": round(100 * len(got) / max(1, len(answerable)), 1),
        "precision": round(100 * right / len(got), 1) if got else None,
        "absent_high": absent,
    }


def row(outcomes: Sequence[ev.Outcome], probes: Sequence[ev.Probe]) -> dict:
    q = ev.quality([o.ranked for o in outcomes], probes)
    halves = {name: high(outcomes[start::2], probes[start::2]) for name, start in (("even half", 0), ("odd half", 1))}
    return {**{f"R@{k}": round(q[f"R@{k}"], 1) for k in ev.KS}, **high(outcomes, probes), **halves}


async def fixed_clock(name: str, env: dict[str, str], retrieval: str) -> tuple[list[ev.Outcome], list[ev.Probe]]:
    """The project set or MADial, stored and asked at one instant."""
    if name == "project":
        facts, questions = project_set_data.load()
        items = [(f.tenant, f.id, f.text, f.memory_type) for f in facts]
        probes = ps.probes(questions, False)
    else:
        data = md.load()
        items = [
            (madial.tenant(user), mid, data.memories[mid], "project")
            for user, pool in sorted(data.pools.items())
            for mid in pool
        ]
        probes = [ev.Probe(madial.tenant(d.user), d.query, d.gold) for d in data.dialogues]
    service = await ev.open_retrieval(env, retrieval)
    if service is None:
        return [], probes
    try:
        stored = await ev.store(service, items)
        return await ev.recall_pass(service, probes, stored, "balanced", False), probes
    finally:
        await ev.close(service)


async def timed(name: str, env: dict[str, str], retrieval: str) -> tuple[list[ev.Outcome], list[ev.Probe]]:
    """The conversational or the update set, each memory stored at its own instant."""
    if name == "conversations":
        turns, questions = conversation_set_data.load()
        items = [(parse_iso(t.at), f"chat-{t.chat}", t.id, t.text) for t in turns]
        probes = [ev.Probe(f"chat-{q.chat}", q.text, frozenset(q.gold), (q.lang,)) for q in questions]
    else:
        pairs = update_set_data.load()
        items = [(parse_iso(p.old_at), dev_sets.UPDATES, (p.id, "old"), p.old) for p in pairs]
        items += [(parse_iso(p.new_at), dev_sets.UPDATES, (p.id, "new"), p.new) for p in pairs]
        probes = []
    service = await ev.open_retrieval(env, retrieval)
    if service is None:
        return [], probes
    try:
        stored = await dev_sets.remember_at(service, items)
        if name == "updates":  # a pair remember merged has no older fact left to rank below
            merged = {ext[0] for pair in stored.merged for ext in pair}
            probes = [
                ev.Probe(dev_sets.UPDATES, p.question, frozenset({(p.id, "new")}), (p.kind,))
                for p in pairs
                if p.id not in merged
            ]
        answers = await dev_sets.ask(service, probes, stored, max(at for at, *_ in items) + dev_sets.DAY_MS)
        return [o for o, _ in answers], probes
    finally:
        await ev.close(service)


async def main() -> None:
    rets = os.environ.get("RETS", "hybrid").split(",")
    sets = os.environ.get("SETS", ",".join(SETS)).split(",")
    for retrieval in rets:
        for name in sets:
            with tempfile.TemporaryDirectory() as tmp:
                env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "h.db")}
                measure = fixed_clock if name in ("project", "madial") else timed
                outcomes, probes = await measure(name, env, retrieval)
            if outcomes:
                print(json.dumps({"retrieval": retrieval, "set": name, **row(outcomes, probes)}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
