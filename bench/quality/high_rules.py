"""Candidate HIGH rules for long queries (a dialogue asked whole), chosen on one half of the
questions and reported on the other: the search behind "HIGH on MADial" in bench/RESULTS.md.

    [SETS=madial,conversations,project,updates] nice .venv/bin/python -m bench.quality.high_rules [--json FILE]

Runs bench/quality/high_evidence.py's passes (hybrid, SQLite, the local model, balanced, cold,
limit 50) and records, for each question, the evidence the confidence rule is given: the top
result's relevance and cosine, the best relevance and cosine among the other relevant candidates
not near the top (the runner-up HIGH reads), its coverage and the query's term count. Each rule
of the family below is then scored per set and per half (even and odd positions): the share of
answerable questions labelled HIGH and how often their top result is right. The rule chosen is
the one with the largest share on the even half among those right ≥ 80 % there; its odd-half
figures are the ones to quote. Every rule keeps the shipped one (a question's rule) and only adds
HIGHs for queries of more than fusion.QUESTION_TERMS terms, at the shipped mark and margin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import mcp_memory  # noqa: F401  (first: from PYTHONPATH, before this tree is put on the path)
from bench.quality import high_evidence as he
from mcp_memory.core import fusion
from mcp_memory.core import recall as pipeline
from mcp_memory.core.keywords import coverage

Evidence = dict
Rule = Callable[[Evidence], bool]
HIGH = 0.6  # the local model's shipped mark (docs/embedders.md)


def collect(log: list[Evidence]) -> Callable:
    """A stand-in for recall.confidence that records its evidence and answers as the shipped rule."""
    shipped = pipeline.confidence

    def spy(retrieval, results, relevant, terms, answer, high, *near):
        label = shipped(retrieval, results, relevant, terms, answer, high, *near)
        seen: Evidence = {"label": label, "results": bool(results)}
        if results and answer is not None:
            top, is_near = results[0], (near[0] if near else (lambda a, b: False))
            others = [c for c in relevant if c.memory.id != top.memory.id and not is_near(top.memory.id, c.memory.id)]
            seen.update(
                rel=top.relevance,
                cos=top.similarity,
                rel2=max((c.relevance for c in others), default=0.0),
                cos2=max((c.similarity for c in others), default=0.0),
                covered=coverage(terms, top.memory.content, answer.stats),
                terms=len(terms),
            )
        log.append(seen)
        return label

    return spy


def _lead(a: float, b: float) -> float:
    return round(a - b, 12)


def long_query(extra: Rule) -> Rule:
    def rule(e: Evidence) -> bool:
        return e["label"] == "high" or ("rel" in e and e["terms"] > fusion.QUESTION_TERMS and extra(e))

    return rule


def family() -> dict[str, Rule]:
    rules: dict[str, Rule] = {"shipped": lambda e: e["label"] == "high"}
    rules["relevance at the mark, cosine lead 0.1"] = long_query(
        lambda e: e["rel"] >= HIGH and _lead(e["cos"], e["cos2"]) >= fusion.MARGIN_HIGH
    )
    for margin in (0.1, 0.15, 0.2, 0.25):
        rules[f"relevance at the mark, relevance lead {margin:g}"] = long_query(
            lambda e, m=margin: e["rel"] >= HIGH and _lead(e["rel"], e["rel2"]) >= m
        )
    for margin in (0.05, 0.08):
        rules[f"relevance at the mark, relevance lead 0.1, cosine lead {margin:g}"] = long_query(
            lambda e, m=margin: (
                e["rel"] >= HIGH
                and _lead(e["rel"], e["rel2"]) >= fusion.MARGIN_HIGH
                and _lead(e["cos"], e["cos2"]) >= m
            )
        )
    return rules


def score(rows: list[Evidence], rule: Rule) -> dict[str, float | int | None]:
    got = [r for r in rows if r["gold"] and rule(r)]
    answerable = sum(r["gold"] for r in rows)
    return {
        "high": len(got),
        "share": round(100 * len(got) / max(1, answerable), 1),
        "precision": round(100 * sum(r["right"] for r in got) / len(got), 1) if got else None,
        "absent_high": sum(1 for r in rows if not r["gold"] and rule(r)),
    }


async def main(dump: str | None) -> None:
    sets = os.environ.get("SETS", "madial,conversations,project,updates").split(",")
    rows: list[Evidence] = []
    log: list[Evidence] = []
    pipeline.confidence = collect(log)  # in this process only
    for name in sets:
        with tempfile.TemporaryDirectory() as tmp:
            env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "h.db")}
            measure = he.fixed_clock if name in ("project", "madial") else he.timed
            log.clear()
            outcomes, probes = await measure(name, env, "hybrid")
        assert len(log) == len(outcomes), "one confidence call per question"
        for i, (o, p, e) in enumerate(zip(outcomes, probes, log)):
            right = bool(o.ranked) and o.ranked[0] in p.gold
            rows.append(
                {"set": name, "half": "even" if i % 2 == 0 else "odd", "gold": bool(p.gold), "right": right, **e}
            )
    if dump:
        Path(dump).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for name, rule in family().items():
        line = {"rule": name}
        for s in sets:
            for half in ("even", "odd"):
                line[f"{s} {half}"] = score([r for r in rows if r["set"] == s and r["half"] == half], rule)
        print(json.dumps(line), flush=True)
    madial = [r for r in rows if r["set"] == "madial"]
    if madial:
        even = {n: score([r for r in madial if r["half"] == "even"], rule) for n, rule in family().items()}
        held = {n: s for n, s in even.items() if s["precision"] is not None and s["precision"] >= 80}
        chosen = max(held, key=lambda n: (held[n]["share"], n)) if held else None
        odd = score([r for r in madial if r["half"] == "odd"], family()[chosen]) if chosen else None
        print(json.dumps({"chosen on the even half of MADial": chosen, "even": held.get(chosen), "odd": odd}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the per-question evidence to this file (JSON lines)")
    asyncio.run(main(parser.parse_args().json))
