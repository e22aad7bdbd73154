"""Which HIGH rule holds on every dev set: the evidence recall sees, and candidate rules over it.

    PYTHONPATH=$PWD .venv/bin/python -m bench.quality.confidence_rules [--json FILE]

Runs the real service (in-memory stores, the local model, fixed clock, nothing counted; hybrid
retrieval, balanced mode, limit 10, the shipped floor 0.2 and HIGH 0.6) over three sets:

- MADial-Bench: 160 dialogues, every one with an answer;
- MADial without its answers: each dialogue asked of its user's memories with that dialogue's gold
  memories taken out (a proxy for a question about something not stored: the rest of the pool is
  about the same person and topics);
- the project-memory dev set (bench/data/project_memory): 525 answerable questions, 62 absent.

For each question it records what the confidence rule is given (the top result's relevance,
cosine and keyword score, the next candidate's relevance and cosine, the query's terms and their
idf, whether the top result holds each) and then prints, for each candidate rule, per set: how many
answerable questions are HIGH and how often their top result is right, and how many absent ones
are HIGH. The rule called "shipped" is `fusion.confidence` as the service runs it. Then, for
candidate ratio gates on the fused relevance (recall at limit 50, its candidates above the floor in
relevance order, which is recall's order here: one clock, no counts), R@1/3/10 of what each gate
keeps and how many candidates it keeps, median per question.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.harness.service import service_on
from bench.quality import confidence_probe as cp
from bench.quality import retrieval_eval as ev
from mcp_memory.core import fusion, keywords, recall
from mcp_memory.core.model import Caller
from mcp_memory.embedders.local.embedder import LocalEmbedder
from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore

FLOOR, HIGH = 0.2, 0.6


@dataclass
class Evidence:
    set: str
    absent: bool
    right: bool
    label: str  # what the service said
    rel: float  # top result
    sim: float
    kw: float
    rel2: float  # the next candidate (by relevance)
    sim2: float
    rel_median: float  # median relevance of the candidates above the floor
    n: int  # candidates above the floor
    idf: list[float]  # the query's terms, with their idf ...
    held: list[bool]  # ... and whether the top result holds each
    # what fusion.confidence got
    covered: float
    pool: list[tuple[float, bool]]  # limit 50: every candidate above the floor, best first; is it gold
    gold: int  # how many gold memories the question has


async def collect(corpus: cp.Corpus, embedder, gold_removed: bool = False) -> list[Evidence]:
    vectors = InMemoryVectorStore()
    service = service_on(
        vectors, InMemoryObjectStore(), embedder, pod_id="probe", floor=FLOOR, high=HIGH, clock=lambda: cp.NOW_MS
    )
    service.counters.record = lambda *a, **k: None  # type: ignore[method-assign]
    back: dict[str, set[str]] = {}
    ids: dict[tuple[str, str], str] = {}
    for tenant, key, text in corpus.memories:
        result = await service.remember(Caller(tenant), text)
        back.setdefault(result.memory.id, set()).add(key)
        ids[(tenant, key)] = result.memory.id
    seen: dict = {}
    original = getattr(recall.confidence, "__wrapped__", recall.confidence)  # the shipped rule

    def spy(retrieval, results, relevant, terms, answer, high, *near):  # near: the pair rule HIGH skips by
        seen.update(results=results, relevant=relevant, terms=terms, answer=answer)
        return original(retrieval, results, relevant, terms, answer, high, *near)

    spy.__wrapped__ = original  # type: ignore[attr-defined]
    recall.confidence = spy  # in this process only
    out = []
    name = corpus.name + (", answers removed" if gold_removed else "")
    for case in corpus.cases:
        taken = {}
        if gold_removed:
            for g in case.gold:
                key = (case.tenant, ids[(case.tenant, g)])
                taken[key] = vectors._records.pop(key)
        await service.recall(Caller(case.tenant), case.query, limit=50)  # the largest pool, for the gates
        wide = sorted(seen["relevant"], key=lambda c: -c.relevance)
        result = await service.recall(Caller(case.tenant), case.query, limit=10)
        vectors._records.update(taken)
        results, relevant, terms, answer = seen["results"], seen["relevant"], seen["terms"], seen["answer"]
        if not results:
            out.append(
                Evidence(
                    name,
                    gold_removed or not case.gold,
                    False,
                    "low",
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    [],
                    [],
                    0,
                    [],
                    len(case.gold),
                )
            )
            continue
        top = results[0]
        others = sorted((c for c in relevant if c.memory.id != top.memory.id), key=lambda c: -c.relevance)
        held_tokens = set(keywords.tokens(top.memory.content))
        stats = answer.stats
        out.append(
            Evidence(
                set=name,
                absent=gold_removed or not case.gold,
                right=not gold_removed and bool(back[top.memory.id] & case.gold),
                label=result.confidence,
                rel=top.relevance,
                sim=top.similarity,
                kw=top.keyword,
                rel2=others[0].relevance if others else 0.0,
                sim2=max((c.similarity for c in others), default=0.0),
                rel_median=statistics.median(c.relevance for c in relevant),
                n=len(relevant),
                idf=[stats.idf(t) for t in terms],
                held=[t in held_tokens for t in terms],
                covered=keywords.coverage(terms, top.memory.content, stats),
                pool=[(c.relevance, not gold_removed and bool(back[c.memory.id] & case.gold)) for c in wide],
                gold=len(case.gold),
            )
        )
    return out


# --------------------------------------------------------------------------- rules


def cover_top(e: Evidence, k: int) -> float:
    """idf coverage over the query's k most informative (rarest) terms."""
    pairs = sorted(zip(e.idf, e.held), key=lambda p: -p[0])[:k]
    total = sum(w for w, _ in pairs)
    return sum(w for w, h in pairs if h) / total if total else 0.0


