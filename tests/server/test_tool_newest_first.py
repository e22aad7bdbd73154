"""Newest wins among near memories (docs/recall.md#newer-memories-first), the service's policy, through the
recall tool on the in-memory store: a correction remembered without `replaces` ranks above the fact it corrects and the older one is
shown as possibly superseded, in the text and the structured result; an older memory the
question clearly points at keeps its place (still marked); memories that are not near, or were
stored at the same instant, are left as they rank."""

from __future__ import annotations

import io

from mcp_memory.core import supersede
from mcp_memory.core.ids import iso
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller, Memory, Ranked
from mcp_memory.server.protocol.tools import TOOLS, ToolLayer
from tests.conftest import T0, Env

ACME = Caller("acme")
HOUR = 3_600_000


async def call(env: Env, tool: str, arguments: dict):
    return await ToolLayer(env.service, JsonLog(io.StringIO())).call(tool, arguments, ACME)


async def test_a_correction_remembered_again_the_same_day_ranks_first_and_the_old_one_is_marked(env: Env) -> None:
    env.clock.now = T0 + 9 * HOUR
    old = (await call(env, "remember", {"content": "The CI pipeline uses Python 3.11 for every job"})).data
    env.clock.now = T0 + 15 * HOUR + 30 * 60_000
    new = (await call(env, "remember", {"content": "The CI pipeline uses Python 3.12 for every job"})).data
    env.clock.now = T0 + 16 * HOUR
    result = await call(env, "recall", {"query": "which Python does the CI pipeline use"})
    old_id, new_id = old["memory"]["id"], new["memory"]["id"]
    assert [r["id"] for r in result.data["results"]] == [new_id, old_id]
    assert result.data["results"][1]["supersededBy"] == new_id and "supersededBy" not in result.data["results"][0]
    text = result.text
    assert text.index(f"[id:{new_id}]") < text.index(f"[id:{old_id}]")
    assert "stored 2026-07-01 15:30 UTC" in text and "stored 2026-07-01 09:00 UTC" in text  # same date: times shown
    assert f"possibly superseded by the newer [id:{new_id}]" in text
    assert f"forget {old_id}, and pass replaces when remembering a correction" in text


async def test_an_older_memory_the_question_clearly_points_at_keeps_its_place_but_is_still_marked(env: Env) -> None:
    old = await env.service.remember(ACME, "The staging database host is dbstaging01 behind the office VPN")
    env.clock.advance(HOUR)
    new = await env.service.remember(ACME, "The staging database host is pgstgeast behind the office VPN")
    env.clock.advance(HOUR)
    result = await env.service.recall(ACME, "the staging database host dbstaging01", mode="exploratory")
    assert [r.memory.id for r in result.results] == [old.memory.id, new.memory.id]
    assert result.results[0].superseded_by == new.memory.id


async def test_memories_that_are_not_near_keep_their_order_and_are_not_marked(env: Env) -> None:
    await env.service.remember(ACME, "Release notes are written in the changelog file by the author of the change")
    env.clock.advance(HOUR)
    await env.service.remember(ACME, "Database backups run nightly and are restored monthly as a drill")
    result = await env.service.recall(ACME, "where do release notes go", mode="exploratory")
    assert result.results[0].memory.content.startswith("Release notes")
    assert all(r.superseded_by is None for r in result.results)


def ranked(memory_id: str, content: str, at: float, relevance: float) -> Ranked:
    memory = Memory(id=memory_id, tenant="acme", content=content, created_at=iso(at))
    return Ranked(memory, relevance, relevance, relevance=relevance)


def test_memories_stored_at_the_same_instant_have_no_order_so_nothing_moves() -> None:
    import numpy as np

    same = np.ones(4, dtype=np.float32) / 2
    results = [ranked("a", "CI uses Python 3.11", T0, 0.9), ranked("b", "CI uses Python 3.12", T0, 0.85)]
    out = supersede.newest_first(results, {"a": same, "b": same})
    assert [r.memory.id for r in out] == ["a", "b"] and all(r.superseded_by is None for r in out)


def test_the_older_keeps_its_place_only_when_the_newer_is_below_the_clear_ratio() -> None:
    import numpy as np

    same = np.ones(4, dtype=np.float32) / 2
    vectors = {"old": same, "new": same}
    close = [ranked("old", "x", T0, 1.0), ranked("new", "y", T0 + 1, supersede.CLEAR_RATIO)]
    assert [r.memory.id for r in supersede.newest_first(close, vectors)] == ["new", "old"]
    clear = [ranked("old", "x", T0, 1.0), ranked("new", "y", T0 + 1, supersede.CLEAR_RATIO - 0.01)]
    out = supersede.newest_first(clear, vectors)
    assert [r.memory.id for r in out] == ["old", "new"] and out[0].superseded_by == "new"


def test_the_forget_description_says_what_recall_does_with_an_uncorrected_older_memory() -> None:
    forget = next(t for t in TOOLS if t.name == "forget")
    assert "outranks" not in forget.description
    assert "ranks above the older memory, which recall marks as possibly superseded" in forget.description
