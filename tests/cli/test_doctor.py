"""`mcp-memory doctor` tells a user whose Claude Code is too old for the plugin what to do, and the
plugin's manifest states the same minimum where Claude Code reads it (docs/hooks.md#which-claude-code)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_memory.cli.doctor import CLAUDE_CODE_MIN
from tests.conftest import ROOT

MINIMUM = ".".join(str(n) for n in CLAUDE_CODE_MIN)


def fake_claude(folder: Path, printed: str, code: int = 0) -> Path:
    """A `claude` that prints what a Claude Code of some version prints for --version."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "claude"
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' '{printed}'\nexit {code}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def doctor(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "mcp_memory", "doctor", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_claude_code_older_than_the_minimum_is_named_with_what_to_do_and_exit_1(tmp_path: Path) -> None:
    fake_claude(tmp_path / "bin", "2.1.150 (Claude Code)")

    done = doctor(path=f"{tmp_path / 'bin'}:/usr/bin:/bin")

    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"Claude Code 2.1.150 is older than {MINIMUM}, the oldest the plugin runs on: update it with "
        "`claude update` (or `npm install -g @anthropic-ai/claude-code@latest`), then install the plugin again.\n"
    )


def test_the_minimum_itself_passes_and_says_how_to_install_without_marketplace(tmp_path: Path) -> None:
    fake_claude(tmp_path / "bin", f"{MINIMUM} (Claude Code)")

    done = doctor(path=f"{tmp_path / 'bin'}:/usr/bin:/bin")

    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith(f"Claude Code {MINIMUM}: the plugin runs on it")
    assert "install in two steps" in done.stdout


@pytest.mark.parametrize(
    ("printed", "code", "said"),
    [
        ("", 0, "gave no version (exit status 0)"),
        ("Claude Code, a fine version", 0, "gave no version (Claude Code, a fine version)"),
        ("2.1.400 (Claude Code)", 3, "gave no version (2.1.400 (Claude Code))"),
    ],
    ids=["prints nothing", "prints no number", "fails"],
)
def test_a_claude_that_gives_no_version_is_said_so_with_exit_1(
    tmp_path: Path, printed: str, code: int, said: str
) -> None:
    script = fake_claude(tmp_path / "bin", printed, code)

    done = doctor("--claude", str(script), path="/usr/bin:/bin")

    assert done.returncode == 1 and f"`{script} --version` {said}" in done.stderr
    assert f"needs {MINIMUM} or later" in done.stderr


def test_no_claude_on_path_is_said_with_how_to_get_it(tmp_path: Path) -> None:
    done = doctor(path=str(tmp_path))

    assert done.returncode == 1
    assert done.stderr.startswith(f"Claude Code: no `claude` on PATH. The plugin needs Claude Code {MINIMUM} or later")


def test_the_pinned_claude_code_passes(claude_code: str, tmp_path: Path) -> None:
    done = doctor("--claude", claude_code, path="/usr/bin:/bin")

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Claude Code 2.1.328: the plugin runs on it")
    assert "two steps" not in done.stdout


def test_the_manifest_states_the_same_minimum_in_the_field_claude_code_reads() -> None:
    manifest = json.loads((ROOT / "plugin" / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")

    assert manifest["engines"] == {"claude-code": f">={MINIMUM}"}
    assert f"The plugin needs Claude Code {MINIMUM} or later; `mcp-memory doctor`" in readme
