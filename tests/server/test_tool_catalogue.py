"""The tools/list answer, as the SDK's own client receives it, compared byte for byte with the
catalogue captured before the tools' schemas were generated from their requests (issue 37):
a schema the generator spells differently, a description moved, a key in another order all fail
here, naming the tool."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_memory.config import Settings
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.server import build_mcp_server
from mcp_memory.server.protocol.tools import build_tool_layer
from mcp_memory.stores.section import StoreSection
from tests.conftest import Env

#: tools/list with search_docs offered, captured at f851025 (before the schemas were generated),
#: one file per protocol era (the 2026-07-28 answer carries its cache fields). Retaken once, on
#: purpose, when list_memories took `cursor` (issue 36): the only difference is that argument and
#: `nextCursor` in its output schema, 136 bytes; the generated schemas were identical before it.
CAPTURED = Path(__file__).parents[1] / "data" / "tools_list_f851025"


class NoDocs:
    async def retrieve(self, query: str, limit: int) -> list[Any]:
        return []

    async def close(self) -> None:
        pass


def wire(listed: Any) -> str:
    """The result's JSON as the bench measures it (bench/latency/tools_list_bytes.py): compact."""
    body = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


async def listing(env: Env, mode: str) -> str:
    settings = Settings(store=StoreSection(knowledge_base_id="KB12345678"))
    tools = build_tool_layer(settings, env.service, JsonLog(io.StringIO(), io.StringIO()), retriever=NoDocs())
    async with Client(build_mcp_server(tools, lambda ctx: Caller("acme")), mode=mode) as client:
        return wire(await client.list_tools())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_tool_catalogue_is_byte_for_byte_the_one_captured_before_schemas_were_generated(
    env: Env, mode: str
) -> None:
    listed = await listing(env, mode)
    captured = (CAPTURED / f"{mode}.json").read_text(encoding="utf-8")
    by_name = {t["name"]: t for t in json.loads(listed)["tools"]}
    for tool in json.loads(captured)["tools"]:
        assert json.dumps(by_name.get(tool["name"])) == json.dumps(tool), tool["name"]
    assert listed == captured


#: The entry of serve-stdio's claude_code_hook tool (Claude Code's mcp_tool hooks, docs/hooks.md), as
#: tools/list gave it when it was added (issue 35 item 3): the one change to serve-stdio's catalogue.
HOOK_TOOL = Path(__file__).parents[1] / "data" / "tools_list_claude_code_hook"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_serve_stdio_lists_the_captured_catalogue_and_then_the_hook_tool_byte_for_byte(
    env: Env, mode: str
) -> None:
    from mcp_memory.server.hooks.tool import hook_tool

    log = JsonLog(io.StringIO(), io.StringIO())
    settings = Settings(store=StoreSection(knowledge_base_id="KB12345678"))
    extra = [hook_tool(log, lambda: True)]
    tools = build_tool_layer(settings, env.service, log, retriever=NoDocs(), extra=extra)
    async with Client(build_mcp_server(tools, lambda ctx: Caller("acme")), mode=mode) as client:
        listed = json.loads(wire(await client.list_tools()))
    captured = json.loads((CAPTURED / f"{mode}.json").read_text(encoding="utf-8"))
    assert listed["tools"][:-1] == captured["tools"]  # every other tool as it was
    assert (
        json.dumps(listed["tools"][-1], ensure_ascii=False) == (HOOK_TOOL / f"{mode}.json").read_text("utf-8").strip()
    )
    assert {k: v for k, v in listed.items() if k != "tools"} == {k: v for k, v in captured.items() if k != "tools"}
