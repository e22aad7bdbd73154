"""The two runners, `run_stdio` and `run_http` (with the HTTP boot lines). The MCP
server they serve is mcp_server.py; the HTTP app, handed that server, is
http_app.py; sockets, uvicorn and the graceful stop are http_serve.py.

Why apart: what a request meets is those modules'; this one is the process around them (the
service opened once, the boot lines, warming up after the handshake, the stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from mcp_memory.core.errors import StartupError
from mcp_memory.core.logs import JsonLog, library_logs_as_json
from mcp_memory.core.model import Caller
from mcp_memory.core.version import __version__
from mcp_memory.server.mcp_server import build_mcp_server
from mcp_memory.server.tools import ToolLayer, build_tool_layer


async def _close(tools: ToolLayer | None, service: Any, hooks: Any = None) -> None:
    """Stop answering hooks, close the tool layer (its docs client), then the service (counters
    flushed once, store)."""
    try:
        if hooks is not None:
            await hooks.close()
        if tools is not None:
            await tools.close()
    finally:
        await service.close()


#: What serve-stdio imports after its store opens: the MCP SDK, a second or more on a busy machine.
SDK_MODULES = ("mcp_types", "mcp.server", "mcp.shared.message", "mcp_memory.server.stdio_transport")


def _import_the_sdk() -> None:
    from importlib import import_module

    for name in SDK_MODULES:
        import_module(name)


async def run_stdio(settings: Any, caller: Caller) -> None:
    """Serve MCP over stdin/stdout until end of input, SIGTERM or SIGINT; then flush the
    counters exactly once and close the store. Every log line goes to stderr.

    On a signal the process cannot wait for the stdin reader (a blocked thread
    read that no cancellation reaches), so it closes the service and exits
    directly; a second signal while that runs is ignored.
    """
    from mcp_memory.server.hook_socket import HookSocket

    log = JsonLog(stdio=True)
    loop = asyncio.get_running_loop()
    stopping = False
    tools: ToolLayer | None = None
    warming: asyncio.Task[None] | None = None
    asked = False

    def warm() -> None:
        """Load the model and the tenant's vectors once the handshake is done (or a hook asks):
        started at once, their CPU work (much of it holding the GIL) delayed tools/list
        (bench/RESULTS.md#serve-stdio-warms-up-once-the-handshake-is-done)."""
        nonlocal warming, asked
        asked = True
        if warming is None and not stopping and hooks.service is not None:
            warming = loop.create_task(service.warm_up(caller.tenant))
            warming.add_done_callback(lambda _: hooks.warmed())

    # Claude Code runs a session's first hooks while this process starts: the socket listens
    # before the store opens and the SDK loads, and its questions wait for them (docs/hooks.md).
    hooks = HookSocket(None, caller, log, on_question=warm)
    await hooks.start()
    try:
        from mcp_memory.app import open_service

        service = await open_service(settings, log=log)
    except BaseException:
        await hooks.close()
        raise
    hooks.serve(service)

    async def close_all() -> None:
        await _close(tools, service, hooks)

    async def close_and_exit() -> None:
        try:
            await close_all()
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(0)

    def on_signal() -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            loop.create_task(close_and_exit())

    # From here on the service is open and the socket listens: whatever happens (the SDK failing to
    # import, a signal meanwhile) closes the service and removes the socket and the marker.
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, on_signal)
        if asked:  # a hook asked while the store opened: its prompt needs the model
            warm()
        # The SDK takes a second or more to import on a busy machine: in a thread, so that the loop
        # answers the hooks waiting for the store meanwhile.
        try:
            await asyncio.to_thread(_import_the_sdk)
        except ImportError as exc:
            raise StartupError(f"the MCP SDK cannot be imported ({exc}): reinstall mcp-memory") from None

        from mcp_memory.server.catalogue import STDIO_TERMS
        from mcp_memory.server.stdio_transport import stdio_transport

        service.start(settings.stats_flush_ms)
        tools = build_tool_layer(settings, service, log, terms=STDIO_TERMS)
        server = build_mcp_server(tools, lambda ctx: caller, on_ready=warm)
        # stdout belongs to the protocol: the start-up lines go to stderr
        for line in (
            f"mcp-memory v{__version__} serving stdio for tenant {caller.tenant}",
            *describe_setup(settings, tools),
        ):
            print(line, file=sys.stderr, flush=True)
        # The SDK's own warnings become JSON lines on stderr too, without their tracebacks
        # (a stack can quote request data), as under serve-http.
        with library_logs_as_json(log):
            async with stdio_transport(log) as (read, write):
                await server.run(read, write, server.create_initialization_options())
    finally:
        if warming is not None and not warming.done():
            warming.cancel()
        if not stopping:  # end of input: the orderly path
            stopping = True
            await close_all()


