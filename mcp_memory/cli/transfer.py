"""`export`, `import` and `backup`: memories that move between stores, and a copy of the
embedded one (docs/backup_and_migration.md).

The commands are thin: the work is MemoryService.export / import_ (core/transfer)
and stores/sqlite/backup.py. Data goes to stdout or the file; progress and
refusals go to stderr, so `export | import` pipes nothing but records. A
progress bar is drawn only when stderr is a terminal.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal, TextIO

import typer

from mcp_memory.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    JsonOption,
    _caller,
    _fail,
    _run,
    _settings,
    app,
)
from mcp_memory.core.model import MemoryType, Scope
from mcp_memory.core.transfer.formats import FormatName

#: A progress bar appears once an export or import has run this long (a quick one shows none).
PROGRESS_AFTER_S = 2.0
AllTenantsOption = Annotated[bool, typer.Option("--all-tenants", help="Every tenant with memories, instead of some.")]
TenantsOption = Annotated[
    list[str] | None,
    typer.Option("--tenant", "-t", help="A tenant to include; repeat for several.", show_default=False),
]


def _tenants(values: list[str] | None) -> list[str]:
    from mcp_memory.core.errors import ContextError
    from mcp_memory.core.identity import parse_tenant

    try:
        return [parse_tenant(value, "--tenant") for value in values or []]
    except ContextError as exc:
        _fail(f"error: {exc}", EXIT_USAGE)


@contextmanager
def _progress(
    description: str,
    total: int | None = None,
    *,
    after: float = PROGRESS_AFTER_S,
    clock: Callable[[], float] | None = None,
) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr when it is a terminal, once the work has taken `after`
    seconds (a short run shows none); when stderr is not a terminal, nothing at all."""
    if not sys.stderr.isatty():
        yield lambda advance: None
        return
    import time

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    now = clock or time.monotonic
    started = now()
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(description, total=total)
    shown = False

    def advance(count: int) -> None:
        nonlocal shown
        bar.advance(task, count)
        if not shown and now() - started >= after:
            bar.start()
            shown = True

    try:
        yield advance
    finally:
        if shown:
            bar.stop()


def _say(text: str, *, stderr: bool) -> None:
    typer.echo(text, err=stderr)


# --------------------------------------------------------------------------- export


ExportFormat = Literal["jsonl", "markdown", "mcp-knowledge-graph"]


@app.command(short_help="Write memories as JSON Lines, Markdown or a graph.")
def export(
    tenant: TenantsOption = None,
    all_tenants: AllTenantsOption = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write to this file (default: stdout).", dir_okay=False, show_default=False
        ),
    ] = None,
    with_embeddings: Annotated[
        bool,
        typer.Option("--with-embeddings", help="Include each memory's vector, for a move that keeps the model."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary (on stderr when the export goes to stdout).")
    ] = False,
    export_format: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            help="jsonl: mcp-memory's own (everything, for import); markdown: readable, by type and tags; "
            "mcp-knowledge-graph: the MCP reference memory server's memory.jsonl.",
        ),
    ] = "jsonl",
) -> None:
    """Write memories as JSON Lines: a header line, then one line per memory with its counts
    (--format markdown or mcp-knowledge-graph for another tool; docs/import_formats.md).

    Give --tenant (repeatable) or --all-tenants; with neither, $MEMORY_TENANT, else local
    (the tenant of every other command).
    """
    from mcp_memory.core.identity import DEFAULT_TENANT

    settings = _settings()
    names = _tenants(tenant)
    if all_tenants and names:
        _fail("error: --all-tenants and --tenant cannot be combined", EXIT_USAGE)
    if not all_tenants and not names:
        names = [settings.caller.tenant or DEFAULT_TENANT]
    if with_embeddings and export_format != "jsonl":
        _fail("error: --with-embeddings applies to --format jsonl only", EXIT_USAGE)

    with _output(output) as stream:

        async def work(service: Any) -> tuple[Any, list[str]]:
            chosen = await service.export_tenants(all_tenants=all_tenants, tenants=names)
            # the tenants left out, so a bare export does not pass for a backup of everything
            others = [] if all_tenants else await service.export_tenants(all_tenants=True)
            with _progress("exporting") as advance:
                done = await service.export(
                    chosen,
                    write=stream.write,
                    with_embeddings=with_embeddings,
                    progress=advance,
                    format_name=export_format,
                )
            return done, [name for name in others if name not in chosen]

        result, others = _run(settings, work)
    summary = {
        "exported": result.memories,
        "tenants": result.tenants,
        "withEmbeddings": result.with_embeddings,
        "format": export_format,
        "output": str(output) if output else "-",
        "otherTenants": others,
    }
    to_stderr = output is None
    if as_json:
        _say(json.dumps(summary), stderr=to_stderr)
    else:
        for line in _export_summary(result, names if not all_tenants else list(result.tenants), others, export_format):
            _say(line, stderr=to_stderr)


