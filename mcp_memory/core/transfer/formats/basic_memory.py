"""`--from basic-memory`: basic-memory's Markdown notes, a file or a folder of them
(NOTE-FORMAT.md in basic-memory's repository; docs/import_formats.md#basic-memory).

    ---
    title: Coffee Brewing Methods
    type: note
    tags: [coffee, brewing]
    created: 2025-10-24
    ---
    - [method] Pour over provides more flavor clarity than French press #brewing (personal experience)
    - relates_to [[Coffee Bean Origins]]

- An observation (`- [category] text #tag (context)`) is a memory about the note,
  `Coffee Brewing Methods: Pour over provides … (personal experience)`: its category kept,
  its `#tags` taken out of the text into its tags.
- A relation (`- relation_type [[Target]] (context)`, the type quoted when it has spaces) is a
  memory that names both ends, `Coffee Brewing Methods relates_to Coffee Bean Origins`, tagged
  `relation`, the relation type its category.
- Any other bullet or paragraph is a memory about the note, as `text` reads it.
- The note's `tags`, and its `type` unless it is the default `note`, tag each of its memories;
  its `created` is their date (as in basic-memory, the file's modification time when absent).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from mcp_memory.core.transfer.formats import Entry, Notice, Place, ReadContext, Reading
from mcp_memory.core.transfer.formats.files import parse_time, shown, string_list
from mcp_memory.core.transfer.formats.markdown import blocks, frontmatter
from mcp_memory.core.transfer.formats.text import block_entry, files_of, label, read_lines

RELATION_TAG = "relation"
#: `[category] text`, but not a checkbox (`[ ]`, `[x]`, `[-]`), a link `[text](url)` or `[[wiki]]`.
_OBSERVATION = re.compile(r"^\[(?![ xX-]\])([^\[\]()]+)\](?!\()\s+(.+)$", re.DOTALL)
_RELATION = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([^\s\[\]]+))\s+\[\[([^\]]+)\]\](?:\s*\((.*)\))?\s*$""")
_TAG = re.compile(r"(?<!\S)#([\w/-]+)")


def read(paths: Sequence[Path], context: ReadContext) -> Reading:
    reading = Reading()
    for path in files_of(paths, (".md",), reading):
        lines = read_lines(path, reading)
        if lines is None:
            continue
        file = shown(path)
        front = frontmatter(lines)
        if front.error is not None:
            reading.refused.append(Notice(Place(file, front.error[0]), front.error[1]))
            continue
        fields = front.fields
        title = fields.get("title")
        title = title.strip() if isinstance(title, str) and title.strip() else path.stem
        tags = string_list(fields.get("tags"))
        if tags is None:
            reading.refused.append(
                Notice(Place(file, 1), "the frontmatter's tags must be a list or a comma-separated string")
            )
            continue
        note_type = fields.get("type")
        if isinstance(note_type, str) and note_type.strip() and note_type.strip().lower() != "note":
            tags.append(note_type.strip())
        created = parse_time(fields.get("created"))
        if fields.get("created") is not None and created is None:
            reading.refused.append(Notice(Place(file, 1), "the frontmatter's created is not a date or time"))
            continue
        if created is None:
            try:
                created = path.stat().st_mtime * 1000.0
            except OSError:
                created = None
        for block in blocks(lines, front.body_start):
            entry = block_entry(block, file, reading)
            if entry is None:
                continue
            reading.entries.append(_note_entry(entry, block.kind, title, tuple(tags), created))
    return reading


def _note_entry(entry: Entry, kind: str, title: str, tags: tuple[str, ...], created: float | None) -> Entry:
    text = entry.content.strip()
    if kind == "item":
        relation = _RELATION.match(text)
        if relation is not None:
            name = next(g for g in relation.groups()[:3] if g)
            content = f"{title} {name} {relation.group(4).strip()}"
            if relation.group(5):
                content += f" ({relation.group(5)})"
            return replace(entry, content=content, category=label(name), tags=(*tags, RELATION_TAG), created_ms=created)
        observation = _OBSERVATION.match(text)
        if observation is not None:
            body = observation.group(2)
            inline = tuple(_TAG.findall(body))
            body = " ".join(_TAG.sub("", body).split()) if inline else body
            return replace(
                entry,
                content=f"{title}: {body}",
                category=label(observation.group(1)),
                tags=(*tags, *inline),
                created_ms=created,
            )
    return replace(entry, content=f"{title}: {text}", category=None, tags=tags, created_ms=created)
