"""`pytest -m "not postgres and not s3"` leaves out exactly the tests that need
PostgreSQL or the moto endpoint, `-m "not browser and not claude_code"` the ones that need
Chromium or Claude Code's CLI, so a developer without them can still run the rest; a run that
selects a test whose need is missing stops with one message naming what to install; an
unknown marker is an error (--strict-markers); nothing is ever skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import ROOT

FILES = ["tests/stores/test_contract.py", "tests/core/counters/test_cache.py", "tests/stores/postgres/test_postgres.py"]


class Selected:
    """A plugin for an inner pytest run: the node ids pytest selected, after its own `-m`."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.ids = [item.nodeid for item in session.items]


def collect(*args: str) -> list[str]:
    """What `pytest --collect-only ARGS FILES` selects, by pytest's own collection and `-m`, run
    in this process: which tests a marker selects is no matter of a process (the run that stops
    for a missing CLI below is one, and keeps its own)."""
    selected = Selected()
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *args, *FILES], plugins=[selected])
    finally:
        os.chdir(here)
    assert code == pytest.ExitCode.OK
    return selected.ids


def test_deselecting_the_services_leaves_every_other_backend_and_no_postgres_or_s3_test() -> None:
    everything = collect()
    local = collect("-m", "not postgres and not s3")
    needing = [t for t in everything if "[postgres" in t or "[s3" in t or "/postgres/" in t]
    assert needing and local
    assert sorted(local) == sorted(set(everything) - set(needing))
    assert any("[memory" in t for t in local) and any("[sqlite" in t for t in local)


def test_each_marker_selects_its_own_backend_only() -> None:
    postgres = collect("-m", "postgres")
    s3 = collect("-m", "s3")
    assert postgres and all("[postgres" in t or "/postgres/" in t for t in postgres)
    assert s3 and all("[s3" in t for t in s3)


def test_browser_and_claude_code_select_the_tests_that_drive_them_only() -> None:
    files = ["tests/web/test_browser.py", "tests/web/test_pages.py", "tests/hooks/test_plugin.py"]
    files += ["tests/hooks/test_claude_code_session.py"]
    browser = collect("-m", "browser", *files)
    claude = collect("-m", "claude_code", *files)
    assert browser and all(t.startswith("tests/web/test_browser.py::") for t in browser)
    assert sorted(t.split("::")[1] for t in claude) == [
        "test_a_fresh_session_starts_with_the_digest_and_a_related_prompt_brings_the_earlier_memory",
        "test_a_prompt_unrelated_to_any_memory_brings_nothing_but_the_digest",
        "test_a_read_of_a_file_a_memory_is_tagged_for_brings_it_through_the_mcp_tool_hook_before_the_next_turn",
        "test_claude_code_validates_the_plugin_and_the_marketplace",
        "test_one_command_installs_the_plugin_with_its_server_and_hooks_and_the_tenant_set_once",
        "test_saying_capture_false_at_install_leaves_no_option_unset",
        "test_the_two_step_install_for_a_claude_code_without_marketplace_installs_the_same_plugin",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "two-workers"])
def test_without_claude_codes_cli_the_run_stops_naming_what_to_install_and_how_to_leave_those_out(
    workers: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's command runs two workers (`-n 2`); one process is a developer's `pytest FILE`."""
    import importlib.util

    from tests.support import needs

    if workers and importlib.util.find_spec("xdist") is None:
        pytest.fail(
            "pytest-xdist runs the README's `pytest -n 2`: .venv/bin/pip install -c constraints.txt -e '.[test]'"
        )
    monkeypatch.delenv("CLAUDE_CODE_BIN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # a worker's own look for it, under ~/.cache
    monkeypatch.setattr(needs, "CLAUDE_CODE_PREFIX", tmp_path / "claude-code")  # this process's
    code = run_pytest(*workers, "tests/hooks/test_plugin.py")
    stopped = capsys.readouterr().out
    assert code == 4, stopped
    assert "Claude Code's CLI 2.1.328" in stopped and "4 tests (marker claude_code)" in stopped
    assert (
        f"npm install --no-save --prefix ~/.cache/mcp-memory-ci/claude-code @anthropic-ai/claude-code@{needs.CLAUDE_CODE_VERSION}"
        in stopped
    )
    assert 'pytest -m "not claude_code"' in stopped
    assert " passed" not in stopped and "skipped" not in stopped  # stopped before the first test
    if workers:
        return  # what the message says to run next is one process's run, tested in the other case
    code = run_pytest("-m", "not claude_code", "tests/hooks/test_plugin.py")
    rest = capsys.readouterr().out
    assert code == 0 and " passed, 4 deselected" in rest and "lacks" not in rest, rest


def test_without_codex_cli_the_run_stops_naming_the_pinned_version_and_how_to_leave_its_tests_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support import needs

    monkeypatch.delenv("CODEX_BIN", raising=False)
    monkeypatch.setattr(needs, "CODEX_PREFIX", tmp_path / "codex")
    code = run_pytest("tests/hooks/test_codex_session.py")
    stopped = capsys.readouterr().out
    assert code == 4, stopped
    assert f"Codex CLI {needs.CODEX_VERSION}" in stopped and "4 tests (marker codex)" in stopped
    assert f"npm install --no-save --prefix ~/.cache/mcp-memory-ci/codex @openai/codex@{needs.CODEX_VERSION}" in stopped
    assert 'pytest -m "not codex"' in stopped
    assert " passed" not in stopped and "skipped" not in stopped  # stopped before the first test


def test_ci_installs_the_claude_code_codex_and_chromium_the_tests_name() -> None:
    from tests.support.needs import CHROMIUM, CLAUDE_CODE_VERSION, CODEX_VERSION

    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}" in run
    assert f'--prefix "$HOME/.cache/mcp-memory-ci/codex" @openai/codex@{CODEX_VERSION}' in run
    assert "apt-get install -y -q chromium" in run and CHROMIUM.name == "chromium"


def run_pytest(*args: str) -> int | pytest.ExitCode:
    """`pytest -q ARGS` from the checkout, in this process; what it prints goes to capsys."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return pytest.main(["-q", "-p", "no:cacheprovider", *args])
    finally:
        os.chdir(here)


def test_a_misspelt_marker_is_an_error_not_a_silently_new_marker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test = tmp_path / "test_typo.py"
    test.write_text("import pytest\n\n\n@pytest.mark.postgress\ndef test_x():\n    assert True\n")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = pytest.main(["-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(test)])
    finally:
        os.chdir(here)
    printed = capsys.readouterr()
    assert code != 0
    assert "'postgress' not found in `markers` configuration option" in printed.out + printed.err


def test_no_test_is_ever_skipped_or_expected_to_fail() -> None:
    """docs/development.md: "Every test runs on every run — nothing is skipped"."""
    import re

    forbidden = re.compile(r"pytest\.(skip|xfail|importorskip)\b|mark\.(skip|skipif|xfail)\b|unittest\.skip")
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == "test_markers.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if forbidden.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "-m " not in config.split("addopts", 1)[1].split("\n", 1)[0]  # no marker deselected by default
