"""Two mcp-memory trees side by side in one run: before/after ratios that share the noise.

    python -m bench.latency.ab_compare BEFORE_TREE AFTER_TREE [--memories 10000] [--rounds 3]

Both trees serve the same SQLite file (filled by perf_fill.py from the cached
corpus) through `serve-http`, both servers running at once. Then, alternating
A, B, A, B so background load falls on both alike:

- sequential recall latency, one call to each server in turn (`--calls` each);
- `--rounds` rounds of 16 concurrent clients for `--seconds` against each server;
- serve-stdio start: spawn → tools/list answered → first recall answered
  (`--starts` each, alternating);
- the resident memory of each HTTP server at the end.

Prints a Markdown table with the medians and the B/A ratios. A tree is any
directory holding an `mcp_memory` package and its `bench/` (e.g. `git archive <commit> | tar -x -C DIR`).

Each tree serves its own copy of one file, filled by the BEFORE tree's own code: an older
release refuses a file of a newer schema, while a newer one upgrades an older file at its first
start (before anything is timed), so trees of different schemas compare on the same memories.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness.timing import percentile

HERE = Path(__file__).resolve().parent

#: Run inside the BEFORE tree: its own corpus and fill code write the file in its own schema.
FILL = """
import asyncio, sys
from pathlib import Path
tree, db, count, cache = sys.argv[1:]
sys.path[:0] = [tree, tree + "/bench"]
if Path(tree, "bench", "harness", "perf_fill.py").exists():
    from bench.harness.perf_corpus import corpus, embeddings
    from bench.harness.perf_fill import fill_to
else:  # a tree from before bench/ became a package
    from perf_corpus import corpus, embeddings
    from perf_fill import fill_to
texts = corpus(int(count))
vectors, _ = asyncio.run(embeddings(texts, Path(cache)))
asyncio.run(fill_to("sqlite", int(count), texts, vectors, 0, db_path=db))
"""


def fill_with(tree: Path, db: Path, count: int, cache: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-c", FILL, str(tree), str(db), str(count), str(cache)], check=True, env=env)


async def start_stdio(where: dict[str, str], tree: Path, query: str) -> dict[str, float]:
    from bench.harness.perf_probes import StdioServer

    server = await StdioServer.start(where, tree, query)
    await server.close()
    return server.startup


async def main(args: argparse.Namespace) -> None:
    from bench.harness.perf_corpus import queries
    from bench.harness.perf_probes import HttpServer

    trees = {"A": Path(args.before).resolve(), "B": Path(args.after).resolve()}
    with tempfile.TemporaryDirectory(prefix="mcp-memory-ab-") as tmp:
        filled = Path(tmp) / "ab.db"
        fill_with(trees["A"], filled, args.memories, Path(args.cache) if args.cache else Path(tmp) / "cache")
        places: dict[str, dict[str, str]] = {}
        for name in trees:
            own = Path(tmp) / name
            own.mkdir()
            shutil.copy(filled, own / "ab.db")
            places[name] = {"MEMORY_DB_PATH": str(own / "ab.db")}
        qs = queries(400)
        load_start = os.getloadavg()[0]
        servers = {name: await HttpServer.start(places[name], tree) for name, tree in trees.items()}
        results: dict[str, dict[str, list[float]]] = {
            name: {"latency": [], "per_s": [], "tools_list": [], "first_recall": []} for name in trees
        }
        try:
            for q in qs[:20]:
                for server in servers.values():
                    await server.call("recall", {"query": q})
            for i in range(args.calls):
                for name, server in servers.items():
                    took, _ = await server.call("recall", {"query": qs[20 + i % 380]})
                    results[name]["latency"].append(took * 1000)
            for _ in range(args.rounds):
                for name, server in servers.items():
                    level = await server.throughput(16, qs, args.seconds, 100_000)
                    results[name]["per_s"].append(level["per_s"])
            rss = {name: server.rss() for name, server in servers.items()}
        finally:
            for server in servers.values():
                await server.close()
        for i in range(args.starts + 1):
            for name, tree in trees.items():
                startup = await start_stdio(places[name], tree, qs[i])
                if i:  # the first start of each only warms the disk cache
                    results[name]["tools_list"].append(startup["tools_list_s"] * 1000)
                    results[name]["first_recall"].append(startup["first_recall_s"] * 1000)
    load_end = os.getloadavg()[0]
    print(
        f"\n{args.memories:,} memories, SQLite; A = {trees['A']}, B = {trees['B']}; load {load_start:.2f} → {load_end:.2f}; "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}\n"
    )
    print("| figure | A (before) | B (after) | B ÷ A |")
    print("|---|---:|---:|---:|")
    rows = [
        ("recall p50 over HTTP, one client (ms)", "latency", statistics.median),
        ("recall p95 over HTTP, one client (ms)", "latency", lambda v: percentile(v, 95)),
        ("recalls/s over HTTP, 16 clients (median of rounds)", "per_s", statistics.median),
        ("serve-stdio start → tools/list (ms, median)", "tools_list", statistics.median),
        ("serve-stdio start → first recall (ms, median)", "first_recall", statistics.median),
    ]
    for label, key, stat in rows:
        a, b = stat(results["A"][key]), stat(results["B"][key])
        print(f"| {label} | {a:.1f} | {b:.1f} | {b / a:.2f} |")
    print(
        f"| serve-http RSS at the end (MB) | {rss['A']['rss_mb']:.0f} | {rss['B']['rss_mb']:.0f} | "
        f"{rss['B']['rss_mb'] / rss['A']['rss_mb']:.2f} |"
    )
    print(
        "\nper round, recalls/s: "
        + "; ".join(f"{name}: {', '.join(f'{v:.0f}' for v in results[name]['per_s'])}" for name in trees)
    )
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "results": results,
                    "rss": rss,
                    "load": [load_start, load_end],
                    "memories": args.memories,
                    "trees": {k: str(v) for k, v in trees.items()},
                }
            )
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--starts", type=int, default=4)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.after).resolve()))
    asyncio.run(main(args))