# --------------------------------------------------------------------------- HTTP


def storage_line(settings: Any) -> str:
    """Which storage serves this process, where, and why it was chosen (docs/storage.md)."""
    from mcp_memory.app import storage_where

    return f"storage: {settings.backend} {storage_where(settings)} — {settings.backend_reason}"


def describe_docs(knowledge_base_id: str | None) -> str:
    """The boot line saying whether search_docs is offered (docs/operations.md)."""
    if knowledge_base_id:
        return f"docs: bedrock-kb://{knowledge_base_id} (search_docs offered)"
    return "docs: no KNOWLEDGE_BASE_ID — memories only, search_docs not offered"


def describe_setup(settings: Any, tools: ToolLayer) -> list[str]:
    """Which storage (and why), which embedder, whether search_docs is offered."""
    return [
        storage_line(settings),
        f"embedder: {tools.service.describe_embedder()}",
        describe_docs(settings.knowledge_base_id),
    ]


def boot_lines(
    settings: Any, tools: ToolLayer, url: str, metrics_url: str | None = None
) -> tuple[list[str], list[str]]:
    """What start-up prints once the port accepts: (stdout lines, stderr warnings) (docs/operations.md)."""
    from mcp_memory.server.auth import auth_lines
    from mcp_memory.server.http_serve import url_for

    auth_out, auth_err = auth_lines(settings.mcp_api_key, settings.host)
    if settings.oauth is not None:  # OAuth: nobody is served without a credential
        auth_out, auth_err = oauth_lines(settings.oauth, auth_out if settings.mcp_api_key else [])
    if settings.metrics.port is not None:
        auth_out.append(f"metrics: {metrics_url or url_for(settings.metrics.host, settings.metrics.port)}/metrics")
    out = [
        f"mcp-memory v{__version__} listening on {url} (POST /mcp)",
        *describe_setup(settings, tools),
        *auth_out,
    ]
    return out, auth_err


def oauth_lines(oauth: Any, key_lines: list[str]) -> tuple[list[str], list[str]]:
    """The `auth:` lines under OAuth, and a warning when no tenant claim binds tokens to tenants."""
    line = f"auth: OAuth 2.1 tokens from {oauth.issuer} for {oauth.resource_url}"
    if oauth.introspection_url is not None:
        line += f"; opaque tokens introspected at {oauth.introspection_url}"
    if oauth.tenant_claim:
        return [*key_lines, f"{line}; tenants from the {oauth.tenant_claim!r} claim"], []
    warning = (
        "warning: MCP_TENANT_CLAIM is not set: any valid token may use any tenant the request's "
        "headers name. Set it to bind each token to its tenants."
    )
    return [*key_lines, line], [warning]


