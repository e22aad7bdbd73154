"""`stats`, `list` and `forget` are declared once, to Typer (cli/app.py): the table their fast
path reads (cli/quick_options.py) is written from those declarations and must match them."""

from __future__ import annotations

import subprocess
import sys

from mcp_memory.cli import quick_table
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
