"""Search (docs/web.md#search): `recall` itself, with why each result matched and what it gated out."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response

from mcp_memory.core import arguments
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.fusion import COVERAGE_HIGH, MARGIN_HIGH, QUESTION_TERMS, clear_of
from mcp_memory.core.keywords import query_terms
from mcp_memory.core.model import MEMORY_TYPES, MODES, Retrieval
from mcp_memory.core.recall import retrieval_mode
from mcp_memory.web.endpoint import Ctx, guarded


@guarded()
async def search(ctx: Ctx) -> Response:
    query = ctx.one("q")
    values: dict[str, Any] = {
        "title": "Search",
        "query": query,
        "modes": MODES,
        "types": MEMORY_TYPES,
        "chosen": {"mode": ctx.one("mode"), "type": ctx.one("type"), "tag": ctx.one("tag")},
    }
    if not query.strip():
        return ctx.page("search.html", **values)
    arguments.check_text("query", query)
    arguments.check_query(query)
    mode = ctx.one("mode") or None
    if mode is not None and mode not in MODES:
        raise InvalidArgument(f"{{field}} must be one of {', '.join(MODES)}.", field="mode")
    memory_type = ctx.one("type") or None
    if memory_type is not None and memory_type not in MEMORY_TYPES:
        raise InvalidArgument(f"{{field}} must be one of {', '.join(MEMORY_TYPES)}.", field="type")
    started = time.perf_counter()
    result = await ctx.view.service.recall(ctx.caller, query, mode=mode, memory_type=memory_type, tags=ctx.many("tag"))
    values.update(
        result=result,
        judged=judged(result, ctx.view.service),
        rows=[why(r.similarity, r.keyword, r.relevance) for r in result.results],
        gated=[(c, why(c.similarity, c.keyword, c.relevance)) for c in result.gated_out],
        ms=round((time.perf_counter() - started) * 1000),
    )
    return ctx.page("search.html", **values)


def why(similarity: float, keyword: float, relevance: float) -> dict[str, float]:
    """How much of a result's relevance the embedding gave and how much the keywords did."""
    embedding = max(min(similarity, relevance), 0.0)
    words = max(relevance - embedding, 0.0)
    total = embedding + words
    return {"embedding": embedding / total if total else 0.0, "keywords": words / total if total else 0.0}


@dataclass(frozen=True)
class Check:
    """One thing that weighed in the judgment of the top result, and which way (None: not known)."""

    text: str
    met: bool | None


@dataclass(frozen=True)
class Judged:
    """Why the answer is in its band: the label, a line saying what the band is read from, and the
    checks or reasons behind it."""

    title: str
    hint: str
    checks: list[Check]


TITLES = {
    "high": "Why HIGH",
    "medium": "Why MEDIUM, not HIGH",
    "low": "Why LOW, not MEDIUM",
}


def judged(result: Any, service: Any) -> Judged | None:
    """Why the answer is in its band. With a probability (hybrid retrieval, the second stage of
    docs/recall.md#the-probability): the answer's probability against where the bands start, and
    the aspects that weighed most in it. Without (dense or keyword retrieval): HIGH's rule
    conditions, each checked (`rule_checks`)."""
    if result.probability is None:
        return rule_checks(result, high=service.high, retrieval=service.retrieval)
    if not result.found_any:
        return None
    bands = service.judge.bands
    p = _percent(result.probability)
    if result.unanswered:
        title = "Why nothing answers"
        hint = f"The closest memory is {p} likely to answer; below {_percent(bands.floor)} nothing stored answers."
    else:
        title = TITLES.get(result.confidence, "Why")
        hint = (
            f"The top result is {p} likely to answer. HIGH starts at {_percent(bands.high)}, "
            f"MEDIUM at {_percent(bands.medium)}, LOW at {_percent(bands.floor)}. What weighed most:"
        )
    return Judged(title, hint, [Check(r.text, r.raises) for r in result.reasons])


def _percent(p: float) -> str:
    return f"{min(99, max(1, round(p * 100)))} %" if 0 < p < 1 else f"{round(p * 100)} %"


def rule_checks(result: Any, *, high: float, retrieval: Retrieval) -> Judged | None:
    """HIGH's conditions (docs/recall.md#confidence) checked on what recall reports when no model
    judges (dense or keyword retrieval): the results' relevance and cosine against the HIGH mark
    and against each other. The share of the question a memory holds is not reported, so it is
    told apart only when the other two hold."""
    if not result.results or result.confidence not in ("high", "medium"):
        return None
    top, is_high = result.results[0], result.confidence == "high"
    title = "Why HIGH" if is_high else "Why MEDIUM, not HIGH"
    hint = "HIGH needs the top result to:"
    rest = [*result.results[1:], *result.gated_out]
    if not retrieval_mode(retrieval).keywords:  # the cosine is the relevance
        return Judged(title, hint, [_reach(high, "cosine", top.similarity)])
    if len(query_terms(result.query)) > QUESTION_TERMS:  # a conversation or a pasted text: its meaning
        return Judged(
            title,
            hint,
            [
                _reach(high, "cosine", top.similarity),
                _lead("cosine", top.similarity, [c.similarity for c in rest], is_high),
            ],
        )
    reach = _reach(high, "relevance", top.relevance)
    lead = _lead("relevance", top.relevance, [c.relevance for c in rest], is_high)
    held = None if not is_high and not (reach.met and lead.met) else is_high
    words = f"hold {round(COVERAGE_HIGH * 100)} % of the question's information (its words, the rarer weighing more)"
    return Judged(title, hint, [reach, Check(words, held), lead])


def _reach(high: float, score: str, value: float) -> Check:
    return Check(f"reach the HIGH mark {high:.2f}: its {score} is {value:.2f}", value >= high)


def _lead(score: str, top: float, others: list[float], is_high: bool) -> Check:
    wanted = f"stand {MARGIN_HIGH:.2f} clear of the next candidate"
    if not others:
        return Check(f"{wanted}: there is no other candidate", True)
    lead = top - max(others)
    if clear_of(top, max(others)):
        return Check(f"{wanted}: it leads it by {lead:.2f} in {score}", True)
    if is_high:  # HIGH all the same: the closer ones restate or update the top, and are no rivals
        return Check(f"{wanted}: the closer ones say the same or update it, so they do not count", True)
    return Check(
        f"{wanted}: it leads it by {lead:.2f} in {score} (a memory that restates the top would not count)", False
    )
