"""HIGH reads the top result against its competitors, not against itself said again
(docs/recall.md#confidence): a memory near the top (the `near` rule newest-first moves by: the
same fact restated, or an update of it) is not the runner-up it must stand clear of. A distinct
memory close behind still holds HIGH back. And what the list prints is read after newest-first:
the first result reads 100 % of the top, and no result reads less than one shown below it.
The rule, pure, on the pipeline's own values; what the recall tool shows of it is
tests/server/test_tool_high_restatements.py's, and each backend's stored vectors for a near pair
are the smoke suite's (tests/stores/test_smoke.py)."""

from __future__ import annotations

import numpy as np

from mcp_memory.core import recall, supersede
from mcp_memory.core.fusion import Candidate
from mcp_memory.core.ids import iso
from mcp_memory.core.keywords import KeywordAnswer, TermStats
from mcp_memory.core.model import Caller, Hit, Memory, Ranked
from tests.conftest import T0

ACME = Caller("acme")
HOUR = 3_600_000


# --------------------------------------------------------------------------- the rule, pure

UNIT = np.ones(4, dtype=np.float32) / 2
APART = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
OTHER = np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32)
TERMS = ["deploy", "window"]
STATS = TermStats(3, {"deploy": 1, "window": 1})


def memory(memory_id: str, content: str, at: float = T0) -> Memory:
    return Memory(memory_id, "acme", content, created_at=iso(at))


def shown(memory: Memory, relevance: float, standing: float = 1.0) -> Ranked:
    return Ranked(memory, relevance, relevance, standing, relevance=relevance)


def answer_for(*memories: Memory) -> KeywordAnswer:
    return KeywordAnswer([Hit(m, 0.5) for m in memories], STATS)


def test_the_runner_up_skips_a_restatement_of_the_top_but_not_a_different_memory() -> None:
    top = memory("top", "deploy window is thursday")
    again = memory("again", "deploy window is thursday afternoon")
    relevant = [Candidate(top, 0.9, 1.0, 0.9), Candidate(again, 0.85, 1.0, 0.85)]
    results = [shown(top, 0.9), shown(again, 0.85)]
    near = supersede.nearness({"top": UNIT, "again": UNIT}, [top, again])
    answer = answer_for(top, again)
    assert recall.confidence(recall.HYBRID, results, relevant, TERMS, answer, 0.5) == "medium"
    assert recall.confidence(recall.HYBRID, results, relevant, TERMS, answer, 0.5, near) == "high"
    apart = supersede.nearness({"top": APART, "again": OTHER}, [top, again])
    assert recall.confidence(recall.HYBRID, results, relevant, TERMS, answer, 0.5, apart) == "medium"


async def test_settle_reads_the_rivals_beyond_the_limit_so_a_lone_result_is_judged_the_same_way() -> None:
    top = memory("top", "deploy window is thursday")
    again = memory("again", "deploy window is thursday afternoon")
    relevant = [Candidate(top, 0.9, 1.0, 0.9), Candidate(again, 0.85, 1.0, 0.85)]
    asked: list[list[str]] = []

    async def read(memories):
        asked.append([m.id for m in memories])
        return {m.id: UNIT for m in memories}

    answer = answer_for(top, again)
    settled = await recall.settle(recall.HYBRID, [shown(top, 0.9)], relevant, TERMS, answer, read)
    assert asked == [["top", "again"]]  # one result: nothing to reorder, only the rival is read
    assert recall.confidence(recall.HYBRID, settled.results, relevant, TERMS, answer, 0.5, settled.near) == "high"


async def test_settle_reads_no_rival_when_the_top_already_stands_clear_or_under_dense() -> None:
    top, far = memory("top", "deploy window"), memory("far", "lunch menu")
    relevant = [Candidate(top, 0.9, 1.0, 0.9), Candidate(far, 0.3, 0.0, 0.3)]
    asked: list[list[str]] = []

    async def read(memories):
        asked.append([m.id for m in memories])
        return {m.id: UNIT for m in memories}

    await recall.settle(recall.HYBRID, [shown(top, 0.9)], relevant, TERMS, answer_for(top), read)
    await recall.settle(recall.DENSE, [shown(top, 0.9)], relevant[:1] + [Candidate(far, 0.88, 0, 0.88)], [], None, read)
    assert asked == []


async def test_settle_reads_no_rival_whose_nearness_could_not_change_the_label() -> None:
    top = memory("top", "lunch menu for friday")  # holds neither query word: never HIGH
    close = memory("close", "deploy window is thursday")
    relevant = [Candidate(top, 0.9, 0.0, 0.9), Candidate(close, 0.85, 1.0, 0.85)]
    asked: list[list[str]] = []

    async def read(memories):
        asked.append([m.id for m in memories])
        return {m.id: UNIT for m in memories}

    settled = await recall.settle(recall.HYBRID, [shown(top, 0.9)], relevant, TERMS, answer_for(top, close), read)
    assert asked == []
    assert recall.confidence(recall.HYBRID, settled.results, relevant, TERMS, answer_for(top), 0.5, settled.near) == (
        "medium"
    )


def test_a_newer_memory_lifted_first_reads_100_percent_and_no_share_reads_below_a_lower_one() -> None:
    best = memory("best", "unrelated top answer", T0)
    older = memory("older", "The CI pipeline uses Python 3.11", T0)
    newer = memory("newer", "The CI pipeline uses Python 3.12", T0 + HOUR)
    near = supersede.nearness({"older": UNIT, "newer": UNIT, "best": APART}, [best, older, newer])
    lifted = supersede.settle([shown(older, 0.9, 1.0), shown(newer, 0.88, 0.97)], near)
    assert [(r.memory.id, r.standing) for r in lifted] == [("newer", 1.0), ("older", 1.0)]
    below = supersede.settle([shown(best, 1.0, 1.0), shown(older, 0.9, 0.8), shown(newer, 0.8, 0.6)], near)
    assert [(r.memory.id, r.standing) for r in below] == [("best", 1.0), ("newer", 0.8), ("older", 0.8)]
    assert below[2].superseded_by == "newer"


def test_when_nothing_moves_every_result_keeps_its_own_standing() -> None:
    a, b = memory("a", "one thing", T0), memory("b", "another thing", T0 + HOUR)
    results = [shown(a, 0.9, 1.0), shown(b, 0.5, 0.61)]
    near = supersede.nearness({"a": APART, "b": OTHER}, [a, b])
    assert supersede.settle(results, near) == results
