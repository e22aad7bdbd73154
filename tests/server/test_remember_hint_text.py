"""What remember's answer reads as when the new memory is close to one it may correct, word for
word, with the real local model (docs/remember.md): the core result beneath the words is
tests/core/test_dedup_service.py's."""

from __future__ import annotations

import re

import pytest

from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.render import text as shown
from tests.conftest import Env, make_env
from tests.support.real_model import RememberedModel


@pytest.fixture
def env(clock, real_model: RememberedModel) -> Env:
    return make_env(clock, embedder=real_model)


def stored_id(text: str) -> str:
    match = re.search(r"Stored as ([0-9A-Z]{26})\.", text)
    assert match, text
    return match.group(1)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("Deploys are allowed on Fridays", "Deploys are not allowed on Fridays"),
        ("Use Python 3.11 for the build", "Use Python 3.12 for the build"),
    ],
)
async def test_a_correction_is_stored_and_the_answer_names_the_memory_it_may_correct(env: Env, first, then) -> None:
    caller = Caller("hint")
    first_id = stored_id(shown(await env.service.remember(caller, first)))
    answer = shown(await env.service.remember(caller, then))
    assert answer.startswith("[MEMORY] Stored as "), answer
    assert stored_id(answer) != first_id
    assert answer.endswith(
        f'CLOSE TO AN EXISTING MEMORY: [id:{first_id}] "{first}". Both are kept. If the new fact corrects it, '
        f'call remember again with replaces ["{first_id}"], or forget {first_id}.'
    ), answer


async def test_the_same_fact_typed_again_answers_already_known_with_the_id(env: Env) -> None:
    caller = Caller("same")
    first_id = stored_id(shown(await env.service.remember(caller, "Deploys are allowed on Fridays")))
    answer = shown(await env.service.remember(caller, "Deploys are allowed on Fridays."))
    assert "Already known" in answer and f"[id:{first_id}]" in answer, answer
    assert "CLOSE TO" not in answer


async def test_an_unrelated_fact_is_stored_without_a_hint(env: Env) -> None:
    caller = Caller("unrelated")
    await env.service.remember(caller, "Deploys are allowed on Fridays")
    answer = shown(await env.service.remember(caller, "Invoices are archived to cold storage after ninety days"))
    assert answer.startswith("[MEMORY] Stored as ") and "CLOSE TO" not in answer, answer
