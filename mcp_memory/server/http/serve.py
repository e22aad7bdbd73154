"""Running the HTTP app: the listening sockets, uvicorn, and the graceful stop
(docs/operations.md).

The sockets are bound here rather than by uvicorn, after the storage is open,
so "port already in use" is our own clear start-up error and `--port 0` can
report the port it got. Signals are ours too (uvicorn's own handling would
force-quit on a second Ctrl-C and re-raise the signal after a clean stop).

Stopping: the first SIGTERM/SIGINT stops accepting; calls already running
finish within SHUTDOWN_GRACE_S (uvicorn cancels what is left after it); then
`close` (which flushes the access counters) runs exactly once, whatever
happens, and the process exits 0. A second signal is logged and ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

from mcp_memory.config import HttpLimits
from mcp_memory.core.errors import StartupError
from mcp_memory.core.logs import JsonLog

#: uvicorn's tick: how often its loop updates the date header and looks at its limits.
TICK_S = 0.1
#: How long calls already running get to finish once a stop begins.
SHUTDOWN_GRACE_S = 10
#: After this long the counters are flushed and the process exits, even if the
#: server has not finished stopping (the grace, plus room for the SDK to wind down).
SHUTDOWN_LIMIT_S = SHUTDOWN_GRACE_S + 5
#: How long the final close (counter flush, store and model release) may take.
CLOSE_LIMIT_S = 10


#: How long accepting pauses once the process is out of descriptors: just under asyncio's own
#: retry delay (one second), so its retry finds the pause over.
ACCEPT_PAUSE_S = 0.9
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class ListeningSocket(socket.socket):
    """A listening socket whose `accept` backs off once the process is out of descriptors.

    asyncio's accept loop, on `EMFILE`, stops polling the socket and schedules a retry a
    second later, but goes on calling `accept` up to the backlog (2048) times in the same
    turn, scheduling one retry per failure: the retries multiply and the loop spins at a
    full core for as long as descriptors are exhausted. Here the first failure is raised
    (asyncio pauses the socket and retries once), and every `accept` within the pause after
    it answers "nothing to accept" without a system call. Connections already open are
    served meanwhile; the ones waiting in the backlog are accepted once descriptors are free
    (measured in bench/RESULTS.md#out-of-descriptors-the-accept-back-off-issue-25-2026-12-01).
    """

    _paused_until = 0.0

    def accept(self) -> tuple[socket.socket, Any]:
        now = time.monotonic()
        if now < self._paused_until:
            raise BlockingIOError(errno.EAGAIN, "accepting is paused: out of file descriptors")
        try:
            return super().accept()
        except OSError as exc:
            if exc.errno in _OUT_OF_RESOURCES:
                self._paused_until = now + ACCEPT_PAUSE_S
            raise


class Stoppable(Protocol):
    should_exit: bool

    async def serve(self) -> None: ...


def bind_sockets(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address `host` resolves to (port 0: any free port).

    Raises StartupError naming the address and the reason.
    """
    where = f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupError(
            f"cannot listen on {where}: {host!r} is not an address this machine has ({exc.strerror})"
        ) from None
    sockets: list[socket.socket] = []
    seen: set[Any] = set()
    try:
        for family, kind, proto, _, address in infos:
            if address in seen:
                continue
            seen.add(address)
            sock = ListeningSocket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:  # every address on the port the first one got
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(2048)
            sock.setblocking(False)
    except OSError as exc:
        for opened in sockets:
            opened.close()
        if exc.errno == errno.EADDRINUSE:
            raise StartupError(f"cannot listen on {where}: the port is already in use") from None
        raise StartupError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    return sockets


def bound_port(sockets: list[socket.socket]) -> int:
    return int(sockets[0].getsockname()[1])


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


def make_uvicorn(
    app: Any,
    sockets: list[socket.socket],
    on_started: Callable[[], None],
    *,
    limits: HttpLimits | None = None,
    log: JsonLog | None = None,
    reserved_files: int = 0,
    backlog: int = 2048,
) -> Stoppable:
    """A uvicorn server for `app` on `sockets`, quiet (our JSON lines are the log),
    without its own signal handling, calling `on_started` once it accepts.

    Every connection is held to `limits` (server/http/connections.py), the default cap leaving
    `reserved_files` descriptors aside (the metrics port's); `backlog` is also how many
    connections asyncio accepts at once when the socket is readable, and running out
    of file descriptors is one JSON line per interval on `log`, not a traceback
    per accept.
    """
    import uvicorn

    from mcp_memory.server.http.connections import AcceptFailures, limited_protocol

    limits = limits or HttpLimits()
    log = accept_log = log or JsonLog()

    class _Server(uvicorn.Server):
        def __init__(self, config: uvicorn.Config) -> None:
            self._exit_requested = asyncio.Event()
            super().__init__(config)

        @property  # uvicorn's is a plain attribute, set at construction
        def should_exit(self) -> bool:
            return self._exit_requested.is_set()

        @should_exit.setter
        def should_exit(self, value: bool) -> None:
            if value:
                self._exit_requested.set()
            else:
                self._exit_requested.clear()

        async def main_loop(self) -> None:
            """uvicorn's loop (a tick every 0.1 s), woken at once by a stop rather than at the next tick
            (bench/RESULTS.md#2026-12-06-late-night-the-clean-clone-uvicorns-tick-the-echoes-backoff)."""
            counter = 0
            should_exit = await self.on_tick(counter)
            while not should_exit:
                counter = (counter + 1) % 864000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._exit_requested.wait(), TICK_S)
                should_exit = await self.on_tick(counter)

        async def serve(self, sockets: list[socket.socket] | None = None) -> None:
            await super().serve(sockets=sockets_to_serve)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # the process's signals belong to GracefulServer

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            loop = asyncio.get_running_loop()
            if not isinstance(loop.get_exception_handler(), AcceptFailures):  # one per loop, for every server on it
                loop.set_exception_handler(AcceptFailures(accept_log, loop.get_exception_handler()))
            try:
                await super().startup(sockets=sockets)
            except SystemExit:  # uvicorn's way of reporting a failed start
                raise StartupError("the HTTP server could not start (see the error above)") from None
            if self.started:
                on_started()

    sockets_to_serve = sockets
    config = uvicorn.Config(
        app,
        http=limited_protocol(limits, log, reserved_files),
        timeout_keep_alive=limits.keep_alive_ms / 1000,  # type: ignore[arg-type]  # a float works
        ws="none",
        lifespan="on",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        backlog=backlog,
    )
    return _Server(config)


