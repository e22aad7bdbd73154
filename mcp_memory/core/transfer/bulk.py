"""What an import from another tool's format reports, and the pure parts of its run: an entry
made into remember's arguments, and the duplicates among the run's own entries
(MemoryService.remember_many does the rest; docs/import_formats.md).

Provenance is two tags on every memory an import writes, so it works on every backend
without a new field: `source:<format>` and `imported:<YYYY-MM-DD>`. Each run also leaves a
small record in the object store (`imports/<tenant>/…`, core/object_keys.py) that the web
view's stats page lists: when, from which format, and what it did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_memory.core import dedup
from mcp_memory.core.arguments import Terms
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.ids import iso
from mcp_memory.core.model import MEMORY_TYPES, Caller, Memory, MemoryType, Scope
from mcp_memory.core.ranking import CANDIDATE_CAP, DEDUP_SIMILARITY
from mcp_memory.core.requests import RememberRequest
from mcp_memory.core.transfer.formats import Entry, Notice, Reading

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ImportReport", "ImportRun", "RunIndex", "checked_args", "provenance"]

#: How an import words what remember's checks refuse in an entry.
ENTRY_TERMS = Terms(
    name=lambda field: {"content": "the text", "tags": "the tags", "category": "the category"}.get(field, field),
    no_conversation="--scope conversation needs --conversation",
)
SOURCE_TAG = "source:"
IMPORTED_TAG = "imported:"


@dataclass
class ImportReport:
    """What an import from a format did (or, in a dry run, would do)."""

    format: str
    tenant: str
    dry_run: bool
    files: int = 0
    #: Entries the files state (memories to judge).
    read: int = 0
    #: Written (or, in a dry run, that would be).
    new: int = 0
    #: Entries an existing memory of the store already says (nothing written for them).
    duplicates_of_store: int = 0
    #: Entries an earlier entry of this import already says.
    duplicates_within: int = 0
    refused: list[Notice] = field(default_factory=list)
    skipped: list[Notice] = field(default_factory=list)
    #: Identity fields the files hold, never read: name -> how many distinct values.
    ignored: dict[str, int] = field(default_factory=dict)
    #: The first few memories as they are (or would be) stored.
    preview: list[Memory] = field(default_factory=list)
    #: Ids of the memories written, in the files' order.
    written: list[str] = field(default_factory=list)

    @classmethod
    def starting(cls, format_name: str, tenant: str, dry_run: bool, reading: Reading) -> ImportReport:
        return cls(
            format_name,
            tenant,
            dry_run,
            files=reading.files,
            read=len(reading.entries),
            refused=list(reading.refused),
            skipped=list(reading.skipped),
            ignored={name: len(values) for name, values in sorted(reading.ignored.items())},
        )


@dataclass(frozen=True)
class ImportRun:
    """One import as the store remembers it (the stats page's list)."""

    format: str
    started_at: str
    finished_at: str | None
    files: int
    new: int
    duplicates: int
    refused: int

    def body(self) -> str:
        return json.dumps(
            {
                "format": self.format,
                "startedAt": self.started_at,
                "finishedAt": self.finished_at,
                "files": self.files,
                "new": self.new,
                "duplicates": self.duplicates,
                "refused": self.refused,
            },
            separators=(",", ":"),
        )

    @classmethod
    def parse(cls, body: str) -> ImportRun | None:
        try:
            value: Any = json.loads(body)
            return cls(
                str(value["format"]),
                str(value["startedAt"]),
                None if value.get("finishedAt") is None else str(value["finishedAt"]),
                int(value.get("files", 0)),
                int(value.get("new", 0)),
                int(value.get("duplicates", 0)),
                int(value.get("refused", 0)),
            )
        except (ValueError, KeyError, TypeError):
            return None


def provenance(format_name: str, now_ms: float) -> tuple[str, str]:
    """The two tags every memory of this import carries."""
    return SOURCE_TAG + format_name, IMPORTED_TAG + iso(now_ms)[:10]


def checked_args(
    entry: Entry,
    caller: Caller,
    *,
    scope: Scope,
    memory_type: MemoryType | None,
    tags: tuple[str, ...],
) -> RememberRequest:
    """remember's request for `entry`, checked by remember's own rules (InvalidArgument,
    worded in ENTRY_TERMS, when they refuse it). A source type that is one of ours is the
    memory's type; any other is its category when it has none."""
    category = entry.category
    if entry.kind in MEMORY_TYPES:
        kind: str | None = entry.kind
    else:
        kind = memory_type
        category = category or entry.kind
    all_tags = list(dict.fromkeys((*entry.tags, *tags)))
    sent = {"content": entry.content, "type": kind, "category": category, "tags": all_tags, "scope": scope}
    return RememberRequest.parse(sent, caller=caller, no_conversation=ENTRY_TERMS.no_conversation)


def refusal(exc: InvalidArgument) -> str:
    return exc.worded(ENTRY_TERMS.name)


class RunIndex:
    """The texts and vectors this import has accepted so far, to find an entry that an earlier
    one already says (remember's rule: cosine at DEDUP_SIMILARITY, then core/dedup.py)."""

    def __init__(self, dim: int) -> None:
        import numpy as np

        self._vectors = np.zeros((64, dim), dtype=np.float32)
        self._texts: list[str] = []
        self._held: set[str] = set()

    def holds(self, content: str) -> bool:
        """Whether an accepted entry has this very text (then `same` finds it, at cosine 1, for
        any text the rule finds the same as itself)."""
        return content in self._held

    def same(self, content: str, vector: np.ndarray) -> int | None:
        """The index of the earliest-nearest accepted entry that says `content`, or None."""
        import numpy as np

        count = len(self._texts)
        if not count:
            return None
        sims = self._vectors[:count] @ np.asarray(vector, dtype=np.float32)
        close = np.flatnonzero(sims >= DEDUP_SIMILARITY)
        if len(close) > CANDIDATE_CAP:  # remember reads at most this many neighbours too
            close = close[np.argpartition(-sims[close], CANDIDATE_CAP - 1)[:CANDIDATE_CAP]]
        for i in sorted(close.tolist(), key=lambda k: -float(sims[k])):
            if dedup.same(float(sims[i]), content, self._texts[i]):
                return int(i)
        return None

    def add(self, content: str, vector: np.ndarray) -> None:
        import numpy as np

        count = len(self._texts)
        if count == len(self._vectors):
            grown = np.zeros((2 * count, self._vectors.shape[1]), dtype=np.float32)
            grown[:count] = self._vectors
            self._vectors = grown
        self._vectors[count] = vector
        self._texts.append(content)
        self._held.add(content)
