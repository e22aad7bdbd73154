"""The MCP server over the tool layer: the catalogue as tools/list, and tools/call
resolving the caller (tenant, conversation) when a tool runs, never at the handshake
or for tools/list. Both runners (stdio and HTTP) build theirs here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_memory.core.errors import ContextError
from mcp_memory.core.model import Caller
from mcp_memory.core.version import __version__
from mcp_memory.server.protocol.tools import ToolLayer

SERVER_NAME = "mcp-memory"
INSTRUCTIONS = (
    "A memory that outlives this run. Call recall at the start of a task; call remember when you "
    "learn something a later run should know."
)

CallerResolver = Callable[[Any], Caller]


def build_mcp_server(
    tools: ToolLayer, resolve_caller: CallerResolver, on_ready: Callable[[], None] | None = None
):  # -> mcp.server.Server
    """A low-level MCP server whose tools/call resolves the caller, then dispatches.

    `on_ready` runs when the client says the handshake is done (`notifications/initialized`)
    and at every tools/list and tools/call (a client of the 2026-07-28 era sends no
    handshake); serve-stdio starts its warm-up there (it must be idempotent).
    """
    import mcp_types as types
    from mcp.server import Server

    ready = on_ready or (lambda: None)

    listed: list[types.Tool] = []

    def listing() -> list[types.Tool]:
        """The catalogue as tools/list shows it, made at the first tools/list: a runner's lazy extra
        tools (serve-stdio's hook tool) are not imported before the handshake is answered."""
        if not listed:
            listed.extend(
                types.Tool(
                    name=spec.name,
                    title=spec.title,
                    description=spec.description,
                    input_schema=spec.input_schema,
                    output_schema=spec.output_schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=spec.hints.read_only,
                        destructive_hint=spec.hints.destructive,
                        idempotent_hint=spec.hints.idempotent,
                        open_world_hint=spec.hints.open_world,
                    ),
                )
                for spec in tools.catalogue
            )
        return listed

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        ready()
        return types.ListToolsResult(tools=listing())

    async def initialized(ctx: Any, params: Any) -> None:
        ready()

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        ready()
        try:
            caller = resolve_caller(ctx)
        except ContextError as exc:  # the tool does not run, and no tool_call line is written
            return _result(f"Error: {exc}", True)
        result = await tools.call(params.name, params.arguments, caller)
        return _result(result.text, result.is_error, result.data)

    def _result(text: str, is_error: bool, data: dict[str, Any] | None = None) -> types.CallToolResult:
        """The text, and beside it the same facts as fields on success (an error has only its text)."""
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
        if data is None:
            return types.CallToolResult(content=content, is_error=is_error)
        return types.CallToolResult(content=content, structured_content=data, is_error=is_error)

    server = Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        # lets the SDK check a 2026-07-28 call's Mcp-Param headers without listing every tool per call
        get_tool_input_schema=tools.input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    if on_ready is not None:
        server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    from mcp_memory.server.protocol.resources import PromptsAndResources

    PromptsAndResources(tools, resolve_caller, ready).register(server)  # prompts and resources (docs/hooks.md)
    return server
