"""ULIDs (python-ulid), the inverted-time index key, and ISO-8601 timestamps.

Why these shapes: a ULID sorts by the time it was made, and the index key inverts that time so a
store that lists keys in byte order (S3, a "C"-collated column) lists newest first (docs/storage.md).
"""

from __future__ import annotations

import functools
import math
import os
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ulid import ULID

MAX_TIME = 2**48 - 1
_TIME_CHARS = 10
_RANDOM_BYTES = 10
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def _check_time(ms: float) -> int:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not math.isfinite(ms):
        raise ValueError(f"timestamp out of ULID range: {ms}")
    whole = math.floor(ms)
    if whole < 0 or whole > MAX_TIME:
        raise ValueError(f"timestamp out of ULID range: {ms}")
    return whole


def _ulid_at(whole_ms: int, randomness: bytes) -> ULID:
    from ulid import ULID  # here: the stdio handshake mints and reads none (tests/cli/test_stdio_imports.py)

    return ULID.from_bytes(whole_ms.to_bytes(6, "big") + randomness)


def ulid(ms: float, random_bytes: bytes | None = None) -> str:
    """A ULID (python-ulid) minted at `ms` (epoch milliseconds, floored): 48 bits of time,
    then 80 random bits (`random_bytes[:10]` when given, for reproducible tests)."""
    whole = _check_time(ms)
    randomness = random_bytes[:_RANDOM_BYTES] if random_bytes is not None else os.urandom(_RANDOM_BYTES)
    if len(randomness) != _RANDOM_BYTES:
        raise ValueError(f"a ULID needs {_RANDOM_BYTES} random bytes, got {len(randomness)}")
    return str(_ulid_at(whole, randomness))


def ulid_time(value: str) -> float:
    """The millisecond timestamp of a ULID, or NaN when `value` is not one.

    Only the canonical upper-case form counts (what `ulid` mints): python-ulid would also
    read lower case, but a key or id in lower case was never written by this server."""
    if len(value) != 26 or value != value.upper():
        return math.nan
    from ulid import ULID

    try:
        return float(ULID.from_str(value).milliseconds)
    except ValueError:
        return math.nan


def warm_up() -> None:
    """Import python-ulid now (serve-stdio's warm-up, in a worker thread): a process's first
    recall reads the access counters' shard times, and would otherwise wait for the import
    (bench/RESULTS.md, "Recall's first stage without regular expressions for plain words")."""
    from ulid import ULID  # noqa: F401


def is_ulid(value: object) -> bool:
    """Whether `value` is a ULID in the canonical form `ulid` mints."""
    return isinstance(value, str) and not math.isnan(ulid_time(value))


def inverted_time(ms: float) -> str:
    """Fixed-width base32 of (2^48 - 1) - ms: newer times sort first in byte order.

    The time part of a ULID minted at the inverted time: the same 10 Crockford characters."""
    return str(_ulid_at(MAX_TIME - _check_time(ms), bytes(_RANDOM_BYTES)))[:_TIME_CHARS]


def iso(ms: float) -> str:
    """ISO-8601 UTC with milliseconds and `Z` (JavaScript's toISOString)."""
    whole = math.floor(ms)
    dt = datetime.fromtimestamp(whole // 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{whole % 1000:03d}Z"


def parse_iso(text: str) -> float:
    """Epoch milliseconds of an ISO-8601 timestamp, or NaN when it does not parse.

    The one parse policy (docs/memories.md) for createdAt on read, lastAt in counters and
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
