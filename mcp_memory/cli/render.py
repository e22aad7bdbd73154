"""How the operator's commands print: a readable view with rich, or JSON (--json).

Unlike the text a model reads, the operator's view shows similarity and score:
an operator tuning the relevance floor needs the numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from typing import Any

from mcp_memory.core.model import Memory


def _console():
    return stdout_console()


@functools.cache
def _stdout_console_class() -> type:
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich would exit with status 1; the command's wrapper ends it quietly with 0 instead.
            raise BrokenPipeError

    return StdoutConsole


def stdout_console() -> Any:
    """The readable view's console on stdout; a reader that went away raises BrokenPipeError."""
    return _stdout_console_class()(highlight=False, soft_wrap=True)


def _json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def memory_json(memory: Memory) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": memory.id,
        "type": memory.memory_type,
        "content": memory.content,
        "createdAt": memory.created_at,
        "scope": memory.scope,
    }
    if memory.category:
        record["category"] = memory.category
    if memory.tags:
        record["tags"] = list(memory.tags)
    if memory.scope == "conversation":
        record["conversationScoped"] = True
    return record


def _facets(memory: Memory, with_time: bool = False) -> str:
    facets: list[str] = [memory.memory_type]  # ours only: the category a model wrote is shown under the text
    if memory.scope == "conversation":
        facets.append("this conversation only")
    from mcp_memory.server.protocol.render import stored_at

    facets.append(f"stored {stored_at(memory.created_at, with_time)}")
    return ", ".join(facets)


def _print_memory(console: Any, position: int, memory: Memory, extra: str = "", *, with_time: bool = False) -> None:
    """The `N. <id>` line at the margin, then the stored text indented, every line of it and
    every line the terminal wraps it into: a memory is data, and one holding a line such as
    "2. 01J…  (project, …)" must not pass for the next result (an agent may read this output)."""
    from rich.text import Text

    head = Text(f"{position}. ", style="bold")
    head.append(memory.id, style="cyan")
    head.append(f"  ({_facets(memory, with_time)}{extra})", style="dim")
    console.print(head)
    _indented(console, Text(memory.content))
    if memory.category:  # as a tag: on its own line, under the text
        _indented(console, Text("category: " + " ".join(memory.category.split()), style="dim"))
    if memory.tags:  # a tag may hold a line break: it stays on the tags line
        tags = ", ".join(" ".join(tag.split()) for tag in memory.tags)
        _indented(console, Text("tags: " + tags, style="dim"))


def _indented(console: Any, text: Any, indent: int = 3) -> None:
    """`text` wrapped at words to the terminal less `indent`, each line indented by it, with
    no trailing blanks (rich's Padding fills every line out to the terminal's width)."""
    from rich.text import Text

    for line in text.wrap(console, max(console.width - indent, 20), overflow="fold"):
        line.rstrip()
        console.print(Text(" " * indent) + line if line.plain else Text(""))


def print_recall(result: Any, as_json: bool) -> None:
    if as_json:
        from mcp_memory.server.protocol.structured import recall_data

        data = recall_data(result)  # the tool's structured result, with the CLI's own two fields
        for record, ranked in zip(data["results"], result.results):
            record["score"] = round(ranked.score, 4)
            record["accessCount"] = ranked.stats.access_count
        _json(data)
        return
    console = _console()
    if not result.results and result.filtered_out:
        from mcp_memory.server.protocol.render import filter_clauses

        n = result.filtered_out
        found = f"{n} memory matched" if n == 1 else f"{n} memories matched"
        console.print(
            f"{found} the query but none {filter_clauses(result.where)}; try without the filters.",
            style="yellow",
            markup=False,
        )
        return
    if not result.found_any:
        console.print("Nothing is stored near this query.", style="yellow")
        return
    if result.unanswered:
        from mcp_memory.server.protocol.render import nothing_answers_guidance

        console.print(nothing_answers_guidance(result.gated, result.probability), style="yellow", markup=False)
        return
    if not result.results:
        noun = "memory was" if result.gated == 1 else "memories were"
        console.print(f"Nothing matched closely enough ({result.gated} {noun} below the floor).", style="yellow")
        return
    label = {"high": "[bold green]HIGH[/]", "medium": "[bold yellow]MEDIUM[/]", "low": "[bold red]LOW[/]"}.get(
        result.confidence, "MEDIUM"
    )
    n = len(result.results)
    likely = f" ({round(result.probability * 100)}% likely to answer)" if result.probability is not None else ""
    console.print(f"{n} {'memory' if n == 1 else 'memories'} (mode {result.mode}), confidence {label}{likely}")
    dates = [r.memory.created_at[:10] for r in result.results]
    for i, r in enumerate(result.results, start=1):
        extra = f", similarity {r.similarity:.3f}, {round(r.standing * 100)}% of top"
        if r.probability is not None:
            extra = f", probability {r.probability:.3f}" + extra
        if r.superseded_by:
            extra += f", possibly superseded by the newer {r.superseded_by}"
        _print_memory(console, i, r.memory, extra, with_time=dates.count(r.memory.created_at[:10]) > 1)


