"""Drive `serve-stdio` of an installed mcp-tenant-memory through the MCP SDK's own client.

Run by .ci/wheel-check with the fresh virtual environment's Python, outside the checkout:

    python stdio_smoke.py COMMAND     (COMMAND: the venv's mcp-tenant-memory script)

It initializes, lists the tools, remembers a fact and recalls it (embedded SQLite in a
scratch directory, the fake embedder), and prints one JSON line with what it saw; any
mismatch exits non-zero with the reason.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

#: serve-stdio also offers claude_code_hook, the tool the plugin's mcp_tool hooks call (docs/hooks.md#hooks-as-tool-calls).
EXPECTED_TOOLS = ["recall", "remember", "list_memories", "forget", "memory_stats", "claude_code_hook"]
FACT = "The nightly backup is verified every Sunday at 06:00 UTC"


async def main(command: str) -> dict:
    data = Path(tempfile.mkdtemp(prefix="stdio-smoke-"))
    try:
        return await smoke(command, data)
    finally:
        shutil.rmtree(data, ignore_errors=True)  # the scratch store and its hook folder


async def smoke(command: str, data: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "PYTHON"))}
    # a data directory of its own, where serve-stdio keeps its hook socket: never the user's
    env.update({"MEMORY_DB_PATH": str(data / "memory.db"), "EMBEDDING_PROVIDER": "fake", "XDG_DATA_HOME": str(data)})
    server = StdioServerParameters(command=command, args=["serve-stdio"], env=env, cwd=str(data))
    async with Client(server, mode="legacy") as client:
        info = client.server_info
        tools = [t.name for t in (await client.list_tools()).tools]
        stored = (await client.call_tool("remember", {"content": FACT})).content[0].text
        recalled = (await client.call_tool("recall", {"query": FACT})).content[0].text
    seen = {
        "server": [info.name, info.version] if info else None,
        "metadataVersion": importlib.metadata.version("mcp-tenant-memory"),
        "tools": tools,
        "stored": stored,
        "recalled": recalled,
        "databaseMode": oct((data / "memory.db").stat().st_mode & 0o777),
    }
    memory_id = re.search(r"Stored as ([0-9A-Z]{26})", stored)
    problems = []
    if tools != EXPECTED_TOOLS:
        problems.append(f"tools/list answered {tools}")
    if seen["server"] != ["mcp-memory", seen["metadataVersion"]]:
        problems.append(f"serverInfo {seen['server']} does not match the installed {seen['metadataVersion']}")
    if memory_id is None:
        problems.append("remember did not store")
    elif memory_id.group(1) not in recalled or FACT not in recalled:
        problems.append("recall did not find what was remembered")
    if seen["databaseMode"] != "0o600":
        problems.append(f"the database was created {seen['databaseMode']}, not 0o600")
    if problems:
        print(json.dumps(seen), file=sys.stderr)
        raise SystemExit("stdio smoke: " + "; ".join(problems))
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(asyncio.wait_for(main(sys.argv[1]), 300))))