def before(e: Evidence) -> bool:
    """The rule before the long-query path: relevance, coverage of every term, margin."""
    return e.rel >= HIGH and e.covered >= fusion.COVERAGE_HIGH and e.rel - e.rel2 >= fusion.MARGIN_HIGH


def shipped(e: Evidence) -> bool:
    evidence = {"terms": len(e.idf), "cosine": e.sim, "cosine_runner_up": e.sim2}
    return fusion.confidence(e.rel, e.rel2, e.covered, HIGH, **evidence) == "high"


def old_cosine(e: Evidence) -> bool:
    return e.sim >= HIGH


def rules() -> dict[str, Callable[[Evidence], bool]]:
    r: dict[str, Callable[[Evidence], bool]] = {
        "shipped": shipped,
        "before (coverage of every term)": before,
        "cosine ≥ 0.6 (the dense label)": old_cosine,
    }
    for k in (3, 5, 8):
        r[f"cover top-{k} ≥ 0.7, rel ≥ .6, margin ≥ .1"] = lambda e, k=k: (
            e.rel >= HIGH and cover_top(e, k) >= 0.7 and e.rel - e.rel2 >= 0.1
        )
    for m in (0.05, 0.1, 0.15):
        r[f"dense: cos ≥ .6, cos lead ≥ {m}"] = lambda e, m=m: e.sim >= HIGH and e.sim - e.sim2 >= m
        r[f"dense: cos ≥ .6, rel lead ≥ {m}"] = lambda e, m=m: e.sim >= HIGH and e.rel - e.rel2 >= m
    for f in (0.25, 0.33, 0.5):
        r[f"rel ≥ .6, lead ≥ {f} × (top − median)"] = lambda e, f=f: (
            e.rel >= HIGH and e.rel - e.rel2 >= f * (e.rel - e.rel_median)
        )
    for m in (0.1, 0.15, 0.2):
        r[f"rel ≥ .6, margin ≥ {m} (no coverage)"] = lambda e, m=m: e.rel >= HIGH and e.rel - e.rel2 >= m
    r["before OR cos ≥ .6 ∧ cos lead ≥ .1 (any length)"] = lambda e: (
        before(e) or (e.sim >= HIGH and e.sim - e.sim2 >= 0.1)
    )
    r["before OR cos ≥ .6 ∧ rel lead ≥ .1 (any length)"] = lambda e: (
        before(e) or (e.sim >= HIGH and e.rel - e.rel2 >= 0.1)
    )
    r["top-5 cover OR dense cos ≥ .6 ∧ rel lead ≥ .1"] = lambda e: (
        e.rel >= HIGH and e.rel - e.rel2 >= 0.1 and (cover_top(e, 5) >= 0.7 or e.sim >= HIGH)
    )
    r["top-5 cover OR dense cos ≥ .6 ∧ rel lead ≥ .15"] = lambda e: (
        e.rel >= HIGH
        and e.rel - e.rel2 >= 0.1
        and (cover_top(e, 5) >= 0.7 or (e.sim >= HIGH and e.rel - e.rel2 >= 0.15))
    )
    for k in (10, 15, 25):
        r[f"before OR (> {k} terms ∧ cos ≥ .6 ∧ cos lead ≥ .1)"] = lambda e, k=k: (
            before(e) or (len(e.idf) > k and e.sim >= HIGH and e.sim - e.sim2 >= 0.1)
        )
    return r


