"""What the relevance model does to recall, on the test halves of every dev set: R@1/5/10 with and
without the second stage, how well the answer's probability separates questions recall can answer
from those it cannot (AUROC), how true it is (expected calibration error), and each band's
reliability.

    [PROVIDER=local-multilingual] [HALF=test|fit|all] nice .venv/bin/python -m bench.quality.judgment_eval \
        [--json] [--held-out] [--by-language]

Each set is held in in-memory stores under its own ids and instants (bench/quality/judgment_data.py)
and every question asked through the service's `recall`, cold, balanced, limit 50: once as
shipped, once with the second stage switched off (`service.judge = None`: the first stage's
relevance, the mode's ratio gate and the rule-based HIGH of before). Per set (its test half by
default; MADial counts its dialogues asked with their gold memories taken out as its absent
questions; the built-in calibration set is all test):

- R@1/5/10 over the answerable questions, before → after;
- AUROC of the answer's probability, answerable against absent questions ("answerable"), and
  top result right against not ("top right");
- ECE: the expected calibration error of the answer's probability against "the top result is
  right" (10 equal bins; an answer with no results is not right);
- per band (HIGH, MEDIUM, LOW, nothing answers): questions, how many had a right top result,
  how many were absent;
- HIGH: its precision, and the share of the right top results it labels (coverage).

`--held-out` asks every question a third time, in the same run, with the embedder-agnostic model
(bench/quality/judgment_fit.py `agnostic`) fitted WITHOUT this embedder's feature table and reading
cosines on the spread `calibrate --builtin` measures for this embedder: what an embedder no model
was fitted for gets once its operator has set RECALL_COSINE_SPREAD (leave one embedder out). Its row is printed as "held out",
beside the embedder's own model ("after") and no model ("before", the rule-based label, whose
AUROC is that of its label: HIGH above MEDIUM above nothing). `--by-language` reports each set's
Korean questions (any Hangul syllable) and the others apart (`project/ko`, `project/en`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from bench.quality import judgment_data as jd

BANDS = ("high", "medium", "low", "none")
#: A question with a Hangul syllable in it counts as Korean (`--by-language`).
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """The chance that a positive scores above a negative (ties count half); None without both."""
    if not positive or not negative:
        return None
    neg = np.sort(np.asarray(negative))
    wins = 0.0
    for p in positive:
        wins += np.searchsorted(neg, p, side="left") + 0.5 * (
            np.searchsorted(neg, p, side="right") - np.searchsorted(neg, p, side="left")
        )
    return float(wins / (len(positive) * len(negative)))


def ece(probability: Sequence[float], right: Sequence[bool], bins: int = 10) -> float | None:
    """Expected calibration error: the bins' |mean probability − share right|, weighted by size."""
    if not probability:
        return None
    p, r = np.asarray(probability), np.asarray(right, dtype=float)
    edges = np.minimum((p * bins).astype(int), bins - 1)
    return float(
        sum(
            (edges == b).sum() / len(p) * abs(p[edges == b].mean() - r[edges == b].mean())
            for b in range(bins)
            if (edges == b).any()
        )
    )


def recall_at(ranked: Sequence[str], gold: frozenset[str], k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold)


def measure(rows: list[tuple[jd.Asked, jd.Asked]]) -> dict:
    """rows: (after, before) per question of one set."""
    answerable = [(a, b) for a, b in rows if a.question.gold]
    out: dict = {"questions": len(rows), "answerable": len(answerable), "absent": len(rows) - len(answerable)}
    for name, pick in (("before", 1), ("after", 0)):
        out[name] = {
            f"R@{k}": round(
                100 * float(np.mean([recall_at(r[pick].ranked, r[pick].question.gold, k) for r in answerable])), 1
            )
            if answerable
            else None
            for k in (1, 5, 10)
        }
    after = [a for a, _ in rows]
    prob = [a.probability if a.probability is not None else 0.0 for a in after]
    right = [bool(a.ranked) and a.ranked[0] in a.question.gold for a in after]
    has = [bool(a.question.gold) for a in after]
    out["auroc_answerable"] = _r(auroc([p for p, h in zip(prob, has) if h], [p for p, h in zip(prob, has) if not h]))
    out["auroc_top_right"] = _r(auroc([p for p, r in zip(prob, right) if r], [p for p, r in zip(prob, right) if not r]))
    out["ece"] = _r(ece(prob, right))
    out["bands"] = {
        band: {
            "n": sum(a.confidence == band for a in after),
            "right": sum(a.confidence == band and r for a, r in zip(after, right)),
            "absent": sum(a.confidence == band and not h for a, h in zip(after, has)),
        }
        for band in BANDS
    }
    high = out["bands"]["high"]
    out["high_precision"] = _r(high["right"] / high["n"] if high["n"] else None)
    out["high_coverage"] = _r(high["right"] / sum(right) if sum(right) else None)
    rank = {"high": 2.0, "medium": 1.0, "low": 0.5}
    label = [rank.get(b.confidence, 0.0) for _, b in rows]
    out["before_auroc_answerable"] = _r(
        auroc([v for v, h in zip(label, has) if h], [v for v, h in zip(label, has) if not h])
    )
    out["before_high"] = {
        "n": sum(b.confidence == "high" for _, b in rows),
        "right": sum(b.confidence == "high" and bool(b.ranked) and b.ranked[0] in b.question.gold for _, b in rows),
        "absent": sum(b.confidence == "high" and not b.question.gold for _, b in rows),
    }
    before = out["before_high"]
    right_before = sum(bool(b.ranked) and b.ranked[0] in b.question.gold for _, b in rows)
    out["before_high_precision"] = _r(before["right"] / before["n"] if before["n"] else None)
    out["before_high_coverage"] = _r(before["right"] / right_before if right_before else None)
    return out


