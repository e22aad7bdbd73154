"""The duplicate check never crosses a tenant, on every backend: another tenant's identical
fact is stored, not "already known", and another tenant's correction gets no hint naming
the first tenant's memory (its id or its text would tell one tenant what another wrote)."""

from __future__ import annotations

import re

import pytest

from mcp_memory.core.model import Caller
from mcp_memory.server import render
from tests.conftest import SERVICE_BACKENDS, Env, open_env

ACME = Caller("acme")
GLOBEX = Caller("globex")
FACT = "The payments gateway listens on port 8443 behind the mesh"
CORRECTION = "The payments gateway listens on port 8444 behind the mesh"


@pytest.fixture(params=SERVICE_BACKENDS)
async def env(request: pytest.FixtureRequest, clock) -> Env:
    env = await open_env(request.param, clock, request)
    yield env
    await env.service.close()


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
