"""The prompt hook and the digest mark a memory a newer near one may supersede, as recall does
(docs/recall.md#newer-memories-first), on the in-memory store: the marking is the service's (each
backend's part in it, the stored vectors it reads, is the smoke suite's)."""

from __future__ import annotations

from mcp_memory.core.model import Caller
from mcp_memory.server.hooks.answers import answer
from mcp_memory.server.hooks.wire import Ask
from tests.conftest import Env

ACME = Caller("acme")
HOUR = 3_600_000


async def test_a_prompt_brings_the_correction_first_and_marks_the_old_memory_possibly_superseded(env: Env) -> None:
    old = (await env.service.remember(ACME, "The CI pipeline uses Python 3.11 for every job")).memory
    env.clock.advance(6 * HOUR)
    new = (await env.service.remember(ACME, "The CI pipeline uses Python 3.12 for every job")).memory
    env.clock.advance(HOUR)
    question = Ask("prompt", "acme", None, "which Python does the CI pipeline use", min_confidence="medium")
    text, ids = await answer(env.service, ACME, question)
    assert text is not None and ids == [new.id, old.id]
    assert text.index(f"[id:{new.id}]") < text.index(f"[id:{old.id}]")
    assert text.count("possibly superseded") == 1
    assert f"possibly superseded by the newer [id:{new.id}]" in text.split(f"[id:{old.id}]")[1]


async def test_the_session_start_digest_marks_the_old_memory_possibly_superseded_by_its_correction(env: Env) -> None:
    old = (await env.service.remember(ACME, "The CI pipeline uses Python 3.11 for every job")).memory
    env.clock.advance(6 * HOUR)
    new = (await env.service.remember(ACME, "The CI pipeline uses Python 3.12 for every job")).memory
    env.clock.advance(HOUR)
    unrelated = (await env.service.remember(ACME, "Team lunch is on Thursdays in the blue room")).memory
    text, ids = await answer(env.service, ACME, Ask("digest", "acme"))
    assert text is not None and set(ids) == {old.id, new.id, unrelated.id}
    assert text.count("possibly superseded") == 1
    (header_of_old,) = [line for line in text.splitlines() if f"[id:{old.id}]" in line]
    assert f"possibly superseded by the newer [id:{new.id}]" in header_of_old


async def test_a_digest_of_memories_on_different_subjects_marks_none(env: Env) -> None:
    await env.service.remember(ACME, "The CI pipeline uses Python 3.12 for every job")
    env.clock.advance(HOUR)
    await env.service.remember(ACME, "Team lunch is on Thursdays in the blue room")
    text, _ = await answer(env.service, ACME, Ask("digest", "acme"))
    assert text is not None and "possibly superseded" not in text
