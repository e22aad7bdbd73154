"""Refit the relevance model (mcp_memory/core/judgment.py) and write the weights the package loads,
`mcp_memory/data/judgment.json`, byte for byte as shipped.

    nice .venv/bin/python -m bench.quality.judgment_fit            # ask every dev set again, refit, write
    nice .venv/bin/python -m bench.quality.judgment_fit --table    # refit from the committed feature tables
    nice .venv/bin/python -m bench.quality.judgment_fit --check    # exit 1 when the file differs from a refit

For each local model (MiniLM, the default; multilingual-e5, `local-multilingual`), every question of
the fit halves of the dev sets (bench/data/halves.py; never the built-in calibration set) is asked
through recall's first stage (bench/quality/judgment_data.py), and the features of its
SECOND_LOOK most relevant candidates are written to `bench/data/judgment/<provider>.npz` (the
feature table: the fit's whole input, so `--table` and the test suite refit without a model).
Then, deterministically (Newton's method from zeros, a fixed number of steps, numbers rounded):

- the **ranker**: a logistic regression of "this candidate is a gold memory" on FEATURES, over
  every candidate of every answerable fit question (L2 1.0 on the standardised weights; each dev set weighs
  the same, whatever its size). In the update set,
  a question's gold is the newer of two statements and the older one is left out of the fit:
  which of two near statements is current is newest-first's rule (core/supersede.py), which
  recall applies after the model;
- the **calibrator**: a logistic regression of "the ranker's top candidate is gold" on
  TOP_FEATURES, over every fit question, answerable or not (the absent questions are what teach
  it that a close memory may still not answer), each dev set weighing the same;
- the **bands**, from the calibrated probability of each fit question's top candidate (an absent
  question's top is never right): HIGH from the lowest probability above which at least 95 % of
  the tops are right; MEDIUM from the lowest at which the tops between it and HIGH are right at
  least 70 % of the time; the floor (below it nothing stored answers the question) the highest
  that tells at most 1 % of the questions with a gold memory among their first five that
  nothing answers them.

The **embedder-agnostic** model (`generic` in the file, `agnostic`) is the same fit over every
local model's table at once, each read on its own spread (SPREADS, what `calibrate --builtin`
measures) and without what one embedder's scale does not carry to another's (LEVELS): what an
embedder with no model of its own reads on the spread its operator measured (core/judgment.py
`generic_model`). `judgment_eval --held-out` fits it leaving one local model out and measures it
on that one (bench/RESULTS.md, "A probability for an embedder with no model of its own").
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mcp_memory.core import judgment

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "bench" / "data" / "judgment"
WEIGHTS = ROOT / "mcp_memory" / "data" / judgment.WEIGHTS
#: The embedders fitted, by provider, and the one an embedder without a model of its own borrows.
PROVIDERS = ("local", "local-multilingual")
DEFAULT = "local"
#: The fit's constants (the module docstring says what each is).
L2 = 1.0
STEPS = 40
HIGH_PRECISION = 0.95
MEDIUM_PRECISION = 0.7
FLOOR_LOSS = 0.01
RANK_ANSWERABLE = True
SET_WEIGHTS = True
DECIMALS = 6
#: FEATURES the ranker does not read (only the calibrator does, through TOP_FEATURES): whether the
#: top answers at all, not which candidate comes first.
RANKER_SKIPS: tuple[str, ...] = ("number_conflict",)


# --------------------------------------------------------------------------- the feature table


async def table(provider: str, half: str = "fit") -> dict[str, np.ndarray]:
    """Ask the fit halves of every dev set with `provider`'s model: the ranker's rows (features,
    label, question number) and each question's set and whether it has an answer."""
    from bench.data.halves import SETS
    from bench.quality import judgment_data as jd
    from mcp_memory.embedders import PROVIDERS as KNOWN

    scale = KNOWN[provider].calibrated or (0.1, 0.3)
    names = sorted({s.name for s in jd.dev_sets()} - {"calibration"})
    asked = await jd.ask_all(provider, names, judged=False)
    built = Rows()
    for a in asked:
        q = a.question
        if q.half != half or (q.set not in SETS and q.set != "madial-removed"):
            continue
        shown = a.candidates[: judgment.SECOND_LOOK]
        if not shown:
            continue
        built.add(q, shown, judgment.features(q.text, a.terms, a.stats, a.readable, shown, scale))
    return built.arrays(scale)


