"""Other tools' memories, read into entries that `remember` then judges (docs/import_formats.md).

Each format is a reader module: it turns the paths it is given into `Entry` values (a text,
its place in the files, and what the source says of it: a type or label, tags, a date),
`Notice`s for what it refused or left out, and the identity fields it saw and ignored. A
reader writes nothing and validates nothing a memory needs: that is the service's
(`MemoryService.import_from`, through remember's rules). The readers are loaded by name,
so `import --help` costs none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "Entry",
    "FormatName",
    "Notice",
    "Place",
    "ReadContext",
    "Reading",
    "read",
]

FormatName = Literal[
    "jsonl", "claude-code", "mcp-knowledge-graph", "mem0", "mcp-memory-service", "basic-memory", "text"
]
#: Format name -> what it reads, as `import --help` lists it. `jsonl` is mcp-memory's own export.
FORMATS: dict[str, str] = {
    "jsonl": "mcp-memory's own export (the default; ids kept)",
    "claude-code": "CLAUDE.md files, a project, Claude Code's auto memory",
    "mcp-knowledge-graph": "the MCP reference memory server's memory.jsonl",
    "mem0": "mem0's JSON (get_all, API, OpenMemory) or its .md",
    "mcp-memory-service": "mcp-memory-service's JSON export",
    "basic-memory": "basic-memory's notes: observations, relations",
    "text": "plain text or Markdown, a memory per bullet",
}
FORMAT_NAMES: tuple[str, ...] = tuple(FORMATS)
#: The module of each reader (jsonl is core/transfer/importing.py, not a reader).
_MODULES = {
    "claude-code": "claude_code",
    "mcp-knowledge-graph": "knowledge_graph",
    "mem0": "mem0",
    "mcp-memory-service": "memory_service",
    "basic-memory": "basic_memory",
    "text": "text",
}


@dataclass(frozen=True, slots=True)
class Place:
    """Where an entry came from: a file and a line, or a file and an item of its JSON."""

    file: str
    line: int | None = None
    item: str | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.file}:{self.line}"
        if self.item is not None:
            return f"{self.file} {self.item}"
        return self.file


@dataclass(frozen=True, slots=True)
class Entry:
    """One memory as the source states it, before remember's rules judge it."""

    place: Place
    content: str
    #: The source's own type or label (a Claude Code memory type, mem0's metadata type, a
    #: section's heading...): one of ours becomes the memory's type, any other its category.
    kind: str | None = None
    category: str | None = None
    tags: tuple[str, ...] = ()
    #: When the source says the fact was stated (epoch ms); None: the time of the import.
    created_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    """An entry refused (it cannot be a memory) or left out (the format says to), and why."""

    place: Place
    reason: str


@dataclass
class Reading:
    entries: list[Entry] = field(default_factory=list)
    refused: list[Notice] = field(default_factory=list)
    skipped: list[Notice] = field(default_factory=list)
    #: Tenant, user, agent or conversation fields the files hold, never read: name -> distinct values.
    ignored: dict[str, set[str]] = field(default_factory=dict)
    #: Files read, and files found in folders (the FILES_MAX budget).
    files: int = 0
    listed: int = 0

    def ignore(self, name: str, value: object) -> None:
        self.ignored.setdefault(name, set()).add(str(value)[:200])


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader needs from outside the files: where `~` is, where Claude Code keeps its
    folders, and the time of the import (what is expired, what is in the future)."""

    home: Path
    claude_dir: Path
    now_ms: float


def read(format_name: str, paths: Sequence[Path], context: ReadContext) -> Reading:
    """Read `paths` as `format_name` (one of FORMAT_NAMES other than jsonl)."""
    module_name = _MODULES.get(format_name)
    if module_name is None:
        raise ValueError(f"not a format with a reader: {format_name}")
    module = importlib.import_module(f"mcp_memory.core.transfer.formats.{module_name}")
    reading: Reading = module.read(paths, context)
    return reading
