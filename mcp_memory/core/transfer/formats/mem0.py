"""`--from mem0`: mem0's memories (docs/import_formats.md#mem0), in the shapes mem0 gives them:

- JSON of `get_all` / `POST /v3/memories/`: `{"results": [{"id", "memory", "created_at",
  "categories", "metadata", "user_id", ...}]}` (the API's envelope adds count/next/previous),
  or a bare list of such memories, or one memory a line (JSON Lines);
- OpenMemory's export (`memories.json`: `{"memories": [{"content", "state", "created_at", ...}]}`,
  or its `memories.jsonl`);
- the mem0 Claude Code plugin's Markdown export (`mem0-export-*.md`): blocks of `---`-fenced
  `key: value` lines (id, created_at, type, categories, ...) followed by the memory's text.

Kept: the text (`memory`, or `content`), `created_at` as the date, `categories` as tags, the
memory's type (`metadata.type`, or the plugin's `type`). Left out as mem0 itself hides them: an
expired memory (`expiration_date` passed), one `replaced_by` another, and OpenMemory's paused,
archived or deleted ones. `user_id`, `agent_id`, `run_id`, `app_id` are never read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_memory.core.transfer.formats import Entry, Notice, Place, ReadContext, Reading
from mcp_memory.core.transfer.formats.files import (
    FileRefused,
    load_json,
    named_texts,
    not_utf8,
    notice_identity,
    parse_time,
    string_list,
)
from mcp_memory.core.transfer.formats.markdown import lines_of

_FENCE = re.compile(r"^---\s*$")
_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")


def read(paths: Sequence[Path], context: ReadContext) -> Reading:
    reading = Reading()
    for file, text in named_texts(paths, reading, "a folder: name the export file"):
        reading.files += 1
        try:
            if text.lstrip().startswith("---"):
                _markdown(text, file, reading, context)
            else:
                for place, record in _records(text, file):
                    _record(record, place, reading, context)
        except FileRefused as exc:
            reading.refused.append(Notice(Place(file), str(exc)))
    return reading


def _records(text: str, file: str) -> list[tuple[Place, Any]]:
    try:
        document = load_json(text)
    except FileRefused:
        lines = [(n, line) for n, line in enumerate(lines_of(text), 1) if line.strip()]
        if len(lines) < 2:
            raise
        return [(Place(file, n), load_json(line)) for n, line in lines]  # JSON Lines: the first bad line says why
    if isinstance(document, dict):
        for key in ("results", "memories"):
            if isinstance(document.get(key), list):
                return [(Place(file, item=f"{key}[{i}]"), r) for i, r in enumerate(document[key])]
        if "memory" in document or "content" in document:
            return [(Place(file), document)]
    if isinstance(document, list):
        return [(Place(file, item=f"[{i}]"), r) for i, r in enumerate(document)]
    raise FileRefused(
        'not a mem0 export: expected {"results": [...]} (get_all), a list of memories, '
        'or OpenMemory\'s {"memories": [...]}'
    )


def _record(record: Any, place: Place, reading: Reading, context: ReadContext) -> None:
    if not isinstance(record, dict):
        reading.refused.append(Notice(place, "a memory must be a JSON object"))
        return
    notice_identity(record, reading)
    text = record.get("memory", record.get("content"))
    if not isinstance(text, str):
        reading.refused.append(Notice(place, 'a memory needs its text in "memory" (or "content"), a string'))
        return
    skip = _hidden(record, context)
    if skip is not None:
        reading.skipped.append(Notice(place, skip))
        return
    tags = string_list(record.get("categories"))
    if tags is None:
        reading.refused.append(Notice(place, '"categories" must be a list of strings'))
        return
    metadata = record.get("metadata")
    kind = metadata.get("type") if isinstance(metadata, dict) else None
    created = record.get("created_at")
    created_ms = parse_time(created)
    if created is not None and created_ms is None:
        reading.refused.append(Notice(place, '"created_at" is not a date or time'))
        return
    if text.strip():
        reading.entries.append(
            Entry(place, text, kind=kind if isinstance(kind, str) else None, tags=tuple(tags), created_ms=created_ms)
        )


def _hidden(record: dict[str, Any], context: ReadContext) -> str | None:
    """Why mem0 would not show this memory, if it would not."""
    state = record.get("state")
    if state not in (None, "active"):
        return f'its state is "{str(state)[:20]}": mem0 shows active memories only'
    if record.get("replaced_by"):
        return "mem0 replaced it by a newer memory"
    expires = parse_time(record.get("expiration_date"))
    if expires is not None and expires < context.now_ms:
        return f"it expired on {str(record.get('expiration_date'))[:10]}"
    return None


def _markdown(text: str, file: str, reading: Reading, context: ReadContext) -> None:
    """The plugin's export: `---` fences around `key: value` lines, then the memory's text."""
    lines = lines_of(text)
    fences = [i for i, line in enumerate(lines) if _FENCE.match(line)]
    for n in range(0, len(fences) - 1, 2):
        head, body_start = fences[n], fences[n + 1] + 1
        body_end = fences[n + 2] if n + 2 < len(fences) else len(lines)
        fields: dict[str, str] = {}
        for line in lines[head + 1 : fences[n + 1]]:
            match = _FIELD.match(line.strip())
            if match:
                fields[match.group(1)] = match.group(2).strip()
        body = "\n".join(lines[body_start:body_end]).strip()
        first = body_start + 1
        while first <= body_end and not lines[first - 1].strip():
            first += 1
        place = Place(file, first)
        if not body:
            continue
        problem = not_utf8(body)
        if problem is not None:
            reading.refused.append(Notice(place, problem))
            continue
        record: dict[str, Any] = {"memory": body, "categories": fields.get("categories") or None}
        if fields.get("created_at"):
            record["created_at"] = fields["created_at"]
        if fields.get("type"):
            record["metadata"] = {"type": fields["type"]}
        _record(record, place, reading, context)
