"""What every reader does with files: read them within limits, decode them, walk folders, and
notice (never read) the identity fields a file may hold.

A file over FILE_MAX_BYTES is refused whole before it is read; a folder is walked in name
order, hidden entries and symbolic links to folders left out, FILES_MAX files at most.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_memory.core.ids import parse_iso
from mcp_memory.core.transfer.formats import Notice, Place, Reading

#: The largest file an import reads (a 10,000-memory export is a few MB).
FILE_MAX_BYTES = 64 * 1024 * 1024
#: The most files one import reads from its folders.
FILES_MAX = 10_000
#: Fields a record may carry that name a tenant, a person, an agent or a conversation. They are
#: never read: `--tenant` and `--conversation` say where memories go (docs/import_formats.md).
IDENTITY_FIELDS = frozenset(
    {
        "tenant",
        "tenantId",
        "tenant_id",
        "conversation",
        "conversationId",
        "conversation_id",
        "user_id",
        "userId",
        "agent_id",
        "agentId",
        "run_id",
        "runId",
        "session_id",
        "app_id",
        "actor_id",
        "org_id",
        "project_id",
    }
)
_NOT_UTF8 = re.compile(r"[\udc80-\udcff]")


class FileRefused(Exception):
    """A whole file cannot be read; the message says why."""


def shown(path: Path) -> str:
    """A path as reports name it."""
    return str(path)


def read_bytes(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > FILE_MAX_BYTES:
            raise FileRefused(f"the file is {size} bytes; an import reads files of at most {FILE_MAX_BYTES}")
        return path.read_bytes()
    except OSError as exc:
        raise FileRefused(f"cannot read it: {exc.strerror or exc}") from None


def read_file(path: Path, reading: Reading) -> bytes | None:
    """The file's bytes, or None when it is refused whole (too large, or unreadable: recorded
    by its name)."""
    try:
        return read_bytes(path)
    except FileRefused as exc:
        reading.refused.append(Notice(Place(shown(path)), str(exc)))
        return None


def named_files(paths: Sequence[Path], reading: Reading, folder: str) -> Iterator[tuple[str, bytes]]:
    """Each of `paths` that is a file, as reports name it, with its bytes: the prologue of every
    reader that takes files only. A folder (`folder` says what to name instead), a missing path
    or a file refused whole is recorded as refused, by its name."""
    for path in paths:
        if not path.is_file():
            reading.refused.append(Notice(Place(shown(path)), folder if path.is_dir() else "no such file"))
            continue
        raw = read_file(path, reading)
        if raw is not None:
            yield shown(path), raw


def named_texts(paths: Sequence[Path], reading: Reading, folder: str) -> Iterator[tuple[str, str]]:
    """`named_files` for a JSON format, each file's text UTF-8 throughout (`strict_text`): one
    that is not is refused whole, naming the line."""
    for file, raw in named_files(paths, reading, folder):
        try:
            text = strict_text(raw)
        except FileRefused as exc:
            reading.refused.append(Notice(Place(file), str(exc)))
            continue
        yield file, text


def decode(raw: bytes) -> str:
    """The text, a byte-order mark dropped; bytes that are not UTF-8 kept as lone surrogates
    (U+DC80–U+DCFF) so that `not_utf8` can name the line they are on."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", errors="surrogateescape")


def not_utf8(text: str) -> str | None:
    """Why `text` cannot be stored, if it holds bytes that were not UTF-8."""
    bad = _NOT_UTF8.search(text)
    if bad is None:
        return None
    return f"not UTF-8 text (the byte 0x{ord(bad.group()) - 0xDC00:02X})"


def strict_text(raw: bytes) -> str:
    """The text of a JSON file, which must be UTF-8 throughout; FileRefused names the line."""
    text = decode(raw)
    bad = _NOT_UTF8.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        raise FileRefused(f"line {line} is not UTF-8 text (the byte 0x{ord(bad.group()) - 0xDC00:02X})")
    return text


def load_json(text: str) -> Any:
    """The JSON document, or FileRefused saying why it is not one (nesting too deep included)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise FileRefused("the JSON is nested too deeply to read") from None
    except ValueError as exc:
        raise FileRefused(f"not valid JSON ({exc})") from None


def walk(folder: Path, suffixes: Sequence[str], reading: Reading) -> Iterator[Path]:
    """The files under `folder` whose names end in `suffixes`, in name order; hidden entries and
    links to folders are left out; at most FILES_MAX in one import (counted in `reading.listed`)."""
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        reading.refused.append(Notice(Place(shown(folder)), f"cannot read the folder: {exc.strerror or exc}"))
        return
    for child in children:
        if child.name.startswith("."):
            continue
        if child.is_dir():
            if not child.is_symlink():
                yield from walk(child, suffixes, reading)
        elif child.name.lower().endswith(tuple(suffixes)):
            if reading.listed >= FILES_MAX:
                reading.refused.append(
                    Notice(Place(shown(child)), f"not read: an import reads at most {FILES_MAX} files")
                )
                return
            reading.listed += 1
            yield child


def notice_identity(record: dict[str, Any], reading: Reading) -> None:
    """Count, never use, the identity fields of `record` and of its `metadata`."""
    for holder in (record, record.get("metadata")):
        if isinstance(holder, dict):
            for key in IDENTITY_FIELDS.intersection(holder):
                if holder[key] is not None:
                    reading.ignore(key, holder[key])


def parse_time(value: Any) -> float | None:
    """Epoch ms of an ISO-8601 date or time (no offset: UTC), or of epoch seconds; None when
    `value` is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        seconds = float(value)
        return seconds * 1000.0 if math.isfinite(seconds) and 0 <= seconds < 253402300800 else None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.timestamp() * 1000.0
    if hasattr(value, "isoformat"):  # a date from YAML
        value = value.isoformat()
    if isinstance(value, str):
        ms = parse_iso(value.strip())
        return None if math.isnan(ms) else ms
    return None


def string_list(value: Any) -> list[str] | None:
    """A list of strings, a comma-separated string read as one, or None when it is neither."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item for item in value if item.strip()]
    return None
