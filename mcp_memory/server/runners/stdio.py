"""`run_stdio`: serve-stdio's process around the MCP server (server/protocol/server.py): the hook
socket listening before the store opens, the service opened once, the SDK imported in a thread,
the warm-up once the handshake is done, the stop on end of input or a signal (docs/hooks.md).
Its transport, one JSON-RPC message per line, is stdio_transport.py.
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
from mcp_memory.server.protocol.server import build_mcp_server
from mcp_memory.server.protocol.tools import ToolLayer, build_tool_layer
from mcp_memory.server.runners.boot import close_service, describe_setup

#: What serve-stdio imports after its store opens: the MCP SDK, a second or more on a busy machine.
SDK_MODULES = ("mcp_types", "mcp.server", "mcp.shared.message", "mcp_memory.server.runners.stdio_transport")


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
    from mcp_memory.server.hooks.listener import HookSocket

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
        await close_service(tools, service, hooks)

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

        from mcp_memory.server.protocol.catalogue import STDIO_TERMS
        from mcp_memory.server.runners.stdio_transport import stdio_transport

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