class GracefulServer:
    """Serves until stopped, then runs `close` exactly once (docs/operations.md).

    `server` is anything with `should_exit` and `serve()` (uvicorn, or a test's
    stand-in); setting `should_exit` makes it stop accepting and drain.
    """

    def __init__(
        self,
        server: Stoppable,
        close: Callable[[], Awaitable[None]],
        log: JsonLog,
        *,
        limit_s: float = SHUTDOWN_LIMIT_S,
        close_limit_s: float = CLOSE_LIMIT_S,
    ) -> None:
        self.server = server
        self._close = close
        self.log = log
        self.limit_s = limit_s
        self.close_limit_s = close_limit_s
        self.stopping = False
        self.closed = False
        self._stop = asyncio.Event()
        self._signals: tuple[signal.Signals, ...] = ()

    def stop(self, signum: int | None = None) -> None:
        """Begin stopping (a signal handler). Only the first call does anything."""
        name = signal.Signals(signum).name if signum is not None else None
        if self.stopping:
            self.log.warn("shutdown_signal_ignored", "already stopping; this signal changes nothing", signal=name)
            return
        self.stopping = True
        self.log.info("shutdown_started", signal=name)
        self.server.should_exit = True
        self._stop.set()

    def install_signal_handlers(self) -> None:
        """SIGTERM and SIGINT call `stop` until `run` ends; after that they are
        ignored, so a late second signal cannot kill the exiting process."""
        loop = asyncio.get_running_loop()
        self._signals = (signal.SIGTERM, signal.SIGINT)
        for sig in self._signals:
            loop.add_signal_handler(sig, self.stop, sig)

    def _ignore_signals_from_now_on(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.remove_signal_handler(sig)  # else closing the loop restores the default: die
            signal.signal(sig, signal.SIG_IGN)
        self._signals = ()

    async def run(self) -> None:
        """Serve; after a stop (or if serving ends by itself) close once.

        A server failure is raised after the close.
        """
        serving = asyncio.ensure_future(self.server.serve())
        stopped = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({serving, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not serving.done():
                done, _ = await asyncio.wait({serving}, timeout=self.limit_s)
                if not done:
                    self.log.error(
                        "shutdown_grace_expired",
                        f"the server had not stopped after {self.limit_s:g} s; closing anyway",
                    )
        finally:
            stopped.cancel()
            if not serving.done():
                serving.cancel()
                await asyncio.wait({serving}, timeout=1)
            await self.close_once()
            if self.stopping:
                self._ignore_signals_from_now_on()
        if serving.done() and not serving.cancelled():
            serving.result()

    async def close_once(self) -> None:
        """Run `close` unless it already ran, for at most `close_limit_s`; a
        failure is logged, never raised: the process still exits."""
        if self.closed:
            return
        self.closed = True
        try:
            await asyncio.wait_for(self._close(), timeout=self.close_limit_s)
        except TimeoutError:
            self.log.error("shutdown_close_failed", f"closing took longer than {self.close_limit_s:g} s; gave up")
        except Exception as exc:
            self.log.error("shutdown_close_failed", exc)
