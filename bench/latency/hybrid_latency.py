"""Recall and remember latency of one mcp-memory tree, next to the embed+scan floor: the reduced
probe behind the before/after latency figures of the hybrid retrieval.

    PYTHONPATH=<tree> .venv/bin/python -m bench.latency.hybrid_latency --backend sqlite --size 10000 [--runs 100]

`<tree>` is the checkout whose `mcp_memory` is measured. One tenant is filled to `--size` memories
with the performance corpus's sentences (bench/harness/perf_corpus.py) and random unit embeddings (only the
keyword index needs real words; the scan costs the same for any vectors), through the stores' `put`
(bench/harness/perf_fill.py). Then, one call at a time: the floor (the model runtime on the query + an exact
numpy scan of the same vectors; perf_probes.py), the service's `recall` (balanced, the configured
retrieval), and `remember` of new sentences. PostgreSQL is BENCH_DATABASE_URL, else a throwaway
pgserver. Prints one JSON line.

Side by side, several trees in one run (each with its own store, filled once, and its own probe
process, all open at once): every query goes to each tree in turn, the order rotating, then every
remember, so all trees are timed at the same moments of a busy machine's load:

    .venv/bin/python -m bench.latency.hybrid_latency --backend sqlite --size 10000 --runs 100 \\
        --tree before=/path/to/old/checkout --tree after=.

A tree's own `bench/harness/perf_fill.py` and `perf_probes.py` are used when it has them (an older layout
of the package needs its own), the corpus always this one's, so every tree holds the same memories.
The load average is read every ten queries (min, median, max printed). Then one line per pair
(`--pair AFTER:BEFORE`, repeatable; by default every tree against the first): for recall and for
remember, the median of AFTER's calls' ratios to BEFORE's call of the same round, with a 95 %
bootstrap interval; an interval that holds 1.0 is a difference within the run's noise.
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
from urllib.parse import urlsplit, urlunsplit

import numpy as np

HERE = Path(__file__).resolve().parent
from bench.harness import perf_corpus  # noqa: E402  (this tree's corpus, imported before any tree's helpers)


def p50(xs: list[float]) -> float:
    return p(xs, 50)


def p95(xs: list[float]) -> float:
    return p(xs, 95)


def p(xs: list[float], q: float) -> float:
    # Imported here: a `--serve` child may find an older tree's bench/ first, without timing.py.
    from bench.harness.timing import percentile

    return round(1000 * percentile(xs, q), 2)


async def measure(args, where: dict[str, str]) -> dict:
    if args.bench_dir:  # the measured tree's own helpers, from before bench/ became a package
        sys.path.insert(0, args.bench_dir)
        import perf_fill  # type: ignore[import-not-found]
        from perf_probes import ServiceProbe  # type: ignore[import-not-found]
    else:
        from bench.harness import perf_fill
        from bench.harness.perf_probes import ServiceProbe

    texts = perf_corpus.corpus(args.size)
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((args.size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    fill_where = (
        {"db_path": where["MEMORY_DB_PATH"]} if args.backend == "sqlite" else {"database_url": where["DATABASE_URL"]}
    )
    started = time.perf_counter()
    await perf_fill.fill_to(args.backend, args.size, texts, vectors, 0, **fill_where)
    fill_s = time.perf_counter() - started
    started = time.perf_counter()
    probe = await ServiceProbe.open(where, vectors)
    open_s = time.perf_counter() - started
    if args.serve:
        await serve(probe, fill_s, open_s)
        return {}
    queries = perf_corpus.queries(args.runs + 10)
    facts = perf_corpus.new_facts(args.runs, seed=3)
    floor, service, remember = [], [], []
    load = os.getloadavg()[0]
    try:
        for q in queries[:10]:
            await probe.recall(q)
        for q in queries[10:]:
            model, scan = probe.floor(q)
            floor.append(model + scan)
            service.append(await probe.recall(q))
        for text in facts:
            took, _ = await probe.remember(text)
            remember.append(took)
    finally:
        await probe.close()
    out = {
        "tree": os.environ.get("PYTHONPATH", ""),
        "retrieval": os.environ.get("RECALL_RETRIEVAL", "(default)"),
        "backend": args.backend,
        "size": args.size,
        "fill_s": round(fill_s, 1),
        "open_s": round(open_s, 2),
        "floor_p50_ms": p50(floor),
        "recall_p50_ms": p50(service),
        "recall_p95_ms": p95(service),
        "recall_to_floor": round(statistics.median(service) / statistics.median(floor), 2),
        "remember_p50_ms": p50(remember),
        "load": round((load + os.getloadavg()[0]) / 2, 2),
    }
    return out


async def serve(probe, fill_s: float, open_s: float) -> None:
    """Side-by-side mode: one timed call per line on stdin, its seconds on stdout."""
    print(json.dumps({"ready": True, "fill_s": round(fill_s, 1), "open_s": round(open_s, 2)}), flush=True)
    try:
        for line in sys.stdin:
            op, text = json.loads(line)
            if op == "floor":
                took = sum(probe.floor(text))
            elif op == "recall":
                took = await probe.recall(text)
            elif op == "remember":
                took, _ = await probe.remember(text)
            else:
                break
            print(json.dumps(took), flush=True)
    finally:
        await probe.close()


async def main(args) -> None:
    with tempfile.TemporaryDirectory(prefix="mcp-memory-hybrid-latency-") as tmp:
        home = args.data or tmp
        where = {"HOME": home, "EMBEDDING_PROVIDER": "local"}
        if os.environ.get("RECALL_RETRIEVAL"):
            where["RECALL_RETRIEVAL"] = os.environ["RECALL_RETRIEVAL"]
        server = None
        if args.backend == "sqlite":
            where["MEMORY_DB_PATH"] = str(Path(home) / "memory.db")
        else:
            url = os.environ.get("BENCH_DATABASE_URL")
            if not url:
                import pgserver

                server = pgserver.get_server(tempfile.mkdtemp(prefix="mcp-memory-bench-pg-"), cleanup_mode="delete")
                url = server.get_uri()
            where["DATABASE_URL"] = url
        try:
            out = await measure(args, where)
            if out:
                print(json.dumps(out), flush=True)
        finally:
            if server is not None:
                server.cleanup()


def _database_urls(names: list[str], root: Path) -> tuple[object, dict[str, str]]:
    """One pgserver, one database per tree (an older tree refuses a newer schema)."""
    import pgserver
    import psycopg

    server = pgserver.get_server(str(root / "pg"), cleanup_mode="delete")
    base = server.get_uri()
    urls = {}
    with psycopg.connect(base, autocommit=True) as conn:
        for name in names:
            conn.execute(f'CREATE DATABASE "bench_{name}"')
            urls[name] = urlunsplit(urlsplit(base)._replace(path=f"/bench_{name}"))  # keeps ?host=<socket dir>
    return server, urls


class Child:
    """One tree's probe in its own process, driven one call at a time."""

    def __init__(self, name: str, tree: Path, data: Path, args, url: str | None) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(HERE.parents[1])])}
        if url:
            env["BENCH_DATABASE_URL"] = url
        command = [sys.executable, str(Path(__file__).resolve()), "--backend", args.backend, "--serve"]
        command += ["--size", str(args.size), "--data", str(data)]
        if (tree / "bench" / "perf_fill.py").exists():
            command += ["--bench-dir", str(tree / "bench")]
        self.name = name
        self.process = subprocess.Popen(
            command, env=env, cwd=str(tree), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.ready = self._read()

    def _read(self):
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} probe ended early")
        return json.loads(line)

    def call(self, op: str, text: str) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([op, text]) + "\n")
        self.process.stdin.flush()
        return float(self._read())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.write(json.dumps(["quit", ""]) + "\n")
            self.process.stdin.close()
        self.process.wait(timeout=60)


