"""`stats`, `list`, `forget`, `recall`, `remember` and `hook` are declared once, to Typer
(cli/app.py): the tables their fast paths read (cli/quick_options.py, and the hook's in
cli/hooks/__init__.py) are written from those declarations and must match them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcp_memory.cli import quick_table
from mcp_memory.cli.hooks import HOOK
from mcp_memory.cli.hooks import command as hook
from mcp_memory.cli.quick_options import COMMANDS
from tests.conftest import ROOT


def test_the_fast_paths_table_holds_what_the_typer_app_declares() -> None:
    assert COMMANDS == quick_table.table()


def test_the_check_names_the_command_that_rewrites_a_stale_table(monkeypatch) -> None:
    import mcp_memory.cli.quick_options as written

    monkeypatch.setitem(written.COMMANDS, "list", {**COMMANDS["list"], "flags": {"--json": "as_json"}})

    assert quick_table.main(["--check"]) == 1


def test_an_option_the_table_does_not_hold_goes_to_typer_which_names_it() -> None:
    """The reader takes nothing beyond the table: `--all` belongs to list, not to stats."""
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "stats", "--all"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )

    assert done.returncode == 2 and "No such option: --all" in done.stderr


def test_the_hooks_table_holds_what_the_typer_app_declares() -> None:
    assert HOOK == quick_table.hook_table()


def test_the_check_names_the_hooks_table_when_it_is_stale(monkeypatch, capsys) -> None:
    monkeypatch.setitem(HOOK, "choices", {**HOOK["choices"], "event": ["SessionStart"]})

    assert quick_table.main(["--check"]) == 1
    assert capsys.readouterr().err == f"{quick_table.HOOK_TABLE} is stale: python -m mcp_memory.cli.quick_table\n"


def test_the_hook_reads_its_command_line_by_the_table_alone(monkeypatch) -> None:
    """An event or option the declaration gains reaches the hook process with the table, not by a list of its own."""
    monkeypatch.setitem(HOOK, "choices", {**HOOK["choices"], "event": [*HOOK["choices"]["event"], "Notification"]})
    monkeypatch.setitem(HOOK, "valued", {**HOOK["valued"], "--project": "tenant"})

    options = hook.parse(["--project", "acme", "Notification"])

    assert (options.event, options.tenant) == ("Notification", "acme")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["Bogus"],
            "EVENT must be one of SessionStart, UserPromptSubmit, PreToolUse, PostToolUseFailure, PreCompact, Stop",
        ),
        ([], "EVENT must be one of SessionStart, UserPromptSubmit, PreToolUse, PostToolUseFailure, PreCompact, Stop"),
        (["Stop", "--nope"], "unknown option --nope"),
        (["Stop", "--tenant=acme=x", "Stop"], "unknown option Stop"),
        (["Stop", "-c"], "-c needs a value"),
        (["--client=cursor", "Stop"], "--client must be one of claude-code, codex"),
        (["Stop", "--conversation-from-session=yes"], "unknown option --conversation-from-session"),
    ],
)
def test_a_command_line_the_hook_refuses_is_named_by_its_option(argv: list[str], message: str) -> None:
    with pytest.raises(hook.Usage) as refused:
        hook.parse(argv)

    assert str(refused.value) == message


def test_the_hook_reads_every_spelling_its_declaration_gives() -> None:
    options = hook.parse(
        ["-t", "acme", "--conversation=c1", "--conversation-from-session", "PreToolUse", "--client", "codex"]
    )

    assert vars(options) == {
        "event": "PreToolUse",
        "client": "codex",
        "tenant": "acme",
        "conversation": "c1",
        "conversation_from_session": True,
    }
