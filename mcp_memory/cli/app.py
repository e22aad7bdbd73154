"""The `mcp-memory` command: the servers, and the operator's commands over the
same MemoryService the MCP tools call.

Exit codes: 0 success, 1 the operation failed, 2 bad usage or configuration.
Heavy modules load inside the commands, so `mcp-memory --help` stays fast
(bench/RESULTS.md#start-up-of-serve-stdio-and---help-from-a-wheel-benchlatencystartuppy-issue-17).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from mcp_memory.cli import quick  # the bodies of stats, list and forget (cli/entry.py runs them without Typer too)
from mcp_memory.cli import stdio as _stdio  # noqa: F401  serve-stdio: registered first, listed first
from mcp_memory.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    ConversationOption,
    JsonOption,
    SinceOption,
    TagFilterOption,
    TenantOption,
    TypeFilterOption,
    UntilOption,
    _caller,
    _checked,
    _complete,
    _fail,
    _run,
    _settings,
    app,
    run_app,
)
from mcp_memory.core.errors import StartupError
from mcp_memory.core.model import MemoryType, Mode, Scope

# --------------------------------------------------------------------------- servers


@app.command("serve-http", short_help="Serve MCP over stateless HTTP, for agents in a pod.")
def serve_http(
    host: Annotated[
        str | None, typer.Option(help="The address to listen on. Default: $HOST, else 127.0.0.1.", show_default=False)
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            min=0, max=65535, help="The port. Default: $PORT, else 3000; 0 picks a free one.", show_default=False
        ),
    ] = None,
) -> None:
    """Serve MCP over stateless Streamable HTTP (POST /mcp, GET /health) for agents in a pod.

    The tenant comes from each request's X-Memory-Tenant or X-Tenant-Id header,
    the conversation from X-Conversation-Id. Set MCP_API_KEY to require a bearer
    token. SIGTERM or SIGINT stops it: running calls finish, counters are flushed.
    """
    from dataclasses import replace

    from mcp_memory.server.runners.http import run_http

    settings = _settings()
    if host is not None and host.strip():
        settings = replace(settings, serve=replace(settings.serve, host=host.strip()))
    if port is not None:
        settings = replace(settings, serve=replace(settings.serve, port=port))
    try:
        asyncio.run(run_http(settings))
    except StartupError as exc:
        _fail(f"error: {exc}", EXIT_FAILED)


#: The events the hook answers and whose payloads it reads: declared here only. The hook process
#: reads its command line by cli/hooks/__init__.py's table, written from this declaration
#: (`python -m mcp_memory.cli.quick_table`; tests/cli/test_quick_options.py fails while it is stale).
HookEvent = Literal["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUseFailure", "PreCompact", "Stop"]
HookClient = Literal["claude-code", "codex"]


@app.command(short_help="Answer a Claude Code or Codex hook (the event on stdin).")
def hook(
    event: Annotated[HookEvent, typer.Argument(help="The hook event.", show_default=False)],
    tenant: TenantOption = None,
    conversation: ConversationOption = None,
    conversation_from_session: Annotated[
        bool,
        typer.Option(
            "--conversation-from-session", help="Use the client's session id (from the payload) as the conversation."
        ),
    ] = False,
    client: Annotated[
        HookClient,
        typer.Option(
            "--client",
            help="Whose hook payload comes on stdin: claude-code, or codex (Codex CLI; no PostToolUseFailure).",
        ),
    ] = "claude-code",
) -> None:
    """Answer a Claude Code (or, with --client codex, a Codex CLI) hook event.

    The event's JSON comes on stdin; the answer the client documents goes to stdout.

    SessionStart injects a digest of this tenant's memories; UserPromptSubmit the memories
    recall judges likely to answer the prompt (MEMORY_HOOK_MIN_CONFIDENCE); PreToolUse and
    PostToolUseFailure those about the files, command or error of the tool call; with
    MEMORY_HOOK_CAPTURE=1, Stop asks once per session for the durable facts learned
    (PreCompact only marks the session). Always exits 0; failures are one line on stderr
    (docs/hooks.md).
    """
    from mcp_memory.cli.hooks.command import main as run_hook

    args: list[str] = [event]
    if tenant is not None:
        args += ["--tenant", tenant]
    if conversation is not None:
        args += ["--conversation", conversation]
    if conversation_from_session:
        args.append("--conversation-from-session")
    if client != "claude-code":
        args += ["--client", client]
    raise typer.Exit(run_hook(args))


# --------------------------------------------------------------------------- memory commands


@app.command(short_help="Store a memory, unless one already says the same.")
def remember(
    content: Annotated[str, typer.Argument(help="The fact to store, or - to read it from stdin.", show_default=False)],
    memory_type: Annotated[
        MemoryType | None,
        typer.Option("--type", help="The memory's type; default: project.", show_default=False),
    ] = None,
    category: Annotated[str | None, typer.Option(help="A short sub-label, e.g. decision.", show_default=False)] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="A label; repeat for several.", show_default=False)
    ] = None,
    scope: Annotated[
        Scope | None,
        typer.Option(help="Who sees it; default: project (conversation needs --conversation).", show_default=False),
    ] = None,
    replaces: Annotated[
        list[str] | None,
        typer.Option(
            "--replaces",
            metavar="ID",
            help="The id of a memory this one corrects; it is removed once this is stored. Repeat for several (max 5).",
            show_default=False,
        ),
    ] = None,
    tenant: TenantOption = None,
    conversation: ConversationOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store a memory (unless an existing one already says the same thing)."""
    quick.remember_command(content, memory_type, category, tag, scope, replaces, tenant, conversation, as_json)


