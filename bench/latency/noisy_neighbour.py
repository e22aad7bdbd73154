"""A quiet tenant's recall latency while another tenant floods the same `serve-http` (issue 18).

Three processes on the same machine: `serve-http` (default limits: 20/s per tenant, burst 40,
64 calls at once; SQLite with 300 memories, fake embedder, a static key), the flooder (its own
process, `--flood`: raw keep-alive HTTP/1.1 POSTs of a `recall` from tenant `noisy`, `--conns`
connections each sending its next request the moment the answer is in; `--fresh`: a new
connection for every request, as a flooder that notices the hold after a 429 would) and this process, the
quiet tenant, one `recall` every 50 ms over one keep-alive connection (httpx).

Idle and flood windows take turns, `--rounds` times, so the machine's drift hits both alike; each
window is `--per-window` quiet calls. The flooder competes with the server for the machine's cores
(that is the point of running it on the same box: say so when quoting the numbers).

    PYTHONPATH=. python -m bench.latency.noisy_neighbour [--rounds 5] [--per-window 100] [--conns 8]
        [--config NAME=VAR=VALUE,VAR=VALUE ...]   # servers to compare, interleaved round by round

Prints one line per round and server, and the medians of the per-window p95s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from bench.harness.timing import percentile

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": "deploy key rotation"}},
    }
).encode()
HEADERS = {
    "authorization": "Bearer k",
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}
PACE_S = 0.05  # an agent's pace, not a flood


# ---------------------------------------------------------------------------------- the flooder


def flood_request(host: str, port: int, path: str, tenant: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"host: {host}:{port}", f"x-memory-tenant: {tenant}"]
    lines += [f"{k}: {v}" for k, v in HEADERS.items()]
    lines.append(f"content-length: {len(BODY)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + BODY


async def flood_connection(
    host: str, port: int, request: bytes, codes: dict[int, int], stop: asyncio.Event, fresh: bool
) -> None:
    """Send, read the answer, send again; `fresh`: a new connection for every request."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            codes[-1] = codes.get(-1, 0) + 1
            await asyncio.sleep(0.01)
            continue
        try:
            while not stop.is_set():
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head[9:12])
                length, close = 0, False
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value)
                    elif name == b"connection" and value.strip().lower() == b"close":
                        close = True
                await reader.readexactly(length)
                codes[status] = codes.get(status, 0) + 1
                if close or fresh:
                    break
        except (OSError, asyncio.IncompleteReadError, ValueError):
            codes[-1] = codes.get(-1, 0) + 1
        finally:
            writer.close()


async def flood(url: str, conns: int, fresh: bool) -> None:
    """Flood until SIGTERM; print the answers' statuses (JSON) on stdout."""
    hostport = url.removeprefix("http://").split("/", 1)[0]
    host, port = hostport.rsplit(":", 1)
    request = flood_request(host, int(port), "/mcp", "noisy")
    codes: dict[int, int] = {}
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    started = time.monotonic()
    tasks = [asyncio.create_task(flood_connection(host, int(port), request, codes, stop, fresh)) for _ in range(conns)]
    while not codes:
        await asyncio.sleep(0.01)
    print("flooding", flush=True)
    await stop.wait()
    elapsed = time.monotonic() - started
    await asyncio.wait(tasks, timeout=2)
    print(json.dumps({"codes": codes, "seconds": elapsed}), flush=True)


# ---------------------------------------------------------------------------------- the bench


def p95(values: list[float]) -> float:
    return percentile(values, 95)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def quiet_window(http, url: str, n: int, skip_s: float = 0.0) -> list[float]:
    """`n` recalls from the quiet tenant, one per PACE_S, and their latencies in ms; with
    `skip_s`, the calls sent in the window's first `skip_s` seconds are made but not kept."""
    import httpx

    out = []
    began = time.perf_counter()
    headers = {**HEADERS, "x-memory-tenant": "quiet"}
    for _ in range(n):
        started = time.perf_counter()
        response: httpx.Response = await http.post(url, content=BODY, headers=headers)
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, (response.status_code, response.text[:200])
        assert '"isError":false' in response.text.replace(" ", ""), response.text[:300]
        if started - began >= skip_s:
            out.append(elapsed)
        await asyncio.sleep(PACE_S)
    return out


