"""Newest wins among near memories (docs/recall.md#newer-memories-first).

Two results near each other most likely state one subject twice, the later one after something
changed: their embeddings are as near as remember's `near` rule asks of a possible correction
(cosine >= NEAR_SIMILARITY), or they share most of their words (the dedup rule's word overlap)
with a cosine that distinct facts rarely reach (NEAR_WITH_WORDS): a restatement that swaps one
name ("goes to Sentry" / "goes to Rollbar") moves the embedding more than a changed number does.
The newer ranks first unless the older is clearly more relevant to the question (the newer's
relevance below CLEAR_RATIO of the older's: a word of the question only the older holds, an
identifier it names), and the older is marked as possibly superseded by the newer, whichever
ranks first. Memories stored at the same millisecond have no
order, so nothing moves between them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from mcp_memory.core.ids import parse_iso
from mcp_memory.core.model import Memory, Ranked
from mcp_memory.core.ranking import DEDUP_WORD_OVERLAP, word_overlap

if TYPE_CHECKING:  # numpy loads with the first vector
    import numpy as np

#: Cosine at or above which two memories are near: remember names such a memory as the one the
#: new memory may correct: above what distinct facts reach with the local model on the built-in
#: calibration set, below most rewordings of one fact
#: (bench/RESULTS.md#near-memories-the-cosines-of-distinct-facts-and-of-rewordings).
NEAR_SIMILARITY = 0.75
#: With the dedup rule's word overlap (half the words shared), this cosine is enough to be near.
NEAR_WITH_WORDS = 0.5
#: An older memory keeps its place above a newer near one when the newer's relevance (cosine plus
#: keyword evidence) is below this share of the older's. A longer restatement ("... since remote
#: caching") dilutes both signals by a fifth or so; a question naming what only the older holds
#: moves the keyword evidence by far more (bench/RESULTS.md#newer-memories-first).
CLEAR_RATIO = 0.7


class Nearness:
    """The `near` rule between two memories whose embeddings are known (one without is near
    nothing): what newest-first moves by, and what HIGH skips when it judges the runner-up."""

    def __init__(self, vectors: Mapping[str, np.ndarray], texts: Mapping[str, str]) -> None:
        self.vectors = vectors
        self._texts = texts
        self._judged: dict[tuple[str, str], bool] = {}

    def knows(self, memory_id: str) -> bool:
        return memory_id in self.vectors and memory_id in self._texts

    def __call__(self, a: str, b: str) -> bool:
        if a == b or not self.knows(a) or not self.knows(b):
            return False
        if (a, b) not in self._judged:
            import numpy as np

            cosine = float(np.dot(self.vectors[a].astype(np.float32), self.vectors[b].astype(np.float32)))
            self._judged[(a, b)] = self._judged[(b, a)] = near_by(cosine, self._texts[a], self._texts[b])
        return self._judged[(a, b)]


def near_by(cosine: float, a: str, b: str) -> bool:
    """The `near` rule for two texts whose embeddings have this cosine."""
    return cosine >= NEAR_SIMILARITY or (cosine >= NEAR_WITH_WORDS and word_overlap(a, b) >= DEDUP_WORD_OVERLAP)


def newer_of(memories: Sequence[Memory], vectors: Mapping[str, np.ndarray]) -> dict[str, str]:
    """Each of `memories` that a newer one of them is near, mapped to the newest such: the memories
    recall marks `possibly superseded by the newer` (the digest marks them so too). One matrix
    product for all the pairs: the digest weighs up to 200 memories."""
    import numpy as np

    known = [m for m in memories if m.id in vectors]
    if len(known) < 2:
        return {}
    matrix = np.stack([vectors[m.id] for m in known]).astype(np.float32)
    cosines = matrix @ matrix.T
    at = [parse_iso(m.created_at) for m in known]
    newest: dict[str, str] = {}  # older id -> the newest memory near it
    for i, older in enumerate(known):
        newest_at = None
        for j, newer in enumerate(known):
            if at[j] > at[i] and (newest_at is None or at[j] > newest_at):
                if near_by(float(cosines[i, j]), older.content, newer.content):
                    newest[older.id], newest_at = newer.id, at[j]
    return newest


def nearness(vectors: Mapping[str, np.ndarray], memories: Iterable[Memory]) -> Nearness:
    """The `near` rule over `memories` with these embeddings."""
    return Nearness(vectors, {m.id: m.content for m in memories})


def newest_first(results: Sequence[Ranked], vectors: Mapping[str, np.ndarray]) -> list[Ranked]:
    """`results` (ranked) with each newer near memory moved above an older one it is near, unless
    the older is clearly more relevant, and every older one of a near pair marked `superseded_by`."""
    return _newest_first(results, nearness(vectors, (r.memory for r in results)))


def _newest_first(results: Sequence[Ranked], near: Nearness) -> list[Ranked]:
    shown = [r for r in results if near.knows(r.memory.id)]
    if len(shown) < 2:
        return list(results)
    at = {r.memory.id: parse_iso(r.memory.created_at) for r in shown}

    newest: dict[str, str] = {}  # older id -> the newest memory near it
    for a in at:
        for b in at:
            if at[b] > at[a] and near(a, b) and (a not in newest or at[b] > at[newest[a]]):
                newest[a] = b
    if not newest:
        return list(results)
    order = list(results)
    for _ in range(len(order) ** 2):  # each move lifts a newer memory over an older near one
        move = next(
            (
                (i, j)
                for i, older in enumerate(order)
                for j in range(i + 1, len(order))
                if at.get(order[j].memory.id, 0) > at.get(older.memory.id, 0)
                and near(older.memory.id, order[j].memory.id)
                and order[j].relevance >= older.relevance * CLEAR_RATIO
            ),
            None,
        )
        if move is None:
            break
        order.insert(move[0], order.pop(move[1]))
    return [replace(r, superseded_by=newest[r.memory.id]) if r.memory.id in newest else r for r in order]


def settle(results: Sequence[Ranked], near: Nearness) -> list[Ranked]:
    """The results as recall shows them: newest first (`newest_first`), then the standings read in
    the order shown. A newer memory lifted above an older one it is near takes the standing of the
    best result it was lifted over (its place), so the first result reads 100 % and no result reads
    a lower share above a higher one; when nothing moves, every result keeps its own standing."""
    out: list[Ranked] = []
    best_below = 0.0
    for r in reversed(_newest_first(results, near)):
        best_below = max(best_below, r.standing)
        out.append(r if r.standing == best_below else replace(r, standing=best_below))
    return out[::-1]
