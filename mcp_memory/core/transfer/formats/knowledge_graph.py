"""`--from mcp-knowledge-graph`: the MCP reference memory server's file (memory.jsonl, or the
older memory.json: the same lines), one JSON object a line, as its src/memory/index.ts writes
them (docs/import_formats.md#mcp-knowledge-graph):

    {"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks fluent Spanish"]}
    {"type":"relation","from":"John_Smith","to":"Anthropic","relationType":"works_at"}

Each observation is a memory about its entity, `John_Smith: Speaks fluent Spanish`, the
entity's name its category and its type a tag. Each relation is a memory that names both ends,
`John_Smith works_at Anthropic`, tagged `relation`, the relation type its category. An entity
without observations states nothing on its own and is left out (its relations name it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_memory.core.transfer.formats import Entry, Notice, Place, ReadContext, Reading
from mcp_memory.core.transfer.formats.files import named_files, notice_identity
from mcp_memory.core.transfer.formats.text import label

RELATION_TAG = "relation"


def read(paths: Sequence[Path], context: ReadContext) -> Reading:
    reading = Reading()
    for file, raw in named_files(paths, reading, "a folder: name the memory.jsonl file"):
        reading.files += 1
        for number, line in enumerate(raw.split(b"\n"), 1):
            if line.strip():
                _line(line, Place(file, number), reading)
    return reading


def _line(raw: bytes, place: Place, reading: Reading) -> None:
    refuse = reading.refused.append
    try:
        value = json.loads(raw.decode("utf-8").lstrip("\ufeff"))
    except UnicodeDecodeError:
        refuse(Notice(place, "the line is not UTF-8 text"))
        return
    except RecursionError:
        refuse(Notice(place, "the line's JSON is nested too deeply to read"))
        return
    except ValueError as exc:
        refuse(Notice(place, f"not valid JSON ({exc})"))
        return
    if not isinstance(value, dict):
        refuse(Notice(place, 'not an entity or a relation: a line must be a JSON object with "type"'))
        return
    notice_identity(value, reading)
    kind = value.get("type")
    if kind == "entity":
        _entity(value, place, reading)
    elif kind == "relation":
        _relation(value, place, reading)
    else:
        refuse(Notice(place, f'not an entity or a relation: "type" is {json.dumps(kind)[:40]}'))


def _text(value: dict[str, Any], key: str) -> str | None:
    found = value.get(key)
    return found.strip() if isinstance(found, str) and found.strip() else None


def _entity(value: dict[str, Any], place: Place, reading: Reading) -> None:
    name = _text(value, "name")
    if name is None:
        reading.refused.append(Notice(place, 'an entity needs a "name" (a non-empty string)'))
        return
    entity_type = value.get("entityType")
    if entity_type is not None and not isinstance(entity_type, str):
        reading.refused.append(Notice(place, '"entityType" must be a string'))
        return
    observations = value.get("observations")
    if not isinstance(observations, list):
        reading.refused.append(Notice(place, '"observations" must be a list of strings'))
        return
    if not observations:
        reading.skipped.append(Notice(place, f"the entity {name[:60]} has no observations: nothing to remember"))
        return
    tags = (entity_type.strip(),) if entity_type and entity_type.strip() else ()
    for index, observation in enumerate(observations):
        if not isinstance(observation, str):
            reading.refused.append(Notice(place, f"observation {index + 1} is not a string"))
        elif observation.strip():
            reading.entries.append(Entry(place, f"{name}: {observation}", category=label(name), tags=tags))


def _relation(value: dict[str, Any], place: Place, reading: Reading) -> None:
    ends = [_text(value, key) for key in ("from", "relationType", "to")]
    if None in ends:
        reading.refused.append(Notice(place, 'a relation needs "from", "relationType" and "to" (non-empty strings)'))
        return
    source, relation, target = (str(end) for end in ends)
    reading.entries.append(
        Entry(place, f"{source} {relation} {target}", category=label(relation), tags=(RELATION_TAG,))
    )
