"""Every dev set as one list of memories and questions, asked through recall's own first stage:
what the relevance model (mcp_memory/core/judgment.py) is fitted on and measured with.

    from bench.quality import judgment_data as jd
    asked = await jd.ask_all("local")      # every question of every set, with its candidates

A set is memories (id, tenant, text, instant) and questions (tenant, text, gold ids; no gold: an
absent question, nothing stored answers it), each question in the fit or the test half of its set
(bench/data/halves.py). Memories are put straight into an in-memory store under their own ids at
their own instants (no `remember`: the dedup rule would merge a few near-identical turns, and ids
are what the gold names; the sets of facts without times of their own at one instant, or in a
burst with TIMING, `in_burst`); each question is then answered by the service's `recall` at limit 50
(what the quality figures read) and by recall's first stage (core/recall.py: the nearest memories
and the keyword hits, scored by relevance): the candidates the second stage reorders.

The sets (their READMEs say what each holds): the project set (facts per team; answerable and
absent questions), MADial-Bench (two users' memories and 160 dialogues) and the same dialogues
asked with their gold memories taken out (absent), the conversational set with its absent
questions, the update set (a newer and an older statement; the question's gold is the newer), the
long-chat set, the prompt set, and the built-in calibration set (a test set only: never fitted on).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.data import (
    absent_set_data,
    conversation_set_data,
    long_chat_set_data,
    project_set_data,
    prompt_set_data,
    update_set_data,
)
from bench.data import madial_data as md
from bench.data.halves import half

NOW_MS = 1_780_000_000_000.0  # the fixed instant of the sets stored at one moment (2026-05-28)
DAY_MS = 86_400_000
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "judgment"


#: How far apart a burst's facts are written (a user's first session, an import): closer than the
#: 10 minutes within which an earlier second stage read memories as turns of one conversation.
BURST_MS = 20_000


def in_burst(tenant: str) -> bool:
    """Whether a tenant of the sets of facts (project, MADial, prompts) has its facts written in a
    burst rather than at one instant. TIMING=instant (the default: how the shipped model was fitted
    and measured), TIMING=burst (every tenant), or TIMING=mixed (half the tenants, by a hash of the
    name): what the facts' write times do to the model (bench/RESULTS.md#what-write-times-do-to-the-relevance-model-issue-34-2026-12-06)."""
    timing = os.environ.get("TIMING", "instant")
    if timing == "mixed":
        return hashlib.sha256(tenant.encode()).digest()[0] % 2 == 1
    return timing == "burst"


