"""Import: an export file's memories into the configured store, ids kept.

Records are read a line at a time and written a chunk at a time. For each
chunk, per tenant:

1. ask the store which ids it already holds (`get`): those are "already
   present" and nothing of them is written — the id is the identity, so there
   is no dedup by meaning, and a second import of the same file writes nothing;
2. embed what needs it, in batches (the file's vectors are used when its model
   and dimension are the configured embedder's);
3. seed the access counts into merged.json (`AccessCounters.seed`: set, not
   add, so a rerun writes the same numbers);
4. write the recency-index keys, then the memories (`put_many`).

The order makes an import killed at any point (kill -9) complete when run
again: a memory is written last, so one that is present had its counts and
its index key written before it; one that is absent has them written (again,
identically) on the rerun. Nothing is ever counted twice, and nothing is lost.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp_memory.core.counters.codec import Entry
from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.errors import BudgetExceeded
from mcp_memory.core.model import Memory
from mcp_memory.core.object_keys import memory_keys
from mcp_memory.core.ports import Embedder, ObjectStore, VectorStore
from mcp_memory.core.transfer.file_format import (
    Header,
    ImportRecord,
    RecordRefused,
    parse_header,
    parse_record,
    record_tenant,
)

__all__ = ["CHUNK", "EMBED_BATCH", "ImportResult", "Refusal", "import_memories"]

#: Records checked against the store and written together.
CHUNK = 500
#: Texts per call to the embedder when re-embedding.
EMBED_BATCH = 64


@dataclass(frozen=True, slots=True)
class Refusal:
    line: int
    reason: str


@dataclass
class ImportResult:
    imported: int = 0
    already_present: int = 0
    re_embedded: int = 0
    refused: int = 0
    #: Records of tenants the operator did not name (`--tenant`): not written, not refused.
    skipped: int = 0
    #: Memories imported, per tenant.
    tenants: dict[str, int] = field(default_factory=dict)
    #: The file's header (None when the file was refused as a whole).
    header: Header | None = None


class FileRefused(RecordRefused):
    """The file as a whole cannot be imported (no header, or a newer format); nothing was written."""


def _lines(source: Iterable[bytes]) -> Iterable[tuple[int, object | RecordRefused]]:
    """(line number, parsed JSON or the reason it is not) for each non-blank line."""
    for number, raw in enumerate(source, 1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, RecordRefused("the line is not UTF-8 text")
            continue
        try:
            yield number, json.loads(text)
        except (ValueError, RecursionError) as exc:
            if not raw.endswith(b"\n"):
                yield number, RecordRefused("the file ends in the middle of this record (it was cut short)")
            else:
                yield number, RecordRefused(f"not valid JSON ({exc})")


async def import_memories(
    source: Iterable[bytes],
    *,
    vectors: VectorStore,
    objects: ObjectStore,
    counters: AccessCounters,
    embedder: Embedder,
    tenants: Collection[str] | None = None,
    on_refused: Callable[[Refusal], None] | None = None,
    progress: Callable[[int], None] | None = None,
    dry_run: bool = False,
) -> ImportResult:
    """Import the export in `source` (its lines, as bytes). `tenants`: only these tenants'
    records are imported, the others skipped; None imports every tenant the file holds.
    `dry_run`: read, check and look each id up, write nothing (`imported` counts what would be).

    A record that cannot be imported is refused (reported to `on_refused`) and the
    rest continue. A file without a valid header, or of a newer format, raises
    FileRefused before anything is written.
    """
    result = ImportResult()
    lines = iter(_lines(source))
    first = next(lines, None)
    if first is None:
        raise FileRefused("the file is empty: an export starts with its header line")
    number, value = first
    if isinstance(value, RecordRefused):
        raise FileRefused(f"line {number}: {value}")
    try:
        header = parse_header(value)
    except RecordRefused as exc:
        raise FileRefused(f"line {number}: {exc}") from None
    result.header = header
    vector_dim = header.dim if header.same_model(embedder.model, embedder.dim) else None
    wanted = frozenset(tenants) if tenants is not None else None

    def refuse(line: int, reason: str) -> None:
        result.refused += 1
        if on_refused is not None:
            on_refused(Refusal(line, reason))

    def read_chunk() -> _Parsed | None:
        """The next CHUNK records, read and checked (on a worker thread)."""
        parsed = _Parsed()
        for number, value in lines:
            if isinstance(value, RecordRefused):
                parsed.refusals.append((number, str(value)))
                continue
            try:
                tenant = record_tenant(value)
                if wanted is not None and tenant not in wanted:
                    parsed.skipped += 1
                    continue
                assert isinstance(value, dict)
                parsed.records.append((number, parse_record(value, tenant, vector_dim=vector_dim)))
            except RecordRefused as exc:
                parsed.refusals.append((number, str(exc)))
                continue
            if len(parsed.records) >= CHUNK:
                return parsed
        return parsed if parsed.records or parsed.refusals or parsed.skipped else None

    # The next chunk is read and checked on a thread while this one is written: the
    # checks are Python, the writes mostly the store's own code, so the two overlap.
    reading = asyncio.ensure_future(asyncio.to_thread(read_chunk))
    try:
        while (parsed := await reading) is not None:
            reading = asyncio.ensure_future(asyncio.to_thread(read_chunk))
            for number, reason in parsed.refusals:
                refuse(number, reason)
            result.skipped += parsed.skipped
            if parsed.records:
                await _write_chunk(
                    parsed.records, result, vectors, objects, counters, embedder, refuse, progress, dry_run
                )
    finally:
        if not reading.done():  # a write failed: let the read in flight finish before the source closes
            await asyncio.wait([reading])
        if not reading.cancelled():
            reading.exception()  # retrieved: a failed write is what the caller hears about
    return result


@dataclass
class _Parsed:
    records: list[tuple[int, ImportRecord]] = field(default_factory=list)
    refusals: list[tuple[int, str]] = field(default_factory=list)
    skipped: int = 0


async def _write_chunk(
    chunk: list[tuple[int, ImportRecord]],
    result: ImportResult,
    vectors: VectorStore,
    objects: ObjectStore,
    counters: AccessCounters,
    embedder: Embedder,
    refuse: Callable[[int, str], None],
    progress: Callable[[int], None] | None,
    dry_run: bool = False,
) -> None:
    lines = {id(record.memory): number for number, record in chunk}
    by_tenant: dict[str, list[ImportRecord]] = {}
    for _, record in chunk:
        by_tenant.setdefault(record.memory.tenant, []).append(record)
    for tenant, records in by_tenant.items():
        present = {m.id for m in await vectors.get(tenant, [r.memory.id for r in records])}
        fresh: dict[str, ImportRecord] = {}
        for record in records:
            if record.memory.id in present or record.memory.id in fresh:
                result.already_present += 1
            else:
                fresh[record.memory.id] = record
        if not fresh:
            continue
        if dry_run:
            result.imported += len(fresh)
            result.tenants[tenant] = result.tenants.get(tenant, 0) + len(fresh)
            continue
        embeddings = {r.memory.id: r.embedding for r in fresh.values() if r.embedding is not None}
        missing = [r for r in fresh.values() if r.embedding is None]
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            rows = await embedder.embed([r.memory.content for r in batch])
            embeddings.update((r.memory.id, rows[i]) for i, r in enumerate(batch))
        await counters.seed(
            tenant, {i: Entry(r.access.access, r.access.last_at) for i, r in fresh.items() if r.access is not None}
        )
        await objects.put_many([(key, "") for r in fresh.values() for key in memory_keys(r.memory)])
        items = [(r.memory, embeddings[i]) for i, r in fresh.items()]
        try:
            await vectors.put_many(items)
        except BudgetExceeded:  # the store's metadata budget: find the records it refuses
            items = await _put_one_by_one(items, lines, vectors, objects, refuse)
        result.imported += len(items)
        if len(items) == len(fresh):
            result.re_embedded += len(missing)
        else:
            written = {m.id for m, _ in items}
            result.re_embedded += sum(1 for r in missing if r.memory.id in written)
        result.tenants[tenant] = result.tenants.get(tenant, 0) + len(items)
    if progress is not None:
        progress(len(chunk))


async def _put_one_by_one(
    items: list[tuple[Memory, Any]],
    lines: dict[int, int],
    vectors: VectorStore,
    objects: ObjectStore,
    refuse: Callable[[int, str], None],
) -> list[tuple[Memory, Any]]:
    """Write each memory on its own; refuse those the store's budget refuses (and drop the
    index keys written for them). The ones written are returned."""
    written = []
    for memory, embedding in items:
        try:
            await vectors.put_many([(memory, embedding)])
        except BudgetExceeded as exc:
            await objects.delete(memory_keys(memory))
            refuse(lines[id(memory)], str(exc))
            continue
        written.append((memory, embedding))
    return written
