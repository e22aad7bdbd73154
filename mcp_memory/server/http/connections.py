"""Limits on HTTP connections, so a slow or stuck client costs one connection for a
bounded time and never the server.

uvicorn times out only an idle keep-alive connection (after a response); a
client that connects and sends nothing, half its headers or half its body is
held for as long as it likes, and `limit_concurrency` answers 503 but keeps
every connection (and its file descriptor) open. So uvicorn's h11 protocol is
subclassed (no library offers these for uvicorn) to add:

- **A header timeout.** From the moment a connection opens, or the first byte
  of its next request arrives, the request line and headers must be complete
  within `header_timeout_ms`, else `408` and the connection is closed.
- **A body timeout.** Once the headers are in, the whole body must be within
  `body_timeout_ms`, else `408` (when no answer has begun) and close.
- **An idle keep-alive timeout**: uvicorn's own `timeout_keep_alive`, set from
  `keep_alive_ms`.
- **A connection cap.** At most `max_connections` are open. A new connection
  past the cap closes the oldest one that is idle or still sending its
  request; when every open connection is being answered, the new one gets
  `503` and is closed. Requests being answered are never cut.

When the process runs out of file descriptors, asyncio's accept loop reports
`socket.accept() out of system resource` with a traceback, every time it
retries. `AcceptFailures` turns that into one JSON line per interval; the
connections already open keep being served, and accepting resumes by itself
once descriptors are free.
"""

from __future__ import annotations

import asyncio
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcp_memory.config import HttpLimits
from mcp_memory.core.logs import JsonLog
from mcp_memory.server.http.backpressure import HOLD_KEY, MAX_HOLD_S

#: The cap when HTTP_MAX_CONNECTIONS is not set (fewer when the file limit is lower).
DEFAULT_MAX_CONNECTIONS = 1000
#: Descriptors left for everything else (database pools, the model, log files) under the default cap.
RESERVED_FILES = 64
#: At most one line per this many seconds about the same kind of refusal.
LOG_INTERVAL_S = 10.0

_TIMEOUT_ANSWER = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_FULL_BODY = b'{"error":"too many connections, try again"}'
_FULL_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_FULL_BODY), _FULL_BODY)
)


def connection_cap(limits: HttpLimits, reserved: int = 0) -> int:
    """The configured cap, or the default one, lowered to what the file limit allows once
    RESERVED_FILES and `reserved` more (the metrics port's connections) are set aside."""
    if limits.max_connections is not None:
        return limits.max_connections
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return DEFAULT_MAX_CONNECTIONS
    return max(1, min(DEFAULT_MAX_CONNECTIONS, soft - RESERVED_FILES - reserved))


class RateLimitedLine:
    """Writes a warning at most once per `interval_s`, saying how many were held back."""

    def __init__(self, log: JsonLog, event: str, interval_s: float = LOG_INTERVAL_S) -> None:
        self.log = log
        self.event = event
        self.interval_s = interval_s
        self._last: float | None = None
        self._held = 0

    def __call__(self, message: str) -> None:
        now = time.monotonic()
        if self._last is not None and now - self._last < self.interval_s:
            self._held += 1
            return
        if self._held:
            message += f" ({self._held} more like it in the last {now - self._last:.0f} s)"  # type: ignore[operator]
        self._last, self._held = now, 0
        self.log.warn(self.event, message)


class AcceptFailures:
    """An asyncio exception handler: accept failures (no file descriptors) as rate-limited
    JSON lines, without a traceback; anything else to the handler it replaces."""

    MESSAGE = "socket.accept() out of system resource"

    def __init__(self, log: JsonLog, previous: Any = None, interval_s: float = LOG_INTERVAL_S) -> None:
        self._line = RateLimitedLine(log, "accept_failed", interval_s)
        self._previous = previous

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == self.MESSAGE:
            exc = context.get("exception")
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            self._line(
                f"cannot accept a connection: {reason}; open connections are still served, "
                "and accepting resumes once descriptors are free"
            )
            return
        if self._previous is not None:
            self._previous(loop, context)
        else:
            loop.default_exception_handler(context)


