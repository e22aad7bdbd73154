"""`stats`, `list`, `forget`, `recall` and `remember` without Typer: their bodies, and the reader
of their options.

`stats`, `list` and `forget` read nothing that grows with the tenant, so their time is the
process's start-up; `recall` and `remember` with a serve-stdio running ask it
(docs/cli.md#a-running-server-answers), so theirs is too. Most of what a Typer command imports
(Typer itself, pydantic, which Typer validates every option with) only reads the options.
cli/entry.py hands these five commands here first: a command line made only of the command's
options, each given once (`--tag` and `--replaces` as often as wanted), in their plain spellings
(`--tenant NAME`, `--tenant=NAME`, `-t NAME`), runs the same body the Typer command runs
(cli/app.py calls these functions). The options are not declared here: cli/quick_options.py is
written from their Typer declarations (cli/quick_table.py), so each is declared once. Anything
else (`--help`, an unknown or repeated option, a value Typer would have to judge, such as
`--limit 07`, `--type other` or `--mode fast`) returns None and the Typer app runs it, so every
help text and usage error stays Typer's own (bench/RESULTS.md, "stats, list and forget without
Typer" and "One CLI parser").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from mcp_memory.cli.plumbing import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    _caller,
    _checked,
    _cli_terms,
    _fail,
    _run,
    _settings,
)

# --------------------------------------------------------------------------- the commands' bodies


def stats_command(tenant: str | None, conversation: str | None, all_tenants: bool, as_json: bool) -> None:
    from mcp_memory.cli.render import print_stats

    settings = _settings()
    if all_tenants or not ((tenant or "").strip() or settings.caller.tenant):
        _stats_all_tenants(settings, tenant, conversation, as_json)
        return
    caller = _caller(settings, tenant, conversation)
    result = _run(settings, lambda service: service.stats(caller), caller=caller)
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

    print_page(_run(settings, pages, caller=caller), as_json, span=span)


def forget_command(memory_id: str, tenant: str | None, conversation: str | None, as_json: bool) -> None:
    from mcp_memory.cli.render import print_forget
    from mcp_memory.core import arguments

    settings = _settings()
    caller = _caller(settings, tenant, conversation)
    # a malformed id is refused as --replaces refuses it, not looked up and reported as not found
    memory_id = _checked(arguments.require_string, {"id": memory_id}, "id")
    _checked(arguments.check_memory_id, "id", memory_id)
    result = _run(settings, lambda service: service.forget(caller, memory_id), caller=caller)
    print_forget(result, as_json)
    if not result.deleted:
        raise SystemExit(EXIT_FAILED)


def remember_command(
    content: str,
    memory_type: Any,
    category: str | None,
    tag: list[str] | None,
    scope: Any,
    replaces: list[str] | None,
    tenant: str | None,
    conversation: str | None,
    as_json: bool,
) -> None:
    from mcp_memory.cli.render import print_remember
    from mcp_memory.core import arguments
    from mcp_memory.core.requests import RememberRequest

    if content == "-":
        content = _final_newline_dropped(sys.stdin.read())
    settings = _settings()
    caller = _caller(settings, tenant, conversation)
    args = {
        "content": content,
        "type": memory_type,
        "category": category,
        "tags": tag,
        "scope": scope,
        "replaces": replaces or None,
    }
    terms = {"caller": caller, "no_conversation": _cli_terms().no_conversation}
    request = _checked(lambda: RememberRequest.parse(args, **terms))
    sent = arguments.string_arguments(args)
    result = _run(settings, lambda service: service.remember_request(caller, request), sent, caller=caller)
    print_remember(result, as_json)


def _final_newline_dropped(text: str) -> str:
    """What `echo … | mcp-memory remember -` means: the text without the line break `echo`
    (or an editor) ends it with. Only that one: other blank lines and spaces are the text's."""
    for ending in ("\r\n", "\n"):
        if text.endswith(ending):
            return text[: -len(ending)]
    return text


def recall_command(
    query: str,
    limit: int | None,
    mode: Any,
    memory_type: Any,
    tag: list[str] | None,
    since: str | None,
    until: str | None,
    tenant: str | None,
    conversation: str | None,
    as_json: bool,
) -> None:
    from mcp_memory.cli.render import print_recall
    from mcp_memory.core.requests import RecallRequest

    settings = _settings()
    caller = _caller(settings, tenant, conversation)
    args = {"query": query, "limit": limit, "mode": mode, "type": memory_type, "tags": tag}
    request = _checked(RecallRequest.parse, {**args, "since": since, "until": until})
    result = _run(settings, lambda service: service.recall_request(caller, request), [query], caller=caller)
    print_recall(result, as_json)


# --------------------------------------------------------------------------- reading the options


def _read(command: str, args: list[str]) -> dict[str, Any] | None:
    """The options of `command` as its Typer callback receives them, read by the command's row of
    cli/quick_options.py (made from its Typer declaration), or None for anything Typer should
    read itself."""
    from mcp_memory.cli.quick_options import COMMANDS  # here: `--help` loads cli/app.py, not this table

    row = COMMANDS[command]
    valued, flags, multiple = row["valued"], row["flags"], row["multiple"]
    given: dict[str, Any] = {}
    positional: list[str] = []
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-") or token == "-":
            if token == "-" and command != "remember":  # remember's stdin; elsewhere Typer's to judge
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
        if dest in multiple:
            given.setdefault(dest, []).append(value)
            continue
        if dest in given:
            return None
        given[dest] = value
    if len(positional) != len(row["arguments"]):
        return None
    given.update(zip(row["arguments"], positional))
    return _converted(row, given)


def _converted(row: dict[str, Any], given: dict[str, Any]) -> dict[str, Any] | None:
    """Typer's integers and choices, taken only in their plain spellings: `--limit 07` or
    `--type Project` is Typer's to judge."""
    for dest in row["integers"]:
        if dest in given:
            text = given[dest]
            if not (text.isascii() and text.isdigit() and (text == "0" or not text.startswith("0"))):
                return None
            given[dest] = int(text)
    for dest, allowed in row["choices"].items():
        if dest in given and given[dest] not in allowed:
            return None
    return given


_BODIES: dict[str, Callable[..., None]] = {
    "stats": stats_command,
    "list": list_command,
    "forget": forget_command,
    "recall": recall_command,
    "remember": remember_command,
}


def run(args: list[str]) -> int | None:
    """Run `mcp-memory ARGS` when ARGS is `stats`, `list`, `forget`, `recall` or `remember` with options read here;
    the exit code, or None when the Typer app should run it instead."""
    if not args or args[0] not in _BODIES or any(name.endswith("_COMPLETE") for name in os.environ):
        return None
    read = _read(args[0], args[1:])
    if read is None:
        return None
    try:
        from mcp_memory.cli.quick_options import COMMANDS

        _BODIES[args[0]](**{**COMMANDS[args[0]]["defaults"], **read})
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