class Rows:
    """The feature table's columns, a question at a time: `table`'s, and the probes' that add
    columns of their own (bench/quality/absent_probe.py)."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.labels: list[bool] = []
        self.owner: list[int] = []
        self.left_out: list[bool] = []
        self.sets: list[str] = []
        self.answerable: list[bool] = []
        self.restated: list[tuple[int, int]] = []

    def add(self, q: Any, shown: Sequence[Any], x: np.ndarray) -> None:
        """Question `q`'s candidates `shown`, their features `x` (a row each)."""
        from mcp_memory.core.keywords import text_keys

        n = len(self.sets)
        first = len(self.rows)
        same = judgment._Restated([text_keys(c.memory.content).held for c in shown])
        self.restated += [
            (first + i, first + j) for i in range(len(shown)) for j in range(i + 1, len(shown)) if same(i, j)
        ]
        for i, c in enumerate(shown):
            self.rows.append(x[i])
            self.labels.append(c.memory.id in q.gold)
            self.owner.append(n)
            self.left_out.append(q.set == "updates" and _partner(q.gold) == c.memory.id)
        self.sets.append(q.set if q.set != "madial-removed" else "madial")
        self.answerable.append(bool(q.gold))

    def arrays(self, scale: Sequence[float]) -> dict[str, np.ndarray]:
        """The table as `fit` and the .npz files hold it."""
        return {
            "x": np.asarray(self.rows, dtype=np.float64),
            "y": np.asarray(self.labels, dtype=np.int8),
            "question": np.asarray(self.owner, dtype=np.int32),
            "left_out": np.asarray(self.left_out, dtype=np.int8),
            "set": np.asarray(self.sets),
            "answerable": np.asarray(self.answerable, dtype=np.int8),
            "scale": np.asarray(scale, dtype=np.float64),
            "restated": np.asarray(self.restated, dtype=np.int32).reshape(-1, 2),
        }


def _partner(gold: frozenset[str]) -> str | None:
    """The other statement of an update pair (`u001-new` → `u001-old`)."""
    (one,) = gold
    stem, _, which = one.rpartition("-")
    return f"{stem}-{'old' if which == 'new' else 'new'}"


def save_table(provider: str, data: dict[str, np.ndarray]) -> None:
    TABLES.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{k: (v.astype(np.float32) if k == "x" else v) for k, v in data.items()})
    (TABLES / f"{provider}.npz").write_bytes(buffer.getvalue())


def load_table(provider: str) -> dict[str, np.ndarray]:
    with np.load(TABLES / f"{provider}.npz") as data:
        out = {k: data[k] for k in data.files}
    out["x"] = out["x"].astype(np.float64)
    return out


# --------------------------------------------------------------------------- fitting


def logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None) -> dict[str, list[float] | float]:
    """L2-regularised logistic regression on standardised columns, by Newton's method from zeros."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    z = np.column_stack([(x - mean) / scale, np.ones(len(x))])
    w = np.ones(len(y)) if weight is None else weight
    b = np.zeros(z.shape[1])
    penalty = np.r_[np.full(z.shape[1] - 1, L2), 0.0]
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ b, -30, 30)))
        gradient = z.T @ (w * (p - y)) + penalty * b
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        b = b - np.linalg.solve(hessian, gradient)
    return {
        "mean": [_round(v) for v in mean],
        "scale": [_round(v) for v in scale],
        "weights": [_round(v) for v in b[:-1]],
        "bias": _round(b[-1]),
    }


def _round(v: float) -> float:
    return float(f"{float(v):.{DECIMALS}g}")


#: What the embedder-agnostic model does not read: how close a candidate is in absolute terms (its
#: cosine and relevance, the best one's, how many crowd near it), which one embedder's scale does
#: not carry to another's; it reads how far a candidate stands from the others instead.
LEVELS = (
    "cosine",
    "relevance",
    "cosine_below_best",
    "relevance_below_best",
    "best_cosine",
    "cosine_read",
    "crowd",
)
#: What it reads in units of the scale's width: there, the width is the embedder's spread.
WIDTHS = ("relevance_lead", "cosine_lead", "cosine_lead_read")
#: What it reads as it is: no cosine in it. Every feature is in one of the three (a new feature has
#: to be placed: tests/core/test_judgment.py).
UNSCALED = (
    "keyword",
    "coverage",
    "cosine_rank",
    "relevance_rank",
    "held",
    "query_terms",
    "readable",
    "specific_coverage",
    "has_specific",
    "length",
    "wants_number",
    "number_held",
    "number_missing",
    "wants_name",
    "name_held",
    "largest_gap",
    "is_question",
    "keyword_unread",
    "number_unmatched",
    "number_conflict",
    "addressed",
)
#: Each local model's spread, what `mcp-memory calibrate --builtin` prints as RECALL_COSINE_SPREAD
#: (the median cosine of a right answer less that of an absent question's nearest memory).
SPREADS = {"local": 0.283, "local-multilingual": 0.118}


def on_spread(data: dict[str, np.ndarray], spread: float) -> dict[str, np.ndarray]:
    """A feature table as the embedder-agnostic model reads it: LEVELS read as 0 (so their weights
    are 0), WIDTHS on the scale (floor, floor + spread) instead of the one it was asked on."""
    floor, high = (float(v) for v in data["scale"])
    x = data["x"].copy()
    for name in LEVELS:
        x[:, judgment.FEATURES.index(name)] = 0.0
    for name in WIDTHS:
        x[:, judgment.FEATURES.index(name)] *= (high - floor) / spread
    return {**data, "x": x, "scale": np.asarray((floor, floor + spread))}


def agnostic(tables: dict[str, dict[str, np.ndarray]]) -> dict:
    """The embedder-agnostic model's entry: `fit` over the tables (by provider) stacked, each read
    on its spread (`on_spread`); no scale (the embedder's own is read at run time)."""
    return fit(stacked([on_spread(tables[p], SPREADS[p]) for p in sorted(tables)]))


def stacked(tables: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Several embedders' feature tables as one (their questions and rows one after another), for
    the embedder-agnostic model; no scale: each table's cosines are already on its own."""
    out: dict[str, np.ndarray] = {}
    questions = rows = 0
    parts: dict[str, list[np.ndarray]] = {
        k: [] for k in ("x", "y", "question", "left_out", "set", "answerable", "restated")
    }
    for t in tables:
        for k in ("x", "y", "left_out", "set", "answerable"):
            parts[k].append(t[k])
        parts["question"].append(t["question"] + questions)
        parts["restated"].append(t["restated"] + rows)
        questions += len(t["set"])
        rows += len(t["y"])
    for k, v in parts.items():
        out[k] = np.concatenate(v)
    return out


def fit(data: dict[str, np.ndarray]) -> dict:
    """The ranker, the calibrator and the bands for one embedder's feature table (or several
    stacked: `stacked`; then no scale, the embedder's own is read at run time)."""
    x, y, owner = data["x"], data["y"].astype(float), data["question"]
    keep = data["left_out"] == 0
    sets = data["set"]
    counts = {str(s): int((sets == s).sum()) for s in np.unique(sets)}
    row_set = sets[owner]
    # the ranker learns order, so from the questions that have an answer; every dev set weighs the
    # same in both fits, whatever its size
    ranks = keep & (data["answerable"][owner] == 1) if RANK_ANSWERABLE else keep
    rows_of = {s: int(((row_set == s) & ranks).sum()) for s in counts}
    row_weight = (
        np.array([ranks.sum() / len(counts) / rows_of[str(s)] for s in row_set[ranks]]) if SET_WEIGHTS else None
    )
    ranked = x[ranks].copy()
    for name in RANKER_SKIPS:  # read as 0: their weights are 0, the ranker's order does not move
        ranked[:, judgment.FEATURES.index(name)] = 0.0
    ranker_json = logistic(ranked, y[ranks], row_weight)
    ranker = judgment.Linear.from_json(ranker_json, len(judgment.FEATURES))
    pairs = {(int(a), int(b)) for a, b in data["restated"]}
    tops, right, found = [], [], []
    bounds = np.flatnonzero(np.diff(np.r_[-1, owner, owner[-1] + 1]))
    for start, end in zip(bounds[:-1], bounds[1:]):
        rows = np.arange(start, end)
        rows = rows[keep[rows]]
        scores = ranker.logits(x[rows])
        order = np.argsort(-scores, kind="stable")

        def restated(i: int, j: int, rows: np.ndarray = rows) -> bool:
            a, b = sorted((int(rows[i]), int(rows[j])))
            return (a, b) in pairs

        tops.append(judgment.top_row(x[rows], scores, order, restated))
        right.append(y[rows][order[0]])
        found.append(bool(y[rows][order[:5]].any()))
    weight = np.array([len(sets) / len(counts) / counts[str(s)] for s in sets])
    tops_ = np.asarray(tops)
    tops_ = np.where(np.isnan(tops_), np.nanmean(tops_, axis=0), tops_)  # a lone top: the typical gap
    calibrator_json = logistic(tops_, np.asarray(right), weight)
    calibrator = judgment.Linear.from_json(calibrator_json, len(judgment.TOP_FEATURES))
    probability = 1.0 / (1.0 + np.exp(-calibrator.logits(tops_)))
    scale = {"scale": [float(v) for v in data["scale"]]} if "scale" in data else {}
    return {
        **scale,
        "ranker": ranker_json,
        "calibrator": calibrator_json,
        "bands": bands(
            probability,
            np.asarray(right, dtype=bool),
            np.asarray(found, dtype=bool),
            sets,
            data["answerable"].astype(bool),
        ),
        "fitted_on": {"questions": len(sets), "candidates": int(keep.sum()), "by_set": counts},
    }


def bands(
    probability: np.ndarray, right: np.ndarray, found: np.ndarray, sets: np.ndarray, answerable: np.ndarray
) -> dict[str, float]:
    """Where HIGH, MEDIUM and the floor start (the module docstring's rules), rounded to 3 decimals.
    `right`: the top is gold; `found`: a gold memory is among the first five; `sets`: each
    question's dev set; `answerable`: whether it has a gold memory."""
    order = np.argsort(-probability, kind="stable")
    p, ok = probability[order], right[order]
    precision = np.cumsum(ok) / np.arange(1, len(ok) + 1)
    good = np.flatnonzero(precision >= HIGH_PRECISION)
    high = float(p[good[-1]]) if len(good) else 1.0
    below = p < high
    # the band [t, high): lowest t whose tops are right at least MEDIUM_PRECISION of the time
    band_ok = np.cumsum(ok & below) / np.maximum(1, np.cumsum(below))
    good = np.flatnonzero(below & (band_ok >= MEDIUM_PRECISION))
    medium = float(p[good[-1]]) if len(good) else high
    # the floor: the highest that tells at most FLOOR_LOSS of the questions answered in the first
    # five that nothing answers them
    lost = np.sort(probability[found])
    allowed = int(FLOOR_LOSS * len(lost))
    floor = float(lost[allowed]) if allowed < len(lost) else 0.0
    floor = min(floor, medium)
    # the prompt hook's threshold: halfway between the most probable unrelated prompt of the prompt
    # set and the least probable related one above it whose top is right
    prompts = sets == "prompts"
    unrelated = float(probability[prompts & ~answerable].max())
    related = probability[prompts & right & (probability > unrelated)]
    inject = (unrelated + float(related.min())) / 2 if len(related) else unrelated
    return {
        "floor": math.floor(floor * 1000) / 1000,
        "medium": round(medium, 3),
        "high": round(high, 3),
        "inject": round(inject, 3),
    }


def weights_file(tables: dict[str, dict[str, np.ndarray]]) -> str:
    from mcp_memory.embedders import PROVIDERS as KNOWN

    models = {judgment.model_key(p, KNOWN[p].model): fit(t) for p, t in tables.items()}
    body = {
        "about": "The relevance model of core/judgment.py; refitted by python -m bench.quality.judgment_fit.",
        "features": list(judgment.FEATURES),
        "top_features": list(judgment.TOP_FEATURES),
        "default": judgment.model_key(DEFAULT, KNOWN[DEFAULT].model),
        "models": models,
        judgment.GENERIC: agnostic(tables),
    }
    return json.dumps(body, indent=1, sort_keys=True) + "\n"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.judgment_fit")
    parser.add_argument("--table", action="store_true", help="refit from the committed feature tables")
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped file differs from a refit")
    args = parser.parse_args(argv)
    tables = {}
    for provider in PROVIDERS:
        if args.table or args.check:
            tables[provider] = load_table(provider)
        else:
            tables[provider] = asyncio.run(table(provider))
            save_table(provider, tables[provider])
            tables[provider] = load_table(provider)  # fit from what is committed, float32 as stored
    text = weights_file(tables)
    if args.check:
        same = WEIGHTS.exists() and WEIGHTS.read_text(encoding="utf-8") == text
        print(f"{WEIGHTS.name}: {'as refitted' if same else 'differs from a refit'} (sha256 {sha256(text)})")
        return 0 if same else 1
    WEIGHTS.write_text(text, encoding="utf-8")
    print(f"wrote {WEIGHTS.relative_to(ROOT)} (sha256 {sha256(text)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
