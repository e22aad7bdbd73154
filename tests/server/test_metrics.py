"""Prometheus metrics: /metrics parses, moves as calls are made, and no label ever
carries content, a query, a conversation or (unless enabled) a tenant."""

from __future__ import annotations

from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from mcp_memory.app import open_service
from mcp_memory.config import HttpLimits, Settings
from mcp_memory.core.logs import NullLog
from mcp_memory.server.http.metrics import Metrics
from mcp_memory.server.http.metrics_endpoint import MetricsEndpoint
from tests.support.http_support import mcp_client, serving

SECRET_CONTENT = "the-launch-code-is-4711"
SECRET_QUERY = "where-is-the-launch-code"
CONVERSATION = "conv-secret-42"


async def service(tmp_path: Path, metrics: Metrics | None = None):
    settings = Settings.from_env(
        {"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "HOSTNAME": "t"}
    )
    return await open_service(settings, metrics=metrics)


def samples(body: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


async def scrape(url: str) -> dict:
    async with httpx.AsyncClient() as http:
        response = await http.get(url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return samples(response.text)


async def test_metrics_parse_and_move_as_calls_are_made_with_no_content_in_any_label(tmp_path: Path) -> None:
    metrics = Metrics()
    endpoint = MetricsEndpoint(metrics, "127.0.0.1", 0, HttpLimits(), NullLog())
    await endpoint.start()
    url = f"http://127.0.0.1:{endpoint.port}/metrics"
    try:
        svc = await service(tmp_path, metrics)
        async with serving(svc, metrics=metrics) as running:
            before = await scrape(url)
            assert value(before, "mcp_memory_tool_calls_total", tool="remember", outcome="ok") == 0
            headers = [("x-memory-tenant", "acme-secret-tenant"), ("x-conversation-id", CONVERSATION)]
            async with mcp_client(running, headers) as client:
                await client.call_tool("remember", {"content": SECRET_CONTENT})
                await client.call_tool("recall", {"query": SECRET_QUERY})
                await client.call_tool("recall", {"query": SECRET_QUERY, "limit": "not a number"})
            async with httpx.AsyncClient() as http:
                await http.post(running.mcp_url, json={}, headers={"origin": "https://evil.example"})
            await svc.counters.flush()
            after = await scrape(url)
        assert value(after, "mcp_memory_tool_calls_total", tool="remember", outcome="ok") == 1
        assert value(after, "mcp_memory_tool_calls_total", tool="recall", outcome="ok") == 1
        assert value(after, "mcp_memory_tool_calls_total", tool="recall", outcome="error") == 1
        assert value(after, "mcp_memory_tool_call_seconds_count", tool="recall") == 2
        assert value(after, "mcp_memory_embedding_seconds_count") >= 2
        assert value(after, "mcp_memory_store_query_seconds_count", operation="put") == 1
        assert value(after, "mcp_memory_store_query_seconds_count", operation="query") >= 1
        assert value(after, "mcp_memory_store_query_seconds_count", operation="near") == 1  # remember's check
        assert value(after, "mcp_memory_http_rejected_requests_total", reason="origin") == 1
        assert value(after, "mcp_memory_counter_flushes_total", outcome="ok") >= 1
        assert value(after, "mcp_memory_http_in_flight_requests") == 0
        labels = {v for _, pairs in after for _, v in pairs}
        for secret in (SECRET_CONTENT, SECRET_QUERY, CONVERSATION, "acme-secret-tenant"):
            assert not any(secret in label for label in labels), secret
    finally:
        await endpoint.stop()


async def test_the_tenant_is_a_label_only_when_enabled(tmp_path: Path) -> None:
    metrics = Metrics(tenant_label=True)
    async with serving(await service(tmp_path), metrics=metrics) as running:
        async with mcp_client(running, [("x-memory-tenant", "acme")]) as client:
            await client.call_tool("memory_stats", {})
    found = samples(metrics.exposition().decode())
    assert value(found, "mcp_memory_tool_calls_total", tool="memory_stats", outcome="ok", tenant="acme") == 1


def test_metrics_are_off_unless_a_port_is_set_and_the_port_is_read() -> None:
    assert Settings.from_env({"MEMORY_DB_PATH": "/tmp/x"}).serve.metrics.port is None
    settings = Settings.from_env({"MEMORY_DB_PATH": "/tmp/x", "METRICS_PORT": "9464", "HOST": "0.0.0.0"})
    assert (settings.serve.metrics.port, settings.serve.metrics.host) == (
        9464,
        "127.0.0.1",
    )  # not HOST: set METRICS_HOST
    chosen = Settings.from_env({"MEMORY_DB_PATH": "/tmp/x", "METRICS_PORT": "9464", "METRICS_HOST": "0.0.0.0"})
    assert chosen.serve.metrics.host == "0.0.0.0"


async def test_the_metrics_port_answers_only_get_metrics() -> None:
    endpoint = MetricsEndpoint(Metrics(), "127.0.0.1", 0, HttpLimits(), NullLog())
    await endpoint.start()
    try:
        base = f"http://127.0.0.1:{endpoint.port}"
        async with httpx.AsyncClient() as http:
            assert (await http.get(base + "/")).status_code == 404
            assert (await http.get(base + "/mcp")).status_code == 404
            posted = await http.post(base + "/metrics", content=b"x")
            assert (posted.status_code, posted.headers["allow"]) == (405, "GET")
            assert "mcp_memory_tool_calls" in (await http.get(base + "/metrics")).text
    finally:
        await endpoint.stop()


def test_a_metrics_port_in_use_is_a_start_up_error_naming_it() -> None:
    from mcp_memory.core.errors import StartupError
    from mcp_memory.server.http.serve import bind_sockets

    taken = bind_sockets("127.0.0.1", 0)
    try:
        port = taken[0].getsockname()[1]
        try:
            MetricsEndpoint(Metrics(), "127.0.0.1", port, HttpLimits(), NullLog())
        except StartupError as exc:
            assert str(exc) == f"cannot serve metrics on 127.0.0.1:{port}: the port is already in use"
        else:
            raise AssertionError("a port in use was accepted")
    finally:
        for sock in taken:
            sock.close()
