"""How much the embedder-agnostic relevance model (core/judgment.py `generic_model`) depends on the
spread it is given (RECALL_COSINE_SPREAD): an operator's `calibrate` run on their own cases may
measure another spread than `--builtin` does.

    nice .venv/bin/python -m bench.quality.judgment_spread

For each local model left out, the agnostic model fitted on the other's feature table
(bench/quality/judgment_fit.py `agnostic`) judges the left-out model's fit-half table (never fitted
on by that model) read on its spread × 0.6 … 1.6: the AUROC of the top's probability, answerable
against absent, HIGH's precision and coverage of the right tops, the absent questions it labels
HIGH, and the questions with a gold memory in their first five that it tells nothing answers.
From the committed tables alone: no model is loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from bench.quality import judgment_fit as jf
from bench.quality.judgment_eval import auroc
from mcp_memory.core import judgment

FACTORS = (0.6, 0.8, 1.0, 1.25, 1.6)


def measure(entry: dict, data: dict[str, np.ndarray]) -> dict[str, float | int | None]:
    """The top's probability per question of `data` (read as given), against its labels."""
    model = judgment.model_from("held-out", (0.0, 1.0), entry)
    x, y, owner, keep = data["x"], data["y"], data["question"], data["left_out"] == 0
    answerable = data["answerable"].astype(bool)
    probability, right, found = [], [], []
    bounds = np.flatnonzero(np.diff(np.r_[-1, owner, owner[-1] + 1]))
    for start, end in zip(bounds[:-1], bounds[1:]):
        rows = np.arange(start, end)
        rows = rows[keep[rows]]
        judged = model.judge_features(x[rows], [frozenset()] * len(rows))
        top = judged.order[0]
        probability.append(float(judged.probabilities[top]))
        right.append(bool(y[rows][top]))
        found.append(bool(y[rows][judged.order[:5]].any()))
    p, ok, five = np.asarray(probability), np.asarray(right), np.asarray(found)
    high = p >= model.bands.high
    return {
        "auroc": auroc(list(p[answerable]), list(p[~answerable])),
        "high_precision": float(ok[high].mean()) if high.any() else None,
        "high_coverage": float((high & ok).sum() / ok.sum()),
        "absent_high": int((high & ~answerable).sum()),
        "told_nothing": int(((p < model.bands.floor) & five).sum()),
    }


def main(argv: Sequence[str]) -> int:
    tables = {p: jf.load_table(p) for p in jf.PROVIDERS}
    for left in jf.PROVIDERS:
        entry = jf.agnostic({p: t for p, t in tables.items() if p != left})
        questions = len(tables[left]["set"])
        print(
            f"{left} left out ({questions} fit-half questions, {int((tables[left]['answerable'] == 0).sum())} absent)"
        )
        for factor in FACTORS:
            row = measure(entry, jf.on_spread(tables[left], jf.SPREADS[left] * factor))
            print(
                f"  spread × {factor:<4}  AUROC {row['auroc']:.3f}  HIGH {row['high_precision']:.3f} / "
                f"{row['high_coverage']:.3f}  absent HIGH {row['absent_high']:3d}  told nothing {row['told_nothing']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
