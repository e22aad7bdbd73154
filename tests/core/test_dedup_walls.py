"""The duplicate check never crosses a wall (the rule is the service's, tested on
the in-memory store; the smoke suite repeats the tenant wall on every backend): another tenant's identical
fact is stored, not "already known", and another tenant's correction gets no hint naming
the first tenant's memory (its id or its text would tell one tenant what another wrote);
and a fact told to the whole project is not swallowed by a conversation's own note."""

from __future__ import annotations

import re

from mcp_memory.core.model import Caller
from mcp_memory.server import render
from tests.conftest import Env

ACME = Caller("acme")
GLOBEX = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")
FACT = "The payments gateway listens on port 8443 behind the mesh"
CORRECTION = "The payments gateway listens on port 8444 behind the mesh"


def stored_id(text: str) -> str:
    match = re.search(r"Stored as ([0-9A-Z]{26})\.", text)
    assert match, text
    return match.group(1)


async def test_another_tenants_identical_fact_is_stored_and_nothing_names_the_first_tenants_memory(
    env: Env,
) -> None:
    acme_id = stored_id(render.remember_text(await env.service.remember(ACME, FACT)))
    same = render.remember_text(await env.service.remember(GLOBEX, FACT))
    near = render.remember_text(await env.service.remember(GLOBEX, CORRECTION))
    again = render.remember_text(await env.service.remember(ACME, FACT))
    assert "Stored as" in same and "Already known" not in same
    assert "Stored as" in near
    for answer in (same, near):
        assert acme_id not in answer
    assert f"CLOSE TO AN EXISTING MEMORY: [id:{acme_id}]" not in near
    assert "Already known" in again and acme_id in again  # the first tenant's own repeat still merges
    assert (await env.service.stats(ACME)).total == 1
    assert (await env.service.stats(GLOBEX)).total == 2


async def test_a_fact_told_to_the_project_is_stored_even_when_the_conversation_has_the_same_note(env: Env) -> None:
    note_id = stored_id(render.remember_text(await env.service.remember(THREAD, FACT, scope="conversation")))
    told = render.remember_text(await env.service.remember(THREAD, FACT, scope="project"))
    assert "Stored as" in told and "Already known" not in told
    project_id = stored_id(told)
    seen = [m.content for m in (await env.service.list(OTHER_THREAD)).memories]
    assert seen == [FACT]
    assert {m.id for m in (await env.service.list(THREAD)).memories} == {note_id, project_id}


async def test_a_project_memory_still_makes_a_conversation_note_or_a_project_repeat_already_known(env: Env) -> None:
    project_id = stored_id(render.remember_text(await env.service.remember(ACME, FACT)))
    for caller, scope in ((THREAD, "conversation"), (THREAD, "project"), (OTHER_THREAD, "project")):
        again = render.remember_text(await env.service.remember(caller, FACT, scope=scope))
        assert "Already known" in again and project_id in again, (caller, scope)
    assert (await env.service.stats(THREAD)).total == 1
