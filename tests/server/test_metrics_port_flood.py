"""A flood of idle and half-open connections to the metrics port, against a real serve-http
process held to 256 open files, cannot starve the MCP port: `/health` answers within 1 s
throughout, the process's descriptors stay bounded, and a scrape still gets through.

(prometheus-client's thread-per-connection server held every one of them open with no
timeout: 250 of them exhausted the process and `/health` timed out.)"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import httpx

from tests.server.test_serve_http_oauth import free_port
from tests.support.http_process import clean_env, http_process

OPEN_FILES = 256
FLOOD = 300
#: The issue's bound: a health probe is answered within this long while the flood lasts.
HEALTH_WITHIN_S = 1.0
#: How long a connect waits for its handshake before a flooder tries again (a free queue answers at once).
RETRY_AFTER_S = 0.05


def flood_connection(port: int) -> socket.socket:
    """One connection of the flood, connected. The port's queue holds 16 (metrics_endpoint.py):
    when it is full the kernel drops the handshake, and a blocking connect would wait the 1 s of
    its retransmission, 12 times over 300 connections; a flooder does not wait, it tries again."""
    for _ in range(int(30 / RETRY_AFTER_S)):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(RETRY_AFTER_S)
        try:
            sock.connect(("127.0.0.1", port))
        except TimeoutError:
            sock.close()
            continue
        sock.settimeout(5)
        return sock
    raise AssertionError(f"the metrics port on {port} accepted no connection for 30 s")


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def healthy(http: httpx.AsyncClient, url: str) -> None:
    """One probe on a new connection (keep-alive is off), answered within HEALTH_WITHIN_S."""
    response = await http.get(url + "/health", timeout=HEALTH_WITHIN_S)
    assert response.status_code == 200


async def test_a_metrics_port_flood_at_a_low_file_limit_leaves_health_answering(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(tmp_path, MEMORY_DB_PATH=str(tmp_path / "m.db"), EMBEDDING_PROVIDER="fake", METRICS_PORT=str(port))
    async with http_process(env, tmp_path / "err.log", boot_lines=5, open_files=OPEN_FILES) as server:
        assert server.boot[4] == f"metrics: http://127.0.0.1:{port}/metrics"
        flood: list[socket.socket] = []
        probes = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
        try:
            for i in range(FLOOD):
                sock = flood_connection(port)
                if i % 2:  # half-open: a request line, then nothing
                    sock.sendall(b"GET /metrics HTTP/1.1\r\nhost: x\r\n")
                flood.append(sock)
            for _ in range(10):  # while the whole flood is held open
                await healthy(probes, server.url)
                await asyncio.sleep(0.1)  # probes spaced out, as a kubelet's are
            assert descriptors(server.process.pid) < OPEN_FILES // 2
            async with httpx.AsyncClient(timeout=5) as http:
                scraped = await http.get(f"http://127.0.0.1:{port}/metrics")
            assert scraped.status_code == 200 and "mcp_memory_tool_calls" in scraped.text
        finally:
            await probes.aclose()
            for sock in flood:
                sock.close()
        code, _, err = await server.stop()
        assert code == 0, err