def print_remember(result: Any, as_json: bool) -> None:
    if as_json:
        record: dict[str, Any] = {"created": result.created, "memory": memory_json(result.memory)}
        if result.replaced:
            record["replaced"] = list(result.replaced)
        if result.not_removed:
            record["notRemoved"] = list(result.not_removed)
        if result.near is not None:
            record["near"] = memory_json(result.near)
        _json(record)
        return
    console = _console()
    if result.created:
        console.print(f"Stored as [cyan]{result.memory.id}[/].")
    else:
        console.print("Already known: an existing memory says this, so nothing new was written.", style="yellow")
    _print_memory(console, 1, result.memory)
    if result.replaced:
        console.print(f"Replaced (removed): {', '.join(result.replaced)}.")
    if result.not_removed:
        console.print(
            f"Not replaced: {', '.join(result.not_removed)} could not be removed and is still stored; "
            "run forget with its id.",
            style="yellow",
        )
    if result.near is not None:
        console.print(
            f"Close to an existing memory, kept as well: {result.near.id}. If this corrects it, run remember "
            f"again with --replaces {result.near.id}, or forget it.",
            style="yellow",
        )
        _print_memory(console, 1, result.near)


def print_page(pages: list[Any], as_json: bool, *, span: Any = None) -> None:
    """`list`: the memories of one page (or, with --all, of every page), numbered on from 1;
    a page that is not the last ends with the cursor that goes on after it."""
    memories = [memory for page in pages for memory in page.memories]
    next_cursor = pages[-1].next_cursor
    if as_json:
        _json({"memories": [memory_json(m) for m in memories], "nextCursor": next_cursor})
        return
    console = _console()
    last = pages[-1]
    if not memories:
        what = f' of type "{last.memory_type}"' if last.memory_type else ""
        if last.tags:
            what += f" tagged {', '.join(last.tags)}"
        words = span.words() if span else ""
        shown = f"No memories{what} {words}" if words else f"No memories{what} yet"
        console.print(f"{shown}{' on this page' if next_cursor else ''}.", style="yellow", markup=False)
    else:
        n = len(memories)
        console.print(f"{n} {'memory' if n == 1 else 'memories'}, newest first")
        for i, memory in enumerate(memories, start=1):
            _print_memory(console, i, memory)
    if next_cursor:
        console.print(
            f"More after these: run the same command with --cursor {next_cursor} (or --all for every one).",
            markup=False,
        )


def print_forget(result: Any, as_json: bool) -> None:
    if as_json:
        _json({"id": result.id, "deleted": result.deleted})
        return
    if result.deleted:
        _console().print(f"Deleted {result.id}.", markup=False)
    else:
        text = f"No memory with id {result.id} exists for this project. Nothing was deleted."
        _console().print(text, markup=False, style="yellow")


