"""`run_http`: serve-http's process around the HTTP app (server/http/app.py, handed the MCP server
of server/protocol/server.py; sockets, uvicorn and the graceful stop are server/http/serve.py): everything that can
be refused refused before the port is bound, the boot lines once it accepts, the metrics port and
the web view beside it (docs/http.md, docs/operations.md).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp_memory.core.errors import StartupError
from mcp_memory.core.logs import JsonLog, library_logs_as_json
from mcp_memory.core.version import __version__
from mcp_memory.core.wrong_keys import WrongKeys
from mcp_memory.server.protocol.server import build_mcp_server
from mcp_memory.server.protocol.tools import ToolLayer, build_tool_layer
from mcp_memory.server.runners.boot import close_service, describe_setup, storage_line


def boot_lines(
    settings: Any, tools: ToolLayer, url: str, metrics_url: str | None = None
) -> tuple[list[str], list[str]]:
    """What start-up prints once the port accepts: (stdout lines, stderr warnings) (docs/operations.md)."""
    from mcp_memory.server.http.auth import auth_lines
    from mcp_memory.server.http.serve import url_for

    auth_out, auth_err = auth_lines(settings.serve.mcp_api_key, settings.serve.host)
    if settings.serve.oauth is not None:  # OAuth: nobody is served without a credential
        auth_out, auth_err = oauth_lines(settings.serve.oauth, auth_out if settings.serve.mcp_api_key else [])
    if settings.serve.metrics.port is not None:
        auth_out.append(
            f"metrics: {metrics_url or url_for(settings.serve.metrics.host, settings.serve.metrics.port)}/metrics"
        )
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


def web_view(settings: Any, service: Any, log: JsonLog, wrong_keys: WrongKeys | None = None) -> tuple[Any, str | None]:
    """The web view to mount at /ui, and the boot line saying so, or why it stays off (docs/web.md).

    Its login is the static key: with OAuth and no MCP_API_KEY the view has no way to log a
    person in, and without any key it would be open to whoever reaches the port, so it stays off.
    """
    if not settings.serve.ui_enabled:
        return None, None
    if not settings.serve.mcp_api_key:
        if settings.serve.oauth is not None:
            return None, (
                "ui: off — UI_ENABLED is set, but the web view cannot log in with OAuth tokens; "
                "set MCP_API_KEY as well to log in with the static key"
            )
        return None, "ui: off — UI_ENABLED needs MCP_API_KEY: the view's login asks for that key"
    from mcp_memory.server.http.app import tenant_in_headers
    from mcp_memory.web.access import Access
    from mcp_memory.web.app import View, build_ui

    access = Access.with_key(settings.serve.mcp_api_key, wrong_keys)
    about = [storage_line(settings), f"embedder: {service.describe_embedder()}"]
    view = View(
        service,
        access,
        log,
        view_caller(access),
        base="/ui",
        about=about,
        key_login=True,
        tenant_fixed=tenant_in_headers,
    )
    return build_ui(view), (
        "ui: /ui (log in with MCP_API_KEY; the tenant comes from X-Memory-Tenant or X-Tenant-Id, "
        "else from the view's Tenants page)"
    )


def view_caller(access: Any) -> Any:
    """serve-http's web view caller: the tenant a gateway's header names, else the one this
    session chose on the Tenants page among the store's tenants (the key may use every tenant,
    as at /mcp); neither: NoTenantChosen, which sends the person to that page (docs/web.md#choosing-the-tenant)."""
    from mcp_memory.core.identity import parse_conversation
    from mcp_memory.core.model import Caller
    from mcp_memory.server.http.app import caller_from_headers_of, tenant_in_headers
    from mcp_memory.server.http.headers import CONVERSATION_HEADER
    from mcp_memory.web.app import chosen_tenant
    from mcp_memory.web.view import NoTenantChosen

    def caller_of(request: Any) -> Caller:
        if tenant_in_headers(request):
            return caller_from_headers_of(request)
        chosen = chosen_tenant(access, request)
        if chosen is None:
            raise NoTenantChosen()
        return Caller(chosen, parse_conversation(request.headers.getlist(CONVERSATION_HEADER), CONVERSATION_HEADER))

    return caller_of


async def run_http(settings: Any) -> None:
    """Serve MCP over stateless Streamable HTTP until SIGTERM or SIGINT (docs/http.md).

    Everything that can be refused is refused before the port is bound: the
    settings (by the caller), the storage (opened here) and the address. A
    stop lets running calls finish, flushes the counters once and returns.
    """
    from mcp_memory.app import open_service
    from mcp_memory.server.http.app import HttpApp, caller_from_request
    from mcp_memory.server.http.serve import (
        GracefulServer,
        bind_sockets,
        bound_port,
        make_uvicorn,
        url_for,
    )

    log = JsonLog()
    metrics = None
    if settings.serve.metrics.port is not None:
        from mcp_memory.server.http.metrics import Metrics

        metrics = Metrics(tenant_label=settings.serve.metrics.tenant_label)
    service = await open_service(settings, log=log, metrics=metrics)
    tools: ToolLayer | None = None

    async def close_all() -> None:
        await close_service(tools, service)

    try:
        tools = build_tool_layer(settings, service, log)
        wrong_keys = WrongKeys()  # one bound for /mcp's bearer and the view's login
        ui, ui_line = web_view(settings, service, log, wrong_keys)
        app = HttpApp(
            tools,
            log,
            ui=ui,
            mcp_server=build_mcp_server(tools, caller_from_request),
            api_key=settings.serve.mcp_api_key,
            oauth=settings.serve.oauth,
            call_limits=settings.serve.call_limits,
            metrics=metrics,
            wrong_keys=wrong_keys,
        )
        sockets = bind_sockets(settings.serve.host, settings.serve.port)
        endpoint = None
        if metrics is not None:
            from mcp_memory.server.http.metrics_endpoint import MetricsEndpoint

            try:
                endpoint = MetricsEndpoint(
                    metrics, settings.serve.metrics.host, settings.serve.metrics.port, settings.serve.http_limits, log
                )
            except StartupError:
                for sock in sockets:
                    sock.close()
                raise
    except BaseException:
        await close_all()
        raise

    def announce() -> None:
        metrics_url = url_for(settings.serve.metrics.host, endpoint.port) if endpoint is not None else None
        out, err = boot_lines(settings, tools, url_for(settings.serve.host, bound_port(sockets)), metrics_url)
        if ui_line:
            out.append(ui_line)
        for line in out:
            print(line, file=sys.stdout, flush=True)
        for line in err:
            print(line, file=sys.stderr, flush=True)

    from mcp_memory.server.http.metrics_endpoint import MAX_CONNECTIONS as METRICS_CONNECTIONS

    reserved = METRICS_CONNECTIONS if endpoint is not None else 0
    server = make_uvicorn(app, sockets, announce, limits=settings.serve.http_limits, log=log, reserved_files=reserved)
    graceful = GracefulServer(server, close_all, log)
    warming: asyncio.Task[None] | None = None
    with library_logs_as_json(log):
        try:
            service.start(settings.counters.stats_flush_ms)
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
