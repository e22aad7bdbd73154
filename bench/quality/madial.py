"""Recall quality on MADial-Bench (English): the raw embedder next to what `recall` returns.

    .venv/bin/python -m bench.quality.madial

One tenant per MADial user on a fresh SQLite file with the local all-MiniLM-L6-v2 model (the
embedded default, floor 0.2 and HIGH 0.6), each user's memories stored through the real
`remember`. Each dialogue's query is the authors' one (the lines before the test turn, joined).
Printed (Markdown):

- the raw embedder: exact cosine over the user's memories, no gates, no ranking;
- `recall` (dense retrieval) in balanced and exploratory mode at limit 50 (enough for R@20), "cold" (nothing is
  counted, so every query sees zero access counts: a new deployment) and "warm" (the 160
  queries in file order, counts accumulating);
  warm once with the reference's access term (`ranking.usage_band` patched to 1.0, in this
  process only) and once with ours;
- what the gates cost: candidates and gold memories dropped by the floor and by the mode's
  ratio gate, per query;
- by retrieval (dense / keyword / hybrid, whichever the service offers, see
  bench/quality/retrieval_eval.py), each mode, cold and warm: R@1/5/10, hit@5 and the precision of each
  confidence label, next to the raw model and a plain BM25 (FTS5) reference. `--json` prints
  that section as JSON instead of the whole Markdown report.

Warm, as in production: each query is one agent call at the mode's default limit, and only what
that call returns is counted. The limit-50 call that is scored runs just before it and counts
nothing, so measuring does not change the counts (`--count-limit 50` counts the measured call
instead). All calls share one fixed clock: recency and trust are equal for every memory, so the
service's order differs from the raw one only through the gates and the access term.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bench.data import madial_data as md
from bench.harness.timing import Stopwatch
from bench.quality import retrieval_eval as ev
from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core import ranking
from mcp_memory.core.arguments import LIMIT_MAX
from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService

NOW_MS = 1_780_000_000_000.0  # 2026-05-28: one instant for every remember and recall
MODES = ("balanced", "exploratory")
SWEEP = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def tenant(user: int) -> str:
    return f"madial-user-{user}"


@contextlib.contextmanager
def reference_usage() -> Iterator[None]:
    """The reference's access term: usage counts in full at every similarity."""
    ours = ranking.usage_band
    ranking.usage_band = lambda rel_sim: 1.0
    try:
        yield
    finally:
        ranking.usage_band = ours


@contextlib.contextmanager
def band(width: float) -> Iterator[None]:
    """The band before usage became a tie-breaker, `width` wide: the access term in full at the
    top similarity, fading to nothing at (1 - width) of it; in this process only."""
    ours = ranking.usage_band
    ranking.usage_band = lambda rel_sim: min(1.0, max(0.0, (rel_sim - (1.0 - width)) / width))
    try:
        yield
    finally:
        ranking.usage_band = ours


@contextlib.contextmanager
def not_counted(service: MemoryService) -> Iterator[None]:
    """Run a recall without recording its results (the measurement, not the agent's call)."""
    service.counters.record = lambda *args, **kwargs: None  # instance attribute shadows the method
    try:
        yield
    finally:
        del service.counters.record


def fresh_counters(service: MemoryService) -> None:
    """Zero access counts: a new AccessCounters over the same store (nothing was ever flushed)."""
    service.counters = AccessCounters(service.objects, pod_id="bench", log=NullLog())


async def store(service: MemoryService, data: md.MADial) -> tuple[dict[str, list[int]], list[tuple[int, int]]]:
    """remember every memory in its user's tenant; returns memory id -> MADial ids, and merges."""
    back: dict[str, list[int]] = {}
    merged: list[tuple[int, int]] = []
    for user, pool in sorted(data.pools.items()):
        for mid in pool:
            result = await service.remember(Caller(tenant(user)), data.memories[mid])
            owners = back.setdefault(result.memory.id, [])
            if not result.created:
                merged.append((mid, owners[0]))
            owners.append(mid)
    return back, merged


def expand(memory_ids: list[str], back: dict[str, list[int]]) -> list[int]:
    """Our ranked ids as MADial ids (a merged memory stands for every MADial id it absorbed)."""
    return [mid for memory_id in memory_ids for mid in back[memory_id]]


