"""Issue 34 at every edge: with the real local model, an answer carries its probability and band,
a question nothing stored answers is told so in the same words by the tool text, the structured
output, the CLI and the web view, and the prompt hook's rule injects a related prompt only."""

from __future__ import annotations

import pytest

from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.render import recall_text
from mcp_memory.server.protocol.structured import recall_data
from tests.conftest import make_env

ACME = Caller("acme")
FACTS = (
    "We chose PostgreSQL over MySQL for the orders service because refunds need transactions across several rows.",
    "The weekly release goes out on Thursdays at 14:00 CET, once the release checklist has been signed off.",
    "Production logs are in Grafana Loki; filter with the label app=checkout to see the checkout service.",
    "Money amounts are stored as integer cents, never as floating-point numbers.",
    "Feature flags are managed in LaunchDarkly; we stopped using environment variables for flags in March.",
    "Secrets never go into the repository; services read them from Vault when they start.",
)


@pytest.fixture
async def team(clock, real_model):
    env = make_env(clock, floor=0.2, embedder=real_model)
    for fact in FACTS:
        await env.service.remember(ACME, fact)
    return env


async def test_a_question_a_memory_answers_carries_its_probability_and_a_band(team) -> None:
    result = await team.service.recall(ACME, "Why did we pick PostgreSQL rather than MySQL for orders?")
    assert result.results[0].memory.content == FACTS[0]
    assert result.probability is not None and result.results[0].probability is not None
    assert result.confidence == team.service.judge.bands.label(result.probability)
    data = recall_data(result)
    assert data["probability"] == round(result.probability, 4) and data["answered"] is True
    assert data["results"][0]["probability"] == round(result.results[0].probability, 4)
    assert "likely to answer" in recall_text(result)


async def test_nothing_stored_answers_a_question_nothing_is_near_and_every_edge_says_so(team) -> None:
    result = await team.service.recall(ACME, "What's a good recipe for carbonara?")
    assert result.unanswered and result.results == [] and result.confidence == "none"
    text = recall_text(result)
    assert text.startswith('[MEMORY] Nothing stored answers "What\'s a good recipe for carbonara?".')
    assert "NOTHING STORED ANSWERS THIS: 6 memories were found near the question, but none of them answers it" in text
    assert "Do not present a guess as a remembered fact" in text
    data = recall_data(result)
    assert data["answered"] is False and data["results"] == [] and data["confidence"] == "none"
    assert not result.worth_injecting()


async def test_the_prompt_rule_injects_a_related_prompt_and_not_an_unrelated_one(team) -> None:
    related = await team.service.recall(ACME, "Why are we on Postgres rather than MySQL?", mode="precision")
    unrelated = await team.service.recall(ACME, "Make this loop a list comprehension", mode="precision")
    assert related.worth_injecting() and related.results[0].memory.content == FACTS[0]
    assert not unrelated.worth_injecting()


async def test_the_cli_says_nothing_stored_answers_in_the_same_words(team, capsys) -> None:
    from mcp_memory.cli.render import print_recall

    print_recall(await team.service.recall(ACME, "What's a good recipe for carbonara?"), as_json=False)
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith(
        "NOTHING STORED ANSWERS THIS: 6 memories were found near the question, but none of them answers it"
    )


async def test_the_web_search_page_says_nothing_stored_answers_and_why(team) -> None:
    from mcp_memory.web.pages.search import judged

    result = await team.service.recall(ACME, "What's a good recipe for carbonara?")
    why = judged(result, team.service)
    assert why is not None and why.title == "Why nothing answers"
    assert why.hint.startswith("The closest memory is ") and "nothing stored answers" in why.hint


RELATED_NOT_HIGH = "how should I store prices"  # FACTS[3]: a MEDIUM answer, likely to answer
UNRELATED = "Make this loop a list comprehension"


async def _prompt(env: dict[str, str], prompt: str) -> str | None:
    from tests.hooks.support import payload, run_hook, user_prompt

    run = await run_hook(["UserPromptSubmit"], payload(user_prompt(prompt)), env)
    assert run.code == 0
    return run.context


async def test_the_prompt_hook_injects_a_likely_answer_by_default_and_only_high_when_told(team, tmp_path) -> None:
    from tests.hooks.support import environ, serving

    result = await team.service.recall(ACME, RELATED_NOT_HIGH, mode="precision")
    assert result.confidence != "high" and result.worth_injecting(), "the fixture should be likely, not HIGH"
    variables = environ(tmp_path, MEMORY_TENANT="acme")
    server = await serving(team.service, variables)
    try:
        context = await _prompt(variables, RELATED_NOT_HIGH)
        assert context is not None and f"   {FACTS[3]}" in context.splitlines()
        assert context.splitlines()[1].startswith("MEDIUM CONFIDENCE:")
        assert await _prompt({**variables, "MEMORY_HOOK_MIN_CONFIDENCE": "high"}, RELATED_NOT_HIGH) is None
        assert await _prompt(variables, UNRELATED) is None
    finally:
        await server.close()


