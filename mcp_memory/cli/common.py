"""What every `mcp-memory` command shares: the Typer app, the common options, and the
plumbing that opens the service, runs a command and maps its errors to exit codes.

The commands live in cli/app.py and cli/transfer.py; both import from here, never from
each other.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from mcp_memory.core.errors import ConfigError, ContextError, InvalidArgument, MemoryServerError, StartupError
from mcp_memory.core.identity import DEFAULT_TENANT
from mcp_memory.core.model import MemoryType
from mcp_memory.core.version import __version__

T = TypeVar("T")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

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


# --------------------------------------------------------------------------- plumbing


def _fail(message: str, code: int) -> NoReturn:
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(message, markup=False)
    raise typer.Exit(code)


def _settings():
    from mcp_memory.config import Settings

    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        _fail(f"configuration error: {exc}", EXIT_USAGE)
    _database_notices(settings)
    return settings


def _database_notices(settings: Any) -> None:
    """One line each, on stderr: a database found at the old default place, or one that
    others can read. Nothing is moved or chmod'ed: the operator decides."""
    if settings.backend != "sqlite":
        return
    from mcp_memory.app import sqlite_exposure_warning as exposure_warning

    for line in (settings.db_path_notice, exposure_warning(settings.db_path)):
        if line:
            print(line, file=sys.stderr, flush=True)


def _caller(settings: Any, tenant: str | None, conversation: str | None):
    """The caller of every local command: --tenant, else $MEMORY_TENANT, else DEFAULT_TENANT
    (the same for serve-stdio and every CLI command)."""
    from mcp_memory.core.identity import caller_from_options

    tenant_name = "--tenant"
    if tenant is None or not tenant.strip():
        tenant, tenant_name = settings.tenant, "MEMORY_TENANT"
    conversation_name = "--conversation"
    if conversation is None:
        conversation, conversation_name = settings.conversation, "MEMORY_CONVERSATION"
    try:
        return caller_from_options(
            tenant,
            conversation,
            tenant_name=tenant_name,
            conversation_name=conversation_name,
            default_tenant=DEFAULT_TENANT,
        )
    except ContextError as exc:
        _fail(f"error: {exc}", EXIT_USAGE)


def _run(settings: Any, work: Callable[[Any], Awaitable[T]], sent: Sequence[str] = ()) -> T:
    """Open the service, run `work(service)`, close it (flushing counters); map errors to exit codes.

    `sent` is what the command was given (content, a query): a failure's text never echoes it.
    """
    from mcp_memory.app import open_service

    async def go() -> T:
        service = await open_service(settings)
        try:
            return await work(service)
        finally:
            await service.close()

    return _complete(go, sent)


def _complete(go: Callable[[], Coroutine[Any, Any, T]], sent: Sequence[str] = ()) -> T:
    """Run `go()` to completion, mapping our errors to messages and exit codes."""
    from mcp_memory.core.echo import strip_echoes

    try:
        return asyncio.run(go())
    except InvalidArgument as exc:
        _fail(f"error: {exc.worded(_cli_terms().name)}", EXIT_USAGE)
    except ContextError as exc:
        _fail(f"error: {exc}", EXIT_USAGE)
    except StartupError as exc:
        _fail(f"error: {strip_echoes(str(exc), sent)}", EXIT_FAILED)
    except MemoryServerError as exc:
        _fail(f"error: the memory store could not complete this request — {strip_echoes(str(exc), sent)}", EXIT_FAILED)


#: The CLI's names for what the tools call arguments, so its errors name the flag that was given.
_FLAGS = {
    "limit": "--limit",
    "mode": "--mode",
    "type": "--type",
    "scope": "--scope",
    "category": "--category",
    "tags": "--tag",
    "since": "--since",
    "until": "--until",
    "cursor": "--cursor",
    "replaces": "--replaces",
    "content": "CONTENT",
    "query": "QUERY",
    "id": "ID",
}


def _cli_terms():
    from mcp_memory.core.arguments import Terms

    return Terms(
        name=lambda field: _FLAGS.get(field, field),
        no_conversation="--scope conversation needs a conversation: give --conversation (or set "
        "MEMORY_CONVERSATION), or leave --scope unset to store it for the project.",
    )


def _checked(parse: Callable[..., T], *args: Any) -> T:
    try:
        return parse(*args)
    except InvalidArgument as exc:
        _fail(f"error: {exc.worded(_cli_terms().name)}", EXIT_USAGE)


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

    return run


def run_app() -> None:
    """Run the commands registered on `app` by now (every one from cli/app.py; serve-stdio alone
    from cli/entry.py), each ending quietly when its reader closes stdout."""
    import typer.main

    for command in app.registered_commands:
        if command.callback is not None:
            command.callback = _quiet_when_stdout_closes(command.callback)
    plain_help(typer.main.get_command(app))()
