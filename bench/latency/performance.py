"""The whole performance set of issue 8 in one bounded run; figures for bench/RESULTS.md.

    python -m bench.latency.performance [--sizes 1000,10000,100000] [--backends sqlite,postgres]
                                [--cache DIR] [--out FILE.json] [--source TREE]

For each size (one tenant grows 1,000 → 10,000 → 100,000 memories) and each
backend (a SQLite file in a temporary directory; PostgreSQL from
BENCH_DATABASE_URL or a throwaway pgserver), in this order:

1. fill (perf_fill.py) and start the consumers: MemoryService in this process,
   `serve-stdio` (started `--starts` + 1 times: spawn → tools/list → first
   recall; the first start only warms the disk cache and is not counted) and
   `serve-http`;
2. recall, interleaved per query so every consumer sees the same load: the
   floor (the model runtime on one query + an exact numpy scan of the same
   vectors), `embed` through our API, the service, MCP over stdio, MCP over
   HTTP (2026-07-28 era, then the legacy 2025-06-18 era);
3. throughput over HTTP with 1, 4 and 16 concurrent clients, each level
   bounded by `--throughput-seconds` and `--throughput-calls`;
4. the resident memory of both servers (after the recalls, and again after the
   throughput runs);
5. remember, interleaved the same way (new texts, so each call stores).

Each timed loop stops after `--runs` rounds or `--max-seconds`, whichever comes
first. Results (with the machine, the load average and the versions) go to
`--out` as JSON; bench/latency/plot_latency.py draws the PNG from it and
bench/latency/perf_report.py prints the Markdown tables. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

from bench.harness.timing import Stopwatch, summary

HERE = Path(__file__).resolve().parent


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--runs", type=int, default=200, help="recall rounds per size and backend")
    parser.add_argument("--remember-runs", type=int, default=60)
    parser.add_argument("--max-seconds", type=float, default=40, help="bound on each timed loop")
    parser.add_argument("--starts", type=int, default=3, help="timed serve-stdio starts per size and backend")
    parser.add_argument("--throughput-seconds", type=float, default=8)
    parser.add_argument("--throughput-calls", type=int, default=2400)
    parser.add_argument("--throughput-sizes", default="10000,100000")
    parser.add_argument("--cache", default=None, help="embedding cache directory (default: in the run's temp dir)")
    parser.add_argument("--out", default=None, help="JSON results file")
    parser.add_argument("--source", default=str(HERE.parents[1]), help="the mcp-memory tree to measure")
    parser.add_argument("--label", default="")
    return parser.parse_args()


def machine() -> dict:
    import numpy
    import onnxruntime

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem_kb = int(
        next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    )
    import sqlite3

    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "host": platform.node(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "ram_gb": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "onnxruntime": onnxruntime.__version__,
        "sqlite": sqlite3.sqlite_version,
        "kernel": platform.release(),
    }


def load() -> float:
    return os.getloadavg()[0]


def start_floor(source: Path, count: int) -> dict:
    """The start nothing of ours is in: a Python that imports the MCP SDK's stdio server
    and exits, spawn to exit (what serve-stdio cannot answer tools/list before)."""
    import subprocess

    importing = Stopwatch()
    for _ in range(count + 1):
        with importing:
            subprocess.run(
                [sys.executable, "-c", "import mcp.server.stdio, mcp.server, mcp_types"], check=True, cwd=str(source)
            )
    return summary(importing.seconds[1:])


async def timed_rounds(runs: int, max_seconds: float, round_fn) -> int:
    deadline = time.perf_counter() + max_seconds
    done = 0
    while done < runs and time.perf_counter() < deadline:
        await round_fn(done)
        done += 1
    return done


async def phase(args, size: int, backend: str, where: dict[str, str], vectors, queries, facts) -> dict:
    from bench.harness.perf_probes import HttpServer, ServiceProbe, StdioServer

    source = Path(args.source)
    result: dict = {"size": size, "backend": backend, "load_start": load()}
    starts = []
    for attempt in range(args.starts + 1):
        server = await StdioServer.start(where, source, queries[attempt])
        if attempt:
            starts.append(server.startup)
        await server.close()
    result["startup"] = {key: summary([s[key] for s in starts]) for key in starts[0]}
    result["startup_runs"] = starts

    service = await ServiceProbe.open(where, vectors)
    stdio = await StdioServer.start(where, source, queries[0])
    http = await HttpServer.start(where, source)
    try:
        for q in queries[:10]:  # warm-up: caches loaded, models warm, connections open
            await service.recall(q)
            await stdio.call("recall", {"query": q})
            await http.call("recall", {"query": q})
            await http.call("recall", {"query": q}, era="legacy")
        series: dict[str, list[float]] = {
            k: []
            for k in ("floor", "floor_model", "floor_scan", "embed_api", "service", "stdio", "http", "http_legacy")
        }

        async def recall_round(i: int) -> None:
            q = queries[10 + i % (len(queries) - 10)]
            model, scan = service.floor(q)
            series["floor"].append(model + scan)
            series["floor_model"].append(model)
            series["floor_scan"].append(scan)
            series["embed_api"].append(await service.embed(q))
            series["service"].append(await service.recall(q))
            series["stdio"].append((await stdio.call("recall", {"query": q}))[0])
            series["http"].append((await http.call("recall", {"query": q}))[0])
            series["http_legacy"].append((await http.call("recall", {"query": q}, era="legacy"))[0])

        await timed_rounds(args.runs, args.max_seconds, recall_round)
        result["recall"] = {k: summary(v) for k, v in series.items()}
        result["recall_ratio_service_to_floor"] = (
            result["recall"]["service"]["p50_ms"] / result["recall"]["floor"]["p50_ms"]
        )
        print(
            f"  {backend} {size:>7,}: recall p50 service {result['recall']['service']['p50_ms']:.1f} ms, "
            f"stdio {result['recall']['stdio']['p50_ms']:.1f}, http {result['recall']['http']['p50_ms']:.1f}, "
            f"floor {result['recall']['floor']['p50_ms']:.1f} (n={result['recall']['service']['n']})",
            file=sys.stderr,
            flush=True,
        )

        result["rss_after_recalls"] = {"http": http.rss(), "stdio": stdio.rss()}
        if size in args.throughput_sizes:
            result["throughput"] = []
            for clients in (1, 4, 16):
                level = await http.throughput(clients, queries, args.throughput_seconds, args.throughput_calls)
                level["load"] = load()
                result["throughput"].append(level)
                print(
                    f"  {backend} {size:>7,}: {clients:>2} clients {level['per_s']:.0f} recalls/s, "
                    f"p50 {level['p50_ms']:.1f} ms",
                    file=sys.stderr,
                    flush=True,
                )
        result["rss"] = {"http": http.rss(), "stdio": stdio.rss()}

        remembered: dict[str, list[float]] = {"service": [], "stdio": [], "http": []}
        created = {"service": 0, "stdio": 0, "http": 0}

        async def remember_round(i: int) -> None:
            took, fresh = await service.remember(facts[3 * i])
            remembered["service"].append(took)
            created["service"] += fresh
            for name, server, text in (("stdio", stdio, facts[3 * i + 1]), ("http", http, facts[3 * i + 2])):
                took, answer = await server.call("remember", {"content": text})
                remembered[name].append(took)
                created[name] += answer.startswith("[MEMORY] Stored")

        await timed_rounds(args.remember_runs, args.max_seconds, remember_round)
        result["remember"] = {k: summary(v) for k, v in remembered.items()}
        result["remember_created"] = created
    finally:
        await http.close()
        await stdio.close()
        await service.close()
    result["load_end"] = load()
    return result


async def run(args, root: Path) -> dict:
    from bench.harness.perf_corpus import corpus, embeddings, new_facts
    from bench.harness.perf_corpus import queries as make_queries
    from bench.harness.perf_fill import fill_to

    sizes = sorted(int(s) for s in args.sizes.split(","))
    args.throughput_sizes = {int(s) for s in args.throughput_sizes.split(",") if s}
    backends = [b for b in args.backends.split(",") if b]
    report: dict = {
        "label": args.label,
        "machine": machine(),
        "argv": sys.argv[1:],
        "load_start": load(),
        "source": args.source,
        "phases": [],
        "fills": [],
    }
    texts = corpus(max(sizes))
    started = time.perf_counter()
    vectors, took = await embeddings(texts, Path(args.cache) if args.cache else root / "cache")
    report["embedding"] = {
        "texts": len(texts),
        "seconds": took,
        "cached": took is None,
        "wall_s": time.perf_counter() - started,
    }
    report["start_floor"] = start_floor(Path(args.source), 2 * args.starts)
    queries = make_queries(400)
    urls = {"postgres": os.environ.get("BENCH_DATABASE_URL", "").strip() or None}
    server = None
    if "postgres" in backends and not urls["postgres"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver
        server = pgserver.get_server(str(root / "pg"), cleanup_mode="delete")
        urls["postgres"] = server.get_uri()
        import psycopg

        with psycopg.connect(urls["postgres"], autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            report["machine"]["postgres"] = conn.execute("SHOW server_version").fetchone()[0]
            report["machine"]["pgvector"] = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()[0]
    try:
        written = {b: 0 for b in backends}
        for size in sizes:
            for backend in backends:
                where = (
                    {"MEMORY_DB_PATH": str(root / "bench.db")}
                    if backend == "sqlite"
                    else {"DATABASE_URL": urls["postgres"]}
                )
                store = (
                    {"db_path": where["MEMORY_DB_PATH"]} if backend == "sqlite" else {"database_url": urls["postgres"]}
                )
                written[backend], seconds = await fill_to(backend, size, texts, vectors, written[backend], **store)
                report["fills"].append({"backend": backend, "size": size, "seconds": seconds})
                print(
                    f"{backend}: filled to {size:,} in {seconds:.1f} s (load {load():.1f})", file=sys.stderr, flush=True
                )
                facts = new_facts(3 * args.remember_runs, seed=size + (1 if backend == "sqlite" else 2))
                report["phases"].append(await phase(args, size, backend, where, vectors[:size], queries, facts))
    finally:
        if server is not None:
            server.cleanup()
    report["load_end"] = load()
    report["total_s"] = time.perf_counter() - started
    return report


def main() -> None:
    args = parse_args()
    sys.path.insert(0, str(Path(args.source).resolve()))
    with tempfile.TemporaryDirectory(prefix="mcp-memory-perf-") as tmp:
        report = asyncio.run(run(args, Path(tmp)))
    text = json.dumps(report, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
        print(f"results: {args.out}", file=sys.stderr)
    else:
        print(text)


if __name__ == "__main__":
    main()