def compare(args) -> None:
    """Every tree's probe open at once; each query, then each remember, goes to every tree in
    turn (the order rotating), so all trees see the same moments of the machine's load."""
    trees = {name: Path(path).resolve() for name, path in (spec.split("=", 1) for spec in args.tree)}
    names = list(trees)
    root = Path(tempfile.mkdtemp(prefix="mcp-memory-hybrid-compare-"))
    server, urls = _database_urls(names, root) if args.backend == "postgres" else (None, {})
    samples: dict[str, dict[str, list[float]]] = {n: {"floor": [], "recall": [], "remember": []} for n in names}
    children: list[Child] = []
    loads = [os.getloadavg()[0]]
    try:
        for name in names:  # filled and opened one after the other, not timed
            (root / name).mkdir()
            children.append(Child(name, trees[name], root / name, args, urls.get(name)))
            print(json.dumps({"name": name, **children[-1].ready}), flush=True)
        queries = perf_corpus.queries(args.runs + 10)
        facts = perf_corpus.new_facts(args.runs, seed=3)
        for i, query in enumerate(queries):
            turn = children[i % len(children) :] + children[: i % len(children)]
            for child in turn:
                floor = child.call("floor", query)
                took = child.call("recall", query)
                if i >= 10:  # the first ten warm every probe up
                    samples[child.name]["floor"].append(floor)
                    samples[child.name]["recall"].append(took)
            if i % 10 == 0:
                loads.append(os.getloadavg()[0])
        for i, fact in enumerate(facts):
            for child in children[i % len(children) :] + children[: i % len(children)]:
                samples[child.name]["remember"].append(child.call("remember", fact))
        loads.append(os.getloadavg()[0])
    finally:
        for child in children:
            child.close()
        if server is not None:
            server.cleanup()  # type: ignore[attr-defined]
        shutil.rmtree(root, ignore_errors=True)  # each tree's store: hundreds of MB at 10,000 and up
    for name in names:
        got = samples[name]
        print(
            json.dumps(
                {
                    "name": name,
                    "tree": str(trees[name]),
                    "backend": args.backend,
                    "size": args.size,
                    "runs": args.runs,
                    "floor_p50_ms": p50(got["floor"]),
                    "recall_p50_ms": p50(got["recall"]),
                    "recall_p95_ms": p95(got["recall"]),
                    "recall_to_floor": round(statistics.median(got["recall"]) / statistics.median(got["floor"]), 2),
                    "remember_p50_ms": p50(got["remember"]),
                    "remember_p95_ms": p95(got["remember"]),
                    "load_min_median_max": [min(loads), round(statistics.median(loads), 2), max(loads)],
                }
            ),
            flush=True,
        )
    pairs = [spec.split(":", 1) for spec in args.pair] or [[n, names[0]] for n in names[1:]]
    for after, before in pairs:
        print(json.dumps({"pair": f"{after}/{before}", **paired(samples[after], samples[before])}), flush=True)
    if args.samples:
        Path(args.samples).write_text(json.dumps(samples))


def paired(after: dict[str, list[float]], before: dict[str, list[float]]) -> dict[str, object]:
    """Each call of `after` against `before`'s call of the same round (moments apart): the median
    of those ratios and its 95 % bootstrap interval (2,000 resamples of the rounds)."""
    rng = np.random.default_rng(5)
    out: dict[str, object] = {}
    for op in ("recall", "remember"):
        ratios = np.array(after[op]) / np.array(before[op])
        medians = np.median(ratios[rng.integers(0, len(ratios), (2000, len(ratios)))], axis=1)
        low, high = np.percentile(medians, [2.5, 97.5])
        out[op] = [round(float(np.median(ratios)), 3), round(float(low), 3), round(float(high), 3)]
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--tree", action="append", default=[], help="NAME=PATH: compare trees side by side")
    parser.add_argument("--data", help="keep the store here (filled once, topped up)")
    parser.add_argument("--samples", help="with --tree: also write every timed call's seconds here (JSON)")
    parser.add_argument(
        "--pair", action="append", default=[], help="AFTER:BEFORE, two --tree names (default: each against the first)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bench-dir", help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.tree:
        compare(parsed)
    else:
        asyncio.run(main(parsed))
