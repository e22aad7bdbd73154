"""The fixtures of `import --from` (tests/data/import_formats/, written for this project from each
format's documentation) laid out as a user has them, and what importing each gives.

Claude Code keeps a project's auto memory under ~/.claude/projects/<the project's path, every
character but a letter or digit made ->/memory, so the claude-code fixture is copied into a
temporary home with its auto-memory folder where Claude Code would have put it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from mcp_memory.core.transfer.formats import ReadContext
from tests.conftest import ROOT, T0

DATA = ROOT / "tests" / "data" / "import_formats"


@dataclass(frozen=True)
class Expected:
    files: int
    read: int
    new: int
    duplicates_within: int
    refused: int
    skipped: int


#: Per format: what importing its fixtures into an empty store gives (docs/import_formats.md).
EXPECTED: dict[str, Expected] = {
    "claude-code": Expected(files=10, read=22, new=21, duplicates_within=1, refused=0, skipped=4),
    "mcp-knowledge-graph": Expected(files=1, read=13, new=12, duplicates_within=1, refused=3, skipped=1),
    "mem0": Expected(files=3, read=10, new=9, duplicates_within=1, refused=1, skipped=3),
    "mcp-memory-service": Expected(files=1, read=5, new=4, duplicates_within=1, refused=1, skipped=0),
    "basic-memory": Expected(files=3, read=15, new=14, duplicates_within=1, refused=0, skipped=0),
    "text": Expected(files=2, read=9, new=8, duplicates_within=1, refused=0, skipped=0),
}
FORMATS = tuple(EXPECTED)


def auto_memory_name(project: Path) -> str:
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in str(project.resolve()))


def layout(format_name: str, tmp_path: Path) -> tuple[list[Path], ReadContext]:
    """The paths a user names for `format_name`'s fixtures, and the reading context (a home
    in `tmp_path`, the clock at T0)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    context = ReadContext(home, home / ".claude", T0)
    if format_name == "claude-code":
        tree = tmp_path / "claude-code"
        if not tree.exists():
            shutil.copytree(DATA / "claude-code", tree)
            shutil.copytree(tree / "home" / ".claude", home / ".claude", dirs_exist_ok=True)
            memory = home / ".claude" / "projects" / auto_memory_name(tree / "project") / "memory"
            shutil.copytree(tree / "auto-memory", memory)
        return [tree / "project", home / ".claude" / "CLAUDE.md"], context
    paths = {
        "mcp-knowledge-graph": [DATA / "mcp-knowledge-graph" / "memory.jsonl"],
        "mem0": [
            DATA / "mem0" / "get_all.json",
            DATA / "mem0" / "openmemory.jsonl",
            DATA / "mem0" / "mem0-export-lumen-2026-06-30.md",
        ],
        "mcp-memory-service": [DATA / "mcp-memory-service" / "export.json"],
        "basic-memory": [DATA / "basic-memory" / "notes"],
        "text": [DATA / "text"],
    }
    return paths[format_name], context
