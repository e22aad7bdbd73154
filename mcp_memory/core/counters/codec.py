"""The on-store shapes of the access counters (docs/counters.md), and nothing else.

Kept apart from `tracker.py` so the rules a *reader* must apply to whatever it
finds in the bucket (tolerant coercion, the merge, the key layout) can be read
in one place, without the scheduling around them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from mcp_memory.core.ids import parse_iso, ulid_time

__all__ = [
    "Delta",
    "Entry",
    "Merged",
    "add_into",
    "coerce_delta",
    "dump_delta",
    "dump_merged",
    "merged_key",
    "parse_delta",
    "parse_merged",
    "shard_name",
    "shard_prefix",
    "shard_time",
]


@dataclass(slots=True)
class Entry:
    """One memory's counter: how often it was used, and the latest use (ISO, UTC)."""

    access: int
    last_at: str


#: Memory id → counter. A shard body, merged.json's counts, a pod's pending counts.
Delta = dict[str, Entry]


@dataclass(slots=True)
class Merged:
    """merged.json: the folded counts, and the greatest shard filename folded into them."""

    counts: Delta = field(default_factory=dict)
    watermark: str = ""


def shard_prefix(tenant: str) -> str:
    return f"stats/{tenant}/shard/"


def merged_key(tenant: str) -> str:
    return f"stats/{tenant}/merged.json"


def shard_name(key: str) -> str:
    """The part of a shard key the watermark is compared against: `<ULID>-<podId>.json`.

    The filename and not the ULID, because two pods can mint the same
    millisecond; the pod suffix keeps every name distinct while still ordering
    by time first.
    """
    return key[key.rfind("/") + 1 :]


def shard_time(key: str) -> float:
    """The instant a shard's name was stamped with, or NaN when it is not shaped like one.

    A NaN compares false against everything, so an oddly named object is never
    absorbed by compaction.
    """
    return ulid_time(shard_name(key)[:26])


def add_into(target: Delta, source: Delta) -> None:
    """The merge rule: counts add, the later timestamp wins.

    A G-counter beside a last-writer-wins register, so the result is the same
    whatever order shards arrive in. UTC ISO strings compare correctly as text.
    """
    for memory_id, entry in source.items():
        existing = target.get(memory_id)
        if existing is None:
            target[memory_id] = Entry(entry.access, entry.last_at)
            continue
        existing.access += entry.access
        if entry.last_at > existing.last_at:
            existing.last_at = entry.last_at


def _count(value: Any) -> int | None:
    """A usable access count, or None.

    The reference accepts any JSON number; here a count is a whole number ≥ 0
    (`3.0` is 3), because AccessStats holds an int and ranking takes its log.
    Bools, NaN and Infinity (which Python's json accepts) are not counts.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 0:
        return None
    return value


def coerce_delta(raw: Any) -> Delta:
    """Keep what is usable and drop the rest, entry by entry.

    `lastAt` must parse, not merely be a string: ranking reads it as a time, and
    one unreadable timestamp would otherwise disturb every memory ranked beside
    it. A bad entry costs only itself; its neighbours in the same shard count.
    """
    if not isinstance(raw, dict):
        return {}
    out: Delta = {}
    for memory_id, value in raw.items():
        if not isinstance(value, dict):
            continue
        access = _count(value.get("access"))
        last_at = value.get("lastAt")
        if access is None or not isinstance(last_at, str) or math.isnan(parse_iso(last_at)):
            continue
        out[memory_id] = Entry(access, last_at)
    return out


def _loads(body: str) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def parse_delta(body: str) -> Delta:
    """A shard body. An unparseable one contributes nothing rather than failing the read:
    one corrupt object must not stop a tenant's counters from loading."""
    return coerce_delta(_loads(body))


def parse_merged(body: str) -> Merged:
    """merged.json. Unreadable → empty (its counts are lost, the shards above an empty
    watermark are not); the caller keeps its ETag so a compaction can replace it."""
    raw = _loads(body)
    if not isinstance(raw, dict):
        return Merged()
    watermark = raw.get("watermark")
    return Merged(coerce_delta(raw.get("counts")), watermark if isinstance(watermark, str) else "")


def _plain(delta: Delta) -> dict[str, dict[str, Any]]:
    return {k: {"access": e.access, "lastAt": e.last_at} for k, e in delta.items()}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dump_delta(delta: Delta) -> str:
    return _dumps(_plain(delta))


def dump_merged(merged: Merged) -> str:
    return _dumps({"counts": _plain(merged.counts), "watermark": merged.watermark})
