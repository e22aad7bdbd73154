"""Wrong keys counted per source address, one bound shared by every door that takes the static
key: serve-http's `/mcp` bearer and the web view's login (docs/http.md#the-bearer-check, docs/web.md#security).

After MAX wrong keys within WINDOW_MS from one address, that address is refused at every door,
the right key included (else a guess would still be answered), until the oldest of them is a
window old. Other addresses are not refused: a stranger sending wrong keys locks out only
itself, never the operator. An IPv6 address counts by its /64, the block one host is given, so
a host cannot step through its own addresses to guess faster.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Wrong keys from one address within WINDOW_MS before it is refused: guessing costs a minute per ten tries.
MAX = 10
WINDOW_MS = 60_000
#: Addresses remembered before the expired ones are swept (a flood of addresses stays bounded).
SWEEP_AT = 4096


def source_of(host: str | None) -> str:
    """The key an address is counted under: an IPv4 address itself, an IPv6 address's /64."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


@dataclass
class WrongKeys:
    """When each recent wrong key came, per source address (one per process, shared)."""

    clock: Callable[[], float] = field(default=lambda: time.time() * 1000.0)
    seen: dict[str, list[float]] = field(default_factory=dict)

    def _recent(self, source: str, now: float) -> list[float]:
        times = [at for at in self.seen.get(source, ()) if now - at < WINDOW_MS]
        if times:
            self.seen[source] = times
        else:
            self.seen.pop(source, None)
        return times

    def wait_ms(self, host: str | None) -> float:
        """How long `host` is still refused: 0 when it may try a key."""
        now = self.clock()
        times = self._recent(source_of(host), now)
        if len(times) < MAX:
            return 0.0
        return max(WINDOW_MS - (now - times[-MAX]), 1.0)

    def wrong(self, host: str | None) -> None:
        """`host` sent a wrong key."""
        now = self.clock()
        if len(self.seen) >= SWEEP_AT:
            for source in list(self.seen):
                self._recent(source, now)
        source = source_of(host)
        self.seen.setdefault(source, []).append(now)
        del self.seen[source][:-MAX]
