"""Argument checks every edge shares: one rule per argument, each edge's own words.

A rule takes an argument's name and the value sent and returns it as the service reads
it; core/requests.py puts them together, one request per operation, checked once when
the request is made, whoever makes it (a tool, a command, a library caller). Errors are
`InvalidArgument` with `field` set and the text opening with `{field}`: each edge words
it in its own `Terms` (`InvalidArgument.worded`): the MCP tools say `limit`, the CLI says --limit.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_memory.core import invisible
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.model import MEMORY_TYPES, MODES, SCOPES
from mcp_memory.core.sizes import CONTENT_MAX_BYTES, content_overflow
from mcp_memory.core.timespan import check_bound

LIMIT_MAX = 50
#: The longest query recall takes, in UTF-8 bytes: what a memory can hold (no more can match it
#: word for word; the embedders read less than that anyway).
QUERY_MAX_BYTES = CONTENT_MAX_BYTES
LIST_DEFAULT_LIMIT = 20
CATEGORY_MAX_BYTES = 128
TAGS_MAX = 20
TAG_MAX_BYTES = 64
#: remember's `replaces` takes at most this many ids.
REPLACES_MAX = 5
#: A memory id as recall and list_memories show it: a ULID.
MEMORY_ID_LENGTH = 26
MEMORY_ID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


@dataclass(frozen=True, slots=True)
class Terms:
    """How one edge words argument errors."""

    #: An argument's name as this edge's caller writes it ("limit" -> "`limit`" or "--limit").
    name: Callable[[str], str]
    #: What says that scope 'conversation' was asked for outside a conversation.
    no_conversation: str


#: Tab, newline and carriage return are text; every other control character (NUL
#: first: PostgreSQL cannot store it) and a lone surrogate (no UTF-8 spelling) is not.
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def check_text(field: str, value: str) -> str:
    """`value` as it is stored, or a refusal naming `field`: a character no store can keep
    (a control character, a lone surrogate), or one that spells what a reader cannot see
    (core/invisible.py); the invisible ones that carry no meaning are dropped."""
    bad = _NOT_TEXT.search(value)
    if bad is not None and "\ud800" <= bad.group() <= "\udfff":
        raise InvalidArgument(
            f"{{field}} contains an unpaired surrogate (U+{ord(bad.group()):04X} at position "
            f"{bad.start()}), which is not valid Unicode; send the text as UTF-8.",
            field=field,
        )
    if bad is not None:
        raise InvalidArgument(
            f"{{field}} contains a control character (U+{ord(bad.group()):04X} at position "
            f"{bad.start()}); only text is accepted: tab and newline are, other control characters are not.",
            field=field,
        )
    hidden = invisible.hidden_at(value)
    if hidden is not None:
        position, char = hidden
        code = f"U+{ord(char):04X} at position {position}"
        if 0xE0000 <= ord(char) <= 0xE007F:
            raise InvalidArgument(
                f"{{field}} contains an invisible tag character ({code}): tag characters spell text a "
                "person cannot see and a model reads, and are kept only in a flag emoji. Remove them.",
                field=field,
            )
        raise InvalidArgument(
            f"{{field}} contains a variation selector that follows no character it can vary ({code}): a "
            "run of them spells bytes a person cannot see. A character takes at most one.",
            field=field,
        )
    return invisible.tidy(value)


def string_arguments(args: Mapping[str, Any]) -> list[str]:
    """Every string among the arguments (tags included): what a failure must not echo."""
    found: list[str] = []
    for value in args.values():
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(item for item in value if isinstance(item, str))
    return found


def is_blank(value: str) -> bool:
    """Nothing to read: only whitespace and invisible format characters (a zero-width space,
    a byte order mark, a direction mark, a soft hyphen), which `str.strip` keeps."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in value)


def require_string(args: Mapping[str, Any], field: str) -> str:
    """`args[field]` as `text` checks it (search_docs' query, the CLI's forget id)."""
    return text(field, args.get(field))


def text(field: str, value: object) -> str:
    """`value` as stored (check_text): a string that is not blank once its invisible characters
    are dropped."""
    if value is not None and not isinstance(value, str):
        raise InvalidArgument(f"{{field}} must be a string, not {_kind(value)}.", field=field)
    if value is None or is_blank(value):
        raise InvalidArgument("{field} is required and must be a non-empty string.", field=field)
    value = check_text(field, value)
    if is_blank(value):
        raise InvalidArgument("{field} is required and must be a non-empty string.", field=field)
    return value


