"""What some tests need from outside the Python environment, how to tell it is there, and how
to get it: PostgreSQL, the moto endpoint, Chromium, Claude Code's CLI and Codex CLI.

Each is a pytest marker (tests/support/backends.py applies it from the fixtures a test uses).
When a run selects a test whose need is missing, tests/conftest.py stops the run before the
first test with one message naming each missing thing, the command that installs it and the
`-m` that leaves its tests out: nothing is ever skipped, in CI or anywhere (docs/development.md).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The version of Claude Code's CLI the tests run (.ci/run installs it).
CLAUDE_CODE_VERSION = "2.1.328"
#: Where .ci/run installs it.
CLAUDE_CODE_PREFIX = Path.home() / ".cache" / "mcp-memory-ci" / "claude-code"
#: The version of Codex CLI the tests run (.ci/run installs it; docs/hooks.md#codex).
CODEX_VERSION = "0.171.0"
#: Where .ci/run installs it.
CODEX_PREFIX = Path.home() / ".cache" / "mcp-memory-ci" / "codex"
#: Debian's chromium, which the web view's browser tests drive (never a browser Playwright downloads).
CHROMIUM = Path("/usr/bin/chromium")


def claude_code_path() -> str | None:
    """Claude Code's CLI: $CLAUDE_CODE_BIN, else the pinned one where .ci/run installs it; never a
    `claude` on PATH, whose version would change the tests' result (issue 35: an older one on PATH
    turned .ci/run red)."""
    named = os.environ.get("CLAUDE_CODE_BIN")
    if named:
        return named
    cached = CLAUDE_CODE_PREFIX / "node_modules" / ".bin" / "claude"
    return str(cached) if cached.is_file() else None


def codex_path() -> str | None:
    """Codex CLI: $CODEX_BIN, else the pinned one where .ci/run installs it; never a `codex` on PATH."""
    named = os.environ.get("CODEX_BIN")
    if named:
        return named
    cached = CODEX_PREFIX / "node_modules" / ".bin" / "codex"
    return str(cached) if cached.is_file() else None


def _importable(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


@dataclass(frozen=True)
class Need:
    """One thing from outside: what it is, whether this machine has it, and how to get it."""

    what: str
    present: Callable[[], bool]
    install: str


NEEDS: dict[str, Need] = {
    "postgres": Need(
        "PostgreSQL with pgvector (the pgserver package, or a server named by TEST_DATABASE_URL)",
        lambda: bool(os.environ.get("TEST_DATABASE_URL", "").strip()) or _importable("pgserver"),
        ".venv/bin/pip install -c constraints.txt -e '.[test,postgres,aws]'",
    ),
    "s3": Need(
        "the moto server (S3 and S3 Vectors on 127.0.0.1)",
        lambda: _importable("moto") and _importable("werkzeug"),
        ".venv/bin/pip install -c constraints.txt -e '.[test,postgres,aws]'",
    ),
    "browser": Need(
        f"Debian's Chromium at {CHROMIUM}, driven by Playwright",
        lambda: CHROMIUM.is_file() and _importable("playwright"),
        "apt-get install chromium fonts-nanum (and .venv/bin/pip install -c constraints.txt -e '.[test]')",
    ),
    "claude_code": Need(
        f"Claude Code's CLI {CLAUDE_CODE_VERSION} ($CLAUDE_CODE_BIN, `claude` on PATH, or {CLAUDE_CODE_PREFIX})",
        lambda: claude_code_path() is not None,
        f"npm install --no-save --prefix ~/.cache/mcp-memory-ci/claude-code @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
    ),
    "codex": Need(
        f"Codex CLI {CODEX_VERSION} ($CODEX_BIN, or {CODEX_PREFIX})",
        lambda: codex_path() is not None,
        f"npm install --no-save --prefix ~/.cache/mcp-memory-ci/codex @openai/codex@{CODEX_VERSION}",
    ),
}


def missing_message(counts: dict[str, int]) -> str | None:
    """What stops a run that selected `counts[marker]` tests of each marker, or None when every
    need is met."""
    lacking = [(marker, NEEDS[marker]) for marker in counts if counts[marker] and not NEEDS[marker].present()]
    if not lacking:
        return None
    lines = ["this machine lacks what some selected tests need:"]
    for marker, need in lacking:
        lines.append(f"- {need.what}: {counts[marker]} tests (marker {marker}). Install: {need.install}")
    leave_out = " and ".join(f"not {marker}" for marker, _ in lacking)
    lines.append(f'Install it, or leave those tests out: pytest -m "{leave_out}". CI runs them all.')
    return "\n".join(lines)
