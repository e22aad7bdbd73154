"""`stats`, `list` and `forget` without Typer: their bodies, and the reader of their options.

These commands read nothing that grows with the tenant, so their time is the process's start-up,
and most of what a Typer command imports (Typer itself, pydantic, which Typer validates every
option with) only reads the options. cli/entry.py hands these three commands here first: a
command line made only of the options below, each given once, in their plain spellings
(`--tenant NAME`, `--tenant=NAME`, `-t NAME`), runs the same body the Typer command runs
(cli/app.py calls these functions). Anything else (`--help`, an unknown or repeated option, a
value Typer would have to judge, such as `--limit 07` or `--type other`) returns None and the
Typer app runs it, so every help text and usage error stays Typer's own (bench/RESULTS.md,
"stats, list and forget without Typer").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from mcp_memory.cli.plumbing import EXIT_FAILED, EXIT_OK, EXIT_USAGE, _caller, _checked, _fail, _run, _settings

# --------------------------------------------------------------------------- the commands' bodies


def stats_command(tenant: str | None, conversation: str | None, all_tenants: bool, as_json: bool) -> None:
    from mcp_memory.cli.render import print_stats

    settings = _settings()
    if all_tenants or not ((tenant or "").strip() or settings.caller.tenant):
        _stats_all_tenants(settings, tenant, conversation, as_json)
        return
    caller = _caller(settings, tenant, conversation)
    result = _run(settings, lambda service: service.stats(caller))
    print_stats(caller.tenant, result, as_json)


def no_tenant_with_all(tenant: str | None, conversation: str | None = None) -> None:
    if (tenant or "").strip():
        _fail("error: --all-tenants and --tenant cannot be combined", EXIT_USAGE)
    if conversation is not None:
        _fail("error: --conversation needs --tenant: every tenant is counted as a whole", EXIT_USAGE)


def _stats_all_tenants(settings: Any, tenant: str | None, conversation: str | None, as_json: bool) -> None:
    from mcp_memory.cli.render import print_tenants

    no_tenant_with_all(tenant, conversation)
    print_tenants(_run(settings, lambda service: service.tenants()), as_json)


def list_command(
    memory_type: Any,
    limit: int,
    cursor: str | None,
    every: bool,
    tag: list[str] | None,
    since: str | None,
    until: str | None,
    tenant: str | None,
    conversation: str | None,
    as_json: bool,
) -> None:
    import time

    from mcp_memory.cli.render import print_page
    from mcp_memory.core import timespan
    from mcp_memory.core.requests import ListRequest

    settings = _settings()
    caller = _caller(settings, tenant, conversation)
    request = _checked(ListRequest.parse, {"type": memory_type, "tags": tag, "since": since, "until": until})
    span = _checked(timespan.span, request.since, request.until, time.time() * 1000)
    where = {"memory_type": request.memory_type, "tags": request.tags, "since": span.since_iso, "until": span.until_iso}

    async def pages(service: Any) -> list[Any]:
        read = [await service.list(caller, limit=limit, cursor=cursor, **where)]
        while every and read[-1].next_cursor is not None:
            read.append(await service.list(caller, limit=limit, cursor=read[-1].next_cursor, **where))
        return read

    print_page(_run(settings, pages), as_json, span=span)


def forget_command(memory_id: str, tenant: str | None, conversation: str | None, as_json: bool) -> None:
    from mcp_memory.cli.render import print_forget
    from mcp_memory.core import arguments

    settings = _settings()
    caller = _caller(settings, tenant, conversation)
    # a malformed id is refused as --replaces refuses it, not looked up and reported as not found
    memory_id = _checked(arguments.require_string, {"id": memory_id}, "id")
    _checked(arguments.check_memory_id, "id", memory_id)
    result = _run(settings, lambda service: service.forget(caller, memory_id))
    print_forget(result, as_json)
    if not result.deleted:
        raise SystemExit(EXIT_FAILED)


# --------------------------------------------------------------------------- reading the options

#: Each command's options: the dest each spelling sets, and whether it takes a value.
_COMMON = {"--tenant": "tenant", "-t": "tenant", "--conversation": "conversation", "-c": "conversation"}
_VALUED = {
    "stats": dict(_COMMON),
    "list": {**_COMMON, "--type": "memory_type", "--limit": "limit", "--cursor": "cursor", "--tag": "tag"}
    | {"--since": "since", "--until": "until"},
    "forget": dict(_COMMON),
}
_FLAGS = {
    "stats": {"--json": "as_json", "--all-tenants": "all_tenants"},
    "list": {"--json": "as_json", "--all": "every"},
    "forget": {"--json": "as_json"},
}
_MULTIPLE = {"tag"}


def _read(command: str, args: list[str]) -> dict[str, Any] | None:
    """The options of `command` as its Typer callback receives them, or None for anything Typer
    should read itself."""
    valued, flags = _VALUED[command], _FLAGS[command]
    given: dict[str, Any] = {}
    positional: list[str] = []
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-") or token == "-":
            if token == "-":
                return None
            positional.append(token)
            continue
        name, eq, inline = token.partition("=")
        value: str | bool
        if name in flags and not eq:
            dest, value = flags[name], True
        elif name in valued and (eq and name.startswith("--") or not eq):
            if not eq:
                if not rest or rest[0].startswith("-"):
                    return None
                inline = rest.pop(0)
            dest, value = valued[name], inline
        else:
            return None  # --help, an unknown option, -tNAME: Typer's reading and its words
        if dest in _MULTIPLE:
            given.setdefault(dest, []).append(value)
            continue
        if dest in given:
            return None
        given[dest] = value
    if command == "forget":
        if len(positional) != 1:
            return None
        given["memory_id"] = positional[0]
    elif positional:
        return None
    return _converted(given)


def _converted(given: dict[str, Any]) -> dict[str, Any] | None:
    if "limit" in given:
        text = given["limit"]
        if not (text.isascii() and text.isdigit() and (text == "0" or not text.startswith("0"))):
            return None
        given["limit"] = int(text)
    if "memory_type" in given:
        from mcp_memory.core.model import MEMORY_TYPES

        if given["memory_type"] not in MEMORY_TYPES:
            return None
    return given


_DEFAULTS: dict[str, dict[str, Any]] = {
    "stats": {"tenant": None, "conversation": None, "all_tenants": False, "as_json": False},
    "list": {
        "memory_type": None,
        "limit": 20,
        "cursor": None,
        "every": False,
        "tag": None,
        "since": None,
        "until": None,
        "tenant": None,
        "conversation": None,
        "as_json": False,
    },
    "forget": {"tenant": None, "conversation": None, "as_json": False},
}
_BODIES: dict[str, Callable[..., None]] = {"stats": stats_command, "list": list_command, "forget": forget_command}


def run(args: list[str]) -> int | None:
    """Run `mcp-memory ARGS` when ARGS is `stats`, `list` or `forget` with options read here;
    the exit code, or None when the Typer app should run it instead."""
    if not args or args[0] not in _BODIES or any(name.endswith("_COMPLETE") for name in os.environ):
        return None
    read = _read(args[0], args[1:])
    if read is None:
        return None
    try:
        _BODIES[args[0]](**{**_DEFAULTS[args[0]], **read})
    except BrokenPipeError:
        # as cli/common.py's _quiet_when_stdout_closes: a reader that stopped early ends it quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_OK
    except KeyboardInterrupt:
        return 130  # what Typer's main answers to Ctrl-C
    except Exception as exc:
        exit_type = getattr(sys.modules.get("typer"), "Exit", None)  # _fail's typer.Exit
        if exit_type is not None and isinstance(exc, exit_type):
            return int(exc.exit_code)
        raise
    return EXIT_OK
