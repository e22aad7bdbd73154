"""The dedup rule against "merge only on normalised equality, report the rest as near" (issue 24 item 6).

    .venv/bin/python -m bench.quality.dedup_equality           # the local model's cosines
    .venv/bin/python -m bench.quality.dedup_equality --no-model # the texts alone, gates passed

A measurement, not a proposal that ships: today's rule (`dedup.same`) is compared with three
readings of "the same text", each of which merges only when the cosine passes DEDUP_SIMILARITY
and the two normalised texts are equal; every other pair past the cosine and word-overlap gates
is reported as near (stored, and named as a possible duplicate or correction).

- `exact`: NFKC, case folded, whitespace collapsed;
- `tokens`: the rule's own words (`dedup.tokens`: edge punctuation off, hyphens and apostrophes
  inside a word off, negative contractions spelt out), in order;
- `tokens-joined`: those words with the articles dropped, joined without spaces (Korean spacing).

Four sets of pairs: the pair table's MERGE pairs and APART pairs (tests/core/dedup_pairs.py),
the built-in calibration set's facts with their typo (should merge) and all their pairs (distinct
facts: should stay apart), and the 165 corrections of bench/data/updates (should stay apart).
With the model, each pair's cosine is the local model's on what `remember` embeds; without it,
every pair is taken to pass the cosine gate, so only the texts decide. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.data import update_set_data
from mcp_memory.core import dedup, recall
from mcp_memory.core.dedup_words import ARTICLES
from tests.core.dedup_pairs import APART, MERGE

ROOT = Path(__file__).resolve().parents[2]
#: The two pairs the rule's docstring used to give with their cosines.
EXAMPLES = [
    ("Deploys are allowed on Fridays", "Deploys are not allowed on Fridays"),
    ("CI uses Python 3.11", "CI uses Python 3.12"),
]


def _exact(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(t.key for t in dedup.tokens(text))


def _joined(text: str) -> str:
    return "".join(t.key for t in dedup.tokens(text) if t.key not in ARTICLES)


NORMALISERS: dict[str, Callable[[str], object]] = {"exact": _exact, "tokens": _tokens, "tokens-joined": _joined}


def pair_sets() -> dict[str, tuple[bool, list[tuple[str, str]]]]:
    """name -> (should merge, [(stored, new)])."""
    builtin = ROOT / "mcp_memory" / "data" / "calibration_builtin.jsonl"
    lines = builtin.read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip() and not line.startswith("#")]
    facts = [c["fact"] for c in cases if "fact" in c]
    typos = [(c["fact"], c["typo"]) for c in cases if "typo" in c]
    updates = update_set_data.load()
    return {
        "pair table, merge": (True, list(MERGE)),
        "calibration set, fact and its typo": (True, typos),
        "pair table, apart": (False, [(a, b) for a, b, _ in APART]),
        "calibration set, distinct facts": (False, [(a, b) for i, a in enumerate(facts) for b in facts[i + 1 :]]),
        "updates, corrections": (False, [(u.old, u.new) for u in updates]),
    }


async def cosines(pairs: list[tuple[str, str]]) -> list[float]:
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    texts = sorted({t for pair in pairs for t in pair})
    embedder = LocalEmbedder()
    try:
        vectors = await embedder.embed([recall.embedding_input(t) for t in texts])
    finally:
        await embedder.close()
    at = {t: np.asarray(v, dtype=np.float64) for t, v in zip(texts, vectors, strict=True)}
    return [float(at[a] @ at[b] / (np.linalg.norm(at[a]) * np.linalg.norm(at[b]))) for a, b in pairs]


def outcome(similarity: float, stored: str, new: str) -> dict[str, str]:
    """What each rule does with the pair: "merge", "near" (past the gates, stored and named) or
    "apart" (not near by the cosine and the word overlap)."""
    verdict = dedup.judge(similarity, new, stored)
    gated = verdict.same or verdict.near
    out = {"today": "merge" if verdict.same else "near" if verdict.near else "apart"}
    for name, norm in NORMALISERS.items():
        equal = similarity >= dedup.DEDUP_SIMILARITY and norm(stored) == norm(new)
        out[name] = "merge" if equal else "near" if gated else "apart"
    return out


async def main(use_model: bool) -> None:
    sets = pair_sets()
    everything = [pair for _, pairs in sets.values() for pair in pairs] + EXAMPLES
    sims = await cosines(everything) if use_model else [1.0] * len(everything)
    by_pair = dict(zip(everything, sims, strict=True))
    report: dict[str, object] = {"cosines": "local model" if use_model else "none (every pair passes the cosine gate)"}
    if use_model:
        report["examples"] = {f"{a} / {b}": round(by_pair[(a, b)], 3) for a, b in EXAMPLES}
    rules = ["today", *NORMALISERS]
    for name, (should_merge, pairs) in sets.items():
        counts = {rule: {"merge": 0, "near": 0, "apart": 0} for rule in rules}
        lost: dict[str, list[str]] = {rule: [] for rule in NORMALISERS}
        for stored, new in pairs:
            seen = outcome(by_pair[(stored, new)], stored, new)
            for rule in rules:
                counts[rule][seen[rule]] += 1
            for rule in NORMALISERS:
                if seen["today"] == "merge" and seen[rule] != "merge":
                    lost[rule].append(f"{stored} / {new}")
        entry: dict[str, object] = {"pairs": len(pairs), "should": "merge" if should_merge else "stay apart"}
        entry.update(counts)
        if should_merge:
            entry["merged today, not under equality"] = {rule: len(v) for rule, v in lost.items()}
            entry["examples not merged under tokens-joined"] = lost["tokens-joined"][:6]
        report[name] = entry
    print(json.dumps(report, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-model", action="store_true", help="judge the texts alone (every cosine passes)")
    args = parser.parse_args()
    asyncio.run(main(not args.no_model))