def _kind(value: object) -> str:
    """What a JSON value is, in a user's words."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# --------------------------------------------------------------------------- one rule per argument
# Each takes the argument's name and what was sent (never None: an absent argument is its
# request's default, core/requests.py) and returns it as the service reads it.


def limit(field: str, value: object) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)  # NaN and Infinity parse as JSON numbers in Python
        or value != int(value)
        or not 1 <= value <= LIMIT_MAX
    ):
        raise InvalidArgument(f"{{field}} must be an integer between 1 and {LIMIT_MAX}.", field=field)
    return int(value)


def memory_type(field: str, value: object) -> str:
    if value not in MEMORY_TYPES:
        raise InvalidArgument(f"{{field}} must be one of: {', '.join(MEMORY_TYPES)}.", field=field)
    return str(value)


def scope(field: str, value: object) -> str:
    if value not in SCOPES:
        raise InvalidArgument(f"{{field}} must be one of: {', '.join(SCOPES)}.", field=field)
    return str(value)


def mode(field: str, value: object) -> str:
    if value not in MODES:
        raise InvalidArgument("{field} must be precision, balanced or exploratory.", field=field)
    return str(value)


def tags(field: str, value: object) -> tuple[str, ...]:
    """Labels, trimmed, blank ones dropped: TAGS_MAX at most, TAG_MAX_BYTES each."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(t, str) for t in value):
        raise InvalidArgument("{field} must be an array of strings.", field=field)
    kept = tuple(t.strip() for t in (check_text(field, tag) for tag in value) if not is_blank(t))
    if len(kept) > TAGS_MAX:
        raise InvalidArgument(f"{{field}} may hold at most {TAGS_MAX} entries.", field=field)
    for tag in kept:
        if len(tag.encode("utf-8")) > TAG_MAX_BYTES:
            raise InvalidArgument(
                f'each tag may be at most {TAG_MAX_BYTES} bytes; "{tag[:30]}…" is longer. '
                "Tags are short labels; put the detail in the content.",
                field=field,
            )
    return kept


def check_memory_id(field: str, memory_id: str) -> str:
    """`memory_id` if it has a memory id's shape, or the one refusal every id argument gives
    (`--replaces`, the CLI's `forget ID`): naming the field, showing at most 40 characters."""
    check_text(field, memory_id)
    if not MEMORY_ID.fullmatch(memory_id):
        shown = memory_id if len(memory_id) <= 40 else memory_id[:40] + "…"
        raise InvalidArgument(
            f'{{field}}: "{shown}" is not a memory id (26 characters, as recall and list_memories show it).',
            field=field,
        )
    return memory_id


def replaces(field: str, value: object) -> tuple[str, ...]:
    """One id or a list of up to REPLACES_MAX distinct ids."""
    ids = [value] if isinstance(value, str) else value
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) for i in ids):
        raise InvalidArgument("{field} must be a memory id or an array of memory ids.", field=field)
    if len(ids) > REPLACES_MAX:
        raise InvalidArgument(f"{{field}} may name at most {REPLACES_MAX} memories; it names {len(ids)}.", field=field)
    for memory_id in ids:
        check_memory_id(field, memory_id)
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise InvalidArgument(f"{{field}} names {duplicate} twice.", field=field)
    return tuple(ids)


def content(field: str, value: object) -> str:
    """A memory's text: `text`, at most CONTENT_MAX_BYTES."""
    value = text(field, value)
    size = content_overflow(value)
    if size is not None:
        raise InvalidArgument(
            f"{{field}} is {size} bytes; the maximum a single memory may hold is "
            f"{CONTENT_MAX_BYTES}. Store the essential fact, and leave the detail where it lives.",
            field=field,
        )
    return value


def category(field: str, value: object) -> str | None:
    """A short label, trimmed; blank is none."""
    if not isinstance(value, str):
        raise InvalidArgument("{field} must be a string.", field=field)
    value = check_text(field, value)
    if len(value.encode("utf-8")) > CATEGORY_MAX_BYTES:
        raise InvalidArgument(
            f"{{field}} may be at most {CATEGORY_MAX_BYTES} bytes. Use a short label such as decision or convention.",
            field=field,
        )
    return None if is_blank(value) else value.strip()


def check_query(query: str) -> None:
    size = len(query.encode("utf-8"))
    if size > QUERY_MAX_BYTES:
        raise InvalidArgument(
            f"{{field}} is {size} bytes; a query may be at most {QUERY_MAX_BYTES}, as long as a "
            "memory can be. Ask with the part that matters.",
            field="query",
        )


def query(field: str, value: object) -> str:
    """recall's question: `text`, at most QUERY_MAX_BYTES."""
    value = text(field, value)
    check_query(value)
    return value


def bound(field: str, value: object) -> str:
    """`since` or `until` as given (the service reads it at its own clock; core/timespan.py)."""
    return check_bound(field, value) or ""


def forget_id(field: str, value: object) -> str:
    """forget's `id`: any string up to a memory id's length is looked up (and echoed in the
    answer); a longer one cannot be an id, and is refused without echoing it."""
    memory_id = text(field, value)
    if len(memory_id) > MEMORY_ID_LENGTH:
        raise InvalidArgument(
            f"{{field}} is {len(memory_id)} characters long; a memory id is {MEMORY_ID_LENGTH} "
            "characters (as recall and list_memories show it).",
            field=field,
        )
    return memory_id
