"""The dedup rule itself (mcp_memory/core/dedup.py), without a model or a store: what keeps
two texts apart, what still merges, and calibrate's own typo pairs."""

from __future__ import annotations

import json

import pytest

from mcp_memory.core.dedup import DEDUP_SIMILARITY, MAX_TYPOS, compare, judge, same
from mcp_memory.core.supersede import NEAR_SIMILARITY
from tests.conftest import ROOT
from tests.core.dedup_pairs import APART, MERGE
from tests.core.dedup_taxonomy import difference


@pytest.mark.parametrize(("first", "then", "reason"), APART)
def test_texts_that_differ_in_what_they_say_are_kept_apart_and_the_difference_is_named(first, then, reason) -> None:
    assert difference(first, then) == reason
    assert difference(then, first) is not None  # either order
    assert not judge(0.999, then, first).same


@pytest.mark.parametrize(("first", "then"), MERGE)
def test_the_same_fact_typed_again_merges(first, then) -> None:
    comparison = compare(then, first)
    assert comparison.reason is None
    assert comparison.overlap >= 0.5
    assert judge(0.93, then, first).same


def test_the_cosine_and_the_word_overlap_stay_necessary() -> None:
    text = "Staging is restored from the Monday snapshot"
    assert judge(0.92, text, text).same
    assert not judge(0.9199, text, text).same
    assert not judge(0.9199, text, text).near
    assert not judge(0.99, "alpha beta gamma", "alpha beta delta epsilon zeta eta").same


def test_a_pair_kept_apart_only_by_a_difference_test_is_near() -> None:
    verdict = judge(0.97, "Deploys are not allowed on Fridays", "Deploys are allowed on Fridays")
    assert (verdict.same, verdict.near, verdict.reason) == (False, True, "negation")


def test_remember_reads_one_bit_and_it_is_the_verdicts_same() -> None:
    for similarity, new, existing in [
        (0.97, "Deploys are not allowed on Fridays", "Deploys are allowed on Fridays"),
        (0.93, "Rolling deploys drain inflight requests", "Rolling deploys drain in-flight requests"),
        (0.9199, "Staging is restored on Mondays", "Staging is restored on Mondays"),
    ]:
        assert same(similarity, new, existing) == judge(similarity, new, existing).same


def test_every_pair_the_rule_calls_near_is_within_remembers_near_cosine() -> None:
    """remember names a possible correction by the cosine alone: a pair the difference tests
    keep apart has passed DEDUP_SIMILARITY, which must not be below NEAR_SIMILARITY."""
    assert NEAR_SIMILARITY <= DEDUP_SIMILARITY
    assert not judge(NEAR_SIMILARITY - 0.01, "Deploys are not allowed", "Deploys are allowed").near


def test_more_typos_than_the_budget_keep_two_texts_apart() -> None:
    first = "Rotate the signing certificate before the quarterly security review meeting"
    slips = ["Rotaet", "signnig", "certifcate", "quartelry"]
    for n in range(len(slips) + 1):
        words = first.split()
        for slip in slips[:n]:
            i = next(k for k, w in enumerate(words) if w.lower()[:3] == slip.lower()[:3])
            words[i] = slip
        assert (difference(first, " ".join(words)) is None) == (n <= MAX_TYPOS), n


def test_a_typo_never_excuses_a_changed_digit_separator_or_short_part_of_an_identifier() -> None:
    base = "The token lives in vault path secret/payments_api under key stripe_v2"
    for changed in ("secret/payments_apis", "secret/payments-api", "secret/payment_api"):
        assert difference(base, base.replace("secret/payments_api", changed)) == "identifier"
    assert difference(base, base.replace("stripe_v2", "stripe_v3")) == "number"
    assert difference(base, base.replace("stripe_v2", "stripe_v2")) is None


def test_a_long_part_of_an_identifier_may_carry_one_typo() -> None:
    assert difference("Keys are kept in 1Password", "Keys are kept in 1Pasword") is None
    assert difference("Regenerate it when openapi.yaml changes", "Regenerate it when openapi.yml changes") is None


def test_a_word_and_its_negating_prefix_are_opposites_even_one_letter_apart() -> None:
    assert difference("Calls to the ledger are sync", "Calls to the ledger are async") == "opposite"
    assert difference("The endpoint is secure", "The endpoint is insecure") == "opposite"
    assert difference("이 기능은 활성화 상태다", "이 기능은 비활성화 상태다") == "opposite"


def test_negation_counts_wherever_it_stands_and_however_it_is_spelled() -> None:
    fact = "Do deploy on Fridays"
    for negated in (
        "Do not deploy on Fridays",
        "Don't deploy on Fridays",
        "Dont deploy on Fridays",
        "Never deploy on Fridays",
    ):
        assert difference(fact, negated) == "negation", negated
    assert difference("Don't deploy on Fridays", "Do not deploy on Fridays") is None
    assert difference("We cannot skip review", "We can not skip review") is None
    assert difference("We can't skip review", "We cannot skip review") is None
    assert difference("It won't page anyone", "It will not page anyone") is None
    assert difference("It won't page anyone", "It will page anyone") == "negation"


def test_korean_negation_forms_are_negations() -> None:
    fact = "이 작업은 운영 서버에서 실행한다"
    for negated in (
        "이 작업은 운영 서버에서 실행하지 않는다",
        "이 작업은 운영 서버에서 안 실행한다",
        "이 작업은 운영 서버에서 실행하지 못한다",
        "이 작업은 운영 서버에서 실행할 수 없다",
        "이 작업은 운영 서버에서 실행하지 마라",
    ):
        assert difference(fact, negated) == "negation", negated


def test_korean_words_that_merely_contain_an_negation_syllable_are_not_negations() -> None:
    assert difference("보안 점검은 안전 팀이 한다", "보안 점검은 안전 팀이 한다.") is None


def test_unicode_forms_case_quotes_and_spacing_do_not_matter() -> None:
    assert difference("Use the “main” branch", 'use the "MAIN" branch') is None
    assert difference("Ｕｓｅ ｐｏｒｔ ８０８０", "Use port 8080") is None
    assert difference("배포는 화요일 오전에 한다", "배포는 화요일오전에 한다") is None
    assert difference("Drain in-flight requests", "Drain inflight requests") is None


def builtin_cases() -> list[dict]:
    path = ROOT / "mcp_memory" / "data" / "calibration_builtin.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip() and not line.startswith("#")]


def test_no_two_facts_of_the_builtin_calibration_set_pass_the_difference_tests() -> None:
    facts = [c["fact"] for c in builtin_cases() if "fact" in c]
    same = [(a, b) for i, a in enumerate(facts) for b in facts[i + 1 :] if difference(a, b) is None]
    assert same == []


def test_a_text_with_no_word_is_the_same_only_as_itself() -> None:
    assert compare("!!!", " !!! ").overlap == 1.0 and compare("!!!", "!!!").reason is None
    assert compare("🎉", "🎉").overlap == 1.0
    assert compare("!!!", "???").overlap == 0.0
    assert compare("!!!", "Deploys drain connections first").overlap == 0.0
