"""MemoryService behaviour (docs/recall.md, docs/remember.md, docs/tools.md, docs/memories.md), with the
fake embedder (docs/embedders.md, floor 0.3), on the in-memory reference stores, asserted on the
results the service returns: the policy is one piece of code above the ports, so it is tested once;
what a backend can break beneath it is the smoke suite's (tests/stores/test_smoke.py) and the
contract suite's; how the tools word these results, tests/server/test_service_answers.py."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory.core.model import Caller, Memory
from mcp_memory.core.object_keys import index_key
from mcp_memory.core.ports import Embedder
from mcp_memory.core.service import RecallResult, RememberResult
from tests.conftest import DAY, Env
from tests.conftest import make_env as new_env

ACME = Caller("acme")
OTHER_TENANT = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")

WORDS = [f"w{i:03d}x" for i in range(200)]  # distinct tokens: the fake embedder drops 1-char words
DEPLOY = "Rolling deploys drain in-flight streams before the pod exits"
DEPLOY_NEAR = "Rolling deploys drain connections before the node exits"
DEPLOY_QUERY = "Rolling deploys drain in-flight streams before the pod"


async def remember(env: Env, content: str, caller: Caller = ACME, **kw) -> RememberResult:
    return await env.service.remember(caller, content, **kw)


async def recall(env: Env, query: str, caller: Caller = ACME, **kw) -> RecallResult:
    return await env.service.recall(caller, query, **kw)


def ids(answer: RecallResult) -> list[str]:
    """The recalled memories' ids, in the order recall ranks them."""
    return [r.memory.id for r in answer.results]


async def put_empty(env: Env, keys: list[str]) -> None:
    """Write many empty objects (index keys whose records need not exist)."""
    for key in keys:
        await env.objects.put(key, "")


@pytest.fixture
async def make_env(clock):
    """`await make_env(floor=…, embedder=…)`: a service on the in-memory store."""

    async def make(*, floor: float = 0.3, embedder=None) -> Env:
        return new_env(clock, floor=floor, embedder=embedder)

    return make


# --------------------------------------------------------------------------- remember and dedup


async def test_an_already_known_repeat_leaves_the_stored_tags_and_category_as_they_were(env: Env) -> None:
    """docs/remember.md: on "Already known" the new request's tags and category are discarded."""
    first = await env.service.remember(ACME, DEPLOY, tags=["ops"])
    again = await env.service.remember(ACME, DEPLOY, tags=["security"], category="decision")
    assert first.created and not again.created and again.memory.id == first.memory.id
    [kept] = (await env.service.list(ACME)).memories
    assert kept.tags == ("ops",) and kept.category is None
    assert (await env.service.recall(ACME, DEPLOY, tags=["security"])).results == []
    assert [r.memory.id for r in (await env.service.recall(ACME, DEPLOY, tags=["ops"])).results] == [first.memory.id]


async def test_a_different_fact_is_stored(env: Env) -> None:
    await remember(env, DEPLOY)
    assert (await remember(env, "Payments service retries webhooks three times with jitter")).created
    assert await env.memory_count() == 2


class CollapsingEmbedder(Embedder):
    """Every text maps to the same vector: cosine 1.0 between anything."""

    provider, model, dim = "fake", "collapse", 4

    async def embed(self, texts):
        return np.tile(np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32), (len(texts), 1))

    async def close(self):
        return None


async def test_word_overlap_stops_a_collapsing_embedder_from_merging_distinct_facts(make_env) -> None:
    env = await make_env(embedder=CollapsingEmbedder())
    first = await remember(env, "The staging cluster runs in eu-west-1")
    distinct = await remember(env, "Invoices are archived to cold storage after ninety days")
    repeat = await remember(env, "The staging cluster runs in eu-west-1")
    assert distinct.created
    assert not repeat.created and repeat.memory.id == first.memory.id
    assert await env.memory_count() == 2


