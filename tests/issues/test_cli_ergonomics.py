"""The CLI as a shell user meets it: choices shown and checked, a reader that stops early (in
real processes and pipes: the pipe is the point), the empty recall in --json, and tables that
fit an 80-column terminal; the rest run in process (tests/support/cli_runner.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.cli_runner import Ran, clean_environment, run_cli


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = clean_environment()
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "PYTHONPATH": str(ROOT)})
    env.update(extra)
    return env


def cli(tmp_path: Path, *args: str, **extra: str) -> Ran:
    return run_cli(*args, env=env_for(tmp_path, **extra), cwd=ROOT)


# --------------------------------------------------------------------------- choices


@pytest.mark.parametrize(
    ("command", "option", "shown"),
    [
        ("remember", "--type", "project|pattern|reference|conversation"),
        ("remember", "--scope", "project|conversation"),
        ("recall", "--mode", "precision|balanced|exploratory"),
        ("list", "--type", "project|pattern|reference|conversation"),
    ],
)
def test_help_shows_the_choices_of_an_option(tmp_path: Path, command: str, option: str, shown: str) -> None:
    result = cli(tmp_path, command, "--help", COLUMNS="200")
    assert result.returncode == 0
    line = next(line for line in result.stdout.splitlines() if f" {option} " in line)
    assert shown in line


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (("remember", "--type", "note", "x"), "'note' is not one of 'project', 'pattern', 'reference', 'conversation'"),
        (("remember", "--scope", "team", "x"), "'team' is not one of 'project', 'conversation'"),
        (("recall", "--mode", "fast", "q"), "'fast' is not one of 'precision', 'balanced', 'exploratory'"),
        (("list", "--type", "notes"), "'notes' is not one of 'project', 'pattern', 'reference', 'conversation'"),
    ],
)
def test_a_value_outside_the_choices_is_bad_usage_and_writes_nothing(
    tmp_path: Path, args: tuple[str, ...], refused: str
) -> None:
    result = cli(tmp_path, *args, COLUMNS="200")
    assert result.returncode == 2
    assert f"Invalid value for '{args[1]}'" in result.stderr and refused in result.stderr
    assert json.loads(cli(tmp_path, "list", "--json").stdout) == {"memories": [], "nextCursor": None}


def test_a_choice_is_taken(tmp_path: Path) -> None:
    stored = cli(tmp_path, "remember", "--type", "reference", "The runbook lives in the wiki", "--json")
    assert stored.returncode == 0, stored.stderr
    assert json.loads(stored.stdout)["memory"]["type"] == "reference"


# --------------------------------------------------------------------------- a reader that stops early


def test_a_closed_pipe_ends_the_command_quietly_with_status_0(tmp_path: Path) -> None:
    for n in range(3):
        cli(tmp_path, "remember", f"fact {n}: deploys {'x' * n} happen on weekdays {n}")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every write fails
    try:
        result = subprocess.run(
            [sys.executable, "-m", "mcp_memory", "list"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env_for(tmp_path),
            cwd=str(ROOT),
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (0, "")


def test_head_reads_two_lines_and_the_pipeline_succeeds(tmp_path: Path) -> None:
    for n in range(5):
        cli(tmp_path, "remember", f"fact {n}: backups {'y' * n} are checked on Sunday {n}")
    script = f'{sys.executable} -m mcp_memory list | head -2 >/dev/null; echo "${{PIPESTATUS[0]}}"'
    result = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=env_for(tmp_path), cwd=str(ROOT), timeout=120
    )
    assert (result.stdout, result.stderr) == ("0\n", "")


# --------------------------------------------------------------------------- the empty recall


def test_an_empty_recall_in_json_says_none_for_the_confidence(tmp_path: Path) -> None:
    result = cli(tmp_path, "recall", "anything at all", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["results"] == [] and answer["confidence"] == "none"


def test_a_recall_with_results_keeps_its_confidence_level(tmp_path: Path) -> None:
    cli(tmp_path, "remember", "Backups are verified every Sunday")
    answer = json.loads(cli(tmp_path, "recall", "Backups are verified every Sunday", "--json").stdout)
    assert answer["confidence"] == "high" and len(answer["results"]) == 1


# --------------------------------------------------------------------------- 80 columns


def test_the_every_tenant_table_fits_80_columns_with_every_header_and_name_whole(tmp_path: Path) -> None:
    long_name = "a-rather-long-tenant-name-for-a-project"
    cli(tmp_path, "remember", "--tenant", long_name, "The staging cluster is rebuilt every Monday")
    cli(tmp_path, "remember", "--tenant", "acme", "Backups are verified every Sunday")
    shown = cli(tmp_path, "stats", "--all-tenants", COLUMNS="80")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert "…" not in shown.stdout
    words = shown.stdout.split()
    for header in ("tenant", "project", "pattern", "reference", "conversation", "scoped", "total"):
        assert header in words, header
    assert long_name in "".join(line.split()[0] for line in lines if line.strip() and line.split()[0][0].isalpha())