class OpenConnections:
    """The open connections, oldest first, and the cap on them."""

    def __init__(self, cap: int, log: JsonLog) -> None:
        self.cap = cap
        self._open: dict[LimitedH11Protocol, None] = {}
        self._full = RateLimitedLine(log, "connection_refused")
        self._evicted = RateLimitedLine(log, "connection_evicted")

    def __len__(self) -> int:
        return len(self._open)

    def admit(self, connection: LimitedH11Protocol) -> bool:
        """Make room for `connection` (closing the oldest evictable one), or refuse it."""
        if len(self._open) >= self.cap:
            victim = next((c for c in self._open if c.evictable()), None)
            if victim is None:
                self._full(f"{self.cap} connections are open and all are being answered; answered 503")
                return False
            self._evicted(
                f"{self.cap} connections are open; closed the oldest one that was idle or still sending its request"
            )
            victim.cut(answer=False)
        self._open[connection] = None
        return True

    def discard(self, connection: LimitedH11Protocol) -> None:
        self._open.pop(connection, None)


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the header and body timeouts and the connection cap.

    Made per server by `limited_protocol`, which sets the class attributes.
    """

    limits: HttpLimits
    connections_open: OpenConnections

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._hold_timer: asyncio.TimerHandle | None = None
        self._cut = False
        super().connection_made(transport)
        if not self.connections_open.admit(self):
            self._cut = True
            transport.write(_FULL_ANSWER)
            transport.close()
            return
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections_open.discard(self)
        self._cancel_timers()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._cut:
            return
        if self.conn.their_state is h11.IDLE and self._header_timer is None:
            self._arm_header_timer()  # the first bytes of the next request
        super().data_received(data)
        self._follow_request()

    def on_response_complete(self) -> None:
        scope: dict[str, Any] = self.scope or {}  # type: ignore[assignment]  # the app's key is ours
        hold = scope.pop(HOLD_KEY, None)
        if hold and not self.transport.is_closing():
            # Told to wait: read nothing more (a pipelined request included) until then.
            self.flow.pause_reading()
            self._hold_timer = self.loop.call_later(min(float(hold), MAX_HOLD_S), self._end_hold)
            return
        super().on_response_complete()
        self._follow_request()

    def _end_hold(self) -> None:
        self._hold_timer = None
        if self._cut or self.transport.is_closing():
            return
        super().on_response_complete()  # the keep-alive timer, reading again, a pipelined request
        self._follow_request()

    def evictable(self) -> bool:
        """Idle, held after a 429, or still sending its request: nothing is being answered."""
        if self._cut:
            return False
        return self._hold_timer is not None or self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

    def cut(self, *, answer: bool) -> None:
        """Close the connection, with a 408 first when `answer` and no answer has begun."""
        if self._cut or self.transport.is_closing():
            return
        self._cut = True
        self._cancel_timers()
        if answer and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.write(_TIMEOUT_ANSWER)
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app's receive() now says http.disconnect
            self.cycle.message_event.set()
        self.transport.close()

    # ------------------------------------------------------------------ timers

    def _follow_request(self) -> None:
        """Move the timers along with the request: headers done → body timer; body done → none."""
        state = self.conn.their_state
        if state is h11.IDLE:
            return  # still waiting for (the rest of) the headers, or idle under the keep-alive timer
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if state is h11.SEND_BODY:
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.limits.body_timeout_ms / 1000, self.cut_on_timeout)
        elif self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _arm_header_timer(self) -> None:
        self._header_timer = self.loop.call_later(self.limits.header_timeout_ms / 1000, self.cut_on_timeout)

    def cut_on_timeout(self) -> None:
        self._header_timer = self._body_timer = None
        self.cut(answer=True)

    def _cancel_timers(self) -> None:
        for timer in (self._header_timer, self._body_timer, self._hold_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._body_timer = self._hold_timer = None


def limited_protocol(limits: HttpLimits, log: JsonLog, reserved: int = 0) -> type[LimitedH11Protocol]:
    """The protocol class for one server: its limits, and one register of its connections."""
    return type(
        "LimitedH11Protocol",
        (LimitedH11Protocol,),
        {"limits": limits, "connections_open": OpenConnections(connection_cap(limits, reserved), log)},
    )