async def test_korean_repeats_merge_and_distinct_korean_facts_are_stored(make_env) -> None:
    env = await make_env(embedder=CollapsingEmbedder())
    await remember(env, "배포는 매주 화요일 오전에 진행한다")
    repeat = await remember(env, "배포는 매주 화요일 오전에 진행한다")
    distinct = await remember(env, "결제 서비스는 웹훅을 세 번 재시도한다")
    assert not repeat.created
    assert distinct.created
    assert await env.memory_count() == 2


async def test_dedup_scans_for_the_nearest_even_when_the_store_returns_worst_first(env: Env) -> None:
    await remember(env, "Payments service retries webhooks three times with jitter")
    await remember(env, "Invoices are archived to cold storage after ninety days")
    deploy = await remember(env, DEPLOY)
    repeat = await remember(env, DEPLOY)
    assert not repeat.created and repeat.memory.id == deploy.memory.id
    assert await env.memory_count() == 3


async def test_a_dedup_hit_counts_as_an_access_of_the_existing_memory(env: Env) -> None:
    memory_id = (await remember(env, DEPLOY)).memory.id
    await remember(env, DEPLOY)
    stats = await env.counters.load("acme")
    assert stats[memory_id].access_count == 1


async def test_the_index_key_is_written_after_the_vector(env: Env) -> None:
    memory_id = (await remember(env, DEPLOY, memory_type="reference")).memory.id
    [memory] = await env.vectors.get("acme", [memory_id])
    assert env.objects.writes == [index_key(memory)]
    assert index_key(memory).endswith(f"#{memory_id}#reference")


# --------------------------------------------------------------------------- conversation scope


async def test_a_conversation_note_does_not_stop_another_thread_storing_the_same_text(env: Env) -> None:
    a = await remember(env, "Prefer bullet points in summaries", THREAD, scope="conversation")
    b = await remember(env, "Prefer bullet points in summaries", OTHER_THREAD, scope="conversation")
    again = await remember(env, "Prefer bullet points in summaries", THREAD, scope="conversation")
    project = await remember(env, "Prefer bullet points in summaries", ACME)
    assert a.created and b.created and project.created
    assert not again.created and again.memory.id == a.memory.id
    assert await env.memory_count() == 3


async def test_a_scoped_remember_of_a_project_fact_points_at_the_visible_project_memory(env: Env) -> None:
    project = await remember(env, DEPLOY)
    scoped = await remember(env, DEPLOY, THREAD, scope="conversation")
    assert not scoped.created and scoped.memory.id == project.memory.id


async def test_recall_never_returns_another_conversations_notes(env: Env) -> None:
    note = await remember(env, DEPLOY, THREAD, scope="conversation")
    mine = await recall(env, DEPLOY_QUERY, THREAD)
    assert ids(mine) == [note.memory.id] and mine.results[0].memory.scope == "conversation"
    for other in (OTHER_THREAD, ACME):
        theirs = await recall(env, DEPLOY_QUERY, other)
        assert theirs.results == [] and not theirs.found_any


async def test_a_project_memory_written_from_a_thread_is_visible_everywhere(env: Env) -> None:
    stored = await remember(env, DEPLOY, THREAD)
    found = await recall(env, DEPLOY_QUERY, OTHER_THREAD)
    assert ids(found) == [stored.memory.id] and found.results[0].memory.scope == "project"


async def test_remember_with_conversation_scope_outside_a_conversation_is_refused(env: Env) -> None:
    import pytest

    from mcp_memory.core.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="needs a conversation"):
        await env.service.remember(ACME, DEPLOY, scope="conversation")
    assert await env.memory_count() == 0


async def test_list_and_stats_show_a_thread_its_own_notes_and_nobody_elses(env: Env) -> None:
    await remember(env, DEPLOY)
    await remember(env, "Payments service retries webhooks three times with jitter", THREAD, scope="conversation")
    await remember(env, "Invoices are archived to cold storage after ninety days", OTHER_THREAD, scope="conversation")
    assert (await env.service.stats(THREAD)).total == 2
    assert (await env.service.stats(OTHER_THREAD)).total == 2
    assert (await env.service.stats(ACME)).by_type == {"project": 1}
    listed = [m.content for m in (await env.service.list(THREAD)).memories]
    assert len(listed) == 2 and any("Payments" in c for c in listed) and not any("Invoices" in c for c in listed)


