"""Keyword statistics are per tenant on every backend: another tenant's memories never change what
recall answers this one, in what order, with what relevance and confidence.

BM25 weighs a word by how many memories hold it. Counted over a whole SQLite file, tenant B filling
itself with a word made that word common for tenant A too: A's scores, its keyword candidates and
its ranking moved, and B could learn something of A's vocabulary from A's answers changing (or A of
B's). Here tenant B stores many memories holding the very words A's questions use, and A's answers
must stay exactly what they were, as the user sees them.
"""

from __future__ import annotations

import pytest

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.render import text as shown
from tests.conftest import SERVICE_BACKENDS, Clock, Env, open_env

ACME = Caller("acme")
GLOBEX = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")

ACME_FACTS = [
    "The ledger worker logs ECONNREFUSED whenever the billing database restarts",
    "Checkout fails with error E1234 when the coupon has expired",
    "Allow the app subnet in pg_hba.conf before the migration",
    "Version v0.8.2 shipped the retry fix for webhooks",
    "The checkout_v2 flow replaces the legacy cart page",
    "배포 서버가 재시작되면 캐시를 비운다",
    "The ledger team owns the billing database and its restarts",
    "Coupons expire at midnight UTC in the checkout service",
]
ACME_NOTE = "Thread A decided the ledger canary flag is CANARY_77"
QUESTIONS = [
    "ECONNREFUSED ledger",
    "why does checkout fail with E1234?",
    "coupon checkout",
    "pg_hba.conf subnet",
    "webhooks retry v0.8.2",
    "서버 재시작",
    "ledger canary flag",
]
#: Globex's memories hold the words of Acme's questions, again and again.
GLOBEX_WORDS = "ECONNREFUSED ledger checkout E1234 coupon pg_hba.conf subnet webhooks v0.8.2 서버 재시작 canary flag"
GLOBEX_COUNT = 60


@pytest.fixture(params=SERVICE_BACKENDS)
async def env(request: pytest.FixtureRequest, clock: Clock):
    env = await open_env(request.param, clock, request, floor=0.2)
    try:
        yield env
    finally:
        await env.service.close()


async def answers(env: Env, caller: Caller) -> list[tuple[object, ...]]:
    """Every question's answer as the user gets it: the text, and the fields beside it."""
    out: list[tuple[object, ...]] = []
    for question in QUESTIONS:
        result = await env.service.recall(caller, question)
        fields = [(r.memory.id, r.similarity, r.relevance, r.keyword, r.standing) for r in result.results]
        out.append((question, shown(result), result.confidence, result.gated, fields))
    return out


def fresh_counters(env: Env) -> None:
    """A new pod's counters (nothing was flushed): the second pass ranks with the same usage as
    the first, so only the stores' statistics could make them differ."""
    env.service.counters = AccessCounters(env.objects, pod_id="test-pod", log=NullLog(), clock=env.clock)


async def test_another_tenants_memories_never_change_this_tenants_recall(env: Env) -> None:
    for fact in ACME_FACTS:
        await env.service.remember(ACME, fact)
    await env.service.remember(THREAD, ACME_NOTE, scope="conversation")
    before = {caller: await answers(env, caller) for caller in (ACME, THREAD)}
    assert any(fields for *_, fields in before[ACME])  # the questions do find Acme's memories
    for i in range(GLOBEX_COUNT):
        await env.service.remember(GLOBEX, f"Globex incident {i} (shift {i % 7}, rack r{i * 13 % 97}): {GLOBEX_WORDS}")
    assert (await env.service.stats(GLOBEX)).total == GLOBEX_COUNT
    globex = await env.service.recall(GLOBEX, "ECONNREFUSED ledger")
    assert globex.results and all(r.memory.content.startswith("Globex incident") for r in globex.results)
    fresh_counters(env)
    for caller in (ACME, THREAD):
        assert await answers(env, caller) == before[caller], caller


async def test_forgetting_another_tenants_memories_never_changes_this_tenants_recall(env: Env) -> None:
    stored = [(await env.service.remember(GLOBEX, f"Globex note {i}: {GLOBEX_WORDS}")).memory.id for i in range(30)]
    for fact in ACME_FACTS:
        await env.service.remember(ACME, fact)
    before = await answers(env, ACME)
    for memory_id in stored:
        assert (await env.service.forget(GLOBEX, memory_id)).deleted
    fresh_counters(env)
    assert await answers(env, ACME) == before
