"""Recall latency against memories per tenant, per backend and path, from bench/latency/performance.py results.

    python -m bench.latency.plot_latency RESULTS.json [bench/recall_latency.png]

Needs matplotlib, which is not a dependency of mcp-memory: install it for the
benchmark only (`pip install matplotlib`). One panel per backend; lines are
the p50 of each path (service, MCP over stdio, MCP over HTTP) and the floor
(the model on one query plus an exact numpy scan of the same vectors); the
band around each line spans p25–p75, the dotted line above it is p95.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

PATHS = (
    ("floor", "floor: model + numpy scan", "#7f7f7f"),
    ("service", "MemoryService", "#1f77b4"),
    ("stdio", "MCP over stdio", "#2ca02c"),
    ("http", "MCP over HTTP", "#d62728"),
)


def main() -> None:
    report = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).with_name("recall_latency.png")
    backends = list(dict.fromkeys(p["backend"] for p in report["phases"]))
    fig, axes = plt.subplots(1, len(backends), figsize=(6.2 * len(backends), 4.8), sharey=True, squeeze=False)
    for ax, backend in zip(axes[0], backends):
        phases = sorted((p for p in report["phases"] if p["backend"] == backend), key=lambda p: p["size"])
        sizes = [p["size"] for p in phases]
        for key, label, color in PATHS:
            p50 = [p["recall"][key]["p50_ms"] for p in phases]
            ax.plot(
                sizes,
                p50,
                marker="o",
                color=color,
                label=f"{label} (p50)",
                linewidth=2,
                linestyle="--" if key == "floor" else "-",
            )
            ax.fill_between(
                sizes,
                [p["recall"][key]["p25_ms"] for p in phases],
                [p["recall"][key]["p75_ms"] for p in phases],
                color=color,
                alpha=0.15,
            )
            ax.plot(sizes, [p["recall"][key]["p95_ms"] for p in phases], color=color, linestyle=":", linewidth=1)
            offset = {"service": (7, -11), "http": (7, 3)}.get(key)  # stdio lies between the two
            if offset is not None:
                ax.annotate(
                    f"{p50[-1]:.0f} ms",
                    (sizes[-1], p50[-1]),
                    textcoords="offset points",
                    xytext=offset,
                    fontsize=8,
                    color=color,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v):,}"))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlim(sizes[0] / 1.6, sizes[-1] * 2.2)
        ax.set_title({"sqlite": "SQLite (embedded default)", "postgres": "PostgreSQL + pgvector"}.get(backend, backend))
        ax.set_xlabel("memories in the tenant")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("recall latency, ms (log)")
    axes[0][0].legend(loc="upper left", fontsize=8, title="p50; band p25–p75; dotted p95", title_fontsize=8)
    m = report["machine"]
    fig.suptitle(
        f"mcp-memory recall latency, local all-MiniLM-L6-v2 · {m['cpus']} × {m['cpu']} · {m['date']}", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
