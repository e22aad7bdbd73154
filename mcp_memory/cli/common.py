"""What every `mcp-memory` command shares: the Typer app, the common options, and the
plumbing (cli/plumbing.py) that opens the service, runs a command and maps its errors to exit codes.

The commands live in cli/app.py and cli/transfer.py; both import from here, never from
each other.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from mcp_memory.cli.plumbing import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    _caller,
    _checked,
    _cli_terms,
    _complete,
    _database_notices,
    _fail,
    _run,
    _settings,
)
from mcp_memory.core.identity import DEFAULT_TENANT
from mcp_memory.core.model import MemoryType
from mcp_memory.core.version import __version__

T = TypeVar("T")

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "_caller",
    "_checked",
    "_cli_terms",
    "_complete",
    "_database_notices",
    "_fail",
    "_run",
    "_settings",
]

app = typer.Typer(
    name="mcp-memory",
    help="An MCP server that gives AI agents a memory that outlives a run, and the commands to run it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: wrapped at words to the terminal, no boxes cutting a choice mid-word
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

#: What an option's value is called in help, where Typer would show its Python type (`<str>`).
_METAVARS = {
    "--tenant": "NAME",
    "--conversation": "KEY",
    "--category": "TEXT",
    "--tag": "TAG",
    "--limit": "N",
    "--cursor": "CURSOR",
    "--host": "ADDRESS",
    "--port": "N",
    "--cases": "FILE",
    "--output": "FILE",
    # a choice too long to list on one line: the option's help names each format
    "--from": "FORMAT",
}


def plain_help(group: Any) -> Any:
    """Name every value in help as a person would: `--tenant NAME`, `--type
    [project|pattern|…]`, an argument by its upper-case name; a flag shows no value at all.
    Typer would print `<str>`, `<bool>` or `<list[str]>` instead."""
    for command in [group, *getattr(group, "commands", {}).values()]:
        for param in command.params:
            if param.param_type_name == "argument":
                _plain_argument(param)
                continue
            if param.metavar is not None or getattr(param, "is_flag", False):
                continue
            if param.opts[0] in _METAVARS:
                param.metavar = _METAVARS[param.opts[0]]
                continue
            descriptor = getattr(param, "type_descriptor", None)
            choices = getattr(descriptor, "choices", None) if getattr(descriptor, "is_choice", False) else None
            choices = choices or getattr(getattr(param, "type", None), "choices", None)
            if choices:
                param.metavar = "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
            else:
                param.metavar = _METAVARS.get(param.opts[0], param.opts[0].lstrip("-").upper())
    return group


def _plain_argument(param: Any) -> None:
    """An argument is its upper-case name in help and usage (`remember [OPTIONS] CONTENT`),
    where Typer shows `{content}` in the usage line and `content <str>` in the list."""
    name = param.metavar or param.name.upper()
    param.metavar = name
    shown = name if param.required else f"[{name}]"
    param.get_usage_pieces = lambda ctx: [shown]
    param.display_type_rich = lambda ctx: None


# --------------------------------------------------------------------------- shared options

TenantOption = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        "-t",
        help=f"The tenant (project) whose memories to use. Default: $MEMORY_TENANT, else {DEFAULT_TENANT}.",
        show_default=False,
    ),
]
ConversationOption = Annotated[
    str | None,
    typer.Option(
        "--conversation",
        "-c",
        help="Act inside this conversation: its own notes become visible. Default: $MEMORY_CONVERSATION.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of a readable view.")]
TypeFilterOption = Annotated[
    MemoryType | None, typer.Option("--type", help="Only memories of this type.", show_default=False)
]
TagFilterOption = Annotated[
    list[str] | None,
    typer.Option("--tag", help="Only memories carrying this tag; repeat for any of several.", show_default=False),
]
SinceOption = Annotated[
    str | None,
    typer.Option(
        "--since",
        metavar="WHEN",
        help="Only memories stored since WHEN: a date (2026-05-01), a time (2026-05-01T14:30Z) or an age (12h, 7d, 2w).",
        show_default=False,
    ),
]
UntilOption = Annotated[
    str | None,
    typer.Option("--until", metavar="WHEN", help="Only memories stored until WHEN (as --since).", show_default=False),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcp-memory {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """An MCP memory server: `serve-stdio` for a local client, `serve-http` in a pod."""


def _quiet_when_stdout_closes(callback: Callable[..., T]) -> Callable[..., T]:
    """A reader that stops early (`mcp-memory list | head -2`) ends the command quietly with
    status 0, as it does for git or ls: nothing on stderr, the rest of the output dropped."""

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> T:
        try:
            return callback(*args, **kwargs)
        except BrokenPipeError:
            # Whatever is still buffered would fail again when Python flushes at exit.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            raise typer.Exit(EXIT_OK) from None

    run._quiet = True  # type: ignore[attr-defined]  # wrapped once, however often run_app runs in a process
    return run


def run_app() -> None:
    """Run the commands registered on `app` by now (every one from cli/app.py; serve-stdio alone
    from cli/entry.py), each ending quietly when its reader closes stdout."""
    import typer.main

    for command in app.registered_commands:
        if command.callback is not None and not getattr(command.callback, "_quiet", False):
            command.callback = _quiet_when_stdout_closes(command.callback)
    plain_help(typer.main.get_command(app))()