def web_view(settings: Any, service: Any, log: JsonLog) -> tuple[Any, str | None]:
    """The web view to mount at /ui, and the boot line saying so, or why it stays off (docs/web.md).

    Its login is the static key: with OAuth and no MCP_API_KEY the view has no way to log a
    person in, and without any key it would be open to whoever reaches the port, so it stays off.
    """
    if not settings.ui_enabled:
        return None, None
    if not settings.mcp_api_key:
        if settings.oauth is not None:
            return None, (
                "ui: off — UI_ENABLED is set, but the web view cannot log in with OAuth tokens; "
                "set MCP_API_KEY as well to log in with the static key"
            )
        return None, "ui: off — UI_ENABLED needs MCP_API_KEY: the view's login asks for that key"
    from mcp_memory.server.http_app import caller_from_headers_of
    from mcp_memory.web.access import Access
    from mcp_memory.web.app import View, build_ui

    about = [storage_line(settings), f"embedder: {service.describe_embedder()}"]
    view = View(
        service,
        Access.with_key(settings.mcp_api_key),
        log,
        caller_from_headers_of,
        base="/ui",
        about=about,
        key_login=True,
    )
    return build_ui(view), "ui: /ui (log in with MCP_API_KEY; the tenant comes from X-Memory-Tenant or X-Tenant-Id)"


async def run_http(settings: Any) -> None:
    """Serve MCP over stateless Streamable HTTP until SIGTERM or SIGINT (docs/http.md).

    Everything that can be refused is refused before the port is bound: the
    settings (by the caller), the storage (opened here) and the address. A
    stop lets running calls finish, flushes the counters once and returns.
    """
    from mcp_memory.app import open_service
    from mcp_memory.server.http_app import HttpApp, caller_from_request
    from mcp_memory.server.http_serve import (
        GracefulServer,
        bind_sockets,
        bound_port,
        make_uvicorn,
        url_for,
    )

    log = JsonLog()
    metrics = None
    if settings.metrics.port is not None:
        from mcp_memory.server.metrics import Metrics

        metrics = Metrics(tenant_label=settings.metrics.tenant_label)
    service = await open_service(settings, log=log, metrics=metrics)
    tools: ToolLayer | None = None

    async def close_all() -> None:
        await _close(tools, service)

    try:
        tools = build_tool_layer(settings, service, log)
        ui, ui_line = web_view(settings, service, log)
        app = HttpApp(
            tools,
            log,
            ui=ui,
            mcp_server=build_mcp_server(tools, caller_from_request),
            api_key=settings.mcp_api_key,
            oauth=settings.oauth,
            call_limits=settings.call_limits,
            metrics=metrics,
        )
        sockets = bind_sockets(settings.host, settings.port)
        endpoint = None
        if metrics is not None:
            from mcp_memory.server.metrics_http import MetricsEndpoint

            try:
                endpoint = MetricsEndpoint(
                    metrics, settings.metrics.host, settings.metrics.port, settings.http_limits, log
                )
            except StartupError:
                for sock in sockets:
                    sock.close()
                raise
    except BaseException:
        await close_all()
        raise

    def announce() -> None:
        metrics_url = url_for(settings.metrics.host, endpoint.port) if endpoint is not None else None
        out, err = boot_lines(settings, tools, url_for(settings.host, bound_port(sockets)), metrics_url)
        if ui_line:
            out.append(ui_line)
        for line in out:
            print(line, file=sys.stdout, flush=True)
        for line in err:
            print(line, file=sys.stderr, flush=True)

    from mcp_memory.server.metrics_http import MAX_CONNECTIONS as METRICS_CONNECTIONS

    reserved = METRICS_CONNECTIONS if endpoint is not None else 0
    server = make_uvicorn(app, sockets, announce, limits=settings.http_limits, log=log, reserved_files=reserved)
    graceful = GracefulServer(server, close_all, log)
    warming: asyncio.Task[None] | None = None
    with library_logs_as_json(log):
        try:
            service.start(settings.stats_flush_ms)
            if endpoint is not None:
                await endpoint.start()
            warming = asyncio.create_task(service.warm_up())
            graceful.install_signal_handlers()
            await graceful.run()
        finally:
            if warming is not None and not warming.done():
                warming.cancel()
            await graceful.close_once()  # already done unless serving never began
            for sock in sockets:
                sock.close()
            if endpoint is not None:
                await endpoint.stop()
