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
from typing import Annotated, Any, BinaryIO, TextIO

import typer

from mcp_memory.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    JsonOption,
    _fail,
    _run,
    _settings,
    app,
)

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
def _progress(description: str) -> Iterator[Callable[[int], None]]:
    """A rich progress line on stderr when it is a terminal; otherwise nothing at all."""
    if not sys.stderr.isatty():
        yield lambda advance: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)
        yield lambda advance: bar.advance(task, advance)


def _say(text: str, *, stderr: bool) -> None:
    typer.echo(text, err=stderr)


# --------------------------------------------------------------------------- export


@app.command(short_help="Write memories as JSON Lines.")
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
) -> None:
    """Write memories as JSON Lines: a header line, then one line per memory with its counts.

    Give --tenant (repeatable) or --all-tenants; with neither, $MEMORY_TENANT, else local
    (the tenant of every other command).
    """
    from mcp_memory.config import DEFAULT_TENANT

    settings = _settings()
    names = _tenants(tenant)
    if all_tenants and names:
        _fail("error: --all-tenants and --tenant cannot be combined", EXIT_USAGE)
    if not all_tenants and not names:
        names = [settings.tenant or DEFAULT_TENANT]

    with _output(output) as stream:

        async def work(service: Any) -> tuple[Any, list[str]]:
            chosen = await service.export_tenants(all_tenants=all_tenants, tenants=names)
            # the tenants left out, so a bare export does not pass for a backup of everything
            others = [] if all_tenants else await service.export_tenants(all_tenants=True)
            with _progress("exporting") as advance:
                done = await service.export(
                    chosen, write=stream.write, with_embeddings=with_embeddings, progress=advance
                )
            return done, [name for name in others if name not in chosen]

        result, others = _run(settings, work)
    summary = {
        "exported": result.memories,
        "tenants": result.tenants,
        "withEmbeddings": result.with_embeddings,
        "output": str(output) if output else "-",
        "otherTenants": others,
    }
    to_stderr = output is None
    if as_json:
        _say(json.dumps(summary), stderr=to_stderr)
    else:
        for line in _export_summary(result, names if not all_tenants else list(result.tenants), others):
            _say(line, stderr=to_stderr)


def _export_summary(result: Any, names: list[str], others: list[str]) -> list[str]:
    """What an export says it wrote: the tenants by name with their counts, and the tenants it
    left out with the option that would take them."""
    counts = [(name, result.tenants.get(name, 0)) for name in names]
    memories = f"{result.memories} {'memory' if result.memories == 1 else 'memories'}"
    vectors = "with" if result.with_embeddings else "without"
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


@app.command("import", short_help="Import an export into the configured store.")
def import_(
    source: Annotated[str, typer.Argument(metavar="FILE", help="An export file, or - for stdin.", show_default=False)],
    tenant: Annotated[
        list[str] | None,
        typer.Option(
            "--tenant",
            "-t",
            help="Import only this tenant's records (repeatable); the file's other records are skipped.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Import an export into the configured store: ids kept, so running it again writes nothing twice.

    Vectors are reused when the file's model is the configured one, else re-embedded.
    A bad record is reported with its line number and the rest continue; exit 1 if any was refused.
    """
    from mcp_memory.core.transfer import FileRefused, Refusal

    settings = _settings()
    names = _tenants(tenant) or None

    def refused(refusal: Refusal) -> None:
        typer.echo(f"line {refusal.line}: {refusal.reason}", err=True)

    with _input(source) as stream:

        async def work(service: Any):
            with _progress("importing") as advance:
                try:
                    return await service.import_(stream, tenants=names, on_refused=refused, progress=advance)
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
                }
            )
        )
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
    if settings.backend != "sqlite":
        _fail(
            f"error: backup copies the embedded SQLite store, and this configuration uses {settings.backend}; "
            "back PostgreSQL up with pg_dump, and S3 with `mcp-memory export --all-tenants --with-embeddings` "
            '(docs/backup_and_migration.md, "Backing up")',
            EXIT_USAGE,
        )
    from mcp_memory.app import backup_sqlite

    source = Path(settings.db_path).expanduser()
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
