"""Markdown tables (and the issue-8 targets, met or missed) from bench/latency/performance.py results.

    python -m bench.latency.perf_report RESULTS.json [BEFORE.json]

With a second file, a before/after table compares the shared figures (the
two runs are separate, so their ratio carries both runs' noise; see the load
averages printed with each).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TRANSPORTS = (
    ("service", "service"),
    ("stdio", "MCP stdio"),
    ("http", "MCP HTTP"),
    ("http_legacy", "MCP HTTP, 2025-06-18"),
)


def ms(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def header(report: dict) -> str:
    m = report["machine"]
    versions = f"Python {m['python']}, numpy {m['numpy']}, onnxruntime {m['onnxruntime']}, SQLite {m['sqlite']}"
    if "postgres" in m:
        versions += f", PostgreSQL {m['postgres']} + pgvector {m['pgvector']}"
    embedding = report["embedding"]
    made = "from the cache" if embedding["cached"] else f"embedded in {embedding['seconds']:.0f} s"
    return (
        f"Run {report['label'] or ''} {m['date']} on {m['host']}: {m['cpus']} × {m['cpu']}, {m['ram_gb']} GB RAM, "
        f"kernel {m['kernel']}; {versions}. Load average (1 min) {report['load_start']:.2f} at the start, "
        f"{report['load_end']:.2f} at the end; whole run {report['total_s'] / 60:.1f} min. "
        f"Corpus: {embedding['texts']:,} texts, vectors {made}. Command: "
        f"`python -m bench.latency.performance {' '.join(report['argv'])}`."
    )


def latency_table(report: dict) -> list[str]:
    lines = [
        "| memories | backend | path | recall p50 | recall p95 | recall p25–p75 | n | remember p50 | remember p95 |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for p in report["phases"]:
        for key, name in TRANSPORTS:
            r = p["recall"][key]
            w = p["remember"].get(key)
            remember = f"{ms(w['p50_ms'])} | {ms(w['p95_ms'])}" if w and w.get("n") else "– | –"
            lines.append(
                f"| {p['size']:,} | {p['backend']} | {name} | {ms(r['p50_ms'])} | {ms(r['p95_ms'])} | "
                f"{ms(r['p25_ms'])}–{ms(r['p75_ms'])} | {r['n']} | {remember} |"
            )
    return lines


def floor_table(report: dict) -> list[str]:
    lines = [
        "| memories | backend | model alone | numpy scan | floor (model + scan) | `embed` via our API | "
        "service recall | service ÷ floor | MCP HTTP recall | load (start→end) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in report["phases"]:
        r = p["recall"]
        lines.append(
            f"| {p['size']:,} | {p['backend']} | {ms(r['floor_model']['p50_ms'])} | {ms(r['floor_scan']['p50_ms'])} | "
            f"{ms(r['floor']['p50_ms'])} | {ms(r['embed_api']['p50_ms'])} | {ms(r['service']['p50_ms'])} | "
            f"{r['service']['p50_ms'] / r['floor']['p50_ms']:.2f}× | {ms(r['http']['p50_ms'])} | "
            f"{p['load_start']:.1f}→{p['load_end']:.1f} |"
        )
    return lines


def startup_table(report: dict) -> list[str]:
    lines = [
        "| memories | backend | `initialize` answered | `tools/list` answered | first `recall` answered |",
        "|---:|---|---:|---:|---:|",
    ]
    for p in report["phases"]:
        cells = []
        for key in ("initialize_s", "tools_list_s", "first_recall_s"):
            values = sorted(run[key] for run in p["startup_runs"])
            cells.append(f"{p['startup'][key]['p50_ms'] / 1000:.2f} s ({values[0]:.2f}–{values[-1]:.2f})")
        lines.append(f"| {p['size']:,} | {p['backend']} | " + " | ".join(cells) + " |")
    return lines


def start_floor_line(report: dict) -> str:
    floor = report.get("start_floor")
    if not floor:
        return ""
    return (
        f"The floor for `tools/list`: a Python that only imports the MCP SDK's stdio server and exits takes "
        f"{floor['p50_ms'] / 1000:.2f} s (median of {floor['n']}; {floor['min_ms'] / 1000:.2f}–{floor['max_ms'] / 1000:.2f}) "
        f"in the same run."
    )


def throughput_table(report: dict) -> list[str]:
    lines = [
        "| memories | backend | clients | recalls | seconds | recalls/s | p50 | p95 | load |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in report["phases"]:
        for t in p.get("throughput", []):
            lines.append(
                f"| {p['size']:,} | {p['backend']} | {t['clients']} | {t['calls']} | {t['seconds']:.1f} | "
                f"**{t['per_s']:.0f}** | {ms(t['p50_ms'])} | {ms(t['p95_ms'])} | {t['load']:.1f} |"
            )
    return lines


def rss_table(report: dict) -> list[str]:
    lines = [
        "| memories | backend | serve-http RSS after the recalls | after the throughput runs | its peak (VmHWM) | "
        "serve-stdio RSS after the recalls | its peak |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for p in report["phases"]:
        h, s, a = p["rss"]["http"], p["rss"]["stdio"], p.get("rss_after_recalls", p["rss"])
        lines.append(
            f"| {p['size']:,} | {p['backend']} | {a['http']['rss_mb']:.0f} MB | {h['rss_mb']:.0f} MB | "
            f"{h['peak_mb']:.0f} MB | {a['stdio']['rss_mb']:.0f} MB | {s['peak_mb']:.0f} MB |"
        )
    return lines


def phase(report: dict, size: int, backend: str) -> dict | None:
    return next((p for p in report["phases"] if p["size"] == size and p["backend"] == backend), None)


def targets(report: dict) -> list[str]:
    rows = ["| target | measured | verdict |", "|---|---|---|"]

    def check(name: str, value: float | None, limit: float, shown: str) -> None:
        if value is None:
            rows.append(f"| {name} | not measured | – |")
        else:
            rows.append(f"| {name} | {shown} | {'met' if value <= limit else '**missed**'} |")

    p10, p100 = phase(report, 10_000, "sqlite"), phase(report, 100_000, "sqlite")
    pg100 = phase(report, 100_000, "postgres")
    if p10:
        r = p10["recall"]
        ratio = r["service"]["p50_ms"] / r["floor"]["p50_ms"]
        check(
            "recall p50, service, 10k ≤ 1.5 × floor",
            ratio,
            1.5,
            f"{ms(r['service']['p50_ms'])} ms ÷ {ms(r['floor']['p50_ms'])} ms = {ratio:.2f}×",
        )
        check("recall p50, MCP HTTP, 10k ≤ 25 ms", r["http"]["p50_ms"], 25, f"{ms(r['http']['p50_ms'])} ms")
        w = p10["remember"]["service"]
        check("remember p50, service, 10k ≤ 25 ms", w["p50_ms"], 25, f"{ms(w['p50_ms'])} ms")
        s = p10["startup"]
        floor = report.get("start_floor")
        sdk = f" (a bare import of the SDK: {floor['p50_ms'] / 1000:.2f} s)" if floor else ""
        check(
            "tools/list after serve-stdio starts ≤ 1 s (10k)",
            s["tools_list_s"]["p50_ms"] / 1000,
            1.0,
            f"{s['tools_list_s']['p50_ms'] / 1000:.2f} s{sdk}",
        )
        check(
            "first recall after serve-stdio starts ≤ 2.5 s (10k)",
            s["first_recall_s"]["p50_ms"] / 1000,
            2.5,
            f"{s['first_recall_s']['p50_ms'] / 1000:.2f} s",
        )
        t16 = next((t for t in p10.get("throughput", []) if t["clients"] == 16), None)
        if t16:
            check("≥ 150 recalls/s over HTTP, 16 clients (10k)", -t16["per_s"], -150, f"{t16['per_s']:.0f} recalls/s")
    if p100:
        r = p100["recall"]["service"]
        check("recall p50, service, SQLite, 100k ≤ 60 ms", r["p50_ms"], 60, f"{ms(r['p50_ms'])} ms")
        after = p100.get("rss_after_recalls", p100["rss"])["http"]["rss_mb"]
        check("serve-http RSS at 100k ≤ 400 MB (after fill + recalls)", after, 400, f"{after:.0f} MB")
        check(
            "serve-http RSS at 100k ≤ 400 MB (after 16-client bursts too)",
            p100["rss"]["http"]["rss_mb"],
            400,
            f"{p100['rss']['http']['rss_mb']:.0f} MB",
        )
        s = p100["startup"]
        check(
            "first recall after serve-stdio starts ≤ 2.5 s (100k)",
            s["first_recall_s"]["p50_ms"] / 1000,
            2.5,
            f"{s['first_recall_s']['p50_ms'] / 1000:.2f} s",
        )
    if pg100:
        r = pg100["recall"]["service"]
        rows.append(f"| recall p50, service, PostgreSQL, 100k (state it) | {ms(r['p50_ms'])} ms | stated |")
    return rows


def compare(before: dict, after: dict) -> list[str]:
    lines = ["| figure | before | after | after ÷ before |", "|---|---:|---:|---:|"]
    for p in after["phases"]:
        b = phase(before, p["size"], p["backend"])
        if not b:
            continue
        where = f"{p['size']:,} {p['backend']}"
        for key, name in TRANSPORTS[:3]:
            x, y = b["recall"][key]["p50_ms"], p["recall"][key]["p50_ms"]
            lines.append(f"| recall p50, {name}, {where} | {ms(x)} ms | {ms(y)} ms | {y / x:.2f} |")
        for tb, ta in zip(b.get("throughput", []), p.get("throughput", [])):
            lines.append(
                f"| recalls/s over HTTP, {ta['clients']} clients, {where} | {tb['per_s']:.0f} | "
                f"{ta['per_s']:.0f} | {ta['per_s'] / tb['per_s']:.2f} |"
            )
        x, y = b["rss"]["http"]["rss_mb"], p["rss"]["http"]["rss_mb"]
        lines.append(f"| serve-http RSS, {where} | {x:.0f} MB | {y:.0f} MB | {y / x:.2f} |")
        for key in ("tools_list_s", "first_recall_s"):
            x, y = b["startup"][key]["p50_ms"] / 1000, p["startup"][key]["p50_ms"] / 1000
            lines.append(
                f"| {key.replace('_s', '').replace('_', ' ')} after start, {where} | {x:.2f} s | {y:.2f} s | {y / x:.2f} |"
            )
    return lines


def main() -> None:
    report = json.loads(Path(sys.argv[1]).read_text())
    out = [
        header(report),
        "",
        "Targets:",
        "",
        *targets(report),
        "",
        "Latency (ms):",
        "",
        *latency_table(report),
        "",
        "The floor and our overhead (p50, ms):",
        "",
        *floor_table(report),
        "",
        "serve-stdio start (median of the timed starts, min–max):",
        "",
        *startup_table(report),
        "",
        start_floor_line(report),
        "",
        "Throughput over HTTP (2026-07-28 era):",
        "",
        *throughput_table(report),
        "",
        "Resident memory (VmRSS of the server process):",
        "",
        *rss_table(report),
    ]
    if len(sys.argv) > 2:
        before = json.loads(Path(sys.argv[2]).read_text())
        out += [
            "",
            f"Before ({before['label']}, load {before['load_start']:.2f}→{before['load_end']:.2f}) and after "
            f"({report['label']}, load {report['load_start']:.2f}→{report['load_end']:.2f}):",
            "",
            *compare(before, report),
        ]
    print("\n".join(out))


if __name__ == "__main__":
    main()
