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
from typing import TYPE_CHECKING, Any

from mcp_memory.core.errors import StartupError
from mcp_memory.core.logs import JsonLog, library_logs_as_json
from mcp_memory.core.model import Caller
from mcp_memory.core.version import __version__
from mcp_memory.server.protocol.server import build_mcp_server
from mcp_memory.server.protocol.tools import ToolLayer, build_tool_layer
from mcp_memory.server.runners.boot import close_service, describe_setup

if TYPE_CHECKING:  # the service module loads with the hook socket (server/hooks/listener.py)
    from mcp_memory.core.service import MemoryService
    from mcp_memory.server.protocol.catalogue import ToolSpec

#: What serve-stdio imports after its store opens: the MCP SDK, a second or more on a busy machine.
SDK_MODULES = ("mcp_types", "mcp.server", "mcp.shared.message", "mcp_memory.server.runners.stdio_transport")


def _import_the_sdk() -> None:
    from importlib import import_module

    for name in SDK_MODULES:
        import_module(name)


async def run_stdio(settings: Any, caller: Caller) -> None:
    """Serve MCP over stdin/stdout until end of input, SIGTERM or SIGINT; then flush the
    counters exactly once and close the store. Every log line goes to stderr."""
    await StdioProcess(settings, caller).run()


class StdioProcess:
    """One serve-stdio process: its hook socket, its service, its warm-up and its stop.

    On a signal the process cannot wait for the stdin reader (a blocked thread
    read that no cancellation reaches), so it closes the service and exits
    directly; a second signal while that runs is ignored.
    """

    def __init__(self, settings: Any, caller: Caller) -> None:
        from mcp_memory.server.hooks.listener import HookSocket

        self.settings = settings
        self.caller = caller
        self.log = JsonLog(stdio=True)
        self.loop = asyncio.get_running_loop()
        self.stopping = False
        self.service: MemoryService | None = None
        self.tools: ToolLayer | None = None
        self.warming: asyncio.Task[None] | None = None
        #: A hook asked for the warm-up before the store was open: it starts once it is.
        self.asked = False
        # Claude Code runs a session's first hooks while this process starts: the socket listens
        # before the store opens and the SDK loads, and its questions wait for them (docs/hooks.md).
        self.hooks = HookSocket(None, caller, self.log, on_question=self.warm, settings_key=self.service_key)

    def service_key(self) -> str:
        """The key of this process's settings, at the first CLI command (the handshake loads no more)."""
        from mcp_memory.config.service_key import service_key

        return service_key(self.settings)

    async def run(self) -> None:
        """Listen for hooks, open the service, then serve until the end (see the class)."""
        await self.hooks.start()
        try:
            from mcp_memory.app import open_service

            self.service = await open_service(self.settings, log=self.log)
        except BaseException:
            await self.hooks.close()
            raise
        self.hooks.serve(self.service)
        # From here on the service is open and the socket listens: whatever happens (the SDK failing to
        # import, a signal meanwhile) closes the service and removes the socket and the marker.
        try:
            for sig in (signal.SIGTERM, signal.SIGINT):
                self.loop.add_signal_handler(sig, self.on_signal)
            if self.asked:  # a hook asked while the store opened: its prompt needs the model
                self.warm()
            await self.serve(self.service)
        finally:
            if self.warming is not None and not self.warming.done():
                self.warming.cancel()
            if not self.stopping:  # end of input: the orderly path
                self.stopping = True
                await self.close_all()

    async def serve(self, service: MemoryService) -> None:
        """Import the SDK, build the MCP server and answer stdin until its end."""
        # The SDK takes a second or more to import on a busy machine: in a thread, so that the loop
        # answers the hooks waiting for the store meanwhile.
        try:
            await asyncio.to_thread(_import_the_sdk)
        except ImportError as exc:
            raise StartupError(f"the MCP SDK cannot be imported ({exc}): reinstall mcp-memory") from None

        from mcp_memory.server.protocol.catalogue import STDIO_TERMS
        from mcp_memory.server.runners.stdio_transport import stdio_transport

        settings, caller = self.settings, self.caller
        service.start(settings.counters.stats_flush_ms)
        # Claude Code's mcp_tool hooks ask this process directly (docs/hooks.md#hooks-as-tool-calls);
        # the tool's module is imported at the first tools/list or call, after the handshake
        self.tools = build_tool_layer(settings, service, self.log, terms=STDIO_TERMS, extra=self.hook_tools)
        server = build_mcp_server(self.tools, lambda ctx: caller, on_ready=self.warm)
        # stdout belongs to the protocol: the start-up lines go to stderr
        for line in (
            f"mcp-memory v{__version__} serving stdio for tenant {caller.tenant}",
            *describe_setup(settings, self.tools),
        ):
            print(line, file=sys.stderr, flush=True)
        # The SDK's own warnings become JSON lines on stderr too, without their tracebacks
        # (a stack can quote request data), as under serve-http.
        with library_logs_as_json(self.log):
            async with stdio_transport(self.log) as (read, write):
                await server.run(read, write, server.create_initialization_options())

    def hook_tools(self) -> list[ToolSpec]:
        """serve-stdio's `claude_code_hook` tool, built at the catalogue's first use."""
        from mcp_memory.server.hooks.tool import hook_tool

        return [hook_tool(self.log, lambda: self.hooks.warm)]

    def warm(self) -> None:
        """Load the model and the tenant's vectors once the handshake is done (or a hook asks):
        started at once, their CPU work (much of it holding the GIL) delayed tools/list
        (bench/RESULTS.md#serve-stdio-warms-up-once-the-handshake-is-done)."""
        self.asked = True
        if self.warming is None and not self.stopping and self.service is not None:
            self.warming = self.loop.create_task(self.service.warm_up(self.caller.tenant))
            self.warming.add_done_callback(lambda _: self.hooks.warmed())

    def on_signal(self) -> None:
        if not self.stopping:
            self.stopping = True
            self.loop.create_task(self.close_and_exit())

    async def close_all(self) -> None:
        await close_service(self.tools, self.service, self.hooks)

    async def close_and_exit(self) -> None:
        try:
            await self.close_all()
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(0)
