"""`mcp-memory serve-stdio`, apart from the other commands: its process loads this module and
not cli/app.py, whose other commands (and theirs: oauth, transfer, ui) the MCP handshake does not
need (cli/entry.py; tests/cli/test_stdio_imports.py). cli/app.py imports it first, so help lists
it first."""

from __future__ import annotations

import asyncio

from mcp_memory.cli.common import (
    EXIT_FAILED,
    ConversationOption,
    TenantOption,
    _caller,
    _fail,
    _settings,
    app,
)
from mcp_memory.core.errors import StartupError


@app.command("serve-stdio", short_help="Serve MCP over stdin/stdout for a local client.")
def serve_stdio(tenant: TenantOption = None, conversation: ConversationOption = None) -> None:
    """Serve MCP over stdin/stdout for a local client such as Claude Desktop.

    The tenant is --tenant, else $MEMORY_TENANT, else "local", as for every other
    command, so the CLI reads what a desktop client stored. Nothing but
    protocol messages is written to stdout; logs go to stderr.
    """
    from mcp_memory.server.runners.stdio import run_stdio

    settings = _settings()
    caller = _caller(settings, tenant, conversation)
    try:
        asyncio.run(run_stdio(settings, caller))
    except StartupError as exc:
        _fail(f"error: {exc}", EXIT_FAILED)
