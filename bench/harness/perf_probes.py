"""The three ways the performance benchmark reaches mcp-memory, and what it reads off them.

- `ServiceProbe`: `MemoryService` in this process (open_service on the same
  settings a server would use). It also times the floor: one query through
  the model runtime directly plus an exact numpy scan of the same vectors.
- `StdioServer`: `python -m mcp_memory serve-stdio` as a child process, spoken
  to in raw JSON-RPC lines over its pipes (a client that costs next to nothing),
  timing the start: spawn → `initialize` answered → `tools/list` answered →
  first `recall` answered.
- `HttpServer`: `python -m mcp_memory serve-http --port 0` as a child, called
  with aiohttp over kept-alive loopback connections, one `tools/call` POST per
  call, in either protocol era.

Every timing is wall clock around one awaited call as the client sees it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness.timing import Stopwatch, percentile

ROOT = Path(__file__).resolve().parents[2]
TENANT = "bench"
PROTOCOL = "2025-06-18"
MODERN = "2026-07-28"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def server_env(where: dict[str, str], source: Path) -> dict[str, str]:
    """The environment of a child server: only our storage settings, the local model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    # These benchmarks measure the server, not its per-tenant limiter: 16 clients of one tenant
    # would otherwise be answered 429 past the default 20 calls/s (trees before the limiter ignore it).
    env.setdefault("RATE_LIMIT_PER_TENANT", "100000")
    env.setdefault("RATE_LIMIT_BURST", "100000")
    env.update(where)
    env["PYTHONPATH"] = str(source)
    return env


def rss_mb(pid: int) -> dict[str, float]:
    """Resident set now and its peak (VmHWM), in MB, from /proc/<pid>/status."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return {"rss_mb": fields["VmRSS"], "peak_mb": fields["VmHWM"]}


# --------------------------------------------------------------------------- in process


class ServiceProbe:
    """MemoryService over the store, with the real local model, in this process."""

    def __init__(self, service: Any, vectors: np.ndarray) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.service = service
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)  # the same vectors the store holds
        half = len(matrix) // 2
        self.halves = (matrix[:half], matrix[half:])
        self.helper = ThreadPoolExecutor(max_workers=1)

    @classmethod
    async def open(cls, where: dict[str, str], vectors: np.ndarray) -> ServiceProbe:
        from threadpoolctl import threadpool_limits

        from mcp_memory.app import open_service
        from mcp_memory.config import Settings

        threadpool_limits(
            1, "blas"
        )  # as the SQLite store sets it (mcp_memory/runtime/blas.py), for every backend alike
        service = await open_service(Settings.from_env(where))
        await service.embedder.warm_up()
        return cls(service, vectors)

    async def recall(self, query: str) -> float:
        from mcp_memory.core.model import Caller

        with Stopwatch() as recalling:
            result = await self.service.recall(Caller(TENANT), query)
        if not result.found_any:
            raise RuntimeError("recall found nothing in a filled store")
        return recalling.last

    async def remember(self, text: str) -> tuple[float, bool]:
        from mcp_memory.core.model import Caller

        with Stopwatch() as remembering:
            result = await self.service.remember(Caller(TENANT), text)
        return remembering.last, result.created

    async def embed(self, query: str) -> float:
        with Stopwatch() as embedding:
            await self.service.embedder.embed([query])
        return embedding.last

    def floor(self, query: str) -> tuple[float, float]:
        """(model seconds, scan seconds): the model runtime called directly on this thread
        (tokenise, run, pool; no queue, no thread hop, no checks), then one exact scan of
        the same vectors on both cores (each half's matrix-vector product on its own
        thread, one BLAS thread each: numpy's own two-thread BLAS is no faster and leaves
        spinning threads behind), and the top 30."""
        runtime = self.service.embedder._runtime
        started = time.perf_counter()
        vector = runtime.embed(runtime.tokenize([query]))[0]
        embedded = time.perf_counter()
        if len(self.halves[0]) >= 4096:
            other = self.helper.submit(np.matmul, self.halves[1], vector)
            scores = np.concatenate([self.halves[0] @ vector, other.result()])
        else:
            scores = np.concatenate([self.halves[0] @ vector, self.halves[1] @ vector])
        top = np.argpartition(scores, len(scores) - 30)[-30:]
        top[np.argsort(scores[top])]
        return embedded - started, time.perf_counter() - embedded

    async def close(self) -> None:
        self.helper.shutdown()
        await self.service.close()


# --------------------------------------------------------------------------- stdio


class StdioServer:
    """`serve-stdio` in a child process; JSON-RPC lines on its stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process, started: float) -> None:
        self.process = process
        self.started = started
        self.ids = 0
        self.startup: dict[str, float] = {}

    @classmethod
    async def start(cls, where: dict[str, str], source: Path, first_query: str) -> StdioServer:
        """Start it and time the handshake, tools/list and a first recall, from the spawn."""
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mcp_memory",
            "serve-stdio",
            "--tenant",
            TENANT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=server_env(where, source),
            cwd=str(source),
            limit=1 << 24,
        )
        server = cls(process, started)
        await server.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        server.startup["initialize_s"] = time.perf_counter() - started
        await server.notify("notifications/initialized")
        tools = await server.request("tools/list", {})
        server.startup["tools_list_s"] = time.perf_counter() - started
        if len(tools["tools"]) != 5:
            raise RuntimeError(f"tools/list answered {tools}")
        await server.call("recall", {"query": first_query})
        server.startup["first_recall_s"] = time.perf_counter() - started
        return server

    async def notify(self, method: str) -> None:
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict) -> dict:
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise RuntimeError("serve-stdio closed stdout")
            answer = json.loads(line)
            if answer.get("id") == self.ids:
                if "error" in answer:
                    raise RuntimeError(f"{method} failed: {answer['error']}")
                return answer["result"]

    async def call(self, name: str, arguments: dict) -> tuple[float, str]:
        with Stopwatch() as calling:
            result = await self.request("tools/call", {"name": name, "arguments": arguments})
        took = calling.last
        if result.get("isError"):
            raise RuntimeError(f"{name} failed: {result}")
        return took, result["content"][0]["text"]

    def rss(self) -> dict[str, float]:
        return rss_mb(self.process.pid)

    async def close(self) -> None:
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


