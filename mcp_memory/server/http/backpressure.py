"""Backpressure for serve-http: a token bucket per tenant, and a cap on the requests
being answered at once, per process.

Both answer at once, never queue: a tenant over its rate gets `429` with
`Retry-After` (the seconds until its bucket holds a token again); a process already
answering `max_concurrent` MCP requests answers `503` with `Retry-After: 1`, so a
load balancer can try another replica. A request counts against its tenant's
bucket when the tenant can be told from the credential and the headers before the
body is read; one whose tenant headers are wrong is not counted (its tool call is
refused without running, and the concurrency cap still holds). One tenant may hold at
most its share of the cap (`CallLimits.tenant_share`, a quarter by default): past it,
`429` too, so a tenant with slow calls cannot take every slot from the others.

Refusing costs the event loop something too (parsing, the answer), and a client that
ignores `Retry-After` would otherwise make the loop refuse it as fast as it can send,
slowing every other tenant's calls. So after a `429` its connection's next request is
not read until the wait is over (at most `MAX_HOLD_S`): the answer itself is never
delayed, a client that waits as told never notices, and a flood costs what its rate is
worth rather than what the client's CPU can send
(bench/RESULTS.md#serve-http-a-noisy-neighbour-measured-with-the-flooder-in-its-own-process-issue-18).

Written here rather than taken from a library: the per-key buckets must answer
"how long until the next token" for Retry-After, on one event loop, with a bounded
number of keys, which is a dozen lines.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from mcp_memory.config import CallLimits

#: Buckets kept at most; past this, the full ones (idle tenants) are dropped, and when none
#: is, a new tenant shares one overflow bucket with every other tenant past the cap.
MAX_BUCKETS = 10_000
#: The shortest time between two scans for idle buckets once the cap is reached.
PRUNE_EVERY_S = 1.0
#: Where the app leaves, in a request's ASGI scope, how long its 429 told the client to wait;
#: the HTTP protocol (server/http/connections.py) reads that connection's next request no sooner.
HOLD_KEY = "mcp_memory.hold_s"
#: The longest a connection is held after a 429, whatever the wait.
MAX_HOLD_S = 1.0


@dataclass
class _Bucket:
    tokens: float
    at: float


class TenantBuckets:
    """`take(tenant)`: 0 when the request may go ahead, else the seconds to wait."""

    def __init__(
        self, limits: CallLimits, clock: Callable[[], float] = time.monotonic, *, max_buckets: int = MAX_BUCKETS
    ) -> None:
        self.rate = limits.rate_per_s
        self.burst = float(limits.burst)
        self.clock = clock
        self.max_buckets = max_buckets
        self._buckets: dict[str, _Bucket] = {}
        #: Shared by the tenants that find every bucket taken by a tenant still drawing on it:
        #: a flood of made-up tenant names is then one tenant's rate, not a fresh burst each.
        self.overflow = _Bucket(self.burst, clock())
        self._pruned_at = -math.inf

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, tenant: str) -> float:
        now = self.clock()
        bucket = self._buckets.get(tenant)
        if bucket is None:
            if len(self._buckets) >= self.max_buckets and now - self._pruned_at >= PRUNE_EVERY_S:
                self._prune(now)  # at most once a second: a scan of every bucket is not free
            if len(self._buckets) >= self.max_buckets:
                bucket = self.overflow
            else:
                bucket = self._buckets[tenant] = _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate

    def _prune(self, now: float) -> None:
        """Drop the buckets that have refilled (idle tenants lose nothing by it)."""
        self._pruned_at = now
        for tenant in [t for t, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate >= self.burst]:
            del self._buckets[tenant]


def retry_after(seconds: float) -> bytes:
    """A Retry-After value: whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds))).encode("ascii")