def table(evidence: list[Evidence]) -> list[str]:
    sets = list(dict.fromkeys(e.set for e in evidence))
    head = "| rule | " + " | ".join(sets) + " |"
    lines = [head, "|---" * (len(sets) + 1) + "|"]
    for name, rule in rules().items():
        cells = []
        for s in sets:
            group = [e for e in evidence if e.set == s]
            answerable = [e for e in group if not e.absent]
            absent = [e for e in group if e.absent]
            high = [e for e in answerable if rule(e)]
            cell = f"{len(high)}, {100 * sum(e.right for e in high) / len(high):.1f} %" if high else "0"
            if absent:
                cell += f" / absent {sum(rule(e) for e in absent)} of {len(absent)}"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


# --------------------------------------------------------------------------- gates


def ratio_gate(keep: float) -> Callable[[list[tuple[float, bool]]], list[tuple[float, bool]]]:
    """The shipped gate: within `keep` of the top relevance."""
    return lambda pool: [c for c in pool if c[0] >= keep * pool[0][0]]


def floor_gate(keep: float) -> Callable[[list[tuple[float, bool]]], list[tuple[float, bool]]]:
    """Within `keep` of the top's height above the floor."""
    return lambda pool: [c for c in pool if c[0] - FLOOR >= keep * (pool[0][0] - FLOOR)]


def background_gate(keep: float) -> Callable[[list[tuple[float, bool]]], list[tuple[float, bool]]]:
    """Within `keep` of the top's height above the candidates' median (what an unrelated memory scores)."""

    def gate(pool: list[tuple[float, bool]]) -> list[tuple[float, bool]]:
        median = statistics.median(c[0] for c in pool)
        return [c for c in pool if c[0] - median >= keep * (pool[0][0] - median)]

    return gate


GATES = {
    "ratio 0.8 of the top (precision, shipped)": ratio_gate(0.8),
    "ratio 0.6 of the top (balanced, shipped)": ratio_gate(0.6),
    "ratio 0.35 of the top (exploratory, shipped)": ratio_gate(0.35),
    "0.8 of the height above the floor": floor_gate(0.8),
    "0.5 of the height above the floor": floor_gate(0.5),
    "0.8 of the height above the median candidate": background_gate(0.8),
    "0.5 of the height above the median candidate": background_gate(0.5),
    "0.25 of the height above the median candidate": background_gate(0.25),
}


def gate_table(evidence: list[Evidence]) -> list[str]:
    """Per gate: R@1/3/10 of what it keeps (in relevance order, limit 50) and how many it keeps,
    for the answerable questions and for the questions without an answer."""
    sets = list(dict.fromkeys(e.set for e in evidence))
    lines = [
        "| gate | " + " | ".join(sets) + " |",
        "|---" * (len(sets) + 1) + "|",
    ]
    for name, gate in GATES.items():
        cells = []
        for s in sets:
            group = [e for e in evidence if e.set == s and e.pool]
            answerable = [e for e in group if not e.absent]
            absent = [e for e in group if e.absent]
            parts = []
            if answerable:
                kept = [gate(e.pool) for e in answerable]
                r = {
                    k: 100 * sum(sum(g for _, g in p[:k]) / e.gold for p, e in zip(kept, answerable)) / len(answerable)
                    for k in (1, 3, 10)
                }
                parts.append(
                    f"R@1/3/10 {r[1]:.1f}/{r[3]:.1f}/{r[10]:.1f}, keeps {statistics.median(len(p) for p in kept):g}"
                )
            if absent:
                parts.append(f"absent keep {statistics.median(len(gate(e.pool)) for e in absent):g}")
            cells.append("; ".join(parts))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


async def main(dump: str | None) -> None:
    embedder = ev.CachedEmbedder(LocalEmbedder())
    evidence: list[Evidence] = []
    mad = cp.madial()
    evidence += await collect(mad, embedder)
    evidence += await collect(mad, embedder, gold_removed=True)
    evidence += await collect(cp.project(), embedder)
    await embedder.close()
    if dump:
        Path(dump).write_text("\n".join(json.dumps(asdict(e)) for e in evidence) + "\n")
    print("\n".join(table(evidence)))
    print("\nGates on the fused relevance (limit 50; median candidates kept):\n")
    print("\n".join(gate_table(evidence)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the per-question evidence to this file (JSON lines)")
    asyncio.run(main(parser.parse_args().json))