async def test_the_prompt_hook_answering_itself_injects_facts_written_one_after_another_as_high(tmp_path) -> None:
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from tests.hooks.support import environ

    variables = environ(tmp_path, MEMORY_TENANT="acme", EMBEDDING_PROVIDER="local", MEMORY_HOOK_TIMEOUT_MS="10000")
    service = await open_service(Settings.from_env(variables))
    try:
        for fact in FACTS:
            await service.remember(ACME, fact)
    finally:
        await service.close()
    # the facts were written milliseconds apart, as a first session writes them: the answer is as
    # HIGH as when they are stored at one instant, so even the `high` setting injects it
    prompt = "Why are we on Postgres rather than MySQL?"
    context = await _prompt({**variables, "MEMORY_HOOK_MIN_CONFIDENCE": "high"}, prompt)
    assert context is not None and f"   {FACTS[0]}" in context.splitlines()
    assert context.splitlines()[1].startswith("HIGH CONFIDENCE:")
    assert await _prompt(variables, UNRELATED) is None


QUESTIONS = (
    "Why did we pick PostgreSQL rather than MySQL for orders?",
    "Why are we on Postgres rather than MySQL?",
    "how should I store prices",
    "When does the weekly release go out?",
    "Where do I find the checkout service's logs?",
    "How are feature flags managed?",
    "What's a good recipe for carbonara?",
)


async def _answers(clock, real_model, step_ms: float) -> list[tuple[str, str, float]]:
    env = make_env(clock, floor=0.2, embedder=real_model)
    for fact in FACTS:
        await env.service.remember(ACME, fact)
        clock.advance(step_ms)
    out = []
    for question in QUESTIONS:
        result = await env.service.recall(ACME, question)
        top = result.results[0].memory.content if result.results else ""
        out.append((top, result.confidence, result.probability or 0.0))
    return out


async def test_facts_written_a_second_or_a_day_apart_get_the_same_top_band_and_probability_as_at_one_instant(
    real_model,
) -> None:
    from tests.conftest import Clock

    at_once = await _answers(Clock(), real_model, 0.0)
    assert at_once[0][:2] == (FACTS[0], "high") and at_once[2][:2] == (FACTS[3], "medium")
    assert at_once[-1][:2] == ("", "none")
    for step_ms in (1000.0, 86_400_000.0):  # a first session's burst; a fact a day
        apart = await _answers(Clock(), real_model, step_ms)
        assert [(top, band) for top, band, _ in apart] == [(top, band) for top, band, _ in at_once], step_ms
        assert [p for *_, p in apart] == pytest.approx([p for *_, p in at_once], abs=0.005), step_ms


@pytest.mark.parametrize("provider", ["local", "local-multilingual"])
async def test_no_question_the_built_in_set_leaves_unanswered_is_labelled_high(provider) -> None:
    from bench.harness.service import in_memory_service
    from mcp_memory.config import Settings
    from mcp_memory.core.calibration.calibrate import builtin_cases
    from mcp_memory.embedders import PROVIDERS, open_embedder

    embedder = open_embedder(Settings.from_env({"EMBEDDING_PROVIDER": provider}).embedding)
    floor, high = PROVIDERS[provider].calibrated or (0.1, None)
    service = in_memory_service(embedder, floor=floor, high=high)
    cases = builtin_cases()
    try:
        for fact in cases.facts:
            await service.remember(ACME, fact.text or "")
        labels = {q: (await service.recall(ACME, q)).confidence for q in cases.absent}
    finally:
        await embedder.close()
    assert len(labels) == 36 and service.judge is not None
    assert [q for q, label in labels.items() if label == "high"] == []


GUIDE_RULE = "문서/배포_가이드.md 는 운영팀이 검토한 문서라서 수정하면 #ops-review 채널에 꼭 알려야 한다."


async def test_a_read_of_the_readme_is_not_given_a_rule_about_another_markdown_file(team, tmp_path) -> None:
    """A file's path is no question: a read of README.md gets no recall-only memory at any
    MEMORY_HOOK_TOOL_MIN_CONFIDENCE (docs/hooks.md, "A path alone is no question"), though the
    prompts' threshold would pass it; the file the rule is tagged for still gets it."""
    from tests.hooks.support import environ, payload, pre_tool_use, run_hook, serving

    await team.service.remember(ACME, GUIDE_RULE, tags=["path:문서/배포_가이드.md"])
    noise = await team.service.recall(ACME, "README.md", mode="precision")
    assert noise.results[0].memory.content == GUIDE_RULE and noise.confidence != "high"
    assert noise.worth_injecting(), "the fixture should pass the prompts' threshold: '.md' is its only match"
    variables = environ(tmp_path, MEMORY_TENANT="acme", MEMORY_HOOK_STOP="off")
    server = await serving(team.service, variables)

    async def read(path: str, **extra: str) -> str | None:
        event = payload(
            pre_tool_use("Read", {"file_path": f"/Users/ada/my-project/{path}"}, session_id=path + str(extra))
        )
        run = await run_hook(["PreToolUse"], event, {**variables, **extra})
        assert run.code == 0
        return run.context

    try:
        assert await read("README.md") is None
        assert await read("README.md", MEMORY_HOOK_TOOL_MIN_CONFIDENCE="likely") is None
        declared = await read("문서/배포_가이드.md")
        assert declared is not None and f"   {GUIDE_RULE}" in declared.splitlines()
    finally:
        await server.close()
