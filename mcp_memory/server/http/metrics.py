"""Prometheus metrics for serve-http (prometheus-client), on their own port.

Labels are bounded and never carry content, queries, conversation ids or tokens:
a tool name (the catalogue's), an outcome (`ok`/`error`), a store operation, a
refusal reason. The tenant is a label only with METRICS_TENANT_LABEL=true, and
then only on the tool-call counter (one series per tenant and tool), for the first
MAX_TENANT_LABELS tenants seen; the rest share the label `_other`.

Tool calls are counted from the tool layer's own `tool_call` line (the log
passes through `MetricsLog`), so a metric and a log line can never disagree;
the composition root (mcp_memory/app.py) hands the service a store and an embedder
wrapped in timers (`TimedVectorStore`, `TimedEmbedder`) and the access counters
`counter_outcome` as their `on_outcome` hook.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from mcp_memory.core.keywords import KeywordAnswer
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Hit, Memory, MemoryFilter
from mcp_memory.core.ports import SCAN_BATCH, Embedder, FilteredHits, ObjectStore, VectorStore

if TYPE_CHECKING:
    import numpy as np

PREFIX = "mcp_memory"
REJECT_REASONS = ("auth", "scope", "rate", "busy", "size", "origin")
#: Store calls that are timed (the ones a tool call waits on).
STORE_OPERATIONS = ("query", "keyword_query", "near", "get", "put", "delete")
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

    def timed_vectors(self, vectors: VectorStore) -> VectorStore:
        """`vectors` with its STORE_OPERATIONS timed (the composition root wraps the store with it)."""
        return TimedVectorStore(vectors, self.store_seconds)

    def timed_embedder(self, embedder: Embedder) -> Embedder:
        """`embedder` with each batch timed."""
        return TimedEmbedder(embedder, self.embed_seconds.observe)

    def counter_outcome(self, operation: str, ok: bool) -> None:
        """The access counters' `on_outcome`: a flush or a compaction, and whether it failed."""
        family = self.flushes if operation == "flush" else self.compactions
        family.labels("ok" if ok else "error").inc()

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


class _Timer:
    """Observes the seconds of the `with` block, unless it raised (as a failed call is not timed)."""

    __slots__ = ("_observe", "_started")

    def __init__(self, observe: Callable[[float], None]) -> None:
        self._observe = observe
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(self, kind: object, _value: object, _tb: object) -> None:
        if kind is None:
            self._observe(time.perf_counter() - self._started)


class TimedVectorStore(VectorStore):
    """A VectorStore that times the calls a tool call waits on and passes every call through;
    remember's memory with its index entry (`put_with_index`) is timed as a put."""

    def __init__(self, inner: VectorStore, seconds: Any) -> None:
        self.inner = inner
        self._timers = {operation: seconds.labels(operation).observe for operation in STORE_OPERATIONS}

    def _timed(self, operation: str) -> _Timer:
        return _Timer(self._timers[operation])

    async def put(self, memory: Memory, embedding: np.ndarray) -> None:
        with self._timed("put"):
            await self.inner.put(memory, embedding)

    async def put_with_index(self, memory: Memory, embedding: np.ndarray, objects: ObjectStore, key: str) -> None:
        with self._timed("put"):
            await self.inner.put_with_index(memory, embedding, objects, key)

    async def put_many(self, items: Sequence[tuple[Memory, np.ndarray]]) -> None:
        await self.inner.put_many(items)

    def scan(self, tenant: str, batch: int = SCAN_BATCH) -> AsyncIterator[list[tuple[Memory, np.ndarray]]]:
        return self.inner.scan(tenant, batch)

    async def query(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        with self._timed("query"):
            return await self.inner.query(tenant, embedding, top_k, conversation)

    async def near(self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None) -> list[Hit]:
        with self._timed("near"):  # the duplicate check: apart from recall's searches (another path, another cost)
            return await self.inner.near(tenant, embedding, top_k, conversation)

    async def filtered_query(
        self, tenant: str, embedding: np.ndarray, top_k: int, conversation: str | None, where: MemoryFilter
    ) -> FilteredHits:
        return await self.inner.filtered_query(tenant, embedding, top_k, conversation, where)

    async def scored(self, tenant: str, embedding: np.ndarray, ids: Sequence[str]) -> list[Hit] | None:
        return await self.inner.scored(tenant, embedding, ids)

    async def vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray] | None:
        return await self.inner.vectors(tenant, ids)

    async def warm(self, tenant: str) -> None:
        await self.inner.warm(tenant)

    async def warm_tags(self, tenant: str, prefixes: Sequence[str]) -> None:
        await self.inner.warm_tags(tenant, prefixes)

    async def keyword_query(
        self, tenant: str, embedding: np.ndarray, terms: Sequence[str], top_k: int, conversation: str | None
    ) -> KeywordAnswer:
        with self._timed("keyword_query"):
            return await self.inner.keyword_query(tenant, embedding, terms, top_k, conversation)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        with self._timed("get"):
            return await self.inner.get(tenant, ids)

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        with self._timed("delete"):
            await self.inner.delete(tenant, ids)

    def exclusive(self, tenant: str) -> AbstractAsyncContextManager[None]:
        return self.inner.exclusive(tenant)

    async def close(self) -> None:
        await self.inner.close()


class TimedEmbedder(Embedder):
    """An Embedder that times each batch and passes every call through."""

    def __init__(self, inner: Embedder, observe: Callable[[float], None]) -> None:
        self.inner = inner
        self.provider, self.model, self.dim, self.scripts = inner.provider, inner.model, inner.dim, inner.scripts
        self._observe = observe

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        with _Timer(self._observe):
            return await self.inner.embed(texts)

    async def warm_up(self) -> None:
        await self.inner.warm_up()

    async def close(self) -> None:
        await self.inner.close()


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
