"""`--from text`: plain text or Markdown files (or folders of them), one memory per top-level
bullet or paragraph; a code block, a table or a quote is one memory too. The heading a block is
under becomes its category. A bullet that ends like a line of `export --format markdown`
(` — 2026-07-01 · <id>`) keeps that date, and in a file that export wrote, the type and
tags are the headings above it (docs/import_formats.md#text).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from mcp_memory.core.arguments import CATEGORY_MAX_BYTES
from mcp_memory.core.ids import iso, parse_iso, ulid_time
from mcp_memory.core.model import MEMORY_TYPES
from mcp_memory.core.transfer.formats import Entry, Notice, Place, ReadContext, Reading
from mcp_memory.core.transfer.formats.files import decode, not_utf8, read_file, shown, walk
from mcp_memory.core.transfer.formats.markdown import Block, blocks, frontmatter, lines_of

SUFFIXES = (".md", ".markdown", ".txt")
#: How a file written by `export --format markdown` begins, and its heading for untagged memories.
EXPORT_MARK = "<!-- mcp-memory export of tenant "
NO_TAGS = "no tags"
#: The end of a bullet of `export --format markdown`: its date and its id.
TRAILER = re.compile(r"\s+—\s+(\d{4}-\d{2}-\d{2})\s+·\s+([0-9A-HJKMNP-TV-Z]{26})\s*$")


def label(text: str) -> str | None:
    """A heading or a name as a category: at most CATEGORY_MAX_BYTES, cut with … when longer."""
    text = " ".join(text.split())
    if not text:
        return None
    if len(text.encode("utf-8", "surrogateescape")) <= CATEGORY_MAX_BYTES:
        return text
    cut = text.encode("utf-8", "surrogateescape")[: CATEGORY_MAX_BYTES - 3].decode("utf-8", "ignore")
    return cut.rstrip() + "…"


def files_of(paths: Sequence[Path], suffixes: Sequence[str], reading: Reading) -> Iterator[Path]:
    """Each named file, and the files under each named folder; a missing path is refused."""
    for path in paths:
        if path.is_dir():
            yield from walk(path, suffixes, reading)
        elif path.is_file():
            yield path
        else:
            reading.refused.append(Notice(Place(shown(path)), "no such file or folder"))


def read_lines(path: Path, reading: Reading) -> list[str] | None:
    """The file's lines, or None when it is refused whole (the refusal is recorded)."""
    raw = read_file(path, reading)
    if raw is None:
        return None
    reading.files += 1
    return lines_of(decode(raw))


def block_entry(block: Block, file: str, reading: Reading, *, content: str | None = None) -> Entry | None:
    """The entry a block states (its text, the innermost heading as its category, a trailer's
    date), or None when it refuses it (recorded) or it states nothing."""
    text = block.text if content is None else content
    place = Place(file, block.line)
    problem = not_utf8(text)
    if problem is not None:
        reading.refused.append(Notice(place, problem))
        return None
    created: float | None = None
    trailer = TRAILER.search(text)
    if trailer is not None:
        day, memory_id = trailer.group(1), trailer.group(2)
        at = ulid_time(memory_id)
        created = at if not math.isnan(at) and iso(at)[:10] == day else parse_iso(day)
        created = None if math.isnan(created) else created
        text = text[: trailer.start()]
    if not text.strip():
        return None
    category = label(block.headings[-1]) if block.headings else None
    return Entry(place, text, category=category, created_ms=created)


def read(paths: Sequence[Path], context: ReadContext) -> Reading:
    reading = Reading()
    for path in files_of(paths, SUFFIXES, reading):
        lines = read_lines(path, reading)
        if lines is None:
            continue
        front = frontmatter(lines)
        start = front.body_start if front.error is None else 0
        ours = next((line for line in lines if line.strip()), "").startswith(EXPORT_MARK)
        for block in blocks(lines, start):
            entry = block_entry(block, shown(path), reading)
            if entry is not None:
                reading.entries.append(_exported(entry, block.headings) if ours else entry)
    return reading


def _exported(entry: Entry, headings: tuple[str, ...]) -> Entry:
    """A bullet of `export --format markdown`: its type and tags are the headings it is under
    (`## <type>`, `### <tag>, <tag>` or `### no tags`)."""
    if len(headings) < 3 or headings[1] not in MEMORY_TYPES:
        return entry
    tags = () if headings[2] == NO_TAGS else tuple(t.strip() for t in headings[2].split(", ") if t.strip())
    return replace(entry, kind=headings[1], category=None, tags=tags)
