"""Issue 34 for an embedder with no relevance model of its own
(docs/recall.md#an-embedder-without-a-model-of-its-own): real cosines (the local MiniLM's) served
under an OpenAI-compatible embedder's name, so no model was fitted for it. Without its spread,
recall keeps the rule-based label; with the spread `calibrate` measures for those cosines, recall
gives a probability and its bands, says when nothing stored answers, and the prompt rule injects a
related prompt only."""

from __future__ import annotations

import pytest

from mcp_memory.core import judgment
from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.server.protocol.render import recall_text
from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore
from tests.issues.test_34_judgment_edges import FACTS, UNRELATED

ACME = Caller("acme")
#: What `calibrate --builtin` measures for these cosines (bench/RESULTS.md, "A probability for an
#: embedder with no model of its own"), and the floor it suggests.
SPREAD, FLOOR = 0.283, 0.27


class Remote:
    """The real model's cosines under a remote embedder's name, declaring no script (as the remote
    embedders do)."""

    provider = "openai"
    model = "text-embedding-3-small"
    scripts = None

    def __init__(self, inner) -> None:
        self.inner = inner
        self.dim = inner.dim

    async def embed(self, texts):
        return await self.inner.embed(texts)


async def _service(clock, real_model, scale: tuple[float, float] | None) -> MemoryService:
    objects = InMemoryObjectStore()
    counters = AccessCounters(objects, pod_id="test-pod", log=NullLog(), clock=clock)
    service = MemoryService(
        InMemoryVectorStore(), objects, Remote(real_model), counters, floor=FLOOR, clock=clock, scale=scale
    )
    for fact in FACTS:
        await service.remember(ACME, fact)
    return service


@pytest.fixture
async def measured(clock, real_model) -> MemoryService:
    return await _service(clock, real_model, (FLOOR, FLOOR + SPREAD))


async def test_without_its_spread_a_remote_embedder_keeps_the_rule_based_label(clock, real_model) -> None:
    service = await _service(clock, real_model, None)
    assert service.judge is None
    result = await service.recall(ACME, "Why did we pick PostgreSQL rather than MySQL for orders?")
    assert result.results[0].memory.content == FACTS[0]
    assert result.probability is None and result.confidence in {"high", "medium"}
    assert "likely to answer" not in recall_text(result)


async def test_with_its_spread_an_answer_carries_a_probability_and_its_band(measured) -> None:
    assert measured.judge is not None and measured.judge.key == judgment.GENERIC
    result = await measured.recall(ACME, "Why did we pick PostgreSQL rather than MySQL for orders?")
    assert result.results[0].memory.content == FACTS[0]
    assert result.probability is not None and result.probability == result.results[0].probability
    assert result.confidence == measured.judge.bands.label(result.probability) != "none"
    assert all(r.probability is not None for r in result.results)
    assert "likely to answer" in recall_text(result)


async def test_with_its_spread_a_question_nothing_answers_is_told_so(measured) -> None:
    result = await measured.recall(ACME, "What's a good recipe for carbonara?")
    assert result.unanswered and result.results == [] and result.confidence == "none"
    assert "NOTHING STORED ANSWERS THIS" in recall_text(result)


async def test_with_its_spread_the_prompt_rule_injects_a_related_prompt_and_not_an_unrelated_one(measured) -> None:
    related = await measured.recall(ACME, "Why are we on Postgres rather than MySQL?", mode="precision")
    unrelated = await measured.recall(ACME, UNRELATED, mode="precision")
    assert related.worth_injecting() and related.results[0].memory.content == FACTS[0]
    assert not unrelated.worth_injecting()


async def test_with_its_spread_the_prompt_hook_injects_a_related_prompt_through_the_server(measured, tmp_path) -> None:
    from tests.hooks.support import environ, serving
    from tests.issues.test_34_judgment_edges import _prompt

    variables = environ(tmp_path, MEMORY_TENANT="acme")
    server = await serving(measured, variables)
    try:
        context = await _prompt(variables, "Why are we on Postgres rather than MySQL?")
        assert context is not None and f"   {FACTS[0]}" in context.splitlines()
        assert await _prompt(variables, UNRELATED) is None
    finally:
        await server.close()