def _timed(memories: list[Stored]) -> list[Stored]:
    """The facts of a tenant in a burst written BURST_MS apart in their order, the last at NOW_MS;
    the others at NOW_MS."""
    count: dict[str, int] = {}
    for m in memories:
        count[m.tenant] = count.get(m.tenant, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for m in memories:
        i = seen.get(m.tenant, 0)
        seen[m.tenant] = i + 1
        at = NOW_MS - (count[m.tenant] - 1 - i) * BURST_MS if in_burst(m.tenant) else m.at
        out.append(Stored(m.id, m.tenant, m.text, at))
    return out


def _ms(iso: str) -> float:
    return datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000.0


def _iso(ms: float) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000.0, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass(frozen=True)
class Stored:
    id: str
    tenant: str
    text: str
    at: float  # ms


@dataclass(frozen=True)
class Question:
    set: str
    id: str
    half: str  # fit, test
    tenant: str
    text: str
    gold: frozenset[str]
    lang: str = "en"
    kind: str = ""


@dataclass
class DevSet:
    name: str
    memories: list[Stored]
    questions: list[Question]
    #: When the questions are asked (ms): a day after the last memory, or the fixed instant.
    now: float = NOW_MS
    tags: dict[str, str] = field(default_factory=dict)


def project() -> DevSet:
    facts, questions = project_set_data.load()
    memories = _timed([Stored(f.id, f.tenant, f.text, NOW_MS) for f in facts])
    qs = [
        Question("project", q.id, half("project", q.id), q.tenant, q.text, frozenset(q.gold), q.lang, q.kind)
        for q in questions
    ]
    return DevSet("project", memories, qs)


def madial() -> list[DevSet]:
    """MADial-Bench, and its dialogues asked of their user's memories without their gold (one
    tenant per dialogue): an absent question in the same words, in its dialogue's half."""
    data = md.load()
    memories = _timed(
        [
            Stored(f"m{mid}", f"madial-user-{user}", data.memories[mid], NOW_MS)
            for user, pool in sorted(data.pools.items())
            for mid in pool
        ]
    )
    qs, removed, gone = [], [], []
    for i, d in enumerate(data.dialogues):
        h = half("madial", i)
        gold = frozenset(f"m{g}" for g in d.gold)
        qs.append(Question("madial", f"d{i:03d}", h, f"madial-user-{d.user}", d.query, gold))
        tenant = f"madial-removed-{i:03d}"
        gone += [
            Stored(f"m{mid}", tenant, data.memories[mid], NOW_MS) for mid in data.pools[d.user] if mid not in d.gold
        ]
        removed.append(Question("madial-removed", f"d{i:03d}", h, tenant, d.query, frozenset()))
    return [DevSet("madial", memories, qs), DevSet("madial-removed", _timed(gone), removed)]


def conversations() -> DevSet:
    turns, questions = conversation_set_data.load()
    memories = [Stored(t.id, f"chat-{t.chat}", t.text, _ms(t.at)) for t in turns]
    qs = [
        Question(
            "conversations", q.id, half("conversations", q.id), f"chat-{q.chat}", q.text, frozenset(q.gold), q.lang
        )
        for q in questions
    ]
    qs += [
        Question(
            "conversations",
            a.id,
            half("conversations-absent", a.id),
            f"chat-{a.chat}",
            a.text,
            frozenset(),
            a.lang,
            a.kind,
        )
        for a in absent_set_data.load()
    ]
    return DevSet("conversations", memories, qs, max(m.at for m in memories) + DAY_MS)


def updates() -> DevSet:
    pairs = update_set_data.load()
    memories = [Stored(f"{p.id}-old", "updates", p.old, _ms(p.old_at)) for p in pairs]
    memories += [Stored(f"{p.id}-new", "updates", p.new, _ms(p.new_at)) for p in pairs]
    qs = [
        Question(
            "updates", p.id, half("updates", p.id), "updates", p.question, frozenset({f"{p.id}-new"}), p.lang, p.kind
        )
        for p in pairs
    ]
    qs += [
        Question(
            "updates",
            f"{p.id}-past",
            half("updates", p.id),
            "updates",
            p.past_question,
            frozenset({f"{p.id}-old"}),
            p.lang,
            "past",
        )
        for p in pairs
        if p.past_question
    ]
    return DevSet("updates", memories, qs, max(m.at for m in memories) + DAY_MS)


def long_chats() -> DevSet:
    turns, questions = long_chat_set_data.load()
    memories = [Stored(t.id, f"long-{t.chat}", t.text, _ms(t.at)) for t in turns]
    qs = [
        Question(
            "long-chats", q.id, half("long-chats", q.id), f"long-{q.chat}", q.text, frozenset(q.gold), q.lang, q.kind
        )
        for q in questions
    ]
    return DevSet("long-chats", memories, qs, max(m.at for m in memories) + DAY_MS)


def prompts() -> DevSet:
    facts, prompts_ = prompt_set_data.load()
    memories = _timed([Stored(f.id, "prompts", f.text, NOW_MS) for f in facts])
    qs = [
        Question("prompts", p.id, half("prompts", p.id), "prompts", p.text, frozenset(p.gold), p.lang) for p in prompts_
    ]
    return DevSet("prompts", memories, qs)


def calibration() -> DevSet:
    """The built-in calibration set: its facts, the questions each answers and its absent
    questions. All of it is a test set."""
    from mcp_memory.core.calibration.calibrate import builtin_cases

    cases = builtin_cases()
    memories, qs = [], []
    for i, fact in enumerate(cases.facts):
        memories.append(Stored(f"c{i:02d}", "calibration", fact.text or "", NOW_MS))
        for j, q in enumerate(fact.questions):
            qs.append(Question("calibration", f"c{i:02d}-q{j}", "test", "calibration", q, frozenset({f"c{i:02d}"})))
    qs += [
        Question("calibration", f"x{i:02d}", "test", "calibration", q, frozenset()) for i, q in enumerate(cases.absent)
    ]
    return DevSet("calibration", memories, qs)


def dev_sets(names: Sequence[str] | None = None) -> list[DevSet]:
    out = [project(), *madial(), conversations(), updates(), long_chats(), prompts(), calibration()]
    return [s for s in out if names is None or s.name in names]


# --------------------------------------------------------------------------- embedding, cached


class Vectors:
    """Each text's embedding by one provider, computed once per text and kept on disk between runs
    (bench/.cache/judgment/<provider>.npz, keyed by the text's sha256)."""

    def __init__(self, provider: str, embedder) -> None:
        self.provider = provider
        self.embedder = embedder
        self.path = CACHE / f"{provider}.npz"
        self.known: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as data:
                self.known = {k: data[k] for k in data.files}
        self.dirty = False

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    async def fill(self, texts: Sequence[str], batch: int = 32) -> None:
        from mcp_memory.core.recall import embedding_input

        todo = list(dict.fromkeys(t for t in texts if self.key(t) not in self.known))
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            rows = await self.embedder.embed([embedding_input(t) for t in chunk])
            for text, row in zip(chunk, rows):
                self.known[self.key(text)] = np.asarray(row, dtype=np.float32)
            self.dirty = True

    def __getitem__(self, text: str) -> np.ndarray:
        return self.known[self.key(text)]

    def save(self) -> None:
        if self.dirty:
            CACHE.mkdir(parents=True, exist_ok=True)
            np.savez(self.path, **self.known)
            self.dirty = False


class CachedEmbedder:
    """The embedder as the service sees it, answering from `Vectors` (every text is filled first)."""

    def __init__(self, inner, vectors: Vectors) -> None:
        self.inner = inner
        self.vectors = vectors

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    async def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if self.vectors.key(t) not in self.vectors.known]
        if missing:
            await self.vectors.fill(missing)
        return np.stack([self.vectors[t] for t in texts])

    async def close(self) -> None:
        await self.inner.close()


