"""`mcp-memory ui`: the web view of the local store, on 127.0.0.1, in a browser (docs/web.md).

The URL printed carries a one-time token that the first visit exchanges for a session cookie,
so another local user, or a web page guessing the port, cannot use the view; every page lives
under a secret path that also scopes the cookie, so no other server on 127.0.0.1 receives it.
The browser is opened on a private launcher file that carries the URL, never on the URL itself:
a command line is readable by every local user (docs/web.md#opening-it). Ctrl-C stops it: the
counters are flushed and the command exits 0.
"""

from __future__ import annotations

import asyncio
import html
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from mcp_memory.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    ConversationOption,
    TenantOption,
    _caller,
    _fail,
    _settings,
    app,
)
from mcp_memory.core.errors import StartupError
from mcp_memory.core.logs import JsonLog, library_logs_as_json
from mcp_memory.core.model import Caller


@app.command(short_help="Browse, search and curate memories in a web browser.")
def ui(
    tenant: TenantOption = None,
    conversation: ConversationOption = None,
    all_tenants: Annotated[
        bool, typer.Option("--all-tenants", help="Operator mode: pick any tenant of the store in the view.")
    ] = False,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the URL only; open no browser.")] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="The port on 127.0.0.1; 0 picks a free one.")] = 0,
) -> None:
    """Browse, search and curate memories in a web browser.

    Serves on 127.0.0.1 only, prints the URL (its token works once) and opens it. Ctrl-C stops it.
    """
    settings = _settings()
    if all_tenants and (tenant or "").strip():
        _fail("error: --all-tenants and --tenant cannot be combined", EXIT_USAGE)
    caller = _caller(settings, tenant, conversation)
    try:
        asyncio.run(run_ui(settings, caller, operator=all_tenants, open_browser=not no_browser, port=port))
    except StartupError as exc:
        _fail(f"error: {exc}", EXIT_FAILED)


async def run_ui(settings: Any, caller: Caller, *, operator: bool, open_browser: bool, port: int = 0) -> None:
    """Serve the view until SIGINT or SIGTERM; stdout gets the URL, stderr the log lines."""
    import webbrowser

    from mcp_memory.app import open_service
    from mcp_memory.server.http.serve import (
        GracefulServer,
        bind_sockets,
        bound_port,
        make_uvicorn,
    )
    from mcp_memory.server.runners.boot import storage_line
    from mcp_memory.web.access import Access, secret_base
    from mcp_memory.web.app import View, build_ui, local_caller

    log = JsonLog(out=sys.stderr)
    service = await open_service(settings, log=log)
    try:
        access = Access.local()
        view = View(
            service,
            access,
            log,
            local_caller(access, caller, operator),
            about=[storage_line(settings), f"embedder: {service.describe_embedder()}"],
            operator=operator,
            base=secret_base(),
        )
        sockets = bind_sockets("127.0.0.1", port)
    except BaseException:
        await service.close()
        raise
    url = f"http://127.0.0.1:{bound_port(sockets)}{view.base}/login?token={access.token}"
    launcher: Path | None = None

    def announce() -> None:
        nonlocal launcher
        whose = "every tenant (operator mode)" if operator else f"tenant {caller.tenant}"
        print(f"mcp-memory web view of {whose}: {url}", flush=True)
        print("The link works once. Ctrl-C stops the view.", file=sys.stderr, flush=True)
        if open_browser:
            launcher = launcher_page(url)
            # not on the event loop: a browser command may wait for the browser
            threading.Thread(target=webbrowser.open, args=(launcher.as_uri(),), daemon=True).start()

    server = make_uvicorn(build_ui(view), sockets, announce, log=log)
    graceful = GracefulServer(server, service.close, log)
    with library_logs_as_json(log):
        try:
            service.start(settings.counters.stats_flush_ms)
            graceful.install_signal_handlers()
            await graceful.run()
        finally:
            await graceful.close_once()
            for sock in sockets:
                sock.close()
            if launcher is not None:
                shutil.rmtree(launcher.parent, ignore_errors=True)


def launcher_page(url: str) -> Path:
    """A page only this user can read (a 0700 folder, a 0600 file) that sends the browser on to
    `url`: the browser's command line then names this file, not the one-time token."""
    folder = Path(tempfile.mkdtemp(prefix="mcp-memory-ui-"))
    path = folder / "open.html"
    target = html.escape(url, quote=True)
    page = (
        '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
        f'<meta http-equiv="refresh" content="0; url={target}">'
        f'<title>mcp-memory</title><p><a href="{target}">Open the mcp-memory web view</a></p>\n'
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(page)
    return path
