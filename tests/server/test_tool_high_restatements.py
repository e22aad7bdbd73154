"""HIGH reads the top result against its competitors, not against itself said again
(docs/recall.md#confidence), as the recall tool shows it: a correction remembered again is a HIGH
answer, newer first, both at 100 % of the top; a distinct memory close behind keeps it MEDIUM.
The rule itself, pure, is tests/core/test_high_restatements.py's; on the in-memory store."""

from __future__ import annotations

import io

from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import ToolLayer
from tests.conftest import T0, Env

ACME = Caller("acme")
HOUR = 3_600_000


async def call(env: Env, tool: str, arguments: dict):
    return await ToolLayer(env.service, JsonLog(io.StringIO())).call(tool, arguments, ACME)


async def remember_correction(env: Env) -> tuple[str, str]:
    env.clock.now = T0 + 9 * HOUR
    old = (await call(env, "remember", {"content": "The CI pipeline uses Python 3.11 for every job"})).data
    env.clock.now = T0 + 15 * HOUR
    new = (await call(env, "remember", {"content": "The CI pipeline uses Python 3.12 for every job"})).data
    await call(env, "remember", {"content": "Database backups run nightly and are restored monthly as a drill"})
    env.clock.now = T0 + 16 * HOUR
    return old["memory"]["id"], new["memory"]["id"]


async def test_a_correction_remembered_again_is_a_high_answer_first_with_both_at_100_percent(env: Env) -> None:
    old_id, new_id = await remember_correction(env)
    result = await call(env, "recall", {"query": "CI pipeline Python"})
    assert result.text.splitlines()[1].startswith("HIGH CONFIDENCE:")
    assert result.data["confidence"] == "high"
    assert [r["id"] for r in result.data["results"]] == [new_id, old_id]
    # the newer one was scored a little below the older: it reads its place, not 96 %
    assert f"[id:{new_id}] (project, 100% of the top result" in result.text
    assert f"[id:{old_id}] (project, 100% of the top result" in result.text
    assert [r["standing"] for r in result.data["results"]] == [1.0, 1.0]


async def test_a_distinct_memory_close_behind_the_top_still_keeps_the_answer_medium(env: Env) -> None:
    await call(env, "remember", {"content": "The CI pipeline uses Python 3.12 for every job"})
    env.clock.advance(HOUR)
    await call(env, "remember", {"content": "Our CI pipeline pins Python tooling in a lock file"})
    result = await call(env, "recall", {"query": "CI pipeline Python"})
    assert result.data["confidence"] == "medium"
    assert result.text.splitlines()[1].startswith("MEDIUM CONFIDENCE:")