# --------------------------------------------------------------------------- asking


@dataclass
class Asked:
    """One question as recall met it: the results `recall` returned at limit 50 (ids, best first) and
    its label, and the first stage's candidates and term statistics (what the second stage reads)."""

    question: Question
    ranked: list[str]
    confidence: str
    probability: float | None
    terms: list[str]
    readable: float
    candidates: list  # recall.Candidate, the first stage's, most relevant first
    stats: object  # keywords.TermStats or None


async def open_set_service(provider: str, devset: DevSet, vectors: Vectors):
    """An in-memory service with `provider`'s floor and HIGH mark, holding `devset`'s memories."""
    from bench.harness.service import in_memory_service
    from mcp_memory.core.model import Memory
    from mcp_memory.embedders import PROVIDERS

    floor, high = PROVIDERS[provider].calibrated or (0.1, None)
    service = in_memory_service(CachedEmbedder(vectors.embedder, vectors), floor=floor, high=high)
    await vectors.fill([m.text for m in devset.memories] + [q.text for q in devset.questions])
    await service.vectors.put_many(
        [
            (Memory(id=m.id, tenant=m.tenant, content=m.text, created_at=_iso(m.at)), vectors[m.text])
            for m in devset.memories
        ]
    )
    service.clock = lambda: devset.now
    return service


async def ask(service, devset: DevSet, *, limit: int = 50, candidates: bool = True) -> list[Asked]:
    """Every question of `devset`, cold (no access counts) and counting nothing; `candidates`:
    also the first stage's candidates (else an empty list)."""
    from bench.quality import retrieval_eval as ev
    from mcp_memory.core import ranking
    from mcp_memory.core import recall as pipeline
    from mcp_memory.core.model import Caller, MemoryFilter
    from mcp_memory.core.service import _query_terms

    out = []
    ev.fresh_counters(service)
    with ev.not_counted(service):
        for q in devset.questions:
            caller = Caller(q.tenant)
            result = await service.recall(caller, q.text, limit=limit)
            if not candidates:
                out.append(
                    Asked(
                        q,
                        [r.memory.id for r in result.results],
                        result.confidence,
                        result.probability,
                        [],
                        1.0,
                        [],
                        None,
                    )
                )
                continue
            embedding = await service._embed(q.text)
            terms = await _query_terms(q.text)
            found = await service._search(caller, embedding, terms, ranking.candidate_count(limit), MemoryFilter())
            readable = service._readable(q.text)
            scored = pipeline.candidates(service.retrieval_mode, terms, found, readable, None)
            scored.sort(key=lambda c: c.relevance, reverse=True)
            out.append(
                Asked(
                    q,
                    [r.memory.id for r in result.results],
                    result.confidence,
                    getattr(result, "probability", None),
                    list(terms),
                    readable,
                    scored,
                    found.keyword.stats if found.keyword is not None else None,
                )
            )
    return out


async def ask_all(
    provider: str = "local", names: Sequence[str] | None = None, *, limit: int = 50, judged: bool = True
) -> list[Asked]:
    """Every question of every set (or of `names`) with `provider`'s embedder; `judged=False`
    asks without the second stage (and without reading its weights: what a refit starts from)."""
    from mcp_memory.config import Settings
    from mcp_memory.core import judgment
    from mcp_memory.embedders import open_embedder

    if not judged:
        shipped, judgment.load_model = judgment.load_model, lambda *args: None  # type: ignore[assignment]
        try:
            return await ask_all(provider, names, limit=limit)
        finally:
            judgment.load_model = shipped  # type: ignore[assignment]

    embedder = open_embedder(Settings.from_env({"EMBEDDING_PROVIDER": provider}).embedding)
    vectors = Vectors(provider, embedder)
    out: list[Asked] = []
    try:
        for devset in dev_sets(names):
            service = await open_set_service(provider, devset, vectors)
            out += await ask(service, devset, limit=limit)
            vectors.save()
    finally:
        vectors.save()
        await embedder.close()
    return out


def json_line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)
