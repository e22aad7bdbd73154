"""Made-up tenant names cannot grow the process without bound: with METRICS_TENANT_LABEL the
first tenants seen get a label each and the rest share `_other` (10,000 names → a bounded
number of series and a bounded scrape), and past the cap on rate buckets a new tenant shares
one overflow bucket, so a flood of fresh names is one tenant's rate, not a fresh burst each."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from mcp_memory.config import CallLimits
from mcp_memory.server.http.backpressure import TenantBuckets
from mcp_memory.server.http.metrics import MAX_TENANT_LABELS, OTHER_TENANT, Metrics
from tests.server.test_metrics import service
from tests.support.http_support import mcp_client, serving

NAMES = 10_000


def tool_call_series(metrics: Metrics) -> list[dict[str, str]]:
    return [
        sample.labels
        for family in text_string_to_metric_families(metrics.exposition().decode())
        if family.name == "mcp_memory_tool_calls"
        for sample in family.samples
        if sample.name == "mcp_memory_tool_calls_total"
    ]


def test_ten_thousand_tenant_names_make_a_bounded_number_of_series() -> None:
    metrics = Metrics(tenant_label=True)
    for i in range(NAMES):
        metrics.tool_call("recall", True, 1.0, f"tenant-{i}")
    series = tool_call_series(metrics)
    assert len(series) == MAX_TENANT_LABELS + 1
    assert {"tool": "recall", "outcome": "ok", "tenant": OTHER_TENANT} in series
    assert len(metrics.exposition()) < 64 * 1024
    counted = {s["tenant"] for s in series}
    assert "tenant-0" in counted and f"tenant-{MAX_TENANT_LABELS - 1}" in counted
    assert f"tenant-{MAX_TENANT_LABELS}" not in counted
    metrics.tool_call("recall", True, 1.0, "tenant-3")  # a labelled tenant keeps its own series
    assert len(tool_call_series(metrics)) == MAX_TENANT_LABELS + 1


async def test_over_http_tenants_past_the_cap_are_counted_under_other(tmp_path: Path) -> None:
    metrics = Metrics(tenant_label=True, max_tenants=2)
    async with serving(await service(tmp_path), metrics=metrics) as running:
        for tenant in ("acme", "globex", "initech", "umbrella"):
            async with mcp_client(running, [("x-memory-tenant", tenant)]) as client:
                await client.call_tool("memory_stats", {})
    counts = {
        s.labels["tenant"]: s.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for s in family.samples
        if s.name == "mcp_memory_tool_calls_total"
    }
    assert counts == {"acme": 1, "globex": 1, OTHER_TENANT: 2}


def test_a_flood_of_new_tenant_names_shares_one_bucket_once_the_cap_is_reached() -> None:
    now = [0.0]
    limits = CallLimits(rate_per_s=20, burst=40)
    buckets = TenantBuckets(limits, clock=lambda: now[0], max_buckets=100)
    allowed = sum(buckets.take(f"made-up-{i}") == 0 for i in range(NAMES))
    assert len(buckets) == 100
    # 100 buckets of which one request each, then the overflow bucket's burst for all the rest
    assert allowed == 100 + 40
    now[0] += 1.0  # a second later those tenants are idle (refilled): their buckets make room again
    assert sum(buckets.take(f"later-{i}") == 0 for i in range(NAMES)) == 100 + 20
    assert len(buckets) == 100  # never more than the cap, however many names arrive


def test_idle_tenants_make_room_for_new_ones_past_the_cap() -> None:
    now = [0.0]
    buckets = TenantBuckets(CallLimits(rate_per_s=20, burst=40), clock=lambda: now[0], max_buckets=10)
    for i in range(10):
        assert buckets.take(f"t{i}") == 0
    now[0] += 5.0  # every bucket has refilled: those tenants are idle
    assert buckets.take("newcomer") == 0
    assert len(buckets) == 1  # the idle ones were dropped, the newcomer has a bucket of its own
    for _ in range(39):
        assert buckets.take("newcomer") == 0
    assert buckets.take("newcomer") > 0  # its own burst, not the overflow's
