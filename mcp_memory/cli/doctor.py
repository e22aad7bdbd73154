"""`mcp-memory doctor` (declared in cli/app.py; this module loads when it runs, so `--help` imports
no more): whether the Claude Code on PATH is one the plugin runs on, and what to do
when it is not (README.md#claude-code, docs/hooks.md#which-claude-code).

The plugin's manifest states the same minimum (`engines.claude-code` in plugin/.claude-plugin/
plugin.json), but only Claude Code 2.1.323 and later read that field: an older one installs the
plugin without a word. This command is where such a user hears it.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from mcp_memory.cli.plumbing import EXIT_FAILED

#: The oldest Claude Code the plugin is known to work on: the two-step install and a session's
#: digest and prompt memories were run on it (docs/hooks.md#which-claude-code).
CLAUDE_CODE_MIN = (2, 1, 197)
#: The newest the tests run (tests/support/needs.py CLAUDE_CODE_VERSION), with the one-line install.
CLAUDE_CODE_TESTED = (2, 1, 328)
#: How long `claude --version` may take (a cold start of its binary on a busy machine).
VERSION_SECONDS = 30.0
UPDATE = "update it with `claude update` (or `npm install -g @anthropic-ai/claude-code@latest`)"

_VERSION = re.compile(r"\b(\d+)\.(\d+)\.(\d+)\b")


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in version)


def claude_code_version(command: str) -> tuple[tuple[int, int, int] | None, str]:
    """(the version `command --version` prints, or None; what it printed or why it could not run)."""
    try:
        done = subprocess.run(
            [command, "--version"], capture_output=True, text=True, timeout=VERSION_SECONDS, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, type(exc).__name__
    said = (done.stdout or done.stderr).strip().splitlines()
    first = said[0][:200] if said else ""
    found = _VERSION.search(first) if done.returncode == 0 else None
    if found is None:
        return None, first or f"exit status {done.returncode}"
    major, minor, patch = (int(n) for n in found.groups())
    return (major, minor, patch), first


def check_claude_code(command: str | None) -> tuple[bool, str]:
    """(whether the plugin runs on this Claude Code, the line that says so and what to do)."""
    minimum = _dotted(CLAUDE_CODE_MIN)
    if command is None:
        return False, (
            f"Claude Code: no `claude` on PATH. The plugin needs Claude Code {minimum} or later: install it "
            "(`npm install -g @anthropic-ai/claude-code`), or use the server without the plugin (README.md)."
        )
    version, said = claude_code_version(command)
    if version is None:
        return (
            False,
            f"Claude Code: `{command} --version` gave no version ({said}); the plugin needs {minimum} or later.",
        )
    if version < CLAUDE_CODE_MIN:
        return False, (
            f"Claude Code {_dotted(version)} is older than {minimum}, the oldest the plugin runs on: {UPDATE}, "
            "then install the plugin again."
        )
    line = f"Claude Code {_dotted(version)}: the plugin runs on it (it needs {minimum} or later)."
    if version < CLAUDE_CODE_TESTED:
        line += (
            " If `claude plugin install` says `unknown option '--marketplace'`, install in two steps "
            "(README.md#claude-code)."
        )
    return True, line


def run_doctor(claude: str | None) -> int:
    """`mcp-memory doctor`'s body (cli/app.py declares it): print the verdict, return the exit code."""
    import sys

    command = claude or shutil.which("claude")
    ok, line = check_claude_code(command)
    print(line, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else EXIT_FAILED
