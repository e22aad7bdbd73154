"""Recall p50 against memories in one tenant, 1,000 → 1,000,000, both backends, the exact scan and
the HNSW index, from bench/scale/ann_recall.py results (one JSON object a line).

    .venv/bin/python -m bench.scale.plot_scale bench/scale/results/2026-12-02.jsonl docs/recall_scale.png

Needs matplotlib (the bench extra). One panel per backend; a line per retrieval (dense, hybrid) and
path (exact scan, index), each point the p50 of its interleaved recalls.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

LINES = (  # key, label, colour, line style, label offset (points: the end labels stay apart)
    ("dense exact", "dense, exact scan", "#1f77b4", "-", -9),
    ("hybrid exact", "hybrid, exact scan", "#d62728", "-", 3),
    ("dense index", "dense, HNSW index", "#1f77b4", "--", -9),
    ("hybrid index", "hybrid, HNSW index", "#d62728", "--", 3),
)


def nominal(memories: int) -> int:
    """A tenant's size to two significant figures (1,000,020 after the timed remembers: 1,000,000)."""
    return int(float(f"{memories:.2g}"))


TITLES = {"sqlite": "SQLite (embedded default)", "postgres": "PostgreSQL + pgvector 0.6"}


def main() -> None:
    runs = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("docs/recall_scale.png")
    backends = [b for b in TITLES if any(r["backend"] == b for r in runs)]
    fig, axes = plt.subplots(1, len(backends), figsize=(6.2 * len(backends), 4.6), sharey=True, squeeze=False)
    for ax, backend in zip(axes[0], backends):
        mine = sorted((r for r in runs if r["backend"] == backend), key=lambda r: r["memories"])
        for key, label, color, style, offset in LINES:
            points = [(nominal(r["memories"]), r["latency"][key]["p50"]) for r in mine if key in r["latency"]]
            if not points:
                continue
            xs, ys = zip(*points)
            ax.plot(xs, ys, marker="o", color=color, linestyle=style, linewidth=2, label=label)
            ax.annotate(
                f"{ys[-1]:.0f} ms", (xs[-1], ys[-1]), textcoords="offset points", xytext=(6, offset), fontsize=8
            )
        sizes = sorted({nominal(r["memories"]) for r in mine})
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v):,}"))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlim(sizes[0] / 1.6, sizes[-1] * 2.5)
        ax.set_title(TITLES[backend])
        ax.set_xlabel("memories in the tenant")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    axes[0][0].set_ylabel("recall p50, ms (log), service level")
    fig.suptitle(
        "mcp-memory recall latency against tenant size (local all-MiniLM-L6-v2, 2-core shared VM)", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(out)


if __name__ == "__main__":
    main()
