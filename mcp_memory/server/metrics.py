"""Prometheus metrics for serve-http (prometheus-client), on their own port.

Labels are bounded and never carry content, queries, conversation ids or tokens:
a tool name (the catalogue's), an outcome (`ok`/`error`), a store operation, a
refusal reason. The tenant is a label only with METRICS_TENANT_LABEL=true, and
then only on the tool-call counter (one series per tenant and tool), for the first
MAX_TENANT_LABELS tenants seen; the rest share the label `_other`.

Tool calls are counted from the tool layer's own `tool_call` line (the log
passes through `MetricsLog`), so a metric and a log line can never disagree;
embedding, store and counter timings wrap the service's parts in place.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from mcp_memory.core.logs import JsonLog

PREFIX = "mcp_memory"
REJECT_REASONS = ("auth", "scope", "rate", "busy", "size", "origin")
#: Store calls that are timed (the ones a tool call waits on).
STORE_OPERATIONS = ("query", "keyword_query", "get", "put", "delete")
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


#: Distinct tenant label values at most; later tenants are counted under OTHER_TENANT.
MAX_TENANT_LABELS = 200
#: The label past the cap: it cannot be a tenant's name (those start with a letter or digit).
OTHER_TENANT = "_other"


class BoundedLabel:
    """The first `cap` distinct values pass as they are, every later one becomes `other`:
    without a tenant claim callers choose the tenant names, and each new name would
    otherwise be a new series for as long as the process runs."""

    def __init__(self, cap: int, other: str = OTHER_TENANT) -> None:
        self.cap = cap
        self.other = other
        self._seen: set[str] = set()

    def __call__(self, value: str) -> str:
        if value in self._seen:
            return value
        if len(self._seen) >= self.cap:
            return self.other
        self._seen.add(value)
        return value


class Metrics:
    """One process's metrics, in a registry of their own (so tests may run several)."""

    def __init__(self, *, tenant_label: bool = False, max_tenants: int = MAX_TENANT_LABELS) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.tenant_label = tenant_label
        self.tenants = BoundedLabel(max_tenants)
        r = self.registry
        labels = ["tool", "outcome", "tenant"] if tenant_label else ["tool", "outcome"]
        self.tool_calls = Counter(
            f"{PREFIX}_tool_calls", "Tool calls answered, by tool and outcome.", labels, registry=r
        )
        self.tool_seconds = Histogram(
            f"{PREFIX}_tool_call_seconds", "Time to answer a tool call.", ["tool"], buckets=LATENCY_BUCKETS, registry=r
        )
        self.embed_seconds = Histogram(
            f"{PREFIX}_embedding_seconds", "Time to embed one batch of texts.", buckets=LATENCY_BUCKETS, registry=r
        )
        self.store_seconds = Histogram(
            f"{PREFIX}_store_query_seconds", "Time of a store call.", ["operation"], buckets=LATENCY_BUCKETS, registry=r
        )
        self.flushes = Counter(
            f"{PREFIX}_counter_flushes", "Access-counter flushes, by outcome.", ["outcome"], registry=r
        )
        self.compactions = Counter(
            f"{PREFIX}_counter_compactions", "Access-counter compactions, by outcome.", ["outcome"], registry=r
        )
        self.in_flight = Gauge(f"{PREFIX}_http_in_flight_requests", "MCP requests being answered.", registry=r)
        self.rejected = Counter(
            f"{PREFIX}_http_rejected_requests",
            "Requests refused before the MCP handler, by reason.",
            ["reason"],
            registry=r,
        )
        for reason in REJECT_REASONS:
            self.rejected.labels(reason)
        for outcome in ("ok", "error"):
            self.flushes.labels(outcome)
            self.compactions.labels(outcome)

    def tool_call(self, tool: str, ok: bool, ms: float, tenant: str | None) -> None:
        outcome = "ok" if ok else "error"
        if self.tenant_label:
            self.tool_calls.labels(tool, outcome, self.tenants(tenant or "")).inc()
        else:
            self.tool_calls.labels(tool, outcome).inc()
        self.tool_seconds.labels(tool).observe(ms / 1000)

    def reject(self, reason: str) -> None:
        self.rejected.labels(reason).inc()

    def instrument(self, service: Any) -> None:
        """Time the embedder, the store's calls and the counter flushes/compactions of `service`."""
        _wrap(service.embedder, "embed", lambda _r, s: self.embed_seconds.observe(s))
        for operation in STORE_OPERATIONS:
            observe: Callable[[float], None] = self.store_seconds.labels(operation).observe
            _wrap(service.vectors, operation, _observer(observe))
            if operation == "put":  # remember's memory + index entry in one write (SQLite) is a put too
                _wrap(service.vectors, "put_with_object", _observer(observe))
        counters = service.counters
        _wrap(counters, "flush", None, self.flushes)
        _wrap(counters, "_fold", None, self.compactions)

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


def _wrap(obj: Any, name: str, timed: Callable[[Any, float], None] | None, outcomes: Any = None) -> None:
    """Replace the bound coroutine method `obj.name` by one that reports its time and/or outcome."""
    original = getattr(obj, name, None)
    if original is None:
        return

    @functools.wraps(original)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            result = await original(*args, **kwargs)
        except Exception:
            if outcomes is not None:
                outcomes.labels("error").inc()
            raise
        if outcomes is not None:
            outcomes.labels("ok").inc()
        if timed is not None:
            timed(result, time.perf_counter() - started)
        return result

    try:
        setattr(obj, name, wrapper)
    except AttributeError:  # a slotted object: not timed
        return


class MetricsLog(JsonLog):
    """A JsonLog that also counts each `tool_call` line in `metrics`."""

    def __init__(self, log: JsonLog, metrics: Metrics) -> None:
        super().__init__()
        self._inner = log
        self.metrics = metrics

    def info(self, event: str, **context: Any) -> None:
        if event == "tool_call":
            self.metrics.tool_call(
                str(context.get("tool")), bool(context.get("ok")), float(context.get("ms") or 0), context.get("tenant")
            )
        self._inner.info(event, **context)

    def warn(self, event: str, message: str, **context: Any) -> None:
        self._inner.warn(event, message, **context)

    def error(self, event: str, error: BaseException | str, *, sent: Any = (), **context: Any) -> None:
        self._inner.error(event, error, sent=sent, **context)


def _observer(observe: Callable[[float], None]) -> Callable[[Any, float], None]:
    """A `_wrap` callback that records the call's seconds with `observe`."""

    def record(_result: Any, seconds: float) -> None:
        observe(seconds)

    return record
