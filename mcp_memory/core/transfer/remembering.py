"""remember, in bulk: what a format reader read (core/transfer/formats/), judged by remember's own
rules and written a chunk at a time (docs/import_formats.md). MemoryService.remember_many hands
its parts here; core/transfer/bulk.py holds the report, the checks of an entry and the run's
own duplicates. Imported when an import runs, never at start-up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_memory.core import dedup
from mcp_memory.core import recall as pipeline
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import iso
from mcp_memory.core.model import Caller, Memory, MemoryType, Scope
from mcp_memory.core.object_keys import memory_keys
from mcp_memory.core.ports import Embedder, ObjectStore, VectorStore
from mcp_memory.core.requests import RememberRequest
from mcp_memory.core.transfer.bulk import ImportReport
from mcp_memory.core.transfer.formats import Reading

if TYPE_CHECKING:
    import numpy as np

#: An import from another format judges and writes this many entries at a time (one write):
#: bench/RESULTS.md#importing-other-formats-benchlatencyimport_formatspy.
BULK_CHUNK = 64
#: ... and looks up and embeds this many at a time, in one call to the embedder, which sorts them
#: by length into its own batches, so a short text is not padded to a long one's length
#: (bench/RESULTS.md#importing-other-formats-benchlatencyimport_formatspy).
BULK_WINDOW = 8 * BULK_CHUNK
#: How many of the memories to be written an import's report shows.
PREVIEW_MEMORIES = 5

#: remember's duplicate rule for one text: (the stored memory it repeats, a near one), as
#: MemoryService._already_known answers.
AlreadyKnown = Callable[..., Awaitable[tuple[Memory | None, Memory | None]]]


def _unembedded(
    chunk: Sequence[tuple[Any, RememberRequest]], stored: dict[str, list[Memory]], seen: Any, report: ImportReport
) -> tuple[list[tuple[Any, RememberRequest]], list[Memory], int]:
    """(the chunk's entries still to embed and judge, the stored memories the others say word for
    word, the chunk's size), the others counted: in `_judge_chunk`'s order, an entry with the text
    of one this run took is a repeat within the files, one with a stored text a duplicate of the
    store."""
    rest: list[tuple[Any, RememberRequest]] = []
    found: list[Memory] = []
    for entry, args in chunk:
        text = args.content
        if seen.holds(text) and dedup.same(1.0, text, text):
            report.duplicates_within += 1
        elif text in stored:
            report.duplicates_of_store += 1
            found.extend(stored[text])
        else:
            rest.append((entry, args))
    return rest, found, len(chunk)


@dataclass(frozen=True)
class Remembering:
    """The service's parts an import writes with: its stores, its embedder, its clock and ids,
    remember's duplicate rule and remember's way of making a memory (MemoryService.new_memory)."""

    vectors: VectorStore
    objects: ObjectStore
    embedder: Embedder
    clock: Callable[[], float]
    new_id: Callable[[float], str]
    already_known: AlreadyKnown
    new_memory: Callable[[Caller, RememberRequest, float], Memory]

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
        """`remember` for each entry a format reader read, in bulk: the same checks (a refused
        entry is reported with its place), the same duplicate rule against the store and
        against the entries before it, the source's date kept (the import's time when it has
        none or names a later one), and two provenance tags (core/transfer/bulk.py).

        An entry whose text is stored word for word, or was accepted earlier in this run, is such
        a duplicate before it is embedded (`_stored_texts`, `RunIndex.holds`): a rerun costs
        lookups, not the model. The others are embedded BULK_WINDOW at a time and
        judged BULK_CHUNK at a time; each chunk's new memories are
        written together, the memories before their index keys, under the store's exclusive
        section. A rerun writes nothing twice: what the first run wrote is a duplicate of the
        store by then (and an index key it did not get is written).
        """
        from mcp_memory.core.transfer import bulk
        from mcp_memory.core.transfer.formats import Notice

        now = self.clock()
        report = bulk.ImportReport.starting(source, caller.tenant, dry_run, reading)
        tags = bulk.provenance(source, now)
        ready: list[tuple[Any, RememberRequest]] = []
        for entry in reading.entries:
            try:
                ready.append((entry, bulk.checked_args(entry, caller, scope=scope, memory_type=memory_type, tags=tags)))
            except InvalidArgument as exc:
                report.refused.append(Notice(entry.place, bulk.refusal(exc)))
        run_id = self.new_id(now)
        logged = bool(ready) and not dry_run  # a run that had nothing to judge leaves no record
        if logged:
            await self._log_import(caller, run_id, source, report, now, finished=False)
        seen = bulk.RunIndex(self.embedder.dim)
        for start in range(0, len(ready), BULK_WINDOW):
            window = ready[start : start + BULK_WINDOW]
            stored = await self._stored_texts(caller, [args.content for _, args in window], scope)
            plan = [
                _unembedded(window[i : i + BULK_CHUNK], stored, seen, report) for i in range(0, len(window), BULK_CHUNK)
            ]
            texts = [pipeline.embedding_input(args.content) for rest, _, _ in plan for _, args in rest]
            vectors = await self.embedder.embed(texts) if texts else None
            offset = 0
            for rest, found, size in plan:
                part = vectors[offset : offset + len(rest)] if vectors is not None and rest else None
                offset += len(rest)
                if dry_run:
                    await self._judge_chunk(caller, rest, part, scope, now, seen, report, write=False)
                else:
                    async with self.vectors.exclusive(caller.tenant):
                        await self._judge_chunk(caller, rest, part, scope, now, seen, report, write=True, found=found)
                if progress is not None:
                    progress(size)
        if logged:
            await self._log_import(caller, run_id, source, report, now, finished=True)
        return report

    async def _stored_texts(self, caller: Caller, contents: Sequence[str], scope: Scope) -> dict[str, list[Memory]]:
        """The stored memories that say these texts word for word and that `_already_known` would
        merge an entry into (visible to the caller; a project memory unless the import is the
        conversation's own), by text. A text the rule finds the same as itself (cosine 1, the same
        words; not one without a word) is a duplicate of its stored copy, so its entry needs no
        embedding (`VectorStore.same_text`). That test is read only for the texts found."""
        found = await self.vectors.same_text(caller.tenant, list(dict.fromkeys(contents))) if contents else None
        stored: dict[str, list[Memory]] = {}
        for memory in found or ():
            if memory.visible_to(caller.conversation) and (scope == "conversation" or memory.scope == "project"):
                stored.setdefault(memory.content, []).append(memory)
        return {text: memories for text, memories in stored.items() if dedup.same(1.0, text, text)}

    async def _judge_chunk(
        self,
        caller: Caller,
        chunk: Sequence[tuple[Any, RememberRequest]],
        vectors: np.ndarray | None,
        scope: Scope,
        now: float,
        seen: Any,
        report: ImportReport,
        *,
        write: bool,
        found: Sequence[Memory] = (),
    ) -> None:
        """Judge and (with `write`) store `chunk`, embedded as `vectors`; `found` are the stored
        memories that entries of the chunk already said word for word (their index keys are
        completed with the others')."""
        if vectors is None:
            if write:
                await self.index_missing(found)
            return
        known = await asyncio.gather(
            *(self.already_known(caller, args.content, vectors[i], scope=scope) for i, (_, args) in enumerate(chunk))
        )
        fresh: list[tuple[Memory, np.ndarray, Any]] = []
        existing: list[Memory] = []
        for i, (entry, args) in enumerate(chunk):
            if seen.same(args.content, vectors[i]) is not None:
                report.duplicates_within += 1
                continue
            stored = known[i][0]
            if stored is not None:
                report.duplicates_of_store += 1
                existing.append(stored)
                continue
            at = entry.created_ms if entry.created_ms is not None and 0 <= entry.created_ms <= now else now
            memory = self.new_memory(caller, args, at)
            seen.add(args.content, vectors[i])
            fresh.append((memory, vectors[i], entry))
        if write:
            fresh = await self._write_many(fresh, report)
            await self.index_missing([*existing, *found])
        report.new += len(fresh)
        if write:
            report.written.extend(m.id for m, _, _ in fresh)
        report.preview.extend(m for m, _, _ in fresh[: max(0, PREVIEW_MEMORIES - len(report.preview))])

    async def _write_many(
        self, fresh: list[tuple[Memory, np.ndarray, Any]], report: ImportReport
    ) -> list[tuple[Memory, np.ndarray, Any]]:
        """The memories, then their index keys; a memory the store's budget refuses is reported
        with its place, and the rest are written."""
        from mcp_memory.core.errors import BudgetExceeded
        from mcp_memory.core.transfer.formats import Notice

        if not fresh:
            return fresh
        try:
            await self.vectors.put_many([(m, v) for m, v, _ in fresh])
            written = fresh
        except BudgetExceeded:
            written = []
            for memory, vector, entry in fresh:
                try:
                    await self.vectors.put_many([(memory, vector)])
                except BudgetExceeded as exc:
                    report.refused.append(Notice(entry.place, str(exc)))
                    continue
                written.append((memory, vector, entry))
        await self.objects.put_many([(key, "") for m, _, _ in written for key in memory_keys(m)])
        return written

    async def index_missing(self, memories: Sequence[Memory]) -> None:
        """The index keys of these stored memories that are missing (an import stopped between a
        memory and its key): written now, as remember completes them (`MemoryService._ensure_indexed`)."""
        keys = [key for m in dict((m.id, m) for m in memories).values() for key in memory_keys(m)]
        found = await asyncio.gather(*(self.objects.get(key) for key in keys))
        missing = [(key, "") for key, stored in zip(keys, found) if stored is None]
        if missing:
            await self.objects.put_many(missing)

    async def _log_import(
        self, caller: Caller, run_id: str, source: str, report: ImportReport, now: float, *, finished: bool
    ) -> None:
        from mcp_memory.core.object_keys import import_key
        from mcp_memory.core.transfer.bulk import ImportRun

        run = ImportRun(
            source,
            iso(now),
            iso(self.clock()) if finished else None,
            report.files,
            report.new,
            report.duplicates_of_store + report.duplicates_within,
            len(report.refused),
        )
        await self.objects.put(import_key(caller.tenant, run_id), run.body())
