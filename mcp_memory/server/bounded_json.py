"""JSON we parse ourselves (a stdio line, the OAuth scope check's look at a body, an
introspection answer), held to a size and a nesting depth before it is parsed.

Python's `json` recurses once per level: a body nested a few thousand levels deep
raises `RecursionError`, which no `except ValueError` catches. The depth is counted
first, by a scan that skips strings, so the refusal names the limit instead.
No MCP message comes near the limit: a tool call's arguments are four levels deep.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The deepest nesting of arrays and objects accepted (docs/http.md).
MAX_DEPTH = 64
#: A JSON-RPC parse error, and an invalid request (JSON-RPC 2.0 section 5.1).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

#: A whole string (escapes included), or one bracket; in text and in bytes.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_BYTE_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPEN, _CLOSE = frozenset("[{") | frozenset(b"[{"), frozenset("]}") | frozenset(b"]}")


class JsonRefused(ValueError):
    """JSON that is not parsed; `code` is the JSON-RPC error code, the text says why
    (never quoting the input)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code


def too_deep(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects in `text` nest deeper than `limit` (strings are skipped)."""
    depth = 0
    tokens = _BYTE_TOKENS if isinstance(text, bytes) else _TOKENS
    for match in tokens.finditer(text):  # type: ignore[arg-type]
        ch = text[match.start()]
        if ch in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif ch in _CLOSE:
            depth -= 1
    return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` that refuses nesting deeper than `max_depth` and NaN/Infinity, raising
    JsonRefused (the position, never the text)."""
    if too_deep(text, max_depth):
        raise JsonRefused(INVALID_REQUEST, f"the JSON nests arrays or objects deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise JsonRefused(PARSE_ERROR, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        raise JsonRefused(PARSE_ERROR, f"not valid JSON: {str(exc)[:80]}") from None


#: Why a request whose id is null, true, 1.5, an object or an array is refused, on every transport.
ODD_ID_REASON = "a request's id must be a string or an integer (MCP: never null)"


def request_without_an_answerable_id(message: Any) -> bool:
    """Whether `message` is a request (a `method` and an `id`) whose id is not a string or an
    integer: null, true, 1.5, an object, an array. MCP forbids them (a request's id is never
    null) and the SDK reads such a message as a notification it never answers, so each
    transport refuses it itself (docs/tools.md "Over stdio", docs/http.md)."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return False
    value = message["id"]
    return isinstance(value, bool) or not isinstance(value, int | str)


def loads_bytes(data: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """`loads` for UTF-8 bytes; bytes that are not UTF-8 are refused naming the position."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonRefused(PARSE_ERROR, f"not valid UTF-8 (byte {exc.start})") from None
    return loads(text, max_depth=max_depth)
