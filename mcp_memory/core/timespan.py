"""recall's and list's `since` / `until`: one parse rule for every edge (docs/recall.md#time).

A bound is an ISO 8601 date (`2026-05-01`), an instant (`2026-05-01T14:30:00Z`; no offset means
UTC, as createdAt is read), or an age (`12h`, `7d`, `2w`), counted back from now.
Both bounds are inclusive: a date as `since` is the start of that day (UTC), as `until` its end,
so `since=until=2026-05-01` is that whole day.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import iso, parse_iso

#: The longest bound text accepted: an instant with microseconds and an offset is 32 characters.
TIME_MAX_CHARS = 40
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_AGE = re.compile(r"(\d{1,6})([hdw])")
_UNIT_MS = {"h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}
_DAY_MS = 86_400_000
#: Bounds are clamped to what an ISO time can spell: the epoch to the last millisecond of 9999.
_EARLIEST, _LATEST = 0.0, 253_402_300_799_999.0
#: What a refusal tells the caller to send instead.
EXPECTED = "an ISO 8601 date (2026-05-01) or time (2026-05-01T14:30:00Z), or an age such as 12h, 7d or 2w"


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """Epoch milliseconds, both inclusive; None: unbounded on that side."""

    since: float | None = None
    until: float | None = None

    def __bool__(self) -> bool:
        return self.since is not None or self.until is not None

    def holds(self, created_at: str) -> bool:
        """Whether a memory stored at `created_at` lies within (an unreadable time does not)."""
        if not self:
            return True
        at = parse_iso(created_at)
        if math.isnan(at):
            return False
        return (self.since is None or at >= self.since) and (self.until is None or at <= self.until)

    def words(self) -> str:
        """How a message names the span: "stored since …", "stored until …" or "stored between … and …"."""
        if self.since is not None and self.until is not None:
            return f"stored between {iso(self.since)} and {iso(self.until)}"
        if self.since is not None:
            return f"stored since {iso(self.since)}"
        return f"stored until {iso(self.until)}" if self.until is not None else ""

    @property
    def since_iso(self) -> str | None:
        return None if self.since is None else iso(self.since)

    @property
    def until_iso(self) -> str | None:
        return None if self.until is None else iso(self.until)


def check_bound(field: str, value: object) -> str | None:
    """`value` if it is a bound recall can read (None when absent); refused naming `field`."""
    if value is None:
        return None
    if isinstance(value, str) and len(value.strip()) <= TIME_MAX_CHARS:
        text = value.strip()
        if _AGE.fullmatch(text) or not math.isnan(_absolute(text, upper=False)):
            return text
    raise InvalidArgument(f"{{field}} must be {EXPECTED}.", field=field)


def _absolute(text: str, *, upper: bool) -> float:
    at = parse_iso(text)
    if not math.isnan(at) and upper and _DATE.fullmatch(text):
        return at + _DAY_MS - 1  # the last millisecond of that day
    return at


def bound(field: str, value: str, now_ms: float, *, upper: bool) -> float:
    text = check_bound(field, value) or ""
    age = _AGE.fullmatch(text)
    at = now_ms - int(age[1]) * _UNIT_MS[age[2]] if age else _absolute(text, upper=upper)
    return min(max(at, _EARLIEST), _LATEST)


def span(since: str | None, until: str | None, now_ms: float) -> TimeSpan:
    """The span `since`..`until` names at `now_ms`; refused when a bound does not parse or
    `since` comes after `until`."""
    start = None if since is None else bound("since", since, now_ms, upper=False)
    end = None if until is None else bound("until", until, now_ms, upper=True)
    if start is not None and end is not None and start > end:
        raise InvalidArgument(
            f"{{field}} ({iso(start)}) is later than the span's end ({iso(end)}): nothing lies between them.",
            field="since",
        )
    return TimeSpan(start, end)