# --------------------------------------------------------------------------- HTTP


class HttpServer:
    """`serve-http --port 0` in a child process, and an aiohttp client for it."""

    def __init__(self, process: asyncio.subprocess.Process, url: str, log: Any = None) -> None:
        import aiohttp

        self.process = process
        self.url = url
        self.ids = 0
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64, force_close=False))
        self._log = log

    @classmethod
    async def start(cls, where: dict[str, str], source: Path) -> HttpServer:
        """Its stdout (a tool_call line per call) goes to a file: a pipe read by this busy
        client would fill up and block the server's writes, and time that, not the server."""
        import tempfile

        log = tempfile.TemporaryFile(mode="w+")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mcp_memory",
            "serve-http",
            "--port",
            "0",
            stdout=log,
            stderr=asyncio.subprocess.DEVNULL,
            env=server_env(where, source),
            cwd=str(source),
        )
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline and process.returncode is None:
            log.seek(0)
            first = log.readline()
            if " listening on " in first:
                return cls(process, first.split(" listening on ")[1].split(" ")[0] + "/mcp", log)
            await asyncio.sleep(0.02)
        log.close()
        raise RuntimeError("serve-http did not start within 120 s")

    async def call(self, name: str, arguments: dict, era: str = "modern") -> tuple[float, str]:
        self.ids += 1
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "x-memory-tenant": TENANT,
        }
        if era == "modern":
            params["_meta"] = MODERN_META
            headers.update({"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name})
        else:
            headers["mcp-protocol-version"] = PROTOCOL
        body = json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": params})
        with Stopwatch() as posting:
            async with self.session.post(self.url, data=body, headers=headers) as response:
                payload = await response.read()
        took = posting.last
        answer = json.loads(payload)
        if response.status != 200 or "result" not in answer or answer["result"].get("isError"):
            raise RuntimeError(f"{name} failed: {response.status} {payload[:300]!r}")
        return took, answer["result"]["content"][0]["text"]

    async def throughput(self, clients: int, queries: list[str], seconds: float, max_calls: int) -> dict[str, float]:
        """`clients` workers calling recall back to back until `seconds` pass or
        `max_calls` are made in all; recalls per second and the latencies."""
        took: list[float] = []
        deadline = time.perf_counter() + seconds
        issued = 0

        async def worker(offset: int) -> None:
            nonlocal issued
            while time.perf_counter() < deadline and issued < max_calls:
                issued += 1
                seconds_taken, _ = await self.call("recall", {"query": queries[(offset + issued) % len(queries)]})
                took.append(seconds_taken)

        with Stopwatch() as crowd:
            await asyncio.gather(*(worker(i * 7) for i in range(clients)))
        wall = crowd.last
        took.sort()
        return {
            "clients": clients,
            "calls": len(took),
            "seconds": wall,
            "per_s": len(took) / wall,
            "p50_ms": percentile(took, 50) * 1000,
            "p95_ms": percentile(took, 95) * 1000,
        }

    def rss(self) -> dict[str, float]:
        return rss_mb(self.process.pid)

    async def close(self) -> None:
        await self.session.close()
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 60)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        if self._log is not None:
            self._log.close()