async def held_out_model(provider: str, embedder):
    """The embedder-agnostic model fitted on every other local model's feature table
    (bench/quality/judgment_fit.py `agnostic`), on `provider`'s calibrated floor and the spread
    `calibrate --builtin` measures for it with `embedder`: what an operator of an embedder with no
    model of its own sets. AGNOSTIC=all: the model reading every feature instead, fitted on the
    other tables as they are, on `provider`'s calibrated floor and HIGH mark."""
    from bench.quality import judgment_fit as jf
    from mcp_memory.core import judgment
    from mcp_memory.core.calibration.calibrate import builtin_cases, calibrate
    from mcp_memory.embedders import PROVIDERS
    from mcp_memory.stores.in_memory import InMemoryVectorStore

    others = {p: jf.load_table(p) for p in jf.PROVIDERS if p != provider}
    floor, high = PROVIDERS[provider].calibrated or (0.1, 0.3)
    if os.environ.get("AGNOSTIC") == "all":
        return judgment.model_from("held-out", (floor, high), jf.fit(jf.stacked(list(others.values()))))
    report = await calibrate(embedder, builtin_cases(), floor=floor, high=high, scratch=InMemoryVectorStore())
    spread = report.spread
    assert spread is not None, "calibrate --builtin measured no spread"
    print(f"{provider}: calibrate --builtin measures RECALL_COSINE_SPREAD={spread:g}", file=sys.stderr)
    return judgment.model_from("held-out", (floor, floor + spread), jf.agnostic(others))


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


async def run(
    provider: str, half: str, names: Sequence[str] | None = None, held_out: bool = False, by_language: bool = False
) -> dict[str, dict]:
    from mcp_memory.config import Settings
    from mcp_memory.embedders import open_embedder

    embedder = open_embedder(Settings.from_env({"EMBEDDING_PROVIDER": provider}).embedding)
    vectors = jd.Vectors(provider, embedder)
    grouped: dict[str, list[tuple[jd.Asked, jd.Asked]]] = defaultdict(list)
    third: dict[str, list[tuple[jd.Asked, jd.Asked]]] = defaultdict(list)
    agnostic = await held_out_model(provider, jd.CachedEmbedder(embedder, vectors)) if held_out else None
    try:
        for devset in jd.dev_sets(names):
            devset.questions = [q for q in devset.questions if half == "all" or q.half == half]
            if not devset.questions:
                continue
            service = await jd.open_set_service(provider, devset, vectors)
            after = await jd.ask(service, devset, candidates=False)
            service.judge = None
            before = await jd.ask(service, devset, candidates=False)
            name = "madial" if devset.name == "madial-removed" else devset.name

            def key(asked: jd.Asked, name: str = name) -> str:
                return f"{name}/{'ko' if _HANGUL.search(asked.question.text) else 'en'}" if by_language else name

            for pair in zip(after, before):
                grouped[key(pair[0])].append(pair)
            if agnostic is not None:
                service.judge = agnostic
                for pair in zip(await jd.ask(service, devset, candidates=False), before):
                    third[key(pair[0])].append(pair)
            vectors.save()
    finally:
        await embedder.close()
    out = {name: measure(rows) for name, rows in grouped.items()}
    for name, rows in third.items():
        out[name]["held_out"] = measure(rows)
    return out


def main(argv: Sequence[str]) -> int:
    provider = os.environ.get("PROVIDER", "local")
    half = os.environ.get("HALF", "test")
    results = asyncio.run(run(provider, half, held_out="--held-out" in argv, by_language="--by-language" in argv))
    for name, row in results.items():
        if "--json" in argv:
            print(json.dumps({"provider": provider, "half": half, "set": name, **row}))
            continue
        b, a = row["before"], row["after"]
        print(
            f"{name:14s} n={row['answerable']:3d}+{row['absent']:3d}  R@1/5/10 {b['R@1']}/{b['R@5']}/{b['R@10']} -> "
            f"{a['R@1']}/{a['R@5']}/{a['R@10']}  AUROC ans {row['auroc_answerable']} top {row['auroc_top_right']}  "
            f"ECE {row['ece']}  HIGH {row['high_precision']}/{row['high_coverage']} (before {row['before_high']})"
        )
        print(
            "               bands "
            + "  ".join(f"{k}: {v['n']} ({v['right']} right, {v['absent']} absent)" for k, v in row["bands"].items())
        )
        if "held_out" in row:
            h = row["held_out"]
            print(
                f"  held out     R@1/5/10 {h['after']['R@1']}/{h['after']['R@5']}/{h['after']['R@10']}  "
                f"AUROC ans {h['auroc_answerable']} (rule-based label {row['before_auroc_answerable']}) "
                f"top {h['auroc_top_right']}  ECE {h['ece']}  HIGH {h['high_precision']}/{h['high_coverage']} "
                f"(rule-based {row['before_high_precision']}/{row['before_high_coverage']})"
            )
            print(
                "               bands "
                + "  ".join(f"{k}: {v['n']} ({v['right']} right, {v['absent']} absent)" for k, v in h["bands"].items())
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
