"""Recall by keyword on every backend: identifiers, Korean nouns, FTS syntax as data, tenant and
visibility filters on keyword candidates, and forget.

The embedder here gives every distinct text an unrelated direction (cosine about 0 between any
two texts), so the dense signal cannot find anything: whatever recall returns came through the
keyword index (S3: the keyword scoring within its pool of vector candidates, which at these sizes
holds every memory). Each test checks that control too: dense retrieval alone finds nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from mcp_memory.core import keywords
from mcp_memory.core.model import Caller
from mcp_memory.embedders.base import Embedder, check_vectors
from mcp_memory.server.protocol.render import text as shown
from tests.conftest import SERVICE_BACKENDS, Env, open_env

ACME = Caller("acme")
GLOBEX = Caller("globex")
THREAD = Caller("acme", "chat:thread-a")
OTHER_THREAD = Caller("acme", "chat:thread-b")

FACTS = {
    "refused": "The ledger worker logs ECONNREFUSED whenever the billing database restarts",
    "code": "Checkout fails with error E1234 when the coupon has expired",
    "python": "The build image pins Python 3.12 for every service",
    "release": "Version v0.8.2 shipped the retry fix for webhooks",
    "branch": "The checkout_v2 flow replaces the legacy cart page",
    "flag": "Only push with --force to personal branches, never to main",
    "pg": "Allow the app subnet in pg_hba.conf before the migration",
    "host": "The internal API listens on api.internal:8443 behind the mesh",
    "korean": "배포 서버가 재시작되면 캐시를 비운다",
}
FILLER = [f"Weekly note {i} about lunch orders, desk moves and parking permits" for i in range(12)]

#: (query, the fact it must find first): each identifier whole and by a part.
IDENTIFIER_QUERIES = [
    ("ECONNREFUSED", "refused"),
    ("econnrefused again?", "refused"),
    ("E1234", "code"),
    ("what does 1234 mean", "code"),
    ("3.12", "python"),
    ("v0.8.2", "release"),
    ("checkout_v2", "branch"),
    ("--force", "flag"),
    ("pg_hba.conf", "pg"),
    ("hba", "pg"),
    ("api.internal:8443", "host"),
    ("port 8443", "host"),
]
KOREAN_QUERIES = ["서버", "서버가", "서버는", "서버를", "서버를 재시작"]


class UnrelatedEmbedder(Embedder):
    """Every distinct text its own pseudo-random unit vector: no two texts are similar."""

    provider, model, dim = "fake", "unrelated", 512

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            vectors.append((v / np.linalg.norm(v)).astype(np.float32))
        return check_vectors(vectors, self.model, self.dim, len(texts))

    async def close(self) -> None:
        return None


@pytest.fixture(params=SERVICE_BACKENDS)
async def env(request: pytest.FixtureRequest, clock):
    env = await open_env(request.param, clock, request, floor=0.3, embedder=UnrelatedEmbedder())
    try:
        yield env
    finally:
        await env.service.close()


async def store(env: Env, facts: dict[str, str] = FACTS, caller: Caller = ACME, **kw) -> dict[str, str]:
    ids = {}
    for name, text in facts.items():
        ids[name] = (await env.service.remember(caller, text, **kw)).memory.id
    for text in FILLER:
        await env.service.remember(caller, text)
    return ids


async def top_ids(env: Env, query: str, caller: Caller = ACME, retrieval: str = "hybrid") -> list[str]:
    env.service.retrieval = retrieval  # type: ignore[assignment]
    try:
        return [r.memory.id for r in (await env.service.recall(caller, query)).results]
    finally:
        env.service.retrieval = "hybrid"


async def test_identifiers_are_found_by_keyword_whole_and_by_their_parts(env: Env) -> None:
    ids = await store(env)
    for query, name in IDENTIFIER_QUERIES:
        assert await top_ids(env, query, retrieval="dense") == [], query  # the embedding cannot find it
        found = await top_ids(env, query)
        assert found[:1] == [ids[name]], (query, found)
        assert (await top_ids(env, query, retrieval="keyword"))[:1] == [ids[name]], query


async def test_a_korean_noun_is_found_whatever_particle_is_attached(env: Env) -> None:
    ids = await store(env)
    for query in KOREAN_QUERIES:
        assert await top_ids(env, query, retrieval="dense") == [], query
        assert (await top_ids(env, query))[:1] == [ids["korean"]], query


async def test_recall_text_shows_the_keyword_match(env: Env) -> None:
    await store(env)
    text = shown(await env.service.recall(ACME, "ECONNREFUSED"))
    assert text.startswith('[MEMORY] 1 memory matched "ECONNREFUSED" (mode: balanced).')
    assert FACTS["refused"] in text
    assert "Weekly note" not in text


async def test_keyword_hits_of_another_tenant_never_appear_nor_count_as_gated(env: Env) -> None:
    await store(env, {"theirs": "Globex rotates the HSM key KX-9931 every quarter"}, caller=GLOBEX)
    await env.service.remember(ACME, "Acme keeps its office plants on the third floor")
    result = await env.service.recall(ACME, "KX-9931 HSM key")
    assert result.results == [] and result.gated == 1  # Acme's own memory, below the floor: the only candidate
    theirs = await env.service.recall(GLOBEX, "KX-9931 HSM key")
    assert [r.memory.content for r in theirs.results][:1] == ["Globex rotates the HSM key KX-9931 every quarter"]


async def test_keyword_hits_in_another_conversation_never_appear_nor_count_as_gated(env: Env) -> None:
    note = "Thread A decided the canary flag is CANARY_77"
    stored = await env.service.remember(THREAD, note, scope="conversation")
    await env.service.remember(ACME, "Acme keeps its office plants on the third floor")
    for caller in (OTHER_THREAD, ACME):
        result = await env.service.recall(caller, "CANARY_77")
        assert result.results == [] and result.gated == 1, caller  # only the visible memory, below the floor
    assert (await top_ids(env, "CANARY_77", caller=THREAD))[:1] == [stored.memory.id]


async def test_forget_removes_a_memory_from_the_keyword_index(env: Env) -> None:
    ids = await store(env)
    assert (await top_ids(env, "ECONNREFUSED", retrieval="keyword"))[:1] == [ids["refused"]]
    assert (await env.service.forget(ACME, ids["refused"])).deleted
    for retrieval in ("keyword", "hybrid"):
        assert ids["refused"] not in await top_ids(env, "ECONNREFUSED", retrieval=retrieval)
    env.service.retrieval = "keyword"
    assert not (await env.service.recall(ACME, "ECONNREFUSED")).found_any


SYNTAX = {
    "quote": 'The banner reads "deploy freeze" until Friday',
    "star": "Glob src/*.py picks every module; use ** for nested folders",
    "colon": "Set keywords: OFF in the legacy importer",
    "near": "NEAR(alpha beta) is a proximity query in the search DSL",
    "minus": "Run the linter with -W error -x to stop at the first warning",
    "parens": "The formula (a + b) * (c - d) rounds half up",
    "boolean": "Cats AND dogs OR birds NOT fish was the title of the talk",
}


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ('"deploy freeze"', "quote"),
        ("src/*.py", "star"),
        ("keywords: OFF", "colon"),
        ("NEAR(alpha beta)", "near"),
        ("-W error -x", "minus"),
        ("(a + b) * (c - d)", "parens"),
        ("Cats AND dogs OR birds NOT fish", "boolean"),
        ('" OR * AND NEAR( -', None),
        ('"unbalanced', None),
    ],
)
async def test_search_syntax_in_content_and_query_is_data(env: Env, query: str, name: str | None) -> None:
    ids = await store(env, SYNTAX)
    for retrieval in ("hybrid", "keyword"):
        found = await top_ids(env, query, retrieval=retrieval)  # never an error
        if name is not None:
            assert found[:1] == [ids[name]], (query, retrieval, found)


async def test_an_english_word_is_found_by_its_stem(env: Env) -> None:
    """docs/how_recall_works.md: "English words also by their stem (`servers` meets `server`)"."""
    ids = await store(env, {"servers": "The payment servers are patched every second Tuesday"})
    for query in ("which server is patched", "patching the payment server", "SERVERS"):
        assert await top_ids(env, query, retrieval="dense") == [], query
        assert (await top_ids(env, query))[:1] == [ids["servers"]], query


async def test_a_long_query_is_tokenised_without_holding_up_other_calls(env: Env, monkeypatch) -> None:
    """A query of tens of kilobytes takes a while to split and stem; the event loop keeps answering."""
    ids = await store(env, {"servers": "The payment servers are patched every second Tuesday"})
    query = "which payment server is patched " + "lorem " * 5_000  # 30,032 bytes
    real = keywords.query_terms
    tokenising, answered = threading.Event(), threading.Event()

    def slow_terms(text: str) -> list[str]:
        if len(text) > 10_000:
            tokenising.set()
            assert answered.wait(10), "no other call was answered while the query was tokenised"
        return real(text)

    monkeypatch.setattr(keywords, "query_terms", slow_terms)

    async def another_call() -> int:
        assert await asyncio.to_thread(tokenising.wait, 10)
        total = (await env.service.stats(ACME)).total
        answered.set()
        return total

    recalled, total = await asyncio.gather(env.service.recall(ACME, query), another_call())
    assert total == 1 + len(FILLER)
    assert [r.memory.id for r in recalled.results][:1] == [ids["servers"]]


SCRIPTS = {
    "cyrillic": ("Сервер биллинга перезапускается каждую ночь", "перезапускается"),
    "greek": ("Ο διακομιστής χρεώσεων επανεκκινείται κάθε βράδυ", "διακομιστής"),
    "arabic": ("خادم الفواتير يعيد التشغيل كل ليلة", "الفواتير"),
    "hindi": ("बिलिंग सर्वर हर रात पुनः आरंभ होता है", "सर्वर"),
    "accented": ("Le résumé de la migration est dans le wiki", "RÉSUMÉ"),
}


async def test_a_word_in_any_spaced_script_is_found_by_keyword(env: Env) -> None:
    """docs/embedding_models.md: keyword matching "reads every language as it is written: words in any script"."""
    ids = await store(env, {name: fact for name, (fact, _) in SCRIPTS.items()})
    for name, (_, word) in SCRIPTS.items():
        assert await top_ids(env, word, retrieval="dense") == [], name
        assert (await top_ids(env, word))[:1] == [ids[name]], name


async def test_a_script_written_without_spaces_is_read_in_runs(env: Env) -> None:
    """docs/embedding_models.md (Languages): Thai and the like are read in runs between spaces and punctuation."""
    ids = await store(env, {"spaced": "เซิร์ฟเวอร์ รีสตาร์ท ทุกคืน", "run": "ฐานข้อมูลสำรองทุกวันอาทิตย์"})
    assert (await top_ids(env, "รีสตาร์ท"))[:1] == [ids["spaced"]]
    assert ids["run"] not in await top_ids(env, "สำรอง")  # a term inside a longer run: not by keyword


class MisreadingEnglishEmbedder(UnrelatedEmbedder):
    """An English-only model as it treats Hangul: every Korean text reads alike (unknown words),
    here all as one direction, except the fact the test asks for, which looks unrelated: the
    cosine is as wrong as noise can be. It declares that it reads Latin letters only."""

    model = "misreading-english"
    scripts = frozenset({"Latin"})

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = await super().embed(texts)
        alike = np.zeros(self.dim, dtype=np.float32)
        alike[0] = 1.0
        for i, text in enumerate(texts):
            if any("\uac00" <= ch <= "\ud7a3" for ch in text) and text != FACTS["korean"]:
                rows[i] = alike
        return rows


class Undeclared(Embedder):
    """The same model without its declaration: recall must then trust its cosine."""

    def __init__(self, inner: MisreadingEnglishEmbedder) -> None:
        self.inner = inner
        self.provider, self.model, self.dim = inner.provider, inner.model, inner.dim

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self.inner.embed(texts)

    async def close(self) -> None:
        return None


KOREAN_DISTRACTORS = {"lunch": "점심 메뉴는 매주 금요일에 정한다", "desk": "사무실 자리 배치는 분기마다 바꾼다"}


@pytest.mark.parametrize("backend", SERVICE_BACKENDS)
async def test_a_korean_query_with_particles_finds_its_fact_when_the_model_cannot_read_korean(
    backend: str, clock, request: pytest.FixtureRequest
) -> None:
    env = await open_env(backend, clock, request, floor=0.3, embedder=MisreadingEnglishEmbedder())
    try:
        ids = await store(env, {**FACTS, **KOREAN_DISTRACTORS})
        for query in KOREAN_QUERIES:
            assert (await top_ids(env, query))[:1] == [ids["korean"]], query
        # An English question is still read by the model: the cosine keeps its full weight.
        assert (await top_ids(env, "ECONNREFUSED"))[:1] == [ids["refused"]]
        # Control: trusting the cosine that misreads Hangul puts a distractor first.
        declared, env.service.embedder = env.service.embedder, Undeclared(env.service.embedder)
        assert (await top_ids(env, "서버를 재시작"))[:1] != [ids["korean"]]
        env.service.embedder = declared
    finally:
        await env.service.close()


def test_the_index_walk_stays_bounded_in_a_tenant_of_a_million():
    # 5 % of 100,000 is the most a walked term may be held by at any size: the rarest term of
    # a query in a million-memory tenant is not walked when 33,000 memories hold it.
    small = keywords.TermStats(100_000, {"five": 5000, "common": 5001})
    large = keywords.TermStats(1_000_000, {"rare": 40, "five": 5000, "held": 33_000})

    assert small.searchable(["common", "five"]) == ["five"]
    assert large.searchable(["held", "five"]) == ["five"]
    assert large.searchable(["held", "rare"]) == ["rare"]
    assert large.searchable(["held"]) == []
