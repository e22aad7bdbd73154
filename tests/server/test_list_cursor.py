"""list_memories pages (issue 36, "MCP list_memories has no cursor while the CLI pages"): over
the MCP SDK's own client it takes an opaque `cursor`, answers `nextCursor` in its structured
result and says in its text how to read on, in the order `mcp-memory list` pages; a cursor the
server did not give to this tenant is refused naming `cursor`, saying nothing of either tenant."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from mcp import Client

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.server import build_mcp_server
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import Env
from tests.core.test_paging import store

REFUSED = "Error: `cursor` is not a cursor this server gave out; pass the next cursor of a page as it was returned."


async def call(env: Env, tenant: str, arguments: dict[str, Any]) -> Any:
    """list_memories through the SDK's client, as `tenant` (the transport's, never an argument)."""
    tools = ToolLayer(env.service, JsonLog(io.StringIO(), io.StringIO()))
    async with Client(build_mcp_server(tools, lambda ctx: Caller(tenant))) as client:
        return await client.call_tool("list_memories", arguments)


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def walk(env: Env, tenant: str, **arguments: Any) -> list[Any]:
    """Every answer, following nextCursor to the end."""
    answers = [await call(env, tenant, arguments)]
    while (answers[-1].structured_content or {}).get("nextCursor") is not None:
        answers.append(await call(env, tenant, {**arguments, "cursor": answers[-1].structured_content["nextCursor"]}))
        assert len(answers) < 50
    return answers


async def test_list_memories_pages_every_memory_once_in_the_order_the_cli_pages_them(env: Env) -> None:
    ids = await store(env, "acme", 45)
    answers = await walk(env, "acme", limit=20)
    shown = [[m["id"] for m in a.structured_content["memories"]] for a in answers]
    assert [len(p) for p in shown] == [20, 20, 5]
    cli = []  # what `mcp-memory list --limit 20 --all` reads: MemoryService.list, cursor by cursor
    cursor = None
    while True:
        page = await env.service.list(Caller("acme"), limit=20, cursor=cursor)
        cli.append([m.id for m in page.memories])
        if (cursor := page.next_cursor) is None:
            break
    assert shown == cli and [i for p in shown for i in p] == ids[::-1]
    first = answers[0]
    cursor = first.structured_content["nextCursor"]
    assert text_of(first).endswith(
        f'[MEMORY] More follow: call list_memories again with cursor "{cursor}" (and the same filters) '
        "for the next page."
    )
    last = answers[-1]
    assert "nextCursor" not in last.structured_content and "More follow" not in text_of(last)
    assert text_of(last).startswith("[MEMORY] 5 memories, newest first.")


async def test_the_cursor_goes_on_with_the_filters(env: Env) -> None:
    await store(env, "acme", 6)
    tagged = await store(env, "acme", 5, start=2_000_000_000_000, tags=("ops",))
    answers = await walk(env, "acme", limit=2, tags=["ops"])
    assert [m["id"] for a in answers for m in a.structured_content["memories"]] == tagged[::-1]


async def test_a_cursor_given_to_another_tenant_is_refused_naming_cursor_and_shows_nothing_of_either(env: Env) -> None:
    acme = await store(env, "acme", 4)
    globex = await store(env, "globex", 4, start=2_000_000_000_000)
    theirs = (await call(env, "globex", {"limit": 2})).structured_content["nextCursor"]
    refused = await call(env, "acme", {"cursor": theirs})
    assert refused.is_error and text_of(refused) == REFUSED
    assert not refused.structured_content
    assert not any(i in text_of(refused) for i in acme + globex) and "globex" not in text_of(refused)


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "c2",
        "nonsense",
        "c2!!!",
        "c2" + "QQ" * 60,
        # the form cursors had before they were bound to a tenant: a real position, no tenant
        "c1MDAwMDAwMDAwMCMwMUowMDAwMDAwMDAwMDAwMDAwMDAwMDAx",
        12,
        ["c2"],
    ],
)
async def test_a_cursor_the_server_did_not_give_is_refused_naming_cursor(env: Env, cursor: Any) -> None:
    await store(env, "acme", 3)
    refused = await call(env, "acme", {"cursor": cursor})
    assert refused.is_error and text_of(refused) == REFUSED


async def test_a_forged_cursor_with_another_tenants_mark_or_a_changed_position_is_refused(env: Env) -> None:
    import base64

    await store(env, "acme", 5)
    given = (await call(env, "acme", {"limit": 2})).structured_content["nextCursor"]
    position = base64.urlsafe_b64decode(given[2:] + "=" * (-len(given[2:]) % 4)).decode()
    inverted, memory_id, mark = position.split("#")
    for forged in (
        f"{inverted}#{memory_id}#{'0' * len(mark)}",
        f"{inverted}#{memory_id}",
        f"0{inverted[1:]}#{memory_id}#{mark}",
    ):
        spelled = "c2" + base64.urlsafe_b64encode(forged.encode()).decode().rstrip("=")
        refused = await call(env, "acme", {"cursor": spelled})
        assert refused.is_error and text_of(refused) == REFUSED, forged
    assert not (await call(env, "acme", {"cursor": given})).is_error


async def test_the_structured_result_declares_next_cursor(env: Env) -> None:
    tools = ToolLayer(env.service, JsonLog(io.StringIO(), io.StringIO()))
    async with Client(build_mcp_server(tools, lambda ctx: Caller("acme"))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    spec = listed["list_memories"]
    assert spec.input_schema["properties"]["cursor"]["type"] == "string"
    assert "cursor" not in spec.input_schema.get("required", [])
    assert json.dumps(spec.output_schema["properties"]["nextCursor"]) == '{"type": "string"}'