async def test_listing_for_one_thread_pages_past_another_threads_newer_notes(env: Env, clock) -> None:
    for i in range(10):
        await remember(env, f"thread b fact {WORDS[i]} about widgets", OTHER_THREAD, scope="conversation")
        clock.advance(1000)
    for i in range(25):
        await remember(env, f"thread a note {WORDS[i]} about gadgets", THREAD, scope="conversation")
        clock.advance(1000)
    listed = await env.service.list(OTHER_THREAD, limit=10)
    assert len(listed.memories) == 10
    assert all(m.conversation == OTHER_THREAD.conversation for m in listed.memories)


async def test_another_conversation_cannot_forget_a_scoped_note(env: Env) -> None:
    note_id = (await remember(env, DEPLOY, THREAD, scope="conversation")).memory.id
    assert not (await env.service.forget(OTHER_THREAD, note_id)).deleted
    assert await env.memory_count() == 1
    assert (await env.service.forget(THREAD, note_id)).deleted
    assert await env.memory_count() == 0


# --------------------------------------------------------------------------- recall


async def test_another_tenant_sees_nothing(env: Env) -> None:
    await remember(env, DEPLOY)
    answer = await recall(env, DEPLOY_QUERY, OTHER_TENANT)
    assert answer.results == [] and not answer.found_any


async def test_a_returned_memory_gets_one_access(env: Env) -> None:
    memory_id = (await remember(env, DEPLOY)).memory.id
    await recall(env, DEPLOY_QUERY)
    stats = await env.counters.load("acme")
    assert stats[memory_id].access_count == 1
    assert stats[memory_id].last_accessed_at == "2026-07-01T00:00:00.000Z"


async def test_gated_memories_are_not_counted_as_accessed(env: Env) -> None:
    memory_id = (await remember(env, DEPLOY)).memory.id
    answer = await recall(env, "quarterly budget spreadsheet owner")
    assert answer.results == [] and answer.gated == 1
    stats = await env.counters.load("acme")
    assert memory_id not in stats


async def test_exploratory_keeps_a_near_neighbour_that_precision_cuts(env: Env) -> None:
    deploy = await remember(env, DEPLOY)
    near = await remember(env, DEPLOY_NEAR)
    assert ids(await recall(env, DEPLOY, mode="precision")) == [deploy.memory.id]
    assert ids(await recall(env, DEPLOY, mode="exploratory")) == [deploy.memory.id, near.memory.id]


@pytest.mark.parametrize(("mode", "returned"), [("precision", 3), ("balanced", 5), ("exploratory", 10), (None, 5)])
async def test_without_a_limit_recall_returns_three_five_or_ten_by_mode(
    env: Env, mode: str | None, returned: int
) -> None:
    for word in WORDS[:12]:  # twelve memories, each as close to the query as the next
        assert (await remember(env, f"{DEPLOY} {word}")).created
    mode_argument = {"mode": mode} if mode else {}
    answer = await recall(env, DEPLOY, **mode_argument)
    assert len(answer.results) == returned and answer.limit == returned
    assert len((await recall(env, DEPLOY, limit=7, **mode_argument)).results) == 7


async def test_a_weak_single_best_match_is_still_returned_in_precision(env: Env) -> None:
    stored = await remember(env, DEPLOY)
    assert ids(await recall(env, "Rolling deploys drain", mode="precision")) == [stored.memory.id]


async def test_recency_and_use_rank_an_equally_similar_memory_higher(make_env, clock) -> None:
    env = await make_env()
    old = await remember(env, "cache invalidation uses the purge endpoint alpha")
    clock.advance(90 * DAY)
    new = await remember(env, "cache invalidation uses the purge endpoint beta")
    found = ids(await recall(env, "cache invalidation uses the purge endpoint", mode="exploratory"))
    assert found.index(new.memory.id) < found.index(old.memory.id)