def print_stats(tenant: str, result: Any, as_json: bool) -> None:
    if as_json:
        _json({"tenant": tenant, "total": result.total, "byType": result.by_type, "lowerBound": result.lower_bound})
        return
    from rich.table import Table

    from mcp_memory.core.model import MEMORY_TYPES

    console = _console()
    table = Table(title=f"Memories of {tenant}", show_header=True)
    table.add_column("type")
    table.add_column("count", justify="right")
    for memory_type in MEMORY_TYPES:
        table.add_row(memory_type, str(result.by_type.get(memory_type, 0)))
    table.add_row("[bold]total[/]", f"[bold]{'≥ ' if result.lower_bound else ''}{result.total}[/]")
    console.print(table)
    if result.lower_bound:
        console.print("Counting stopped at 10000 keys: every figure is a lower bound.", style="yellow")


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def compact_lines(tenant: str, report: Any, dry_run: bool, *, footer: bool = True) -> list[str]:
    """`compact`'s readable report: what was folded, left and removed, in words, then the
    merged counts; a dry run says what it would do and that nothing was written."""
    would = dry_run
    done = []
    if report.shards_folded:
        done.append(f"{'would fold' if would else 'folded'} {_count(report.shards_folded, 'settled shard')}")
    if report.shards_stale:
        done.append(
            f"{'would remove' if would else 'removed'} {_count(report.shards_stale, 'stale shard')} (already counted)"
        )
    if report.shards_left:
        left = _count(report.shards_left, "shard")
        done.append(f"{'would leave' if would else 'left'} {left} not settled yet (under a minute old)")
    head = f"{tenant}{' (dry run)' if dry_run else ''}: "
    head += "; ".join(done) + "." if done else "nothing to fold."
    after = "after the fold" if dry_run and report.shards_folded else "now"
    lines = [
        head,
        f"  merged counts {after}: {_count(report.memories, 'memory', 'memories')}, "
        f"{_count(report.accesses, 'access', 'accesses')}",
    ]
    if dry_run and footer:
        lines.append("  nothing was written (--dry-run)")
    return lines


def print_compact(tenant: str, report: Any, dry_run: bool, as_json: bool) -> None:
    if as_json:
        data = dataclasses.asdict(report)
        _json({"tenant": tenant, "dryRun": dry_run, **data})
        return
    console = _console()
    for line in compact_lines(tenant, report, dry_run):
        console.print(line, markup=False)


