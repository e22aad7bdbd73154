"""The dedup pair table through remember, on the in-memory store, with the real local model:
a correction is stored beside the fact it corrects (and named in the result), the same
fact typed again is not. Also: calibrate's "same fact with a typo" pairs that merged
before still merge. Asserted on the service's results; the hint's wording is
tests/server/test_remember_hint_text.py's."""

from __future__ import annotations

import re

import pytest

from mcp_memory.core.model import Caller
from mcp_memory.core.ranking import DEDUP_SIMILARITY
from mcp_memory.core.service import RememberResult
from tests.conftest import ROOT, Env, make_env
from tests.core.dedup_pairs import APART, MERGE, is_duplicate
from tests.core.test_dedup import builtin_cases
from tests.support.real_model import RememberedModel


@pytest.fixture
def env(clock, real_model: RememberedModel) -> Env:
    """The in-memory store: the rule is the service's; each backend's nearest-neighbour answer
    under it is the smoke suite's (tests/stores/test_smoke.py)."""
    return make_env(clock, embedder=real_model)


async def remember_pair(env: Env, tenant: str, first: str, then: str) -> tuple[RememberResult, RememberResult, int]:
    caller = Caller(tenant)
    first_result = await env.service.remember(caller, first)
    then_result = await env.service.remember(caller, then)
    count = (await env.service.stats(caller)).total
    return first_result, then_result, count


async def test_every_pair_that_says_something_different_is_stored_twice(env: Env, real_model) -> None:
    kept = 0
    for i, (first, then, _reason) in enumerate(APART):
        _, answer, count = await remember_pair(env, f"apart-{i}", first, then)
        assert answer.created and answer.memory.content == then and count == 2, (first, then)
        kept += 1
    assert kept == len(APART) >= 60


async def test_the_table_is_about_the_new_tests_not_the_cosine(real_model) -> None:
    """Most apart pairs are ones the old rule (cosine and word overlap alone) would merge;
    every merge pair is above the cosine threshold, so it merges by the rule, not by luck."""
    old_rule_merges = [(a, b) for a, b, _ in APART if is_duplicate(await real_model.cosine(a, b), b, a)]
    assert len(old_rule_merges) >= 40
    # docs/how_recall_works.md gives the table's size: it must be this table's
    readme = " ".join((ROOT / "docs" / "how_recall_works.md").read_text(encoding="utf-8").split())
    said = re.search(
        r"runs a table of (\d+) pairs that must stay apart \((\d+) of which the cosine-and-overlap rule alone "
        r"merged\) and (\d+) that must merge.*?all (\d+) pass",
        readme,
    )
    assert said, "docs/how_recall_works.md no longer describes the dedup table"
    assert [int(n) for n in said.groups()] == [len(APART), len(old_rule_merges), len(MERGE), len(APART) + len(MERGE)]
    for first, then in MERGE:
        assert await real_model.cosine(first, then) >= DEDUP_SIMILARITY, (first, then)


async def test_a_correction_the_old_rule_would_merge_names_the_memory_it_may_correct(env: Env, real_model) -> None:
    hinted = 0
    for i, (first, then, _reason) in enumerate(APART):
        if not is_duplicate(await real_model.cosine(first, then), then, first):
            continue
        stored, answer, _ = await remember_pair(env, f"near-{i}", first, then)
        assert answer.created and answer.near is not None, (first, then)
        assert answer.near.id == stored.memory.id and answer.near.content == first
        hinted += 1
    assert hinted >= 40


async def test_every_pair_that_says_the_same_thing_is_stored_once(env: Env) -> None:
    merged = 0
    for i, (first, then) in enumerate(MERGE):
        stored, answer, count = await remember_pair(env, f"merge-{i}", first, then)
        assert not answer.created and answer.memory.id == stored.memory.id, (first, then)
        assert count == 1
        merged += 1
    assert merged == len(MERGE) >= 30


async def test_calibrates_typo_pairs_that_merged_under_the_old_rule_still_merge(env: Env, real_model) -> None:
    pairs = [
        (case["fact"], typo)
        for case in builtin_cases()
        if "fact" in case
        for typo in ([case["typo"]] if isinstance(case.get("typo"), str) else case.get("typo", []))
    ]
    merged_before = [(f, t) for f, t in pairs if is_duplicate(await real_model.cosine(f, t), t, f)]
    assert len(merged_before) >= 12
    for i, (fact, typo) in enumerate(merged_before):
        stored, answer, count = await remember_pair(env, f"typo-{i}", fact, typo)
        assert not answer.created and answer.memory.id == stored.memory.id and count == 1, typo


async def test_an_unrelated_fact_gets_no_hint(env: Env) -> None:
    caller = Caller("unrelated")
    await env.service.remember(caller, "Deploys are allowed on Fridays")
    answer = await env.service.remember(caller, "Invoices are archived to cold storage after ninety days")
    assert answer.created and answer.near is None


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("Deploys are allowed on Fridays", "Deploys are not allowed on Fridays"),
        ("Use Python 3.11 for the build", "Use Python 3.12 for the build"),
    ],
)
async def test_a_negated_fact_and_a_changed_version_are_stored_with_the_hint(env: Env, first, then) -> None:
    stored, answer, count = await remember_pair(env, "hint", first, then)
    assert answer.created and count == 2
    assert answer.near is not None and (answer.near.id, answer.near.content) == (stored.memory.id, first)
