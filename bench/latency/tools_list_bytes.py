"""Bytes of the tools/list answer as the MCP SDK's client receives it: the result's JSON,
compact, for the five memory tools and with search_docs offered.

    .venv/bin/python -m bench.latency.tools_list_bytes

Each figure starts `serve-stdio` from this checkout (fake embedder, a scratch database);
search_docs needs only KNOWLEDGE_BASE_ID to be listed (nothing is searched).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]


async def measure(extra: dict[str, str], mode: str) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "KNOWLEDGE_"))}
        env.update(MEMORY_DB_PATH=f"{scratch}/m.db", PYTHONPATH=str(ROOT), EMBEDDING_PROVIDER="fake", **extra)
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "mcp_memory", "serve-stdio"], env=env, cwd=str(ROOT)
        )
        async with Client(server, mode=mode) as client:
            listed = (await client.list_tools()).model_dump(mode="json", by_alias=True, exclude_none=True)
    body = json.dumps(listed, ensure_ascii=False, separators=(",", ":")).encode()
    return len(body), len(listed["tools"])


async def main() -> None:
    docs = {"KNOWLEDGE_BASE_ID": "KB12345678", "AWS_REGION": "us-east-1"}
    for label, extra, mode in (
        ("memory tools", {}, "auto"),
        ("memory tools, legacy handshake", {}, "legacy"),
        ("with search_docs", docs, "auto"),
    ):
        size, tools = await measure(extra, mode)
        print(f"{label}: {size} bytes, {tools} tools")


if __name__ == "__main__":
    asyncio.run(main())
