"""What the confidence label is worth: per label, how often recall's top result is right.

    .venv/bin/python -m bench.quality.confidence_probe [--set madial|project|both]

Runs the real service (in-memory stores, the local model, fixed clock, nothing counted) over
MADial-Bench (every question has an answer) and the project-memory dev set
(bench/data/project_memory, which has absent and near-miss questions), in balanced mode at
limit 10, for each retrieval ("dense", "keyword", "hybrid"). Prints R@1/5/10 of what recall
returns, and for each confidence label: how many questions got it, how often the top result is
a gold memory (answerable questions), and how many absent questions got it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections import defaultdict
from dataclasses import dataclass

from bench.data import madial_data as md
from bench.data import project_set_data
from bench.harness.service import in_memory_service
from mcp_memory.core.model import Caller
from mcp_memory.embedders.local.embedder import LocalEmbedder

NOW_MS = 1_780_000_000_000.0
DUMP = open(os.environ["DUMP"], "w") if os.environ.get("DUMP") else None


@dataclass
class Case:
    tenant: str
    query: str
    gold: frozenset[str]  # dataset ids; empty: nothing stored answers it
    kind: str


@dataclass
class Corpus:
    name: str
    memories: list[tuple[str, str, str]]  # (tenant, dataset id, text)
    cases: list[Case]


def madial() -> Corpus:
    data = md.load()
    memories = [(f"u{u}", str(m), data.memories[m]) for u, pool in sorted(data.pools.items()) for m in pool]
    cases = [Case(f"u{d.user}", d.query, frozenset(str(g) for g in d.gold), "dialogue") for d in data.dialogues]
    return Corpus("MADial-Bench", memories, cases)


def project() -> Corpus:
    facts, questions = project_set_data.load()
    memories = [(f.tenant, f.id, f.text) for f in facts]
    cases = [Case(q.tenant, q.text, frozenset(q.gold), q.kind) for q in questions]
    return Corpus("project set", memories, cases)


async def run(corpus: Corpus, embedder: LocalEmbedder) -> None:
    service = in_memory_service(embedder, pod_id="probe", floor=0.2, high=0.6, clock=lambda: NOW_MS)
    service.counters.record = lambda *a, **k: None  # type: ignore[method-assign]
    back: dict[str, set[str]] = defaultdict(set)
    for tenant, key, text in corpus.memories:
        result = await service.remember(Caller(tenant), text)
        back[result.memory.id].add(key)
    print(
        f"\n### {corpus.name}: {len(corpus.memories)} memories, {len(corpus.cases)} questions "
        f"({sum(not c.gold for c in corpus.cases)} without an answer)\n"
    )
    print("| retrieval | R@1 | R@5 | R@10 | HIGH: n / right / absent | MEDIUM: n / right / absent | LOW: n / absent |")
    print("|---|---|---|---|---|---|---|")
    for retrieval in ("dense", "keyword", "hybrid"):
        service.retrieval = retrieval  # type: ignore[assignment]
        recall = {1: 0.0, 5: 0.0, 10: 0.0}
        labels: dict[str, list[int]] = {"high": [0, 0, 0], "medium": [0, 0, 0], "low": [0, 0, 0]}
        answerable = 0
        for case in corpus.cases:
            result = await service.recall(Caller(case.tenant), case.query, limit=10)
            ranked = [k for r in result.results for k in sorted(back[r.memory.id])]
            if DUMP and retrieval == "hybrid":
                rs = result.results
                DUMP.write(
                    json.dumps(
                        {
                            "set": corpus.name,
                            "kind": case.kind,
                            "absent": not case.gold,
                            "right": bool(ranked[:1]) and ranked[0] in case.gold,
                            "rel": [r.relevance for r in rs[:3]],
                            "sim": [r.similarity for r in rs[:3]],
                            "kw": [r.keyword for r in rs[:3]],
                            "n": len(rs),
                            "gated": result.gated,
                            "query": case.query,
                            "tenant": case.tenant,
                            "top": [r.memory.content for r in rs[:2]],
                        }
                    )
                    + "\n"
                )
            cell = labels[result.confidence]
            cell[0] += 1
            if case.gold:
                answerable += 1
                for k in recall:
                    recall[k] += len(case.gold & set(ranked[:k])) / len(case.gold)
                cell[1] += bool(ranked[:1]) and ranked[0] in case.gold
            else:
                cell[2] += 1
        r = " | ".join(f"{100 * recall[k] / answerable:.1f}" for k in recall)
        high, medium, low = labels["high"], labels["medium"], labels["low"]

        def share(cell: list[int]) -> str:
            answered = cell[0] - cell[2]
            pct = f"{100 * cell[1] / answered:.0f}%" if answered else "–"
            return f"{cell[0]} / {pct} / {cell[2]}"

        print(f"| {retrieval} | {r} | {share(high)} | {share(medium)} | {low[0]} / {low[2]} |")


async def main(which: str) -> None:
    embedder = LocalEmbedder()
    corpora = {"madial": madial, "project": project}
    for name in ("madial", "project") if which == "both" else (which,):
        await run(corpora[name](), embedder)
    await embedder.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="both", choices=("madial", "project", "both"))
    asyncio.run(main(parser.parse_args().set))