async def bench(args: argparse.Namespace) -> None:
    import httpx

    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller
    from tests.support.http_process import clean_env, http_process

    tmp = Path(tempfile.mkdtemp())
    db = str(tmp / "m.db")
    seeding = await open_service(Settings.from_env({"MEMORY_DB_PATH": db, "EMBEDDING_PROVIDER": "fake"}))
    for tenant in ("quiet", "noisy"):
        for i in range(300):
            await seeding.remember(Caller(tenant, None), f"note {i}: the deploy key rotates every {i % 30} days")
    await seeding.close()
    configs = {}
    for spec in args.config or ["defaults="]:
        name, _, settings = spec.partition("=")
        configs[name] = dict(item.split("=", 1) for item in settings.split(",") if item)
    print(f"load average before: {os.getloadavg()}; configurations: {configs}")
    keys = ("idle", "flood", "rate", "idle_all", "flood_all")
    results: dict[str, dict[str, list[float]]] = {name: {key: [] for key in keys} for name in configs}
    async with AsyncExitStack() as stack:
        servers = {}
        for name, extra in configs.items():
            env = clean_env(tmp, MEMORY_DB_PATH=db, EMBEDDING_PROVIDER="fake", MCP_API_KEY="k", **extra)
            # -P: the server imports mcp_memory from PYTHONPATH (a --config may point it at another tree)
            running = http_process(env, tmp / f"err-{name}.log", boot_lines=5, python_flags=["-P"])
            servers[name] = await stack.enter_async_context(running)
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
        for server in servers.values():
            await quiet_window(http, server.mcp_url, 20)  # warm-up
        for round_ in range(args.rounds):
            for name, server in servers.items():
                line = await one_round(http, server, args)
                for key in ("idle", "flood", "rate"):
                    results[name][key].append(line[key])
                for key in ("idle_all", "flood_all"):
                    results[name][key].extend(line[key])
                print(f"round {round_ + 1} {name}: {line['text']}", flush=True)
    for name, r in results.items():
        idle_m, flood_m = statistics.median(r["idle"]), statistics.median(r["flood"])
        print(
            f"MEDIAN of {args.rounds} rounds, {name}: quiet p95 idle {idle_m:.1f} ms, flood {flood_m:.1f} ms "
            f"({flood_m / idle_m:.2f}x); flood {statistics.median(r['rate']):.0f} req/s from {args.conns} "
            f"{'fresh ' if args.fresh else 'keep-alive '}connections, first {args.settle:g} s of each flood not measured; "
            f"all rounds pooled: p95 idle {p95(r['idle_all']):.1f} ms, flood {p95(r['flood_all']):.1f} ms "
            f"({p95(r['flood_all']) / p95(r['idle_all']):.2f}x), n={len(r['idle_all'])}/{len(r['flood_all'])}"
        )
    print(f"load average after: {os.getloadavg()}")


async def one_round(http, server, args: argparse.Namespace) -> dict:
    """An idle window, then a flood window, against one server."""
    pid = server.process.pid
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    idle = await quiet_window(http, server.mcp_url, args.per_window)
    idle_cpu = (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
    flooder = subprocess.Popen(
        [sys.executable, __file__, "--flood", server.mcp_url, "--conns", str(args.conns)]
        + (["--fresh"] if args.fresh else []),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert flooder.stdout is not None
    line = await asyncio.to_thread(flooder.stdout.readline)
    assert line.strip() == "flooding", line
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    busy = await quiet_window(http, server.mcp_url, args.per_window, args.settle)
    flood_cpu = (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
    flooder.send_signal(signal.SIGTERM)
    report = json.loads(await asyncio.to_thread(flooder.stdout.readline))
    flooder.wait(10)
    codes = {int(k): v for k, v in report["codes"].items()}
    rate = sum(codes.values()) / report["seconds"]
    text = (
        f"quiet p50/p95 idle {statistics.median(idle):6.1f}/{p95(idle):6.1f} ms, "
        f"flood {statistics.median(busy):6.1f}/{p95(busy):6.1f} ms ({p95(busy) / p95(idle):.2f}x); "
        f"server CPU idle {idle_cpu:.2f}, flood {flood_cpu:.2f} cores; "
        f"flood {rate:.0f} req/s {dict(sorted(codes.items()))}; load {os.getloadavg()[0]:.1f}"
    )
    return {"idle": p95(idle), "flood": p95(busy), "rate": rate, "text": text, "idle_all": idle, "flood_all": busy}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-window", type=int, default=100)
    parser.add_argument("--conns", type=int, default=8)
    parser.add_argument(
        "--config", action="append", help="NAME=VAR=VALUE,VAR=VALUE: a serve-http to compare (several: interleaved)"
    )
    parser.add_argument(
        "--settle", type=float, default=0.0, help="seconds of each flood window not measured (the admitted burst)"
    )
    parser.add_argument("--fresh", action="store_true", help="the flooder opens a new connection per request")
    parser.add_argument("--flood", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        asyncio.run(flood(args.flood, args.conns, args.fresh))
    else:
        asyncio.run(bench(args))


if __name__ == "__main__":
    main()