def print_tenants(result: Any, as_json: bool) -> None:
    """`stats` without a tenant: every tenant with its memory counts (all scopes)."""
    if as_json:
        _json(
            {
                "tenants": [
                    {
                        "tenant": t.tenant,
                        "total": t.total,
                        "byType": t.by_type,
                        "conversationNotes": t.conversation_notes,
                        "lowerBound": t.lower_bound,
                    }
                    for t in result.tenants
                ],
                "truncated": result.truncated,
                "limit": result.limit,
            }
        )
        return
    from rich import box
    from rich.table import Table

    from mcp_memory.core.model import MEMORY_TYPES

    console = _console()
    if not result.tenants:
        console.print("No tenant has any memories yet.", style="yellow")
        return
    # Fits 80 columns with every header whole: no outer edge, and a tenant name too long
    # for what is left folds onto more lines instead of being cut.
    table = Table(
        title="Memories by tenant (every scope)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("tenant", overflow="fold")
    for memory_type in MEMORY_TYPES:
        table.add_column(memory_type, justify="right", no_wrap=True)
    table.add_column("conversation\nscoped", justify="right", no_wrap=True)
    table.add_column("total", justify="right", no_wrap=True)
    for t in result.tenants:
        bound = "≥ " if t.lower_bound else ""
        table.add_row(
            t.tenant,
            *(str(t.by_type.get(memory_type, 0)) for memory_type in MEMORY_TYPES),
            str(t.conversation_notes),
            f"[bold]{bound}{t.total}[/]",
        )
    console.print(table)
    n = len(result.tenants)
    if result.truncated:
        console.print(
            f"Stopped at {result.limit} tenants: there are more, not listed here.",
            style="yellow",
            markup=False,
        )
    else:
        console.print(f"{n} {'tenant' if n == 1 else 'tenants'}.")
    if any(t.lower_bound for t in result.tenants):
        console.print("Counting stops at 10000 keys per tenant: a figure marked ≥ is a lower bound.", style="yellow")


def print_compact_all(result: Any, as_json: bool) -> None:
    """`compact --all-tenants`: one line per tenant, then failures and whether the scan stopped."""
    if as_json:
        _json(
            {
                "dryRun": result.dry_run,
                "tenants": [dataclasses.asdict(r) for r in result.reports],
                "failed": [{"tenant": tenant, "error": message} for tenant, message in result.failed],
                "truncated": result.truncated,
                "limit": result.limit,
            }
        )
        return
    console = _console()
    for report in result.reports:
        for line in compact_lines(report.tenant, report, result.dry_run, footer=False):
            console.print(line, markup=False)
    if not result.reports and not result.failed:
        console.print("No tenant has access counters yet.", style="yellow")
    elif result.reports:
        tenants = _count(len(result.reports), "tenant")
        console.print(f"{tenants} {'visited, nothing was written (--dry-run)' if result.dry_run else 'compacted'}.")
    for tenant, message in result.failed:
        console.print(f"error: compacting {tenant} failed — {message}", style="red", markup=False)
    if result.truncated:
        console.print(
            f"Stopped at {result.limit} tenants: any others were not compacted here "
            "(their counters are still folded in by readers as usual).",
            style="yellow",
            markup=False,
        )


def import_json(report: Any) -> dict[str, Any]:
    return {
        "format": report.format,
        "tenant": report.tenant,
        "dryRun": report.dry_run,
        "files": report.files,
        "read": report.read,
        "new": report.new,
        "duplicatesOfStore": report.duplicates_of_store,
        "duplicatesWithin": report.duplicates_within,
        "refused": [{"place": str(n.place), "reason": n.reason} for n in report.refused],
        "skipped": [{"place": str(n.place), "reason": n.reason} for n in report.skipped],
        "ignoredFields": report.ignored,
        "preview": [memory_json(m) for m in report.preview],
    }


def import_summary(report: Any) -> str:
    """The one line an import ends with."""
    verb = "would import" if report.dry_run else "imported"
    line = (
        f"{verb} {_count(report.new, 'new memory', 'new memories')} into tenant {report.tenant} "
        f"from {_count(report.files, 'file')} ({report.format}): "
        f"{report.duplicates_of_store} already stored, {report.duplicates_within} repeated in the files, "
        f"{len(report.refused)} refused, {len(report.skipped)} left out"
    )
    return ("dry run, nothing written: " + line) if report.dry_run else line


def print_import(report: Any, as_json: bool) -> None:
    """An import from another format: refusals and what was left out on stderr, each with its
    place; with --dry-run the first memories as they would be stored; then the summary line."""
    if as_json:
        _json(import_json(report))
        return
    from rich.console import Console
    from rich.text import Text

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    for notice in report.refused:
        err.print(Text(f"refused {notice.place}: {notice.reason}"))
    for notice in report.skipped:
        err.print(Text(f"left out {notice.place}: {notice.reason}"))
    if report.ignored:
        fields = ", ".join(f"{name} ({_count(n, 'value')})" for name, n in report.ignored.items())
        err.print(
            Text(
                f"not read: {fields} in the files; every memory goes to tenant {report.tenant} "
                "(--tenant and --conversation choose)"
            )
        )
    console = _console()
    if report.dry_run and report.preview:
        console.print(Text(f"The first {len(report.preview)} as they would be stored:", style="bold"))
        for position, memory in enumerate(report.preview, 1):
            console.print(Text(f"{position}. ({_facets(memory)})", style="dim"))
            _indented(console, Text(memory.content))
            if memory.category:  # a source's heading or label: under the text, as _print_memory shows it
                _indented(console, Text("category: " + " ".join(memory.category.split()), style="dim"))
            if memory.tags:
                _indented(console, Text("tags: " + ", ".join(" ".join(t.split()) for t in memory.tags), style="dim"))
    console.print(Text(import_summary(report)))