def _export_summary(result: Any, names: list[str], others: list[str], export_format: str = "jsonl") -> list[str]:
    """What an export says it wrote: the tenants by name with their counts, and the tenants it
    left out with the option that would take them."""
    counts = [(name, result.tenants.get(name, 0)) for name in names]
    memories = f"{result.memories} {'memory' if result.memories == 1 else 'memories'}"
    vectors = "with" if result.with_embeddings else "without"
    if export_format != "jsonl":
        vectors = f"as {export_format}, without"
    if not counts:
        lines = [f"exported {memories}: no tenant holds any, {vectors} embeddings"]
    elif len(counts) == 1:
        lines = [f"exported {memories} of tenant {counts[0][0]}, {vectors} embeddings"]
    else:
        per = ", ".join(f"{name} ({count})" for name, count in counts)
        lines = [f"exported {memories} of tenants {per}, {vectors} embeddings"]
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        noun = "tenant holds" if len(others) == 1 else "tenants hold"
        lines.append(
            f"not exported: {len(others)} other {noun} memories ({shown}); "
            "--all-tenants exports every tenant, --tenant NAME (repeatable) the ones you name"
        )
    return lines


@contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    """stdout, or a temporary file renamed to `path` once the export is complete."""
    if path is None:
        try:
            yield sys.stdout
            sys.stdout.flush()
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            _fail("error: the output closed before the export was complete", EXIT_FAILED)
        return
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        partial.unlink(missing_ok=True)
        # 0600 from the start, as the store itself: an export holds every memory it names.
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        os.replace(partial, path)
    except OSError as exc:
        _fail(f"error: cannot write {path}: {exc.strerror or exc}", EXIT_FAILED)
    finally:
        partial.unlink(missing_ok=True)


# --------------------------------------------------------------------------- import


def _formats() -> dict[str, str]:
    from mcp_memory.core.transfer.formats import FORMATS

    return FORMATS


IMPORT_HELP = """Import memories into the configured store.

    Without --from: an export of mcp-memory (ids kept, so running it again writes nothing twice;
    vectors reused when the file's model is the configured one). With --from: another tool's
    memories, each judged by remember's rules (duplicates merge, a correction is kept apart,
    limits refuse naming the place), dates kept, two provenance tags added. A refused entry is
    reported with its place and the rest continue; exit 1 if any was refused.

    \b
    FORMAT (--from):
""" + "\n".join(f"      {name:<21}{what}" for name, what in _formats().items())


@app.command("import", short_help="Import an export, or another tool's memories.", help=IMPORT_HELP)
def import_(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH...",
            help="An export file (- for stdin); with --from, the files or folders of that format.",
            show_default=False,
        ),
    ],
    source_format: Annotated[
        FormatName, typer.Option("--from", help="What PATH holds: a FORMAT listed above.")
    ] = "jsonl",
    tenant: Annotated[
        list[str] | None,
        typer.Option(
            "--tenant",
            "-t",
            help="jsonl: import only this tenant's records (repeatable). Other formats: the tenant to "
            "import into (default: $MEMORY_TENANT, else local); never read from the files.",
            show_default=False,
        ),
    ] = None,
    conversation: Annotated[
        str | None,
        typer.Option(
            "--conversation",
            "-c",
            help="Other formats: the conversation they are stored from (--scope conversation: "
            "only it sees them); default $MEMORY_CONVERSATION; never read from the files.",
            show_default=False,
        ),
    ] = None,
    scope: Annotated[
        Scope | None,
        typer.Option(help="Other formats: who sees the memories; default project.", show_default=False),
    ] = None,
    memory_type: Annotated[
        MemoryType | None,
        typer.Option(
            "--type", help="Other formats: the type of memories the source gives none of ours.", show_default=False
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read and judge everything, show what would be stored, write nothing.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """The help is IMPORT_HELP, which lists the formats."""
    if source_format != "jsonl":
        _import_format(source_format, paths, tenant, conversation, scope, memory_type, dry_run, as_json)
        return
    if len(paths) != 1:
        _fail("error: an export is one file (or - for stdin); name another tool's files with --from", EXIT_USAGE)
    for flag, given in (("--conversation", conversation), ("--scope", scope), ("--type", memory_type)):
        if given is not None:
            _fail(f"error: {flag} applies to --from formats; an export carries its own", EXIT_USAGE)
    from mcp_memory.core.transfer import FileRefused, Refusal

    settings = _settings()
    names = _tenants(tenant) or None

    def refused(refusal: Refusal) -> None:
        typer.echo(f"line {refusal.line}: {refusal.reason}", err=True)

    with _input(paths[0]) as stream:

        async def work(service: Any):
            with _progress("importing") as advance:
                try:
                    return await service.import_(
                        stream, tenants=names, on_refused=refused, progress=advance, dry_run=dry_run
                    )
                except FileRefused as exc:  # the whole file: nothing was written
                    return exc

        result = _run(settings, work)
    if isinstance(result, FileRefused):
        _fail(f"error: {result}", EXIT_FAILED)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "imported": result.imported,
                    "alreadyPresent": result.already_present,
                    "reEmbedded": result.re_embedded,
                    "refused": result.refused,
                    "skipped": result.skipped,
                    "tenants": result.tenants,
                    "dryRun": dry_run,
                }
            )
        )
    else:
        if dry_run:
            line = f"dry run, nothing written: would import {result.imported}, already present {result.already_present}"
            line += f", refused {result.refused}"
        else:
            line = (
                f"imported {result.imported}, already present {result.already_present}, "
                f"re-embedded {result.re_embedded}, refused {result.refused}"
            )
        if result.skipped:
            line += f", skipped {result.skipped} of tenants not asked for"
        typer.echo(line)
    if result.refused:
        raise typer.Exit(EXIT_FAILED)