async def test_confidence_is_medium_when_the_top_match_is_below_the_high_mark(make_env) -> None:
    env = await make_env(floor=0.3)
    env.service.retrieval = "dense"  # by the embedding alone, HIGH is the cosine mark
    env.service.high = 0.99
    await remember(env, DEPLOY)
    answer = await recall(env, DEPLOY_QUERY)
    assert answer.results and answer.confidence == "medium"


MYSQL = "The production MySQL runs version 8.0 on db-main"


async def test_confidence_is_high_when_the_top_result_holds_the_question_and_stands_out(env: Env) -> None:
    mysql = await remember(env, MYSQL)
    await remember(env, DEPLOY)
    answer = await recall(env, "which version does the production MySQL on db-main run")
    assert answer.confidence == "high" and ids(answer)[0] == mysql.memory.id


async def test_confidence_is_medium_when_the_question_names_what_no_memory_holds(env: Env) -> None:
    mysql = await remember(env, MYSQL)
    await remember(env, DEPLOY)
    answer = await recall(env, "when do we upgrade the production MySQL on db-main to 8.4")
    assert mysql.memory.id in ids(answer)  # the nearest memory is shown, but not as the answer
    assert answer.confidence == "medium"


# A whole conversation asked as one query (33 informative terms, most of them chit-chat): no
# memory can hold 70 % of its words, so only a clear lead in meaning can make it HIGH.
DIALOGUE = (
    "hey there, long week again: honestly tired, kids school pickup in the rain and traffic. anyway, remember "
    "our lighthouse trip with the cliffs, seagulls, picnic sandwiches, sunset photos, grandma and the ferry ride?"
)
LIGHTHOUSE = "Our lighthouse trip: cliffs, seagulls, picnic sandwiches, sunset photos, grandma and the ferry ride"
SCHOOL_RUN = "Kids school pickup in the rain and traffic, a long week, honestly tired; the lighthouse trip cliffs"


async def test_a_conversation_is_high_when_one_memory_leads_it_clearly_by_meaning(env: Env) -> None:
    lighthouse = await remember(env, LIGHTHOUSE)
    await remember(env, DEPLOY)
    answer = await recall(env, DIALOGUE)
    assert answer.confidence == "high" and lighthouse.memory.id in ids(answer)


async def test_a_conversation_is_medium_when_two_memories_are_about_as_near(env: Env) -> None:
    lighthouse = await remember(env, LIGHTHOUSE)
    school = await remember(env, SCHOOL_RUN)
    answer = await recall(env, DIALOGUE)
    assert {lighthouse.memory.id, school.memory.id} <= set(ids(answer))
    assert answer.confidence == "medium"


async def test_a_conversation_is_medium_when_its_subject_is_not_stored(env: Env) -> None:
    grandma = await remember(env, "Grandma keeps the ferry tickets in the kitchen drawer")
    await remember(env, DEPLOY)
    answer = await recall(env, DIALOGUE, mode="exploratory")
    assert grandma.memory.id in ids(answer)
    assert answer.confidence == "medium"


async def test_only_a_confident_top_result_counts_as_used(env: Env) -> None:
    mysql_id = (await remember(env, MYSQL)).memory.id
    deploy_id = (await remember(env, DEPLOY)).memory.id
    await recall(env, "when do we upgrade the production MySQL on db-main to 8.4", mode="exploratory")
    assert await env.counters.load("acme") == {}  # returned with MEDIUM confidence: not counted
    await recall(env, DEPLOY_QUERY, mode="exploratory")
    stats = await env.counters.load("acme")
    assert stats[deploy_id].access_count == 1 and mysql_id not in stats


# --------------------------------------------------------------------------- list


