"""`--from mcp-memory-service`: the JSON export of mcp-memory-service (its export script and
MemoryExporter, in that project's repository; docs/import_formats.md#mcp-memory-service):

    {"export_metadata": {"source_machine": "...", "export_timestamp": "...", ...},
     "memories": [{"content": "...", "content_hash": "...", "tags": ["..."],
                   "created_at": 1692633600.0, "updated_at": 1692633600.0,
                   "memory_type": "note", "metadata": {...}}]}

Kept: `content`, `tags`, `created_at` (epoch seconds; `created_at_iso` when it is missing) as
the date, `memory_type` as the source's type. Not kept: `metadata`, `content_hash` (duplicates
are judged by meaning, as remember judges them), `updated_at`, an `embedding` (another model's).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_memory.core.transfer.formats import Entry, Notice, Place, ReadContext, Reading
from mcp_memory.core.transfer.formats.files import (
    FileRefused,
    load_json,
    named_texts,
    notice_identity,
    parse_time,
    string_list,
)


def read(paths: Sequence[Path], context: ReadContext) -> Reading:
    reading = Reading()
    for file, text in named_texts(paths, reading, "a folder: name the export file"):
        try:
            document = load_json(text)
        except FileRefused as exc:
            reading.refused.append(Notice(Place(file), str(exc)))
            continue
        memories = document.get("memories") if isinstance(document, dict) else None
        if not isinstance(memories, list):
            reading.refused.append(Notice(Place(file), 'not an mcp-memory-service export: it has no "memories" list'))
            continue
        reading.files += 1
        for index, record in enumerate(memories):
            _record(record, Place(file, item=f"memories[{index}]"), reading)
    return reading


def _record(record: Any, place: Place, reading: Reading) -> None:
    refuse = reading.refused.append
    if not isinstance(record, dict):
        refuse(Notice(place, "a memory must be a JSON object"))
        return
    notice_identity(record, reading)
    content = record.get("content")
    if not isinstance(content, str):
        refuse(Notice(place, '"content" must be a string'))
        return
    tags = string_list(record.get("tags"))
    if tags is None:
        refuse(Notice(place, '"tags" must be a list of strings'))
        return
    raw_time = record.get("created_at")
    if raw_time is None:
        raw_time = record.get("created_at_iso")
    created = parse_time(raw_time)
    if raw_time is not None and created is None:
        refuse(Notice(place, '"created_at" is not epoch seconds or an ISO time'))
        return
    kind = record.get("memory_type")
    if content.strip():
        reading.entries.append(
            Entry(place, content, kind=kind if isinstance(kind, str) else None, tags=tuple(tags), created_ms=created)
        )
