"""ULIDs, inverted time and timestamps (B §2.5, A9)."""

from __future__ import annotations

import functools
import math
import os
from datetime import UTC, datetime, timedelta

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DECODE = {c: i for i, c in enumerate(ALPHABET)}
MAX_TIME = 2**48 - 1
_TIME_CHARS = 10
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def _check_time(ms: float) -> int:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not math.isfinite(ms):
        raise ValueError(f"timestamp out of ULID range: {ms}")
    whole = math.floor(ms)
    if whole < 0 or whole > MAX_TIME:
        raise ValueError(f"timestamp out of ULID range: {ms}")
    return whole


def _encode_time(value: int) -> str:
    chars = []
    for _ in range(_TIME_CHARS):
        chars.append(ALPHABET[value % 32])
        value //= 32
    return "".join(reversed(chars))


def ulid(ms: float, random_bytes: bytes | None = None) -> str:
    """A ULID minted at `ms` (epoch milliseconds): 10 time chars + 16 random chars."""
    stamp = _encode_time(_check_time(ms))
    rnd = random_bytes if random_bytes is not None else os.urandom(16)
    return stamp + "".join(ALPHABET[b % 32] for b in rnd[:16])


def ulid_time(value: str) -> float:
    """The millisecond timestamp of a ULID, or NaN when `value` is not one."""
    if len(value) != 26:
        return math.nan
    total = 0
    for ch in value[:_TIME_CHARS]:
        digit = _DECODE.get(ch)
        if digit is None:
            return math.nan
        total = total * 32 + digit
    return float(total)


def inverted_time(ms: float) -> str:
    """Fixed-width base32 of (2^48 - 1) - ms: newer times sort first in byte order."""
    return _encode_time(MAX_TIME - _check_time(ms))


def iso(ms: float) -> str:
    """ISO-8601 UTC with milliseconds and `Z` (JavaScript's toISOString)."""
    whole = math.floor(ms)
    dt = datetime.fromtimestamp(whole // 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{whole % 1000:03d}Z"


def parse_iso(text: str) -> float:
    """Epoch milliseconds of an ISO-8601 timestamp, or NaN when it does not parse.

    The one parse policy (B §19) for createdAt on read, lastAt in counters and
    lastActivity in ranking: ISO-8601 date-times (a `Z` or a numeric offset; no
    offset means UTC) and bare dates. Anything else is NaN, never an exception.
    """
    if not isinstance(text, str) or not text:
        return math.nan
    return _parse_iso_text(text)


@functools.lru_cache(maxsize=16384)
def _parse_iso_text(text: str) -> float:
    """parse_iso for a non-empty string, cached: every recall parses the createdAt of
    each of its 30 candidates, and mostly the same ones again and again."""
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(raw)
    except ValueError:
        return math.nan
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        # Exact integer arithmetic: float seconds × 1000 can floor one millisecond low.
        return (dt - _EPOCH) // _ONE_MS
    except (OverflowError, OSError, ValueError):
        return math.nan