async def test_list_filters_by_type_and_pages_past_a_thousand_keys(env: Env, clock) -> None:
    pattern = Memory(
        id="01J00000000000000000000001",
        tenant="acme",
        content="make test-all",
        memory_type="pattern",
        created_at="2026-01-01T00:00:00.000Z",
    )
    await env.vectors.put(pattern, (await env.embedder.embed(["make test-all"]))[0])
    await env.objects.put(index_key(pattern), "")
    await put_empty(env, [f"index/acme/0{i:09d}#01J{i:023d}#project" for i in range(1005)])
    listed = await env.service.list(ACME, memory_type="pattern")
    assert listed.memories == [pattern] and listed.memory_type == "pattern"


# --------------------------------------------------------------------------- forget


async def test_another_tenant_cannot_forget(env: Env) -> None:
    memory_id = (await remember(env, DEPLOY)).memory.id
    assert not (await env.service.forget(OTHER_TENANT, memory_id)).deleted
    assert await env.memory_count() == 1


async def test_forget_succeeds_when_only_the_index_cleanup_fails(env: Env) -> None:
    memory_id = (await remember(env, DEPLOY)).memory.id

    async def broken_delete(keys):
        raise OSError("state bucket unavailable")

    env.objects.delete = broken_delete  # type: ignore[method-assign]
    assert (await env.service.forget(ACME, memory_id)).deleted
    assert await env.memory_count() == 0 and await env.object_count() == 1


# --------------------------------------------------------------------------- stats


# --------------------------------------------------------------------------- usage only breaks ties


async def test_a_much_recalled_memory_does_not_outrank_a_clearly_better_answer(env: Env) -> None:
    popular = (await remember(env, DEPLOY_NEAR)).memory.id
    best = (await remember(env, DEPLOY)).memory.id
    for _ in range(50):  # make the near one popular: it is the best answer to its own question
        env.counters.record("acme", popular, env.clock())
    found = ids(await recall(env, DEPLOY, mode="exploratory"))
    assert found.index(best) < found.index(popular)


# A generic line that many chats end on, and the answer to a question about the deploy. For
# DEPLOY_QUESTION the answer is only slightly more relevant (about 96 % of it is the generic line's).
GENERIC = "Cool, thanks, that looks great, the deploy went fine today"
DEPLOY_ANSWER = "The staging deploy went fine today after the cache purge"
THANKS = "thanks, that looks great, cool"
DEPLOY_QUESTION = "was the deploy fine today"


@pytest.mark.parametrize("mode", ["precision", "balanced", "exploratory"])
async def test_a_generic_memory_used_200_times_does_not_climb_over_a_slightly_more_relevant_answer(
    env: Env, mode: str
) -> None:
    generic = (await remember(env, GENERIC)).memory.id
    answer = (await remember(env, DEPLOY_ANSWER)).memory.id
    for _ in range(200):  # the generic line is the confident answer to the thank-you, every time
        assert (await recall(env, THANKS, mode=mode)).confidence == "high"
    assert (await env.counters.load("acme"))[generic].access_count == 200
    result = await env.service.recall(ACME, DEPLOY_QUESTION, mode=mode)
    assert [r.memory.id for r in result.results] == [answer, generic]
    assert result.results[1].relevance > 0.95 * result.results[0].relevance  # a near-tie, not a rout


async def test_usage_orders_memories_of_exactly_equal_relevance(env: Env) -> None:
    """Two memories with the same text (written apart, e.g. by an older release): the more used first."""
    first = (await remember(env, "cache purge endpoint documented in the runbook")).memory.id
    twin = Memory(
        id="01J00000000000000000000001",
        tenant="acme",
        content="cache purge endpoint documented in the runbook",
        created_at=(await env.vectors.get("acme", [first]))[0].created_at,
    )
    await env.vectors.put(twin, (await env.embedder.embed([twin.content]))[0])
    query = "cache purge endpoint documented"
    for _ in range(3):
        env.counters.record("acme", twin.id, env.clock())
    found = ids(await recall(env, query, mode="exploratory"))
    assert found.index(twin.id) < found.index(first)
    for _ in range(5):
        env.counters.record("acme", first, env.clock())
    found = ids(await recall(env, query, mode="exploratory"))
    assert found.index(first) < found.index(twin.id)
