"""The plumbing every `mcp-memory` command shares, without Typer: read the settings, name the
caller, open the service, run a command and map its errors to messages and exit codes.

cli/common.py re-exports all of it with the Typer app; cli/quick.py runs `stats`, `list` and
`forget` through it without importing Typer (docs/performance.md, the issue-27 row).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, NoReturn, TypeVar

from mcp_memory.core.errors import ConfigError, ContextError, InvalidArgument, MemoryServerError, StartupError
from mcp_memory.core.identity import DEFAULT_TENANT

T = TypeVar("T")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _fail(message: str, code: int) -> NoReturn:
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(message, markup=False)
    import typer  # here, not at the top: stats, list and forget run without Typer (cli/quick.py)

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
    if settings.store.backend != "sqlite":
        return
    from mcp_memory.app import sqlite_exposure_warning as exposure_warning

    for line in (settings.store.db_path_notice, exposure_warning(settings.store.db_path)):
        if line:
            print(line, file=sys.stderr, flush=True)


def _caller(settings: Any, tenant: str | None, conversation: str | None):
    """The caller of every local command: --tenant, else $MEMORY_TENANT, else DEFAULT_TENANT
    (the same for serve-stdio and every CLI command)."""
    from mcp_memory.core.identity import caller_from_options

    tenant_name = "--tenant"
    if tenant is None or not tenant.strip():
        tenant, tenant_name = settings.caller.tenant, "MEMORY_TENANT"
    conversation_name = "--conversation"
    if conversation is None:
        conversation, conversation_name = settings.caller.conversation, "MEMORY_CONVERSATION"
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


def _run(settings: Any, work: Callable[[Any], Awaitable[T]], sent: Sequence[str] = (), caller: Any = None) -> T:
    """Open the service, run `work(service)`, close it (flushing counters); map errors to exit codes.

    `sent` is what the command was given (content, a query): a failure's text never echoes it.
    With `caller`, a running serve-stdio of the same store, tenant and settings answers instead,
    when there is one (cli/hooks/served.py; docs/cli.md#a-running-server-answers).
    """

    async def go() -> T:
        if caller is not None:
            from mcp_memory.cli.hooks.served import NotServed, served

            remote = served(settings, caller)
            if remote is not None:
                try:
                    return await work(remote)
                except NotServed:
                    pass
        from mcp_memory.app import open_service

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