async def raw_similarities(service: MemoryService, data: md.MADial) -> list[dict[int, float]]:
    """Exact cosine of each query with each of its user's memories, embedded one text per call
    (as remember and recall do)."""
    embed = service.embedder.embed
    vectors = {mid: (await embed([text]))[0] for mid, text in data.memories.items()}
    sims = []
    for d in data.dialogues:
        q = (await embed([d.query]))[0]
        sims.append({mid: float(np.dot(q, vectors[mid])) for mid in data.pools[d.user]})
    return sims


def kept_by_gates(s: dict[int, float], floor: float, keep_ratio: float) -> list[int]:
    """The memories recall keeps: at or above the floor, and within the mode's ratio of the top."""
    top = max((v for v in s.values() if v >= floor), default=0.0)
    return [m for m, v in s.items() if v >= floor and v >= top * keep_ratio]


def gate_report(sims: list[dict[int, float]], data: md.MADial, floor: float, high: float) -> list[str]:
    """What the floor and each mode's ratio gate drop, from the raw similarities."""
    out = [
        "| mode | keep ratio | candidates kept (median, min–max) | dropped by floor | dropped by ratio "
        "| gold dropped by floor | gold dropped by ratio | of those, in the raw top 5 / 10 / 20 (floor + ratio) "
        "| queries losing gold | recall ceiling |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode in ("precision", *MODES):
        keep = ranking.MODE_TABLE[mode].keep_ratio
        kept, by_floor, by_ratio, gold_floor, gold_ratio, losing, ceiling = [], 0, 0, 0, 0, 0, 0.0
        in_top = {5: [0, 0], 10: [0, 0], 20: [0, 0]}
        for s, d in zip(sims, data.dialogues):
            order = sorted(s, key=s.__getitem__, reverse=True)
            top = max((v for v in s.values() if v >= floor), default=0.0)
            k = kept_by_gates(s, floor, keep)
            kept.append(len(k))
            by_floor += sum(v < floor for v in s.values())
            by_ratio += sum(floor <= v < top * keep for v in s.values())
            gold_floor += sum(s[g] < floor for g in d.gold)
            gold_ratio += sum(floor <= s[g] < top * keep for g in d.gold)
            for cut, pair in in_top.items():
                pair[0] += sum(s[g] < floor for g in d.gold & set(order[:cut]))
                pair[1] += sum(floor <= s[g] < top * keep for g in d.gold & set(order[:cut]))
            losing += not d.gold <= set(k)
            ceiling += len(d.gold & set(k)) / len(d.gold)
        n = len(data.dialogues)
        out.append(
            f"| {mode} | {keep} | {statistics.median(kept):g} ({min(kept)}–{max(kept)}) | {by_floor / n:.1f}/query "
            f"| {by_ratio / n:.1f}/query | {gold_floor} | {gold_ratio} "
            f"| {' / '.join(f'{a} + {b}' for a, b in in_top.values())} | {losing} of {n} | {100 * ceiling / n:.1f} % |"
        )
    tops = [max(s.values()) for s in sims]
    right = [max(s, key=s.__getitem__) in d.gold for s, d in zip(sims, data.dialogues)]
    high_right = sum(r for r, t in zip(right, tops) if t >= high)
    rest_right = sum(r for r, t in zip(right, tops) if t < high)
    gold = [s[g] for s, d in zip(sims, data.dialogues) for g in d.gold]
    other = [v for s, d in zip(sims, data.dialogues) for m, v in s.items() if m not in d.gold]
    q = lambda xs: "/".join(f"{np.percentile(xs, p):.2f}" for p in (10, 50, 90))  # noqa: E731
    out += [
        "",
        f"Cosine (p10/median/p90): top candidate {q(tops)}; gold memories {q(gold)}; the rest {q(other)}. "
        f"Top candidate ≥ HIGH {high:g} (a HIGH answer) in {sum(t >= high for t in tops)} of {len(tops)} queries; "
        f"{sum(g < floor for g in gold)} of {len(gold)} gold similarities are below the floor {floor:g}. "
        f"The top candidate is a gold memory in {high_right} of the {sum(t >= high for t in tops)} HIGH queries "
        f"and in {rest_right} of the {sum(t < high for t in tops)} others.",
    ]
    return out


async def run_pass(service, data, back, mode: str, warm: bool, count_limit: int | None) -> tuple[list[list[int]], dict]:
    """One pass over the 160 queries; returns the scored rankings and what was observed."""
    fresh_counters(service)
    rankings, agent_rankings, gated, disagree = [], [], [], 0
    for d in data.dialogues:
        caller = Caller(tenant(d.user))
        counted = warm and count_limit == LIMIT_MAX
        with contextlib.nullcontext() if counted else not_counted(service):
            result = await service.recall(caller, d.query, limit=LIMIT_MAX, mode=mode)
        measured = [r.memory.id for r in result.results]
        if warm and not counted:  # the agent's own call, counted as in production
            agent = await service.recall(caller, d.query, limit=count_limit, mode=mode)
            disagree += [r.memory.id for r in agent.results] != measured[: len(agent.results)]
            agent_rankings.append(expand([r.memory.id for r in agent.results], back))
        rankings.append(expand(measured, back))
        gated.append(result.gated)
    return rankings, {"gated": gated, "disagree": disagree, "agent": agent_rankings}


async def band_sweep(service, data, back, cold: dict[str, list[list[int]]], count_limit: int | None) -> list[str]:
    """Warm R@1 / R@5 for other band widths: what usage in near-ties costs or buys here."""
    out = [
        "| earlier band width | balanced R@1 | balanced R@5 | balanced top-1 ≠ cold | exploratory R@1 | exploratory R@5 "
        "| exploratory top-1 ≠ cold |",
        "|---|---|---|---|---|---|---|",
    ]
    for width in SWEEP:
        cells = []
        for mode in MODES:
            with band(width):
                rankings, _ = await run_pass(service, data, back, mode, True, count_limit)
            values = md.scores(rankings, data.dialogues)
            moved = sum(r[:1] != c[:1] for r, c in zip(rankings, cold[mode]))
            cells += [f"{values[0]:.1f}", f"{values[2]:.1f}", str(moved)]
        out.append(f"| {width:g} | " + " | ".join(cells) + " |")
    return out


async def retrieval_section(env: dict[str, str], data: md.MADial, raw: list[list[int]]) -> dict:
    """Every retrieval the service offers, each mode, cold and warm, on a fresh store of its own
    (the passes above have flushed their counts into theirs)."""
    probes = [ev.Probe(tenant(d.user), d.query, d.gold) for d in data.dialogues]
    items = [
        (tenant(user), mid, data.memories[mid], "project") for user, pool in sorted(data.pools.items()) for mid in pool
    ]
    references = [
        {"retrieval": name, "mode": "–", "pass": "–", "all": ev.quality(rankings, probes), "groups": {}}
        for name, rankings in (
            ("raw cosine (reference)", raw),
            ("BM25, FTS5 (reference)", ev.bm25_rankings(items, probes)),
        )
    ]
    rows, offered, stored = [], [], None
    for name in ev.RETRIEVALS:
        service = await ev.open_retrieval(env, name)
        if service is None:
            continue
        offered.append(name)
        try:
            stored = stored or await ev.store(service, items)
            for mode in ev.MODES:
                for warm in (False, True):
                    outcomes = await ev.recall_pass(service, probes, stored, mode, warm)
                    rankings = [o.ranked for o in outcomes]
                    rows.append(
                        {
                            "retrieval": name,
                            "mode": mode,
                            "pass": "warm" if warm else "cold",
                            "all": ev.quality(rankings, probes),
                            "groups": {},
                            "confidence": ev.confidence(outcomes, probes),
                        }
                    )
        finally:
            await ev.close(service)
    return {"retrievals": offered, "merged": stored.merged if stored else [], "references": references, "rows": rows}


def retrieval_markdown(section: dict) -> list[str]:
    missing = [r for r in ev.RETRIEVALS if r not in section["retrievals"]]
    return [
        f"By retrieval ({', '.join(section['retrievals'])}"
        + (f"; this service has no {' / '.join(missing)} retrieval" if missing else "")
        + f"), recall at limit 50; warm after one counted round at each mode's default limit ({ev.mode_limits()}):",
        "",
        *ev.quality_table(section["references"] + section["rows"], ()),
        "",
        "Confidence: per label, the queries that got it and how often their top result is a gold memory.",
        "",
        *ev.confidence_table(section["rows"], absent=False),
    ]


async def main(count_limit: int | None, sweep: bool, as_json: bool, provider: str = "local") -> None:
    data = md.load()
    started = Stopwatch.started()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"MEMORY_DB_PATH": str(Path(tmp) / "madial.db"), "HOME": tmp, "EMBEDDING_PROVIDER": provider}
        # The tables below compare recall with the raw model and its gates: dense retrieval (the
        # by-retrieval section at the end measures keyword and hybrid).
        settings = Settings.from_env({**env, "RECALL_RETRIEVAL": "dense"})
        assert settings.embedding.embedding_provider == provider and settings.store.backend == "sqlite"
        service = await open_service(settings)
        service.clock = lambda: NOW_MS
        service.embedder = ev.CachedEmbedder(service.embedder)  # the same vectors, embedded once
        try:
            back, merged = await store(service, data)
            sims = await raw_similarities(service, data)
            raw = [sorted(s, key=s.__getitem__, reverse=True) for s in sims]
            table = [("raw embedder (exact cosine, no gates)", md.scores(raw, data.dialogues), "")]
            cold: dict[str, list[list[int]]] = {}
            for mode in MODES:
                for label, warm, reference in (
                    ("cold", False, False),
                    ("warm, reference access term", True, True),
                    ("warm, ours (usage breaks ties)", True, False),
                ):
                    with reference_usage() if reference else contextlib.nullcontext():
                        rankings, seen = await run_pass(service, data, back, mode, warm, count_limit)
                    if not warm:
                        cold[mode] = rankings
                        keep = ranking.MODE_TABLE[mode].keep_ratio  # the service gates what we compute
                        assert seen["gated"] == [len(s) - len(kept_by_gates(s, service.floor, keep)) for s in sims]
                    note = f"gated median {statistics.median(seen['gated']):g}"
                    if warm and count_limit != LIMIT_MAX:
                        agent_r5 = md.scores(seen["agent"], data.dialogues)[2]
                        note += (
                            f"; the agent's own call (limit {ranking.MODE_TABLE[mode].limit}) differs from the "
                            f"measured top in {seen['disagree']} queries, its R@5 {agent_r5:.1f}"
                        )
                    table.append((f"recall {mode}, {label}", md.scores(rankings, data.dialogues), note))
            floor, high = service.floor, service.high
            retrieval = getattr(service, "retrieval", "dense")  # the shipped default
            swept = await band_sweep(service, data, back, cold, count_limit) if sweep else []
        finally:
            await service.close()
        section = await retrieval_section({**env, "MEMORY_DB_PATH": str(Path(tmp) / "retrievals.db")}, data, raw)
    if as_json:
        print(json.dumps(section, indent=1))
        return
    counted = "the mode's default limit" if count_limit is None else f"limit {count_limit}"
    print(
        f"MADial-Bench en: {len(data.dialogues)} dialogues, {len(data.memories)} memories "
        f"({', '.join(f'user {u}: {len(p)}' for u, p in sorted(data.pools.items()))}); {provider} model, "
        f"floor {floor:g}, HIGH {high:g}; recall's retrieval {retrieval}; warm passes count {counted}"
    )
    print(f"remember: {len(back)} memories stored, {len(merged)} merged by dedup {merged or ''}")
    print(f"{datetime.date.today()}, {md.machine()}, {started.running():.0f} s\n")
    print("| retrieval | R@1 | R@3 | R@5 | R@10 | R@20 | hit@5 | notes |\n|---|---|---|---|---|---|---|---|")
    for name, values, note in table:
        print(md.row(name, values) + f" {note} |")
    for name, values in md.PUBLISHED.items():
        print(md.row(f"published: {name}", values) + " authors' run |")
    print()
    print("\n".join(gate_report(sims, data, floor, high)))
    if swept:
        print("\nWarm passes with other usage-band widths:\n")
        print("\n".join(swept))
    print()
    print("\n".join(retrieval_markdown(section)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--count-limit",
        type=int,
        choices=(LIMIT_MAX,),
        default=None,
        help="count the limit-50 measured call instead of a default-limit agent call",
    )
    parser.add_argument(
        "--band-sweep", action="store_true", help=f"also run the warm passes with the earlier usage band at {SWEEP}"
    )
    parser.add_argument("--json", action="store_true", help="print only the by-retrieval section, as JSON")
    parser.add_argument("--provider", default="local", help="EMBEDDING_PROVIDER (local, local-multilingual)")
    args = parser.parse_args()
    asyncio.run(main(args.count_limit, args.band_sweep, args.json, args.provider))
