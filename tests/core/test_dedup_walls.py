"""The duplicate check never crosses a wall (the rule is the service's, tested on
the in-memory store; the smoke suite repeats the tenant wall on every backend): another tenant's identical
fact is stored, not "already known", and another tenant's correction gets no hint naming
the first tenant's memory (its id or its text would tell one tenant what another wrote);
and a fact told to the whole project is not swallowed by a conversation's own note."""

from __future__ import annotations

from mcp_memory.core.model import Caller
from tests.conftest import Env

ACME = Caller("acme")
GLOBEX = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")
FACT = "The payments gateway listens on port 8443 behind the mesh"
CORRECTION = "The payments gateway listens on port 8444 behind the mesh"


async def test_another_tenants_identical_fact_is_stored_and_nothing_names_the_first_tenants_memory(
    env: Env,
) -> None:
    acme = (await env.service.remember(ACME, FACT)).memory
    same = await env.service.remember(GLOBEX, FACT)
    near = await env.service.remember(GLOBEX, CORRECTION)
    again = await env.service.remember(ACME, FACT)
    assert same.created and near.created
    for answer in (same, near):  # what an answer could name: its memory and the close one
        assert answer.memory.id != acme.id and (answer.near is None or answer.near.tenant == "globex")
    assert near.near == same.memory  # the correction's hint names globex's own fact, never acme's
    assert not again.created and again.memory.id == acme.id  # the first tenant's own repeat still merges
    assert (await env.service.stats(ACME)).total == 1
    assert (await env.service.stats(GLOBEX)).total == 2


async def test_a_fact_told_to_the_project_is_stored_even_when_the_conversation_has_the_same_note(env: Env) -> None:
    note = (await env.service.remember(THREAD, FACT, scope="conversation")).memory
    told = await env.service.remember(THREAD, FACT, scope="project")
    assert told.created and told.memory.scope == "project"
    seen = [m.content for m in (await env.service.list(OTHER_THREAD)).memories]
    assert seen == [FACT]
    assert {m.id for m in (await env.service.list(THREAD)).memories} == {note.id, told.memory.id}


async def test_a_project_memory_still_makes_a_conversation_note_or_a_project_repeat_already_known(env: Env) -> None:
    project = (await env.service.remember(ACME, FACT)).memory
    for caller, scope in ((THREAD, "conversation"), (THREAD, "project"), (OTHER_THREAD, "project")):
        again = await env.service.remember(caller, FACT, scope=scope)
        assert not again.created and again.memory.id == project.id, (caller, scope)
    assert (await env.service.stats(THREAD)).total == 1