def _import_format(
    source_format: str,
    paths: list[str],
    tenant: list[str] | None,
    conversation: str | None,
    scope: Any,
    memory_type: Any,
    dry_run: bool,
    as_json: bool,
) -> None:
    """`import --from FORMAT PATH...`: read, judge and (unless --dry-run) write; a report at the end."""
    from mcp_memory.cli.render import print_import
    from mcp_memory.core.transfer.formats import ReadContext, read

    if tenant and len(tenant) > 1:
        _fail("error: --tenant: another format's memories go into one tenant; give it once", EXIT_USAGE)
    if "-" in paths:
        _fail(f"error: --from {source_format} reads files and folders, not stdin (-)", EXIT_USAGE)
    settings = _settings()
    caller = _caller(settings, tenant[0] if tenant else None, conversation)
    if scope == "conversation" and not caller.conversation:
        _fail("error: --scope conversation needs --conversation (or MEMORY_CONVERSATION)", EXIT_USAGE)
    home = Path.home()
    claude_dir = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else home / ".claude"

    async def work(service: Any) -> Any:
        import asyncio

        context = ReadContext(home, claude_dir, service.clock())
        reading = await asyncio.to_thread(read, source_format, [Path(p).expanduser() for p in paths], context)
        with _progress("importing" if not dry_run else "judging", total=len(reading.entries)) as advance:
            return await service.remember_many(
                caller,
                reading,
                source=source_format,
                scope=scope or "project",
                memory_type=memory_type,
                dry_run=dry_run,
                progress=advance,
            )

    report = _run(settings, work)
    print_import(report, as_json)
    if report.refused:
        raise typer.Exit(EXIT_FAILED)


@contextmanager
def _input(source: str) -> Iterator[BinaryIO]:
    if source == "-":
        yield sys.stdin.buffer
        return
    try:
        stream = Path(source).open("rb")
    except OSError as exc:
        _fail(f"error: cannot read {source}: {exc.strerror or exc}", EXIT_USAGE)
    with stream:
        yield stream


# --------------------------------------------------------------------------- backup


@app.command(short_help="Copy the embedded SQLite store, even while in use.")
def backup(
    target: Annotated[
        Path, typer.Argument(metavar="FILE", help="Where to write the copy (a new file).", dir_okay=False)
    ],
    as_json: JsonOption = False,
) -> None:
    """Copy the embedded SQLite store to FILE, consistently, even while servers write to it.

    Uses SQLite's online backup API. For PostgreSQL use pg_dump; for S3, export.
    """
    import asyncio

    from mcp_memory.core.errors import StoreError

    settings = _settings()
    if settings.store.backend != "sqlite":
        _fail(
            f"error: backup copies the embedded SQLite store, and this configuration uses {settings.store.backend}; "
            "back PostgreSQL up with pg_dump, and S3 with `mcp-memory export --all-tenants --with-embeddings` "
            '(docs/backup_and_migration.md, "Backing up")',
            EXIT_USAGE,
        )
    from mcp_memory.app import backup_sqlite

    source = Path(settings.store.db_path).expanduser()
    try:
        result = asyncio.run(asyncio.to_thread(backup_sqlite, source, target))
    except StoreError as exc:
        _fail(f"error: {exc}", EXIT_FAILED)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "source": str(result.source),
                    "backup": str(result.target),
                    "memories": result.memories,
                    "bytes": result.bytes,
                }
            )
        )
    else:
        typer.echo(
            f"backed up {result.memories} memories from {result.source} to {result.target} ({result.bytes} bytes)"
        )
