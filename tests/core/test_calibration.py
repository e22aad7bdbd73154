"""Calibration: the rules for the suggested floor and HIGH threshold, the cases format,
the built-in set, and the measurement over the fake embedder and a real store."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from mcp_memory.core import recall
from mcp_memory.core.calibration import stats as cs
from mcp_memory.core.calibration.calibrate import builtin_cases, calibrate, parse_cases
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.model import Caller
from mcp_memory.embedders.fake import FakeEmbedder, fake_vector
from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore
from tests.conftest import make_env

# --------------------------------------------------------------------------- the floor rule


def test_separated_clusters_put_the_floor_midway_between_them() -> None:
    suggestion = cs.suggest_floor([0.5, 0.6, 0.7], [0.1, 0.2, 0.3])
    assert suggestion.floor == 0.4 and suggestion.separated
    assert (suggestion.drops, suggestion.admits) == (0, 0)
    assert suggestion.rule.startswith(
        "midpoint between the lowest correct answer (0.500) and the highest absent question below it (0.300)"
    )


def test_overlapping_clusters_keep_every_correct_answer_and_count_what_they_admit() -> None:
    suggestion = cs.suggest_floor([0.3, 0.6, 0.7], [0.1, 0.35, 0.5])
    assert suggestion.floor == 0.2 and not suggestion.separated
    assert (suggestion.drops, suggestion.admits) == (0, 2)
    assert "the clusters overlap" in suggestion.rule


def test_with_no_absent_question_below_the_lowest_correct_answer_the_floor_is_half_of_it() -> None:
    suggestion = cs.suggest_floor([0.3, 0.6], [0.4, 0.5])
    assert suggestion.floor == 0.15 and suggestion.admits == 2
    assert "and 0 (no absent question is below it)" in suggestion.rule


def test_zero_is_never_suggested_and_the_reason_is_given() -> None:
    suggestion = cs.suggest_floor([0.005, 0.3], [-0.2, 0.1])
    assert suggestion.floor == cs.MIN_FLOOR
    assert suggestion.clamped is not None and "HIGH CONFIDENCE" in suggestion.clamped
    assert suggestion.drops == 1  # said, not hidden: the 0.005 answer is below any usable floor


def test_fewest_errors_is_reported_for_an_overlap() -> None:
    threshold = cs.fewest_errors([0.3, 0.6, 0.7], [0.1, 0.35, 0.5])
    assert (threshold.floor, threshold.drops, threshold.admits) == (0.55, 1, 0)


def test_fewest_errors_breaks_ties_toward_keeping_correct_answers() -> None:
    threshold = cs.fewest_errors([0.4, 0.6], [0.5])
    assert threshold.drops == 0 and threshold.admits == 1 and threshold.floor <= 0.4


def test_rounding_never_moves_the_floor_across_a_measured_case() -> None:
    suggestion = cs.suggest_floor([0.2344, 0.5], [0.2311])
    assert suggestion.floor == 0.233
    assert (suggestion.drops, suggestion.admits) == (0, 0)


# --------------------------------------------------------------------------- the HIGH rule


def test_high_sits_midway_between_the_floor_and_the_lowest_right_answer_when_nothing_wrong_is_high() -> None:
    # each value: the highest mark at which recall's whole rule labels the case HIGH; 0: none does
    high = cs.suggest_high([0.5, 0.6, 0.7, 0.0], [0.0, 0.0], floor=0.3)
    assert high.high == 0.4 and (high.correct_high, high.absent_high) == (3, 0)
    assert high.rule.startswith("midpoint between the floor (0.300; no absent question or wrong answer")


def test_high_is_raised_above_the_highest_absent_question_or_wrong_answer_labelled_high() -> None:
    high = cs.suggest_high([0.3, 0.5, 0.6, 0.8], [0.0, 0.62], floor=0.2)
    assert high.high == 0.71 and (high.correct_high, high.absent_high) == (1, 0)
    assert "the highest absent question or wrong answer any mark labels HIGH (0.620)" in high.rule


def test_high_is_1_when_no_right_answer_can_be_labelled_high() -> None:
    high = cs.suggest_high([0.0, 0.0], [0.4], floor=0.2)
    assert high.high == 1.0 and (high.correct_high, high.absent_high) == (0, 0)
    assert high.rule.startswith("1: no correct answer is labelled HIGH at any mark")


def test_suggestions_always_satisfy_floor_high_and_one_on_random_clusters() -> None:
    rng = random.Random(7)
    for _ in range(300):
        correct = [rng.uniform(-0.2, 1.0) for _ in range(rng.randint(1, 12))]
        absent = [rng.uniform(-0.3, 0.9) for _ in range(rng.randint(1, 12))]
        floor = cs.suggest_floor(correct, absent)
        high = cs.suggest_high(correct, absent, floor.floor)
        assert cs.MIN_FLOOR <= floor.floor <= high.high <= 1
        if floor.clamped is None:
            assert floor.drops == 0
            if floor.separated:
                assert max(absent) < floor.floor <= min(correct)
        assert (floor.drops, floor.admits) == (cs.drops(correct, floor.floor), cs.admits(absent, floor.floor))


def test_histogram_counts_every_value_once_and_spans_the_marks() -> None:
    bins = cs.histogram([0.5, 0.55, 0.61], [0.12, 0.3], marks=(0.02,))
    assert bins[0].low == 0.0 and bins[-1].high == 0.65
    assert sum(b.correct for b in bins) == 3 and sum(b.absent for b in bins) == 2
    by_low = {b.low: b for b in bins}
    assert by_low[0.55].correct == 1  # a value on a boundary belongs to the bin above it


# --------------------------------------------------------------------------- the cases format


def test_cases_are_read_with_variants_and_comments() -> None:
    cases = parse_cases(
        '# a comment\n\n{"fact": "F", "questions": ["q1", "q2"], "reworded": "r", "typo": ["t1", "t2"]}\n'
        '{"absent": "a1"}\n{"absent": ["a2", "a3"]}\n',
        "cases.jsonl",
    )
    (fact,) = cases.facts
    assert (fact.line, fact.text, fact.questions, fact.reworded, fact.typos) == (
        3,
        "F",
        ("q1", "q2"),
        ("r",),
        ("t1", "t2"),
    )
    assert cases.absent == ("a1", "a2", "a3") and not cases.by_id


@pytest.mark.parametrize(
    ("text", "by_id", "message"),
    [
        ('{"fact": "F", "questions": ["q"]}\n{"absent": "a"\n', False, "cases.jsonl line 2: not valid JSON"),
        ('["F"]\n', False, "cases.jsonl line 1: each line must be a JSON object"),
        (
            '{"fact": "F", "questions": []}\n',
            False,
            "line 1: `questions` must be a non-empty list of non-empty strings",
        ),
        ('{"fact": "  ", "questions": ["q"]}\n', False, "line 1: `fact` must be a non-empty string"),
        ('{"fact": "F", "question": ["q"]}\n', False, "line 1: unknown key `question`"),
        (
            '{"memory": "01J", "questions": ["q"]}\n',
            False,
            "line 1: `memory` names a stored memory, which needs --tenant",
        ),
        ('{"fact": "F", "questions": ["q"]}\n', True, "line 1: with --tenant a case names a stored memory as `memory`"),
        ('{"absent": "a", "questions": ["q"]}\n', False, "line 1: an `absent` line carries nothing else"),
        ('{"absent": "a"}\n', False, "cases.jsonl has no facts"),
        ('{"fact": "F", "questions": ["q"]}\n', False, "cases.jsonl has no absent questions"),
        (
            '{"fact": "F", "questions": ["' + "x" * 32_001 + '"]}\n',
            False,
            "a `questions` text is 32001 bytes; the maximum is 32000",
        ),
    ],
)
def test_bad_cases_are_refused_naming_the_line_and_the_field(text: str, by_id: bool, message: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_cases(text, "cases.jsonl", by_id=by_id)
    assert message in str(refused.value)


def test_the_builtin_set_has_enough_facts_questions_variants_and_absent_questions() -> None:
    cases = builtin_cases()
    assert len(cases.facts) >= 30 and all(len(f.questions) >= 3 for f in cases.facts)
    assert len(cases.absent) >= 30
    assert sum(bool(f.reworded) for f in cases.facts) >= 10 and sum(bool(f.typos) for f in cases.facts) >= 10
    questions = [q for f in cases.facts for q in f.questions]
    assert len(set(questions)) == len(questions) and not set(questions) & set(cases.absent)
    for fact in cases.facts:
        assert all(r != fact.text for r in fact.reworded + fact.typos)


def test_the_builtin_set_is_the_size_the_readme_gives() -> None:
    # "36 facts ..., each with three differently phrased questions, 17 rewordings, 17 typos and
    # 36 absent questions" (docs/calibration.md)
    cases = builtin_cases()
    assert len(cases.facts) == 36 and {len(f.questions) for f in cases.facts} == {3}
    assert sum(len(f.reworded) for f in cases.facts) == 17 and sum(len(f.typos) for f in cases.facts) == 17
    assert len(cases.absent) == 36


def _many(texts: int) -> str:
    """A cases file of exactly `texts` texts: one fact with questions, and one absent question."""
    return "\n".join(
        [
            json.dumps({"fact": "Deploys go out on Thursdays", "questions": [f"q{i}" for i in range(texts - 2)]}),
            json.dumps({"absent": "Who approves vacation requests?"}),
        ]
    )


def test_one_calibration_run_takes_at_most_10000_texts_and_says_so_beyond() -> None:
    assert parse_cases(_many(10_000), "cases.jsonl").text_count == 10_000
    with pytest.raises(InvalidArgument) as refused:
        parse_cases(_many(10_001), "cases.jsonl")
    assert str(refused.value) == "cases.jsonl holds 10001 texts; one run embeds at most 10000"


# --------------------------------------------------------------------------- measuring

FACTS = [
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet",
    "kilo lima mike november oscar papa quebec romeo sierra tango",
]
QUESTIONS = [
    ["alpha bravo charlie delta echo foxtrot golf uniform", "alpha bravo charlie delta echo hotel india victor"],
    ["kilo lima mike november oscar papa whiskey", "kilo lima mike november quebec romeo sierra xray"],
]
ABSENT = ["yankee zulu amber", "basalt cobalt dune", "ember fjord granite"]


def _cases_text() -> str:
    import json

    lines = [json.dumps({"fact": f, "questions": q, "reworded": f + " zzz"}) for f, q in zip(FACTS, QUESTIONS)]
    return "\n".join(lines + [json.dumps({"absent": a}) for a in ABSENT])


def _cos(a: str, b: str) -> float:
    return float(np.dot(fake_vector(a), fake_vector(b)))


async def test_calibrate_measures_the_clusters_and_suggests_a_floor_between_them() -> None:
    seen: list[tuple[int, int]] = []
    report = await calibrate(
        FakeEmbedder(),
        parse_cases(_cases_text(), "cases"),
        floor=0.1,
        high=0.3,
        scratch=InMemoryVectorStore(),
        progress=lambda done, total: seen.append((done, total)),
    )
    correct = sorted(_cos(q, f) for f, qs in zip(FACTS, QUESTIONS) for q in qs)
    absent = sorted(max(_cos(a, f) for f in FACTS) for a in ABSENT)
    assert sorted(report.correct_cosines) == pytest.approx(correct, abs=1e-5)
    assert sorted(report.absent_cosines) == pytest.approx(absent, abs=1e-5)
    # the floor and HIGH read the fused relevance: these questions share their fact's words, so the
    # keyword evidence lifts every correct answer above its cosine; the absent ones share none
    assert all(p.relevance > p.cosine for p in report.correct)
    assert report.absent_relevance == pytest.approx(report.absent_cosines, abs=1e-6)
    assert max(report.absent_relevance) < report.floor.floor < min(report.correct_relevance)
    assert report.floor.separated and report.retrieval is recall.HYBRID
    assert report.floor.floor <= report.high.high <= 1
    assert report.answered_first == 4 and len(report.nearest_other) == 4 and len(report.reworded) == 2
    assert report.current() == {
        "dropsCorrect": 0,
        "admitsAbsent": cs.admits(absent, 0.1),
        # the questions share most of their words with their fact and lead the other one clearly
        "correctHigh": 4,
        "absentHigh": 0,
        "wrongHigh": 0,
    }
    assert seen[0] == (0, 11) and seen[-1] == (11, 11)
    assert any("the suggestion is rough" in w for w in report.warnings)


async def test_calibrating_on_a_tenant_reads_its_memories_and_writes_nothing(clock) -> None:
    env = make_env(clock, vectors=InMemoryVectorStore(), objects=InMemoryObjectStore())
    caller = Caller("acme")
    ids = [(await env.service.remember(caller, fact)).memory.id for fact in FACTS]
    writes = list(env.objects.writes)
    import json

    text = "\n".join(
        [json.dumps({"memory": i, "questions": q}) for i, q in zip(ids, QUESTIONS)]
        + [json.dumps({"absent": a}) for a in ABSENT]
    )
    report = await env.service.calibrate("acme", parse_cases(text, "cases", by_id=True))
    assert report.tenant == "acme" and report.answered_first == 4
    assert sorted(report.correct_cosines) == pytest.approx(
        sorted(_cos(q, f) for f, qs in zip(FACTS, QUESTIONS) for q in qs), abs=1e-5
    )
    assert env.vectors.size == 2 and env.objects.writes == writes
    assert await env.counters.flush() == 0  # no access was recorded: nothing to write


async def test_a_case_naming_a_memory_the_tenant_lacks_is_refused_by_line(clock) -> None:
    env = make_env(clock)
    text = '{"memory": "01J00000000000000000000000", "questions": ["q"]}\n{"absent": "a"}'
    with pytest.raises(InvalidArgument) as refused:
        await env.service.calibrate("acme", parse_cases(text, "cases.jsonl", by_id=True))
    assert str(refused.value) == 'cases.jsonl line 1: no memory with id "01J00000000000000000000000" in tenant "acme"'


async def test_under_dense_retrieval_the_floor_sits_between_the_cosine_clusters() -> None:
    report = await calibrate(
        FakeEmbedder(),
        parse_cases(_cases_text(), "cases"),
        floor=0.1,
        high=0.3,
        scratch=InMemoryVectorStore(),
        retrieval="dense",
    )
    correct = [_cos(q, f) for f, qs in zip(FACTS, QUESTIONS) for q in qs]
    assert report.correct_relevance == pytest.approx(report.correct_cosines, abs=1e-6)
    assert max(report.absent_cosines) < report.floor.floor < min(correct)


# Memories an agent finds by their identifiers: the questions share little but the identifier
# with their fact, so the embedding ranks them weakly and the keyword index finds them.
BY_IDENTIFIER = [
    ("Deploy host api.internal:8443 serves checkout_v2 behind the blue gateway", ["where does checkout_v2 run"]),
    ("Error E1234 from pg_hba.conf means the replica rejected our certificate", ["what is E1234 about"]),
    ("Release v0.8.2 pins tokenizer ECONNREFUSED retries to five attempts", ["what changed in v0.8.2"]),
    ("Nightly job reindex_orders_v3 rebuilds the search shards at 02:00 UTC", ["when does reindex_orders_v3 run"]),
]
NOT_STORED = ["who approves vacation requests", "where is the office coffee machine", "what is the wifi password"]


def _identifier_cases() -> str:
    import json

    lines = [json.dumps({"fact": f, "questions": q}) for f, q in BY_IDENTIFIER]
    return "\n".join(lines + [json.dumps({"absent": a}) for a in NOT_STORED])


async def test_the_suggestions_follow_the_keyword_evidence_of_a_store_found_by_identifiers() -> None:
    async def run(retrieval):
        cases = parse_cases(_identifier_cases(), "ids.jsonl")
        return await calibrate(
            FakeEmbedder(), cases, floor=0.1, high=0.3, scratch=InMemoryVectorStore(), retrieval=retrieval
        )

    dense, hybrid = await run("dense"), await run("hybrid")
    # the same cosines either way; the fused relevance adds each identifier's keyword evidence
    assert hybrid.correct_cosines == pytest.approx(dense.correct_cosines, abs=1e-6)
    assert min(hybrid.correct_relevance) > max(dense.correct_relevance)
    assert hybrid.floor.floor > dense.floor.floor and hybrid.high.high > dense.high.high
    assert max(hybrid.absent_relevance) < hybrid.floor.floor < min(hybrid.correct_relevance)


NEAR_MISS_CASES = [
    ("The production MySQL runs version 8.0 on db-main", ["which version does the production MySQL on db-main run"]),
    ("Rolling deploys drain in-flight streams before the pod exits", ["how do rolling deploys drain streams"]),
]


async def test_high_is_measured_against_the_whole_rule_so_a_near_miss_does_not_raise_it() -> None:
    import json

    lines = [json.dumps({"fact": f, "questions": q}) for f, q in NEAR_MISS_CASES]
    text = "\n".join(lines + [json.dumps({"absent": "when do we upgrade the production MySQL on db-main to 8.4"})])

    async def run(retrieval):
        cases = parse_cases(text, "near.jsonl")
        return await calibrate(
            FakeEmbedder(), cases, floor=0.1, high=0.3, scratch=InMemoryVectorStore(), retrieval=retrieval
        )

    dense, hybrid = await run("dense"), await run("hybrid")
    (near_dense,), (near_hybrid,) = dense.absent, hybrid.absent
    # by its cosine alone the near miss is as close as an answer, and the dense mark must clear it
    assert near_dense.reach == pytest.approx(near_dense.cosine) and dense.high.high > near_dense.cosine
    # fused, the missing "8.4" keeps it below HIGH at every mark: the mark need not clear it
    assert near_hybrid.reach == 0 and hybrid.labelled_high(hybrid.high.high)["absentHigh"] == 0
    assert hybrid.high.high < near_hybrid.relevance
    assert hybrid.labelled_high(hybrid.high.high)["correctHigh"] == 2


class LatinOnlyFakeEmbedder(FakeEmbedder):
    """The fake embedder declaring, like the local model, that it reads Latin script only."""

    scripts = frozenset({"Latin"})


KOREAN_CASES = [
    ("배포 서버가 재시작되면 캐시를 비운다", ["서버를 재시작하면 캐시는 어떻게 돼?"]),
    ("점심 메뉴는 매주 금요일에 정한다", ["점심 메뉴는 언제 정해?"]),
]


async def test_calibration_reads_the_relevance_recall_reads_for_a_question_the_model_cannot_read(clock) -> None:
    async def run(embedder):
        lines = [json.dumps({"fact": f, "questions": q}) for f, q in KOREAN_CASES]
        cases = parse_cases("\n".join([*lines, json.dumps({"absent": "주차 규정은 어디에 있어?"})]), "ko.jsonl")
        return await calibrate(embedder, cases, floor=0.1, high=0.3, scratch=InMemoryVectorStore())

    readable, unread = await run(FakeEmbedder()), await run(LatinOnlyFakeEmbedder())
    assert unread.correct_cosines == pytest.approx(readable.correct_cosines, abs=1e-6)
    # For a Korean question the Latin-only model's cosine is left out: what stands in is the
    # keyword score, as in recall (core/fusion.py), so each relevance differs from the cosine-led one.
    env = make_env(clock, floor=0.1, embedder=LatinOnlyFakeEmbedder())
    for fact, _ in KOREAN_CASES:
        await env.service.remember(Caller("acme"), fact)
    for pair in unread.correct:
        result = await env.service.recall(Caller("acme"), pair.question)
        top = result.results[0]
        assert top.memory.content == pair.memory
        assert pair.relevance == pytest.approx(top.relevance, abs=1e-6)
    assert [p.relevance for p in unread.correct] != pytest.approx([p.relevance for p in readable.correct])


async def test_calibrate_embeds_what_recall_embeds_so_a_full_width_question_measures_as_its_plain_twin() -> None:
    def cases(question: str) -> str:
        return "\n".join([json.dumps({"fact": FACTS[0], "questions": [question]}), json.dumps({"absent": ABSENT[0]})])

    plain = "alpha bravo charlie delta echo foxtrot golf uniform"
    wide = "".join(chr(ord(ch) + 0xFEE0) if "a" <= ch <= "z" else ch for ch in plain)  # ａｌｐｈａ …
    reports = [
        await calibrate(
            FakeEmbedder(), parse_cases(cases(q), "cases"), floor=0.1, high=0.3, scratch=InMemoryVectorStore()
        )
        for q in (plain, wide)
    ]
    assert reports[1].correct_cosines == pytest.approx(reports[0].correct_cosines, abs=1e-6)
    assert reports[1].correct_cosines[0] > 0.7  # without NFKC the wide letters share no word: about 0


async def test_calibrating_on_a_tenant_takes_recalls_top_by_composite_score_not_by_relevance(clock) -> None:
    env = make_env(clock)
    env.service.retrieval = "dense"
    caller = Caller("acme")
    old = (await env.service.remember(caller, "alpha bravo charlie delta echo foxtrot")).memory
    clock.advance(365 * 86_400_000)
    new = (await env.service.remember(caller, "alpha bravo charlie delta kilo lima")).memory
    question = "alpha bravo charlie delta echo foxtrot golf"
    assert _cos(question, old.content) > _cos(question, new.content)  # the old one is the more relevant
    recalled = await env.service.recall(caller, question)
    assert [r.memory.id for r in recalled.results] == [new.id, old.id]  # recall answers with the new one

    text = "\n".join([json.dumps({"memory": old.id, "questions": [question]}), json.dumps({"absent": ABSENT[0]})])
    report = await env.service.calibrate("acme", parse_cases(text, "cases", by_id=True))
    assert report.answered_first == 0  # calibrate predicts the same top: not the old memory
    assert report.correct[0].reach == 0.0 and report.wrong_reach == [pytest.approx(_cos(question, new.content))]


async def test_calibrating_on_a_tenant_puts_the_newer_of_two_near_memories_first_as_recall_does(clock) -> None:
    env = make_env(clock)
    caller = Caller("acme")
    old = (await env.service.remember(caller, "The CI pipeline uses Python 3.11 for every job")).memory
    clock.advance(6 * 3_600_000)
    new = (await env.service.remember(caller, "The CI pipeline uses Python 3.12 for every job")).memory
    clock.advance(3_600_000)
    question = "CI pipeline Python"
    recalled = await env.service.recall(caller, question)
    assert [r.memory.id for r in recalled.results] == [new.id, old.id] and recalled.confidence == "high"
    assert recalled.results[0].relevance < recalled.results[1].relevance  # by score alone the old one leads

    text = "\n".join([json.dumps({"memory": new.id, "questions": [question]}), json.dumps({"absent": ABSENT[0]})])
    report = await env.service.calibrate("acme", parse_cases(text, "cases", by_id=True))
    assert report.answered_first == 1  # calibrate predicts recall's answer: the newer one, first
    assert report.labelled_high(env.service.high)["correctHigh"] == 1 and report.wrong_reach == []
