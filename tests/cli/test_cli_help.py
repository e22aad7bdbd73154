"""`--help` reads as a person writes: values named (`--tenant NAME`, `--type [project|…]`),
never Typer's Python types (`<str>`, `<bool>`, `<list[str]>`), and wrapped at words to the
terminal, with no box cutting a choice in two."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import typer.main

from mcp_memory.cli.app import app
from mcp_memory.cli.common import plain_help
from tests.conftest import ROOT

COMMANDS = sorted(typer.main.get_command(app).commands)


def help_of(*args: str, columns: int = 80) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env |= {"COLUMNS": str(columns), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory", *args, "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


REMEMBER_HELP = """\
Usage: python -m mcp_memory remember [OPTIONS] CONTENT

  Store a memory (unless an existing one already says the same thing).

Arguments:
  CONTENT  The fact to store, or - to read it from stdin.  [required]

Options:
  --type [project|pattern|reference|conversation]
                                  The memory's type; default: project.
  --category TEXT                 A short sub-label, e.g. decision.
  --tag TAG                       A label; repeat for several.
  --scope [project|conversation]  Who sees it; default: project (conversation
                                  needs --conversation).
  --replaces ID                   The id of a memory this one corrects; it is
                                  removed once this is stored. Repeat for
                                  several (max 5).
  -t, --tenant NAME               The tenant (project) whose memories to use.
                                  Default: $MEMORY_TENANT, else local.
  -c, --conversation KEY          Act inside this conversation: its own notes
                                  become visible. Default:
                                  $MEMORY_CONVERSATION.
  --json                          Print JSON for scripts instead of a readable
                                  view.
  -h, --help                      Show this message and exit.
"""


def test_remember_help_names_its_values_and_wraps_at_words() -> None:
    assert help_of("remember") == REMEMBER_HELP


def test_the_command_list_gives_each_command_a_whole_sentence() -> None:
    shown = help_of()
    listed = shown.split("Commands:\n", 1)[1].splitlines()
    assert len(listed) == len(COMMANDS)
    for line in listed:
        assert line.endswith(".") and not line.endswith("..."), line
    assert "  serve-stdio  Serve MCP over stdin/stdout for a local client.\n" in shown


@pytest.mark.parametrize("command", COMMANDS)
def test_no_help_shows_a_python_type_or_a_line_wider_than_the_terminal(command: str) -> None:
    from click.testing import CliRunner

    group = plain_help(typer.main.get_command(app))
    shown = CliRunner().invoke(group, [command, "--help"], terminal_width=80, prog_name="mcp-memory").output
    assert shown.startswith(f"Usage: mcp-memory {command} [OPTIONS]")
    assert not re.search(r"<[a-z_\[\]|, ]+>|\{[a-z_]+\}", shown), shown
    assert max(len(line) for line in shown.splitlines()) <= 80
    # every word of every help text is printed whole: wrapping never cuts one
    words = set(shown.split())
    for param in group.commands[command].params:
        for word in (param.help or "").split():
            assert word in words, f"{command}: {word!r} of {param.name}'s help is not printed whole"
