"""Recall quality by retrieval (dense / keyword / hybrid), mode and pass, for any labelled set.

Shared by `bench/quality/project_set.py` (the project-memory dev set) and `bench/quality/madial.py` (MADial-Bench).
A set is a list of `Probe`s (tenant, query, gold ids; no gold = an absent question) over memories
stored through the real `remember`. What is measured, per retrieval × mode × pass:

- R@1, R@5, R@10 and hit@5 over the answerable probes (R@k: the share of a probe's gold ids in its
  top k, averaged), through `recall` at limit 50;
- per confidence label, how many answerable probes got it and how often their top result is gold;
- for absent probes, how often each label comes back (and how often nothing does).

Cold: zero access counts. Warm: first a round of agent calls over every probe, in order, at the
mode's default limit, counted as in production; then the measured limit-50 calls, which count
nothing. Every call shares one fixed clock, so recency and trust are equal for every memory.

The retrieval switch lives in `open_retrieval` only: the service is opened with
`RECALL_RETRIEVAL=<name>`, and a service that does not know the setting (no `retrieval`
attribute) is dense-only, so its keyword and hybrid rows are left out, not faked.

References computed outside the service: exact cosine with the raw model, and a plain BM25 over the
same texts with SQLite FTS5 (unicode61 tokenizer, OR of the query's words) — a baseline, not ours.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core import ranking
from mcp_memory.core.arguments import LIMIT_MAX
from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService

RETRIEVALS = ("dense", "keyword", "hybrid")
MODES = ("precision", "balanced", "exploratory")
KS = (1, 5, 10)
LABELS = ("high", "medium", "low", "none")  # "low" until 2026-12-01, "none" since: no results
NOW_MS = 1_780_000_000_000.0  # 2026-05-28: one instant for every remember and recall


@dataclass(frozen=True)
class Probe:
    tenant: str
    query: str
    gold: frozenset[Hashable]
    group: tuple[str, ...] = ()  # slices this probe belongs to (e.g. "identifier", "Korean")


@dataclass(frozen=True)
class Outcome:
    ranked: list[Hashable]  # external ids, best first
    confidence: str
    empty: bool  # recall returned nothing


@dataclass
class Stored:
    back: dict[str, list[Hashable]] = field(default_factory=dict)  # memory id -> external ids
    merged: list[tuple[Hashable, Hashable]] = field(default_factory=list)  # (dropped, kept) by dedup


# --------------------------------------------------------------------------- the service


class CachedEmbedder:
    """The service's embedder, remembering the vector of each single text it has embedded: the
    passes ask the model the same questions many times, and one text always embeds the same."""

    _vectors: dict[tuple[str, str, str], np.ndarray] = {}

    def __init__(self, inner) -> None:
        self.inner = inner

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    async def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) != 1:
            return await self.inner.embed(texts)
        key = (self.inner.provider, self.inner.model, texts[0])
        if key not in self._vectors:
            self._vectors[key] = await self.inner.embed(texts)
        return self._vectors[key]

    async def close(self) -> None:
        await self.inner.close()


async def close(service: MemoryService) -> None:
    """Close without flushing this pass's counts into the store: the next service opened over the
    same storage must start cold."""
    fresh_counters(service)
    await service.close()


# --------------------------------------------------------------------------- the retrieval switch


async def open_retrieval(env: dict[str, str], retrieval: str) -> MemoryService | None:
    """A service over the storage in `env` that retrieves by `retrieval`, or None when this
    build of the service cannot (before the hybrid engine, only "dense" exists)."""
    service = await open_service(Settings.from_env({**env, "RECALL_RETRIEVAL": retrieval}))
    if getattr(service, "retrieval", "dense") != retrieval:
        await close(service)
        return None
    service.clock = lambda: NOW_MS
    service.embedder = CachedEmbedder(service.embedder)
    return service


# --------------------------------------------------------------------------- storing and passes


async def store(service: MemoryService, items: Sequence[tuple[str, Hashable, str, str]]) -> Stored:
    """remember (tenant, external id, text, memory type) in order; a memory merged by dedup stands
    for every external id it absorbed."""
    stored = Stored()
    for tenant, ext, text, memory_type in items:
        result = await service.remember(Caller(tenant), text, memory_type=memory_type)
        owners = stored.back.setdefault(result.memory.id, [])
        if not result.created:
            stored.merged.append((ext, owners[0]))
        owners.append(ext)
    return stored


@contextlib.contextmanager
def not_counted(service: MemoryService) -> Iterator[None]:
    """Run a recall without recording its results (the measurement, not the agent's call)."""
    service.counters.record = lambda *args, **kwargs: None  # instance attribute shadows the method
    try:
        yield
    finally:
        del service.counters.record


def fresh_counters(service: MemoryService) -> None:
    """Zero access counts: a new AccessCounters over the same store (nothing was ever flushed)."""
    service.counters = AccessCounters(service.objects, pod_id="bench", log=NullLog())


async def recall_pass(
    service: MemoryService, probes: Sequence[Probe], stored: Stored, mode: str, warm: bool
) -> list[Outcome]:
    fresh_counters(service)
    if warm:  # the agents' round: default limit, counted as the service counts
        for p in probes:
            await service.recall(Caller(p.tenant), p.query, mode=mode)
    outcomes = []
    with not_counted(service):
        for p in probes:
            result = await service.recall(Caller(p.tenant), p.query, limit=LIMIT_MAX, mode=mode)
            ranked = [ext for r in result.results for ext in stored.back[r.memory.id]]
            outcomes.append(Outcome(ranked, result.confidence, not result.results))
    return outcomes


# --------------------------------------------------------------------------- references


async def cosine_rankings(
    service: MemoryService, items: Sequence[tuple[str, Hashable, str, str]], probes: Sequence[Probe]
) -> list[list[Hashable]]:
    """Exact cosine of each query with every memory of its tenant, one text per embed call."""
    embed = service.embedder.embed
    by_tenant: dict[str, list[tuple[Hashable, np.ndarray]]] = {}
    for tenant, ext, text, _ in items:
        by_tenant.setdefault(tenant, []).append((ext, (await embed([text]))[0]))
    out = []
    for p in probes:
        q = (await embed([p.query]))[0]
        sims = [(float(np.dot(q, v)), ext) for ext, v in by_tenant[p.tenant]]
        out.append([ext for _, ext in sorted(sims, key=lambda s: -s[0])])
    return out


def bm25_rankings(items: Sequence[tuple[str, Hashable, str, str]], probes: Sequence[Probe]) -> list[list[Hashable]]:
    """Plain BM25 (SQLite FTS5, unicode61, OR of the query's distinct words) within the tenant."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(tenant UNINDEXED, ext UNINDEXED, body)")
    keys = {}
    for n, (tenant, ext, text, _) in enumerate(items):
        keys[str(n)] = ext
        db.execute("INSERT INTO docs VALUES (?, ?, ?)", (tenant, str(n), text))
    out = []
    for p in probes:
        words = dict.fromkeys(w for w in re.findall(r"[^\W_]+", p.query.lower()))
        if not words:
            out.append([])
            continue
        match = " OR ".join(f'"{w}"' for w in words)
        rows = db.execute(
            "SELECT ext FROM docs WHERE docs MATCH ? AND tenant = ? ORDER BY bm25(docs) LIMIT ?",
            (match, p.tenant, LIMIT_MAX),
        )
        out.append([keys[e] for (e,) in rows])
    db.close()
    return out


# --------------------------------------------------------------------------- metrics


def recall_at(ranked: Sequence[Hashable], gold: frozenset, k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold)


def quality(rankings: Sequence[Sequence[Hashable]], probes: Sequence[Probe]) -> dict[str, float | int]:
    """R@1/5/10 and hit@5 in %, over the answerable probes given."""
    pairs = [(r, p) for r, p in zip(rankings, probes) if p.gold]
    n = len(pairs) or 1
    out: dict[str, float | int] = {f"R@{k}": 100 * sum(recall_at(r, p.gold, k) for r, p in pairs) / n for k in KS}
    out["hit@5"] = 100 * sum(bool(set(r[:5]) & p.gold) for r, p in pairs) / n
    out["n"] = len(pairs)
    return out


def by_group(rankings, probes, groups: Sequence[str]) -> dict[str, dict[str, float | int]]:
    out = {}
    for g in groups:
        chosen = [(r, p) for r, p in zip(rankings, probes) if g in p.group]
        out[g] = quality([r for r, _ in chosen], [p for _, p in chosen])
    return out


def confidence(outcomes: Sequence[Outcome], probes: Sequence[Probe]) -> dict[str, dict[str, float | int]]:
    """Per label: answerable probes that got it, how many of those have a gold top result; and
    absent probes that got it (plus absent probes answered with nothing at all)."""
    out: dict[str, dict[str, float | int]] = {}
    absent = [o for o, p in zip(outcomes, probes) if not p.gold]
    for label in sorted({o.confidence for o in outcomes}, key=lambda s: (LABELS + (s,)).index(s)):
        got = [(o, p) for o, p in zip(outcomes, probes) if p.gold and o.confidence == label]
        right = sum(bool(o.ranked) and o.ranked[0] in p.gold for o, p in got)
        out[label] = {
            "n": len(got),
            "right": right,
            "precision": 100 * right / len(got) if got else float("nan"),
            "absent": sum(o.confidence == label for o in absent),
        }
    out["absent"] = {"n": len(absent), "empty": sum(o.empty for o in absent)}
    return out


# --------------------------------------------------------------------------- Markdown


def pct(x: float) -> str:
    return "–" if x != x else f"{x:.1f}"


def quality_table(rows: Sequence[dict], groups: Sequence[str]) -> list[str]:
    """rows: {"retrieval", "mode", "pass", "all": quality(...), "groups": by_group(...)}."""
    head = "| retrieval | mode | pass | R@1 | R@5 | R@10 | hit@5 |" + "".join(f" R@5 {g} |" for g in groups)
    out = [head, "|" + "---|" * (7 + len(groups))]
    for r in rows:
        q = r["all"]
        cells = [r["retrieval"], r["mode"], r["pass"], *(pct(q[k]) for k in ("R@1", "R@5", "R@10", "hit@5"))]
        cells += [pct(r["groups"][g]["R@5"]) for g in groups]
        out.append("| " + " | ".join(cells) + " |")
    if groups and rows:
        sizes = ", ".join(f"{g} {rows[0]['groups'][g]['n']}" for g in groups)
        out += ["", f"Answerable questions: {rows[0]['all']['n']} ({sizes})."]
    return out


def confidence_table(rows: Sequence[dict], absent: bool = True) -> list[str]:
    """rows: {"retrieval", "mode", "pass", "confidence": confidence(...)}; `absent`: the set has
    absent questions, and their columns are printed."""
    head = "| retrieval | mode | pass | HIGH: n, top-1 right | MEDIUM: n, top-1 right | LOW: n, top-1 right |"
    if absent:
        head += " absent → HIGH | absent → MEDIUM | absent → LOW | absent → nothing returned |"
    out = [head, "|" + "---|" * (10 if absent else 6)]
    for r in rows:
        c = r["confidence"]
        empty = {"n": 0, "precision": float("nan"), "absent": 0}
        cells = [r["retrieval"], r["mode"], r["pass"]]
        cells += [f"{c.get(lab, empty)['n']}, {pct(c.get(lab, empty)['precision'])} %" for lab in LABELS]
        n = c["absent"]["n"] or 1
        if absent:
            cells += [
                f"{c.get(lab, empty)['absent']} ({100 * c.get(lab, empty)['absent'] / n:.0f} %)" for lab in LABELS
            ]
            cells.append(f"{c['absent']['empty']} ({100 * c['absent']['empty'] / n:.0f} %)")
        out.append("| " + " | ".join(cells) + " |")
    return out


def mode_limits() -> str:
    return ", ".join(f"{m} {ranking.MODE_TABLE[m].limit}" for m in MODES)