@app.command(short_help="Find the memories that answer a question.")
def recall(
    query: Annotated[str, typer.Argument(help="What you want to know, in plain language.", show_default=False)],
    limit: Annotated[
        int | None, typer.Option(help="How many results (1-50); default: the mode's.", show_default=False)
    ] = None,
    mode: Annotated[Mode | None, typer.Option(help="How wide to look; default: balanced.", show_default=False)] = None,
    memory_type: TypeFilterOption = None,
    tag: TagFilterOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    tenant: TenantOption = None,
    conversation: ConversationOption = None,
    as_json: JsonOption = False,
) -> None:
    """Find the memories that answer a question, ranked, with a confidence level."""
    quick.recall_command(query, limit, mode, memory_type, tag, since, until, tenant, conversation, as_json)


@app.command("list", short_help="List memories, newest first, a page at a time.")
def list_(
    memory_type: TypeFilterOption = None,
    limit: Annotated[int, typer.Option(help="How many on a page (1-200).")] = 20,
    cursor: Annotated[
        str | None,
        typer.Option(help="Go on after the page that printed this cursor.", show_default=False),
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Every memory, page after page.")] = False,
    tag: TagFilterOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    tenant: TenantOption = None,
    conversation: ConversationOption = None,
    as_json: JsonOption = False,
) -> None:
    """List memories, newest first, a page at a time: a page that is not the last ends
    with the --cursor that goes on after it; --all prints every memory."""
    quick.list_command(memory_type, limit, cursor, every, tag, since, until, tenant, conversation, as_json)


@app.command(short_help="Delete one memory permanently.")
def forget(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The id recall or list showed.", show_default=False)],
    tenant: TenantOption = None,
    conversation: ConversationOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete one memory permanently. Exits 1 when no such memory exists."""
    quick.forget_command(memory_id, tenant, conversation, as_json)


AllTenantsOption = Annotated[bool, typer.Option("--all-tenants", help="Every tenant (at most 1000), instead of one.")]


@app.command(short_help="Count memories by type, for a tenant or for all.")
def stats(
    tenant: TenantOption = None,
    conversation: ConversationOption = None,
    all_tenants: AllTenantsOption = False,
    as_json: JsonOption = False,
) -> None:
    """Count a tenant's memories by type; without a tenant, list every tenant with its count."""
    quick.stats_command(tenant, conversation, all_tenants, as_json)


@app.command(short_help="Fold settled access-counter shards now.")
def compact(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report what would be folded.")] = False,
    tenant: TenantOption = None,
    all_tenants: AllTenantsOption = False,
    as_json: JsonOption = False,
) -> None:
    """Fold a tenant's settled access-counter shards into its merged counts now."""
    from mcp_memory.cli.render import print_compact

    settings = _settings()
    if all_tenants:
        _compact_all_tenants(settings, tenant, dry_run, as_json)
        return
    caller = _caller(settings, tenant, None)
    report = _run(settings, lambda service: service.compact(caller.tenant, dry_run=dry_run))
    print_compact(caller.tenant, report, dry_run, as_json)


def _compact_all_tenants(settings: Any, tenant: str | None, dry_run: bool, as_json: bool) -> None:
    from mcp_memory.cli.render import print_compact_all

    quick.no_tenant_with_all(tenant)
    result = _run(settings, lambda service: service.compact_all(dry_run=dry_run))
    print_compact_all(result, as_json)
    if result.failed:
        raise typer.Exit(EXIT_FAILED)


# --------------------------------------------------------------------------- calibration


@app.command(short_help="Measure the embedder; suggest the relevance floor.")
def calibrate(
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="A JSON-lines file of facts with the questions that should find them, and absent questions.",
            exists=True,
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    builtin: Annotated[
        bool, typer.Option("--builtin", help="Use the built-in set of project-memory facts and questions.")
    ] = False,
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant",
            "-t",
            help="Calibrate on this tenant's stored memories (the cases name memory ids). "
            "Without it nothing touches the configured store.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Measure the embedder and suggest RECALL_MIN_SIMILARITY and RECALL_HIGH_SIMILARITY.

    Embeds facts, questions that should find them, and questions about things not
    stored; answers each question as recall does and shows where each cluster falls
    by the relevance the floor and HIGH read under RECALL_RETRIEVAL (cosine plus
    keyword evidence under hybrid), then puts the floor between them. With a local
    model, it also counts how recall's answers fall in each band of its probability
    and suggests RECALL_MIN_PROBABILITY, the probability below which nothing stored
    answers, measured on these cases.
    """
    from mcp_memory.app import calibrate_scratch
    from mcp_memory.cli.calibrate import embedding_progress, print_calibration
    from mcp_memory.core.calibration import calibrate as calibration

    if builtin == (cases is not None):
        _fail("error: give either --cases FILE or --builtin", EXIT_USAGE)
    if builtin and tenant is not None:
        _fail(
            "error: --builtin brings its own facts; --tenant calibrates on stored memories named by --cases", EXIT_USAGE
        )
    if tenant is not None and not tenant.strip():
        _fail("error: --tenant is empty", EXIT_USAGE)
    settings = _settings()
    caller = _caller(settings, tenant, None) if tenant is not None else None
    if cases is not None:
        loaded = _checked(lambda: calibration.load_cases(cases, by_id=caller is not None))
    else:
        loaded = calibration.builtin_cases()
    with embedding_progress() as progress:
        if caller is not None:
            report = _run(settings, lambda service: service.calibrate(caller.tenant, loaded, progress=progress))
        else:
            report = _complete(lambda: calibrate_scratch(settings, loaded, progress=progress))
    print_calibration(report, as_json)


# --------------------------------------------------------------------------- the plugin's Claude Code


@app.command(short_help="Check that the Claude Code on PATH runs the plugin.")
def doctor(
    claude: Annotated[
        str | None,
        typer.Option(
            "--claude", metavar="PATH", help="The Claude Code to check. Default: claude on PATH.", show_default=False
        ),
    ] = None,
) -> None:
    """Check that the Claude Code on PATH is one the plugin runs on, and say what to do if not.

    Exits 1 when it is missing or too old.
    """
    from mcp_memory.cli.doctor import run_doctor

    code = run_doctor(claude)
    if code:
        raise typer.Exit(code)


# --------------------------------------------------------------------------- shell completion


@app.command(short_help="Print the completion script for bash, zsh or fish.")
def completion(
    shell: Annotated[Literal["bash", "zsh", "fish"], typer.Argument(help="bash, zsh or fish.", show_default=False)],
) -> None:
    """Print the completion script for bash, zsh or fish; where to put it is in its first lines.

    The scripts are static (Tab never starts Python) and the same as completions/ in the repository.
    """
    from mcp_memory.cli.shell_scripts import FILES, scripts

    sys.stdout.write(scripts(app)[FILES[shell]])


# export, import and backup live in their own module, on this same app.
from mcp_memory.cli import oauth as _oauth  # noqa: E402, F401
from mcp_memory.cli import transfer as _transfer  # noqa: E402, F401
from mcp_memory.cli import ui as _ui  # noqa: E402, F401


def main() -> None:
    """Console-script entry point."""
    run_app()
