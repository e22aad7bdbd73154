"""Latency of a recall over HTTP, with 1 and with 16 concurrent clients.

    PYTHONPATH=. python -m bench.latency.http_recall [--memories 500] [--calls 200] [--rounds 3]

Each round starts a fresh `mcp-memory serve-http --port 0` on the embedded
default (SQLite in a temporary directory, the local all-MiniLM-L6-v2 model),
stores `--memories` distinct sentences for one tenant, warms up, then times
recall calls as a client sees them: one `tools/call` POST each, from send to
the whole answer read, over kept-alive connections. "1 client" makes `--calls`
sequential calls; "16 clients" runs 16 workers making `--calls` calls each, all
at once. Both protocol eras are measured (legacy: `initialize` era header;
modern: 2026-07-28). Figures go to stdout as a Markdown table: the median over
rounds of each round's p50 and p95, and the throughput. Not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from bench.harness.timing import Stopwatch, percentile

ROOT = Path(__file__).resolve().parents[2]
SUBJECTS = [
    "The billing service",
    "Staging",
    "The deploy pipeline",
    "Our API gateway",
    "The search cluster",
    "The nightly backup",
    "The mobile release",
    "The payments webhook",
    "The auth proxy",
    "Grafana",
]
VERBS = [
    "restarts",
    "is restored",
    "rotates its keys",
    "drains connections",
    "pages the on-call",
    "retries three times",
    "freezes",
    "is rebuilt",
    "reads from the replica",
    "sends a digest",
]
WHEN = [
    "every Monday at 06:00 UTC",
    "before each release",
    "when CPU passes 80 %",
    "on the first of the month",
    "after a schema migration",
    "at midnight Seoul time",
    "whenever a canary fails",
    "twice a day",
    "during the Friday freeze",
    "once the queue is empty",
]
WHY = [
    "because the vendor asked",
    "to keep costs down",
    "after the March incident",
    "so audits pass",
    "since the old cron was flaky",
    "to meet the SLO",
    "as the runbook says",
    "for the EU customers",
]
QUERIES = [
    "when is staging restored?",
    "what does the billing service do before a release?",
    "how often are keys rotated?",
    "why does the deploy pipeline freeze?",
    "who gets paged at night?",
    "what happens after a schema migration?",
    "when does the backup run?",
    "how does the auth proxy retry?",
]
ERAS = {
    "legacy": {"mcp-protocol-version": "2025-06-18"},
    "modern": {"mcp-protocol-version": "2026-07-28"},
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def sentences(count: int, rng: random.Random) -> list[str]:
    seen: set[str] = set()
    while len(seen) < count:
        seen.add(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(WHEN)} {rng.choice(WHY)} (note {len(seen)}).")
    return sorted(seen)


def call_body(era: str, request_id: int, name: str, arguments: dict) -> dict:
    params: dict = {"name": name, "arguments": arguments}
    if era == "modern":
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class Bench:
    def __init__(self, url: str) -> None:
        self.url = url
        self.ids = 0

    async def call(self, http: httpx.AsyncClient, era: str, name: str, arguments: dict) -> float:
        self.ids += 1
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "x-memory-tenant": "bench",
            **ERAS[era],
        }
        if era == "modern":  # the 2026-07-28 routing headers repeat the method and the tool's name
            headers.update({"mcp-method": "tools/call", "mcp-name": name})
        with Stopwatch() as posting:
            response = await http.post(self.url, json=call_body(era, self.ids, name, arguments), headers=headers)
        took = posting.last
        body = response.json()
        if response.status_code != 200 or body.get("result", {}).get("isError"):
            raise RuntimeError(f"{name} failed: {response.status_code} {body}")
        return took


async def measure(
    url: str, memories: int, calls: int, rng: random.Random
) -> dict[tuple[str, int], tuple[float, float, float]]:
    bench = Bench(url)
    limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        facts = sentences(memories, rng)
        for start in range(0, len(facts), 8):
            await asyncio.gather(
                *(bench.call(http, "legacy", "remember", {"content": f}) for f in facts[start : start + 8])
            )
        for _ in range(20):
            await bench.call(http, "legacy", "recall", {"query": rng.choice(QUERIES)})
        results = {}
        for era in ERAS:
            for clients in (1, 16):

                async def worker() -> list[float]:
                    return [await bench.call(http, era, "recall", {"query": rng.choice(QUERIES)}) for _ in range(calls)]

                with Stopwatch() as crowd:
                    took = sorted(
                        t for batch in await asyncio.gather(*(worker() for _ in range(clients))) for t in batch
                    )
                wall = crowd.last
                p50 = percentile(took, 50) * 1000
                p95 = percentile(took, 95) * 1000
                results[(era, clients)] = (p50, p95, len(took) / wall)
        return results


def start_server(directory: str) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update({"MEMORY_DB_PATH": str(Path(directory) / "bench.db"), "PYTHONPATH": str(ROOT)})
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-http", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=str(ROOT),
    )
    first = process.stdout.readline()
    url = first.split(" listening on ")[1].split(" ")[0] + "/mcp"
    # Drain stdout (one tool_call line per call) so the server never blocks on a full pipe.
    asyncio.get_running_loop().run_in_executor(None, process.stdout.read)
    return process, url


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=500)
    parser.add_argument("--calls", type=int, default=200, help="per client")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds: list[dict] = []
    for round_no in range(args.rounds):
        with tempfile.TemporaryDirectory() as directory:
            process, url = start_server(directory)
            try:
                rounds.append(await measure(url, args.memories, args.calls, random.Random(round_no)))
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
        print(
            f"round {round_no + 1}: "
            + ", ".join(
                f"{era}/{clients}: p50 {p50:.1f} p95 {p95:.1f} ms"
                for (era, clients), (p50, p95, _) in rounds[-1].items()
            ),
            file=sys.stderr,
        )
    print(f"\n{args.memories} memories, {args.calls} recalls per client, median of {args.rounds} rounds\n")
    print("| era | clients | p50 (ms) | p95 (ms) | recalls/s |")
    print("|---|---|---|---|---|")
    for key in rounds[0]:
        p50 = statistics.median(r[key][0] for r in rounds)
        p95 = statistics.median(r[key][1] for r in rounds)
        rate = statistics.median(r[key][2] for r in rounds)
        print(f"| {key[0]} | {key[1]} | {p50:.1f} | {p95:.1f} | {rate:.0f} |")


if __name__ == "__main__":
    asyncio.run(main())
