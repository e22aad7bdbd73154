"""MemoryService: everything a user can do, once, for every edge.

The MCP tools and the CLI commands are thin adapters over these methods. The
service owns policy — ranking, dedup, visibility re-checks, ids, timestamps,
the recency index and the access counters — and knows nothing about MCP, HTTP,
Typer or headers. Results are structured values; each edge renders them in its
own way (server/protocol/render.py for the text a model reads, cli/render.py for the
operator's view and JSON).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mcp_memory.core import (
    arguments,
    dedup,
    digest,
    fusion,
    ids,
    judgment,
    keywords,
    ranking,
    supersede,
    timespan,
)
from mcp_memory.core import recall as pipeline  # the module; `recall` is the method below
from mcp_memory.core.arguments import LIST_DEFAULT_LIMIT
from mcp_memory.core.counters.tracker import AccessCounters, CompactReport
from mcp_memory.core.digest import DigestResult
from mcp_memory.core.errors import InvalidArgument, PreconditionFailed
from mcp_memory.core.ids import iso, ulid
from mcp_memory.core.logs import JsonLog, NullLog
from mcp_memory.core.model import (
    EMPTY_STATS,
    MEMORY_TYPES,
    SCOPES,
    TRUST_MANUAL,
    AccessStats,
    Caller,
    Confidence,
    Hit,
    Memory,
    MemoryFilter,
    MemoryType,
    Mode,
    Ranked,
    Retrieval,
    Scope,
)
from mcp_memory.core.object_keys import (
    Walk,
    count_index,
    created_times,
    memory_keys,
    newest_ids,
)
from mcp_memory.core.paging import PAGE_MAX, PageFilter, read_page
from mcp_memory.core.paging import ListResult as ListResult  # the listing's result, by its old home too
from mcp_memory.core.ports import Embedder, ObjectStore, VectorStore, describe
from mcp_memory.core.requests import NO_CONVERSATION, ForgetRequest, ListRequest, RecallRequest, RememberRequest

if TYPE_CHECKING:  # numpy loads with the first vector; calibration only when asked
    from pathlib import Path

    import numpy as np

    from mcp_memory.core.actions import Action
    from mcp_memory.core.calibration.calibrate import CalibrationReport, Cases, Progress
    from mcp_memory.core.tenants import CompactAllResult, TenantsResult
    from mcp_memory.core.transfer.bulk import ImportReport, ImportRun
    from mcp_memory.core.transfer.exporting import ExportResult
    from mcp_memory.core.transfer.formats import ReadContext, Reading
    from mcp_memory.core.transfer.importing import ImportResult, Refusal


def _actions() -> Any:
    """core/actions.py, imported when a tool hook first asks: serve-stdio's handshake loads no more
    than it did (tests/cli/test_stdio_imports.py)."""
    from mcp_memory.core import actions

    return actions


def _first_recall_imports() -> None:
    """What a process's first recall would import: the keyword side's stemmer and python-ulid
    (the access counters' shard times); for `MemoryService.warm_up`."""
    keywords.warm_up()
    ids.warm_up()


#: How many nearest neighbours remember inspects for a duplicate (the closest may be invisible).
DEDUP_CANDIDATES = 5
#: When even the farthest of those is at the duplicate cosine, the text may have twins the embedder
#: cannot tell apart (the local model reads only the first 256 tokens): remember asks for more,
#: up to this many, so an identical repeat is still found behind them.
DEDUP_CANDIDATES_MAX = ranking.CANDIDATE_CAP
#: With a filter, recall and list read at most this many index keys when the store
#: cannot filter by itself (tags on S3 Vectors; list's tags everywhere).
FILTER_SCAN_CAP = 10_000
#: remember names the nearest visible memory at this cosine or above as a possible correction
#: (one the dedup rule kept apart by a difference test always is: that rule reads the texts only
#: at dedup.DEDUP_SIMILARITY, above this); recall ranks the newer of two such first, and there
#: half the words shared at supersede.NEAR_WITH_WORDS is near too (core/supersede.py).
NEAR_SIMILARITY = supersede.NEAR_SIMILARITY
#: memory_stats scans at most this many index keys, then reports a lower bound.
STATS_SCAN_CAP = 10_000
#: How many of recall's results, and of the memories tagged for a file, a tool call's question weighs.
ACTION_CANDIDATES = 10
#: How many of the latest tool calls' questions keep their embedding in the process (a few KB each).
ACTION_EMBEDDINGS = 64
LIST_PAGE = 1000


#: A query longer than this is split and stemmed in a worker thread: stemming the longest query
#: recall takes would hold every other call on the event loop
#: (bench/RESULTS.md#stemming-a-long-query-off-the-event-loop); a short one is cheaper done here than
#: handed over.
INLINE_QUERY_CHARS = 1_000


async def _query_terms(query: str) -> list[str]:
    if len(query) <= INLINE_QUERY_CHARS:
        return keywords.query_terms(query)
    return await asyncio.to_thread(keywords.query_terms, query)


def wall_clock_ms() -> float:
    return time.time() * 1000.0


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class RecallResult:
    query: str
    mode: Mode
    limit: int
    results: list[Ranked]
    confidence: Confidence
    #: Visible candidates that fell below the floor or the mode's ratio gate.
    gated: int
    #: False when nothing visible was stored near the query at all (that the filters let through).
    found_any: bool
    #: The visible candidates the floor or the mode's ratio gate dropped (the web view shows them).
    gated_out: tuple[fusion.Candidate, ...] = ()
    #: The filters asked for (type, tags, time span).
    where: MemoryFilter = field(default_factory=MemoryFilter)
    #: When the filters left nothing: how many memories the query found without them.
    filtered_out: int = 0
    #: The probability that the answer holds what the question asks (core/recall.py
    #: answer_probability; the model's below its floor when nothing answers), None without a model.
    probability: float | None = None
    #: Candidates were found, but the model judged that none answers the question.
    unanswered: bool = False
    #: What weighed most in the model's judgment of the most probable candidate (core/judgment.py).
    reasons: tuple[judgment.Reason, ...] = ()
    #: Where the model's bands start (None without a probability).
    bands: judgment.Bands | None = None

    def worth_injecting(self, min_confidence: str = "likely") -> bool:
        """Whether a hook should put this answer into the agent's context unasked
        (docs/hooks.md#on-each-prompt): "likely" (the default), when the answer's probability
        reaches the hooks' threshold (Bands.inject, chosen on the prompt dev set); "high" or
        "medium", when its band is that or higher. Without a probability (dense or keyword
        retrieval), "likely" reads as "high"."""
        if not self.results:
            return False
        if self.probability is None or self.bands is None:
            allowed = ("high", "medium") if min_confidence == "medium" else ("high",)
            return self.confidence in allowed
        if min_confidence == "likely":
            return self.probability >= self.bands.inject
        return self.probability >= (self.bands.medium if min_confidence == "medium" else self.bands.high)


@dataclass(frozen=True)
class ActionResult:
    """What memory holds about a tool call: recall's answer for it, and the memories tagged for its files."""

    action: Action
    recalled: RecallResult
    #: The memories whose `path:` tags apply to one of the call's files, nearest first.
    declared: list[Memory]
    #: Every candidate recall's searches found for the call, before its gate kept the probable
    #: ones: a memory naming what the call touches is worth showing however recall judged it.
    candidates: list[Memory] = field(default_factory=list)

    def chosen(self, exclude: frozenset[str], limit: int, min_confidence: str = "likely") -> list[tuple[Memory, str]]:
        """The memories to put before the agent, best first, with why: those declared for its
        files, those whose text names what it touches (among recall's candidates), then, for a
        command or a failure, recall's results when they are worth injecting at `min_confidence`
        (the prompts' rule, RecallResult.worth_injecting); none in `exclude`, `limit` at most.
        A file's path alone carries no recall match: its words (src, utils, strings) are a
        question about nothing in particular (bench/RESULTS.md, "A path alone is no question")."""
        picked: dict[str, tuple[Memory, str]] = {}
        for memory in self.declared:
            picked.setdefault(memory.id, (memory, "declared"))
        named = _actions().naming(self.action)
        for memory in [*(r.memory for r in self.recalled.results), *self.candidates]:
            if memory.id not in picked and named(memory.content):
                picked[memory.id] = (memory, "named")
        if self.action.kind != "file" and self.recalled.worth_injecting(min_confidence):
            for ranked in self.recalled.results:
                picked.setdefault(ranked.memory.id, (ranked.memory, self.recalled.confidence))
        return [p for p in picked.values() if p[0].id not in exclude][:limit]


@dataclass(frozen=True)
class RememberResult:
    memory: Memory
    #: False when an existing memory already said this and nothing was written.
    created: bool
    #: The ids `replaces` named that are now gone.
    replaced: tuple[str, ...] = ()
    #: The ids `replaces` named that could not be removed (still stored).
    not_removed: tuple[str, ...] = ()
    #: A visible memory close to the new one, perhaps the fact it corrects (nothing was done to it).
    near: Memory | None = None


@dataclass(frozen=True)
class Neighbour:
    """A memory close to another, and how remember's rule sees the pair."""

    memory: Memory
    similarity: float
    #: "duplicate" (remember would not store one beside the other), "differs" (a difference
    #: test kept them apart: perhaps a correction), or "close" (cosine >= NEAR_SIMILARITY).
    kind: str
    reason: str | None = None


@dataclass(frozen=True)
class MemoryDetail:
    memory: Memory
    stats: AccessStats
    near: list[Neighbour]


@dataclass(frozen=True)
class ForgetResult:
    id: str
    deleted: bool


@dataclass(frozen=True)
class StatsResult:
    total: int
    by_type: dict[str, int] = field(default_factory=dict)
    #: True when counting stopped at STATS_SCAN_CAP keys: every figure is a lower bound.
    lower_bound: bool = False


# --------------------------------------------------------------------------- the service


class MemoryService:
    """Recall, remember, list, forget, stats and compact over the two ports."""

    def __init__(
        self,
        vectors: VectorStore,
        objects: ObjectStore,
        embedder: Embedder,
        counters: AccessCounters,
        *,
        floor: float = 0.1,
        high: float | None = None,
        clock: Callable[[], float] = wall_clock_ms,
        new_id: Callable[[float], str] = ulid,
        log: JsonLog | None = None,
        retrieval: Retrieval = "hybrid",
        scale: tuple[float, float] | None = None,
        min_probability: float | None = None,
    ) -> None:
        if not 0 < floor <= 1:
            raise ValueError("floor must be in (0, 1]")
        #: How recall finds candidates: the embedding and the keyword index, or one alone (core/recall.py).
        self.retrieval_mode = pipeline.retrieval_mode(retrieval)
        self.vectors = vectors
        self.objects = objects
        self.embedder = embedder
        self.counters = counters
        self.floor = floor
        self.high = ranking.default_high_similarity(floor) if high is None else high
        #: The second stage's relevance model for this embedder (core/judgment.py): its own, else
        #: the embedder-agnostic one on `scale` (RecallSection.agnostic_scale); None for an embedder
        #: with neither (the rule-based label then).
        #: RECALL_MIN_PROBABILITY, when set, is its floor (Model.with_floor).
        model = judgment.model_for(embedder, scale)
        self.judge: judgment.Model | None = model.with_floor(min_probability) if model is not None else None
        self.min_probability = min_probability
        self.clock = clock
        self.new_id = new_id
        self.log = log or NullLog()
        #: The tenants whose rules this process knows have their `rules/` keys (`_rules`).
        self._rules_tracked: set[str] = set()
        #: The embeddings of the latest tool calls' questions (`concerning`), oldest first.
        self._action_embeddings: dict[str, np.ndarray] = {}

    @property
    def retrieval(self) -> Retrieval:
        """The retrieval's name: "hybrid", "dense" or "keyword" (RECALL_RETRIEVAL)."""
        return self.retrieval_mode.name

    @retrieval.setter
    def retrieval(self, retrieval: Retrieval | pipeline.RetrievalMode) -> None:
        self.retrieval_mode = pipeline.retrieval_mode(retrieval)

    async def _embed(self, text: str) -> np.ndarray:
        vector: np.ndarray = (await self.embedder.embed([pipeline.embedding_input(text)]))[0]
        return vector

    # ----------------------------------------------------------------------- recall

    async def recall(
        self,
        caller: Caller,
        query: str,
        limit: int | None = None,
        mode: Mode | None = None,
        *,
        memory_type: MemoryType | None = None,
        tags: Sequence[str] = (),
        since: str | None = None,
        until: str | None = None,
    ) -> RecallResult:
        """The memories that answer `query`, ranked, with a confidence level (docs/recall.md).

        Searches the embedding and the keyword index, as `retrieval` says, and reads the access
        counts; the candidates, gates, ranking and confidence are core/recall.py's.
        `since`/`until` (core/timespan.py) filter like the type and tags, before the limit.
        Refused (InvalidArgument naming the field) by the rules every edge applies (core/requests.py).
        """
        request = RecallRequest(
            query, limit=limit, mode=mode, memory_type=memory_type, tags=tags, since=since, until=until
        )
        return await self.recall_request(caller, request)

    async def recall_request(self, caller: Caller, request: RecallRequest) -> RecallResult:
        """`recall` for a request made (and so checked) by an edge."""
        span = timespan.span(request.since, request.until, self.clock())
        where = MemoryFilter(request.memory_type, tuple(request.tags), span)
        embedding = await self._embed(request.query)
        return await self._recall(caller, request.query, embedding, request.limit, request.mode, where)

    async def _recall(
        self,
        caller: Caller,
        query: str,
        embedding: np.ndarray,
        limit: int | None,
        mode: Mode | None,
        where: MemoryFilter,
        pool: builtins.list[Memory] | None = None,
    ) -> RecallResult:
        """Recall for a checked query whose embedding is known (recall's steps, after the checks);
        `pool`, when given, receives every candidate of the searches (visible ones, before the gate)."""
        mode = mode or ranking.DEFAULT_MODE
        weights = ranking.MODE_TABLE[mode]
        limit = limit or weights.limit
        retrieval = self.retrieval_mode
        terms = await _query_terms(query) if retrieval.keywords else []
        found = await self._search(caller, embedding, terms, ranking.candidate_count(limit), where)
        readable = self._readable(query)
        scored = pipeline.candidates(retrieval, terms, found, readable, caller.conversation)
        if pool is not None:
            pool.extend(c.memory for c in scored)
        if not scored:
            filtered_out = await self._filtered_out(caller, query, embedding, terms, limit, mode) if where else 0
            return RecallResult(
                query, mode, limit, [], "none", 0, found_any=False, where=where, filtered_out=filtered_out
            )
        judged = pipeline.judge(self.judge, retrieval, query, terms, found, readable, scored)
        gated = pipeline.gate(retrieval, judged.candidates, self.floor, mode, self.judge)
        results: list[Ranked] = []
        near: pipeline.Near = supersede.Nearness({}, {})
        if gated.keeping:
            stats = await self.counters.load(caller.tenant, [c.memory.id for c in gated.keeping])
            ranked = pipeline.rank(gated.keeping, stats, gated.top, mode, self.clock())[:limit]
            shown = await pipeline.settle(
                retrieval, ranked, gated.relevant, terms, found.keyword, lambda ms: self._vectors(caller, ms)
            )
            results, near = shown.results, shown.near
        confidence = pipeline.confidence(
            retrieval, results, gated.relevant, terms, found.keyword, self.high, near, self.judge
        )
        if confidence == "high":
            # Being returned is not being used: only a confident answer counts as one (docs/recall.md).
            self.counters.record(caller.tenant, results[0].memory.id, self.clock())
        probability = pipeline.answer_probability(results)
        if gated.unanswered:
            probability = max((c.probability or 0.0 for c in gated.relevant), default=0.0)
        return RecallResult(
            query,
            mode,
            limit,
            results,
            confidence,
            gated.gated,
            found_any=True,
            gated_out=gated.dropped,
            where=where,
            probability=probability,
            unanswered=gated.unanswered,
            reasons=judged.reasons,
            bands=self.judge.bands if probability is not None and self.judge is not None else None,
        )

    async def concerning(self, caller: Caller, action: Action, *, limit: int = ACTION_CANDIDATES) -> ActionResult:
        """What memory holds about a pending tool call (core/actions.py; docs/hooks.md#at-the-moment-of-action):
        recall for the call (precision mode, `limit` results, and every candidate its searches found)
        and the memories whose `path:` tags apply to its files, one embedding for both. Refused (InvalidArgument) as recall refuses its query."""
        actions = _actions()
        query = RecallRequest(actions.query_of(action)).query
        embedding = self._action_embeddings.pop(query, None)
        if embedding is None:  # an agent reads a file, then edits it: the same question, embedded once
            embedding = await self._embed(query)
        self._action_embeddings[query] = embedding
        if len(self._action_embeddings) > ACTION_EMBEDDINGS:
            del self._action_embeddings[next(iter(self._action_embeddings))]
        pool: builtins.list[Memory] = []
        recalled = await self._recall(caller, query, embedding, limit, "precision", MemoryFilter(), pool)
        tags = tuple(t for path in action.paths for t in actions.path_tags(path))
        declared: builtins.list[Memory] = []
        if tags:
            hits = await self._filtered_nearest(caller, embedding, ACTION_CANDIDATES, MemoryFilter(tags=tags))
            declared = [h.memory for h in hits if actions.declared(h.memory.tags, action)]
        return ActionResult(action, recalled, declared, pool)

    async def _search(
        self, caller: Caller, embedding: np.ndarray, terms: Sequence[str], wanted: int, where: MemoryFilter
    ) -> pipeline.Found:
        """The `wanted` nearest memories (matching `where`) and the keyword index's answer for
        `terms`, as the retrieval searches them; the two indexes are searched at the same time."""
        searches: dict[str, Coroutine[Any, Any, Any]] = {}
        if self.retrieval_mode.embedding:
            searches["nearest"] = (
                self._filtered_nearest(caller, embedding, wanted, where)
                if where
                else self.vectors.query(caller.tenant, embedding, wanted, caller.conversation)
            )
        if terms:
            searches["keyword"] = self.vectors.keyword_query(
                caller.tenant, embedding, terms, wanted, caller.conversation
            )
        done = dict(zip(searches, await asyncio.gather(*searches.values())))
        answer: keywords.KeywordAnswer | None = done.get("keyword")
        if answer is not None and where:  # keyword candidates are filtered after their own limit; nearest before
            answer = replace(answer, hits=[h for h in answer.hits if where.matches(h.memory)])
        return pipeline.Found(done.get("nearest", []), answer)

    async def _filtered_out(
        self, caller: Caller, query: str, embedding: np.ndarray, terms: Sequence[str], limit: int, mode: Mode
    ) -> int:
        """How many memories the query finds without the filters (past the floor and the mode's
        gate), for a filtered recall that found nothing: the answer then says the filters excluded
        them, not that nothing is stored on the subject."""
        found = await self._search(caller, embedding, terms, ranking.candidate_count(limit), MemoryFilter())
        retrieval = self.retrieval_mode
        readable = self._readable(query)
        scored = pipeline.candidates(retrieval, terms, found, readable, caller.conversation)
        judged = pipeline.judge(self.judge, retrieval, query, terms, found, readable, scored)
        return len(pipeline.gate(retrieval, judged.candidates, self.floor, mode, self.judge).keeping)

    async def _vectors(self, caller: Caller, memories: Sequence[Memory]) -> dict[str, np.ndarray]:
        """These memories' embeddings for the `near` rule (core/supersede.py): the store's own,
        or computed again from their texts by a store that keeps no readable vectors."""
        return await pipeline.read_vectors(self.vectors, self.embedder, caller.tenant, memories)

    async def _filtered_nearest(
        self, caller: Caller, embedding: np.ndarray, wanted: int, where: MemoryFilter
    ) -> builtins.list[Hit]:
        """The `wanted` nearest visible memories that `where` matches, filtered before the limit.

        The store filters (`VectorStore.filtered_query`); when it could only post-filter a
        bounded pool (S3 Vectors holds tags as non-filterable metadata) and that pool was full,
        the tenant's memories of the type are read from the recency index, FILTER_SCAN_CAP at
        most, and scored by the store (`VectorStore.scored`), so a rare tag is still found.
        """
        answer = await self.vectors.filtered_query(caller.tenant, embedding, wanted, caller.conversation, where)
        if answer.complete or len(answer.hits) >= wanted:
            return answer.hits
        ids = await newest_ids(self.objects, caller, FILTER_SCAN_CAP, where.memory_type)
        scored = await self.vectors.scored(caller.tenant, embedding, ids)
        if scored is None:  # a store that cannot score by id: the pool is what there is
            return answer.hits
        matching = [h for h in scored if h.memory.visible_to(caller.conversation) and where.matches(h.memory)]
        matching.sort(key=lambda h: h.similarity, reverse=True)
        return matching[:wanted]

    def _readable(self, query: str) -> float:
        """How much of `query` the embedder can read (core/fusion.py `readable_share`)."""
        return fusion.readable_share(query, self.embedder.scripts)

    # ----------------------------------------------------------------------- remember

    async def remember(
        self,
        caller: Caller,
        content: str,
        *,
        memory_type: MemoryType = "project",
        category: str | None = None,
        tags: Sequence[str] = (),
        scope: Scope = "project",
        replaces: Sequence[str] = (),
    ) -> RememberResult:
        """Store a memory, unless a visible one already says the same thing (core/dedup.py),
        then remove the memories it `replaces`.

        Every id in `replaces` must name a memory the caller can see (the rule of
        `forget`), or the call is refused naming the id, and nothing is written. The
        new memory is written completely before anything is removed, so a failure in
        between leaves the new memory, and perhaps the old one too, never neither.
        The duplicate check and the writes run under the store's per-tenant exclusive
        section, so two identical concurrent calls leave one memory. Refused (InvalidArgument
        naming the field, nothing written) by the rules every edge applies (core/requests.py).
        """
        request = RememberRequest(
            content, scope=scope, memory_type=memory_type, category=category, tags=tags, replaces=replaces
        )
        return await self.remember_request(caller, request)

    async def remember_request(self, caller: Caller, request: RememberRequest) -> RememberResult:
        """`remember` for a request made (and so checked) by an edge; scope 'conversation' is
        refused here for a request that was made without its caller (RememberRequest)."""
        request.check_scope(caller, NO_CONVERSATION)
        content, scope, replaces = request.content, request.scope, request.replaces
        embedding = await self._embed(content)
        async with self.vectors.exclusive(caller.tenant):
            old = await self._replaceable(caller, replaces)
            known, near = await self._already_known(
                caller, content, embedding, exclude=frozenset(replaces), scope=scope
            )
            if known is not None:
                self.counters.record(caller.tenant, known.id, self.clock())
                await self._ensure_indexed(known)
                memory, created = known, False
            else:
                memory, created = self.new_memory(caller, request), True
                await self._write_new(memory, embedding)
            replaced, not_removed = await self._remove_replaced(caller, old)
        return RememberResult(memory, created, replaced, not_removed, near)

    async def _ensure_indexed(self, memory: Memory) -> None:
        """The recency index entry of a memory remember found already stored. A write whose
        answer was lost (the store failed after the memory committed, before its entry) is
        retried by its caller; the retry lands here and completes it, so list_memories shows it."""
        for key in memory_keys(memory):
            with contextlib.suppress(PreconditionFailed):  # the usual case: the entry is there
                await self.objects.put(key, "", if_none_match=True)

    async def _write_new(self, memory: Memory, embedding: np.ndarray) -> None:
        """The memory, then its recency index entry (`VectorStore.put_with_index`): a memory
        missing from the index still answers recall. A rule's own key goes first: one whose memory
        never arrived is skipped by the digest, a rule without one would be missed."""
        index, *others = memory_keys(memory)
        if others:
            await self.objects.put_many([(key, "") for key in others])
        await self.vectors.put_with_index(memory, embedding, self.objects, index)

    def new_memory(self, caller: Caller, request: RememberRequest, at: float | None = None) -> Memory:
        """The memory `request` makes for `caller`, made at `at` (now when None): remember's and an
        import's (core/transfer/remembering.py, which keeps a source's date) one way of making it."""
        at = self.clock() if at is None else at
        return Memory(
            id=self.new_id(at),
            tenant=caller.tenant,
            content=request.content,
            memory_type=request.memory_type,
            category=(request.category or "").strip() or None,
            tags=tuple(request.tags),
            created_at=iso(at),
            scope=request.scope,
            conversation=caller.conversation,
            trust_base=TRUST_MANUAL,
        )

    async def _replaceable(self, caller: Caller, ids: Sequence[str]) -> list[Memory]:
        """The memories `ids` name, each visible to the caller; otherwise refuse, naming the id."""
        if not ids:
            return []
        found = {m.id: m for m in await self.vectors.get(caller.tenant, ids) if m.visible_to(caller.conversation)}
        for memory_id in ids:
            if memory_id not in found:
                raise InvalidArgument(
                    f"{{field}}: no memory with id {memory_id} exists for this project (or it belongs to "
                    "another conversation). Nothing was written.",
                    field="replaces",
                )
        return [found[i] for i in ids]

    async def _remove_replaced(self, caller: Caller, old: Sequence[Memory]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        replaced: list[str] = []
        not_removed: list[str] = []
        for memory in old:
            try:
                await self._remove(caller, memory)
            except Exception as exc:  # the new memory is stored; say which old one is left
                self.log.error("replace_failed", exc, tenant=caller.tenant, id=memory.id)
                not_removed.append(memory.id)
            else:
                replaced.append(memory.id)
        return tuple(replaced), tuple(not_removed)

    async def _already_known(
        self,
        caller: Caller,
        content: str,
        embedding: np.ndarray,
        *,
        exclude: frozenset[str] = frozenset(),
        scope: Scope = "project",
    ) -> tuple[Memory | None, Memory | None]:
        """(the nearest visible memory that says the same thing, the nearest one that is close).

        A fact told to the whole project is already known only from a project memory: a
        conversation's own note saying the same is seen by that conversation alone, and
        merging into it would keep the fact from every other conversation.

        Candidates are tried nearest first (the store promises no order), so the
        answer is the nearest neighbour whenever that one qualifies; when it fails
        a test, a slightly less near candidate that passes them all still counts,
        rather than writing a duplicate. "Close" is a memory the rule kept apart only
        by a difference test (core/dedup.py), or one at NEAR_SIMILARITY or above.
        """
        wanted = DEDUP_CANDIDATES
        while True:
            candidates = await self.vectors.near(caller.tenant, embedding, wanted, caller.conversation)
            crowded = len(candidates) >= wanted and min(h.similarity for h in candidates) >= ranking.DEDUP_SIMILARITY
            if not crowded or wanted >= DEDUP_CANDIDATES_MAX:
                break
            wanted = min(wanted * 4, DEDUP_CANDIDATES_MAX)
        visible = [h for h in candidates if h.memory.visible_to(caller.conversation) and h.memory.id not in exclude]
        visible.sort(key=lambda h: h.similarity, reverse=True)  # stable: ties keep store order
        near: Memory | None = None
        for hit in visible:
            if dedup.same(hit.similarity, content, hit.memory.content) and (
                scope == "conversation" or hit.memory.scope == "project"
            ):
                return hit.memory, None
            # A pair the rule keeps apart by a difference test is at DEDUP_SIMILARITY, above this.
            if near is None and hit.similarity >= NEAR_SIMILARITY:
                near = hit.memory
        return None, near

    # ----------------------------------------------------------------------- list

    async def list(
        self,
        caller: Caller,
        *,
        memory_type: MemoryType | None = None,
        limit: int = LIST_DEFAULT_LIMIT,
        cursor: str | None = None,
        tags: Sequence[str] = (),
        scope: Scope | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> ListResult:
        """The caller's visible memories, newest first, `limit` at a time (at most PAGE_MAX): pass a
        page's `next_cursor` back as `cursor` for the next one (core/paging.py, docs/tools.md#paging).
        With `tags`, only those carrying any of them; with `scope`, only project memories or this
        conversation's notes; with `since`/`until`, only those stored within (read as recall reads
        them, core/timespan.py: dates, instants or ages, inclusive). Refused (InvalidArgument naming
        the field) by the rules every edge applies (core/arguments.py); a library list takes up to
        PAGE_MAX, the tool's ListRequest up to LIMIT_MAX."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= PAGE_MAX:
            raise InvalidArgument(f"{{field}} must be a whole number from 1 to {PAGE_MAX}.", field="limit")
        if memory_type is not None and memory_type not in MEMORY_TYPES:
            raise InvalidArgument(f"{{field}} must be one of {', '.join(MEMORY_TYPES)}.", field="type")
        if scope is not None and scope not in SCOPES:
            raise InvalidArgument(f"{{field}} must be one of {', '.join(SCOPES)}.", field="scope")
        tags = arguments.tags("tags", tags) if tags else ()
        since, until = (
            None if at is None else arguments.bound(name, at) for name, at in (("since", since), ("until", until))
        )
        return await self._page(caller, memory_type, tags, scope, since, until, limit, cursor)

    async def list_request(self, caller: Caller, request: ListRequest) -> ListResult:
        """`list` for list_memories' request, made (and so checked) by the tool."""
        return await self._page(
            caller,
            request.memory_type,
            tuple(request.tags),
            None,
            request.since,
            request.until,
            request.limit,
            request.cursor,
        )

    async def _page(
        self,
        caller: Caller,
        memory_type: MemoryType | None,
        tags: Sequence[str],
        scope: Scope | None,
        since: str | None,
        until: str | None,
        limit: int,
        cursor: str | None,
    ) -> ListResult:
        span = timespan.span(since, until, self.clock())
        where = PageFilter(memory_type, tuple(tags), scope, span)
        return await read_page(self.objects, self.vectors.get, caller, where, limit, cursor)

    # ----------------------------------------------------------------------- digest

    async def digest(self, caller: Caller, *, topic: str | None = None) -> DigestResult:
        """The caller's memories most worth having in context, best first (core/digest.py,
        docs/hooks.md#the-digest); with a `topic`, what recall finds for it comes first. A topic is
        checked as recall checks a query, and refused naming `topic` (core/arguments.py)."""
        if topic is not None:
            topic = arguments.check_text("topic", topic)
        ids = await newest_ids(self.objects, caller, digest.DIGEST_SCAN)
        found = {m.id: m for m in await self.vectors.get(caller.tenant, ids)} if ids else {}
        memories = [found[i] for i in ids if i in found and found[i].visible_to(caller.conversation)]
        if not memories:
            return DigestResult([], 0)
        # rules come first however old (docs/hooks.md#rules-that-always-hold)
        rules = await digest.read_rules(self.objects, self.vectors, caller, self._rules_tracked)
        topical: builtins.list[Memory] = []
        if topic is not None and topic.strip():
            topical = [r.memory for r in (await self.recall(caller, topic, mode="exploratory")).results]
        weighed = {m.id for m in memories}
        memories += [m for m in rules if m.id not in weighed]
        stats = await self.counters.load(caller.tenant, [m.id for m in memories])
        ruled = digest.order(rules, stats, self.clock())
        first = {m.id for m in [*ruled, *topical]}
        topical = [m for m in topical if m.id not in {r.id for r in ruled}]
        rest = [m for m in digest.order(memories, stats, self.clock()) if m.id not in first]
        ordered = [*ruled, *topical, *rest]
        # the stored vectors only: the digest never loads the model (docs/hooks.md#the-digest)
        vectors = await self.vectors.vectors(caller.tenant, [m.id for m in ordered])
        newer = supersede.newer_of(ordered, vectors) if vectors else {}
        return DigestResult(ordered, len(memories), len(topical), newer, len(ruled))

    async def get(self, caller: Caller, memory_id: str) -> Memory | None:
        """One memory by id, or None when it is missing or not visible to the caller (another
        tenant's or another conversation's reads as missing; docs/hooks.md#mcp-prompts-and-resources)."""
        found = [m for m in await self.vectors.get(caller.tenant, [memory_id]) if m.visible_to(caller.conversation)]
        return found[0] if found else None

    # ----------------------------------------------------------------------- forget

    async def forget(self, caller: Caller, memory_id: str) -> ForgetResult:
        """Delete one memory the caller can see (docs/tools.md#forget); an id no memory could have
        is refused as the tool refuses it (core/requests.py)."""
        return await self.forget_request(caller, ForgetRequest(memory_id))

    async def forget_request(self, caller: Caller, request: ForgetRequest) -> ForgetResult:
        """`forget` for a request made (and so checked) by an edge."""
        memory_id = request.memory_id
        existing = [m for m in await self.vectors.get(caller.tenant, [memory_id]) if m.visible_to(caller.conversation)]
        if not existing:
            return ForgetResult(memory_id, deleted=False)
        memory = existing[0]
        await self._remove(caller, memory)
        return ForgetResult(memory.id, deleted=True)

    async def detail(self, caller: Caller, memory_id: str, *, near: int = 5) -> MemoryDetail | None:
        """One visible memory with its access counts and the memories close to it by remember's
        rule (`near`: a duplicate, a probable correction, or cosine >= NEAR_SIMILARITY); None
        when the caller cannot see such a memory."""
        found = [m for m in await self.vectors.get(caller.tenant, [memory_id]) if m.visible_to(caller.conversation)]
        if not found:
            return None
        memory = found[0]
        stats = (await self.counters.load(caller.tenant, [memory.id])).get(memory.id, EMPTY_STATS)
        embedding = await self._embed(memory.content)
        hits = await self.vectors.near(caller.tenant, embedding, near + 1, caller.conversation)
        close: builtins.list[Neighbour] = []
        for hit in sorted(hits, key=lambda h: h.similarity, reverse=True):
            if hit.memory.id == memory.id or not hit.memory.visible_to(caller.conversation):
                continue
            verdict = dedup.judge(hit.similarity, memory.content, hit.memory.content)
            if verdict.same or verdict.near or hit.similarity >= NEAR_SIMILARITY:
                kind = "duplicate" if verdict.same else "differs" if verdict.near else "close"
                close.append(Neighbour(hit.memory, hit.similarity, kind, verdict.reason))
        return MemoryDetail(memory, stats, close[:near])

    async def forget_many(self, caller: Caller, ids: Sequence[str]) -> builtins.list[str]:
        """Forget each of `ids` the caller can see (the web view's forget-by-filter); the ids deleted."""
        deleted: builtins.list[str] = []
        for start in range(0, len(ids), LIST_PAGE):
            chunk = ids[start : start + LIST_PAGE]
            for memory in await self.vectors.get(caller.tenant, chunk):
                if memory.visible_to(caller.conversation):
                    await self._remove(caller, memory)
                    deleted.append(memory.id)
        return deleted

    async def _remove(self, caller: Caller, memory: Memory) -> None:
        await self.vectors.delete(caller.tenant, [memory.id])  # this is what makes it unreachable
        keys = memory_keys(memory)
        try:
            await self.objects.delete(keys)
        except Exception as exc:  # an orphan index key is tolerated: list and the digest skip it
            self.log.error("forget_index_cleanup_failed", exc, tenant=caller.tenant, key=keys[0])

    # ----------------------------------------------------------------------- stats

    async def stats(self, caller: Caller) -> StatsResult:
        """How many memories the caller can see, by type; a lower bound past 10,000 keys (docs/tools.md)."""
        counted = await count_index(Walk(self.objects, caller), STATS_SCAN_CAP)
        return StatsResult(counted.total, counted.by_type, lower_bound=counted.lower_bound)

    async def created_times(self, caller: Caller, *, cap: int = STATS_SCAN_CAP) -> tuple[builtins.list[float], bool]:
        """When each of the caller's newest `cap` memories was stored (epoch ms), read from the
        recency index alone, and whether there are more (the web view's growth chart)."""
        return await created_times(self.objects, caller, cap)

    async def tenants(self, *, limit: int | None = None) -> TenantsResult:
        """Every tenant with memories, and how many (all scopes), up to `limit` tenants (operator;
        default TENANT_SCAN_CAP). core/tenants.py loads here: no serving process needs it."""
        from mcp_memory.core import tenants

        return await tenants.tenant_counts(
            self.objects, limit=limit or tenants.TENANT_SCAN_CAP, scan_cap=STATS_SCAN_CAP
        )

    # ----------------------------------------------------------------------- operator

    async def compact(self, tenant: str, *, dry_run: bool = False) -> CompactReport:
        """Fold every settled counter shard of `tenant` now (the operator's `compact`)."""
        return await self.counters.compact(tenant, dry_run=dry_run)

    async def compact_all(self, *, dry_run: bool = False, limit: int | None = None) -> CompactAllResult:
        """`compact` for every tenant that has counters, up to `limit` tenants (default TENANT_SCAN_CAP)."""
        from mcp_memory.core import tenants

        limit = limit or tenants.TENANT_SCAN_CAP
        return await tenants.compact_tenants(self.counters, self.objects, dry_run=dry_run, limit=limit)

    async def calibrate(self, tenant: str, cases: Cases, *, progress: Progress | None = None) -> CalibrationReport:
        """Measure calibration `cases` that name `tenant`'s stored memories (reads, never
        writes); see core/calibration/calibrate.py. Cases with fact texts need no service: calibrate itself."""
        from mcp_memory.core.calibration.calibrate import calibrate

        return await calibrate(
            self.embedder,
            cases,
            floor=self.floor,
            high=self.high,
            vectors=self.vectors,
            tenant=tenant,
            progress=progress,
            retrieval=self.retrieval_mode,
            now=self.clock(),
            min_probability=self.min_probability,
        )

    # ----------------------------------------------------------------------- export and import

    async def export_tenants(self, *, all_tenants: bool, tenants: Sequence[str] = ()) -> builtins.list[str]:
        """The tenants an export covers: `tenants`, or every tenant with memories."""
        from mcp_memory.core.transfer.exporting import all_tenants as every_tenant

        return await every_tenant(self.objects) if all_tenants else list(dict.fromkeys(tenants))

    async def export(
        self,
        tenants: Sequence[str],
        *,
        write: Callable[[str], None],
        with_embeddings: bool = False,
        progress: Callable[[int], None] | None = None,
        format_name: str = "jsonl",
    ) -> ExportResult:
        """Write every memory of `tenants`, every conversation's notes included, through
        `write`: as mcp-memory's export (`jsonl`, core/transfer/file_format.py), or as `markdown`
        or `mcp-knowledge-graph` (core/transfer/other_exports.py). The operator's, as
        `mcp-memory export` and a backup are; `export_visible` writes what one caller sees."""
        from mcp_memory.core.transfer.exporting import export_memories, export_other
        from mcp_memory.core.version import __version__

        if format_name != "jsonl":
            return await export_other(
                format_name,
                tenants,
                vectors=self.vectors,
                write=write,
                exported_at=iso(self.clock()),
                progress=progress,
            )
        return await export_memories(
            tenants,
            vectors=self.vectors,
            counters=self.counters,
            embedder=self.embedder,
            write=write,
            with_embeddings=with_embeddings,
            exported_at=iso(self.clock()),
            exported_by=f"mcp-memory {__version__}",
            progress=progress,
        )

    async def export_visible(self, caller: Caller, *, write: Callable[[str], None]) -> ExportResult:
        """Write what `caller` sees as an export, as the web view downloads it: its tenant's
        project memories and its own conversation's notes, never another conversation's note or
        id (`export` is the operator's: every memory of the tenants; docs/transfer.md#export)."""
        from mcp_memory.core.transfer.exporting import as_seen_in, export_memories
        from mcp_memory.core.version import __version__

        return await export_memories(
            [caller.tenant],
            vectors=self.vectors,
            counters=self.counters,
            embedder=self.embedder,
            write=write,
            with_embeddings=False,
            exported_at=iso(self.clock()),
            exported_by=f"mcp-memory {__version__}",
            shown=as_seen_in(caller.conversation),
        )

    async def import_(
        self,
        source: Iterable[bytes],
        *,
        tenants: Sequence[str] | None = None,
        on_refused: Callable[[Refusal], None] | None = None,
        progress: Callable[[int], None] | None = None,
        dry_run: bool = False,
    ) -> ImportResult:
        """Import an export's lines (bytes) into this store, ids kept (core/transfer/importing.py);
        `dry_run` writes nothing."""
        from mcp_memory.core.transfer.importing import import_memories

        return await import_memories(
            source,
            vectors=self.vectors,
            objects=self.objects,
            counters=self.counters,
            embedder=self.embedder,
            tenants=tenants,
            on_refused=on_refused,
            progress=progress,
            dry_run=dry_run,
        )

    async def import_from(
        self,
        caller: Caller,
        format_name: str,
        paths: Sequence[Path],
        *,
        scope: Scope = "project",
        memory_type: MemoryType | None = None,
        dry_run: bool = False,
        context: ReadContext | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """Read `paths` as another tool's format (core/transfer/formats/) and remember what they
        state into `caller`'s memories by remember's rules (`remember_many`); a dry run writes
        nothing (docs/import_formats.md). Tenant and conversation come from `caller` alone,
        never from the files."""
        from pathlib import Path as _Path

        from mcp_memory.core.transfer.formats import ReadContext as _Context
        from mcp_memory.core.transfer.formats import read

        if context is None:
            home = _Path.home()
            context = _Context(home, home / ".claude", self.clock())
        reading = await asyncio.to_thread(read, format_name, list(paths), context)
        return await self.remember_many(
            caller,
            reading,
            source=format_name,
            scope=scope,
            memory_type=memory_type,
            dry_run=dry_run,
            progress=progress,
        )

    async def remember_many(
        self,
        caller: Caller,
        reading: Reading,
        *,
        source: str,
        scope: Scope = "project",
        memory_type: MemoryType | None = None,
        dry_run: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> ImportReport:
        """`remember` for each entry a format reader read, in bulk (core/transfer/remembering.py:
        the same checks, the same duplicate rule, the source's date kept, provenance tags)."""
        from mcp_memory.core.transfer.remembering import Remembering

        judge = Remembering(
            self.vectors, self.objects, self.embedder, self.clock, self.new_id, self._already_known, self.new_memory
        )
        return await judge.remember_many(
            caller, reading, source=source, scope=scope, memory_type=memory_type, dry_run=dry_run, progress=progress
        )

    async def imports(self, caller: Caller, *, limit: int = 50) -> builtins.list[ImportRun]:
        """The tenant's imports from other formats, newest first (the web view's stats page)."""
        from mcp_memory.core.object_keys import import_prefix
        from mcp_memory.core.transfer.bulk import ImportRun

        keys = await self.objects.list(import_prefix(caller.tenant), limit)
        bodies = await asyncio.gather(*(self.objects.get(key) for key in keys))
        runs = [ImportRun.parse(b.body) for b in bodies if b is not None]
        return [run for run in runs if run is not None]

    # ----------------------------------------------------------------------- lifecycle

    def start(self, flush_ms: int) -> None:
        """Start flushing the access counters every `flush_ms` (a serving process calls it once)."""
        self.counters.start(flush_ms)

    async def warm_up(self, tenant: str | None = None) -> None:
        """Load the embedding model now, so the first recall does not pay for it; given a
        tenant (serve-stdio knows its only one), load its vectors alongside: at 100,000
        memories that is most of a second the first recall would otherwise add to the
        model's load, and the rows its `path:` tags are read from (a tool hook's first file
        question: bench/RESULTS.md, "The path: tags read once per version"). A failure is
        logged; the first call reports it, with the reason. The modules a first recall would
        import (the stemmer, python-ulid) are imported alongside, in a worker thread."""
        jobs = []
        jobs.append(("embedder_warm_up_failed", self.embedder.warm_up()))
        jobs.append(("imports_warm_up_failed", asyncio.to_thread(_first_recall_imports)))
        if tenant is not None:
            jobs.append(("vectors_warm_up_failed", self.vectors.warm(tenant)))
            # and the memories tagged for files, which a tool hook's first file question looks up
            jobs.append(("tags_warm_up_failed", self.vectors.warm_tags(tenant, [_actions().PATH_TAG])))
        outcomes = await asyncio.gather(*(job for _, job in jobs), return_exceptions=True)
        for (event, _), outcome in zip(jobs, outcomes):
            if isinstance(outcome, Exception):
                self.log.error(event, outcome)
            elif isinstance(outcome, BaseException):
                raise outcome

    def describe_embedder(self) -> str:
        """`provider:model, <dim>d`, for the boot lines."""
        return describe(self.embedder)

    async def close(self) -> None:
        """Flush the counters once, then release the stores and the embedder."""
        try:
            await self.counters.stop()
        finally:
            await self.vectors.close()
            await self.objects.close()
            await self.embedder.close()
