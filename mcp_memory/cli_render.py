"""How the operator's commands print: a readable view with rich, or JSON (--json).

Unlike the text a model reads, the operator's view shows similarity and score:
an operator tuning the relevance floor needs the numbers.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

from mcp_memory.model import Memory


def _console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


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


def _facets(memory: Memory) -> str:
    facets = [f"{memory.memory_type}/{memory.category}" if memory.category else memory.memory_type]
    if memory.scope == "conversation":
        facets.append("this conversation only")
    facets.append(f"stored {memory.created_at[:10]}")
    return ", ".join(facets)


def _print_memory(console: Any, position: int, memory: Memory, extra: str = "") -> None:
    from rich.text import Text

    head = Text(f"{position}. ", style="bold")
    head.append(memory.id, style="cyan")
    head.append(f"  ({_facets(memory)}{extra})", style="dim")
    console.print(head)
    console.print(Text("   " + memory.content))
    if memory.tags:
        console.print(Text("   tags: " + ", ".join(memory.tags), style="dim"))


def print_recall(result: Any, as_json: bool) -> None:
    if as_json:
        _json(
            {
                "query": result.query,
                "mode": result.mode,
                "confidence": result.confidence,
                "gated": result.gated,
                "results": [
                    {
                        **memory_json(r.memory),
                        "similarity": round(r.similarity, 6),
                        "score": round(r.score, 6),
                        "standing": round(r.standing, 6),
                        "accessCount": r.stats.access_count,
                    }
                    for r in result.results
                ],
            }
        )
        return
    console = _console()
    if not result.found_any:
        console.print("Nothing is stored near this query.", style="yellow")
        return
    if not result.results:
        noun = "memory was" if result.gated == 1 else "memories were"
        console.print(f"Nothing matched closely enough ({result.gated} {noun} below the floor).", style="yellow")
        return
    label = {"high": "[bold green]HIGH[/]", "medium": "[bold yellow]MEDIUM[/]"}.get(result.confidence, "LOW")
    n = len(result.results)
    console.print(f"{n} {'memory' if n == 1 else 'memories'} (mode {result.mode}), confidence {label}")
    for i, r in enumerate(result.results, start=1):
        _print_memory(console, i, r.memory, f", similarity {r.similarity:.3f}, {round(r.standing * 100)}% of top")


def print_remember(result: Any, as_json: bool) -> None:
    if as_json:
        _json({"created": result.created, "memory": memory_json(result.memory)})
        return
    console = _console()
    if result.created:
        console.print(f"Stored as [cyan]{result.memory.id}[/].")
    else:
        console.print("Already known: an existing memory says this, so nothing new was written.", style="yellow")
    _print_memory(console, 1, result.memory)


def print_list(result: Any, as_json: bool) -> None:
    if as_json:
        _json({"memories": [memory_json(m) for m in result.memories]})
        return
    console = _console()
    if not result.memories:
        what = f' of type "{result.memory_type}"' if result.memory_type else ""
        console.print(f"No memories{what} yet.", style="yellow")
        return
    n = len(result.memories)
    console.print(f"{n} {'memory' if n == 1 else 'memories'}, newest first")
    for i, memory in enumerate(result.memories, start=1):
        _print_memory(console, i, memory)


def print_forget(result: Any, as_json: bool) -> None:
    if as_json:
        _json({"id": result.id, "deleted": result.deleted})
        return
    from mcp_memory import render

    text = render.render_deleted(result.id) if result.deleted else render.render_not_found(result.id)
    _console().print(text.removeprefix("[MEMORY] "), markup=False, style=None if result.deleted else "yellow")


def print_stats(tenant: str, result: Any, as_json: bool) -> None:
    if as_json:
        _json({"tenant": tenant, "total": result.total, "byType": result.by_type, "lowerBound": result.lower_bound})
        return
    from rich.table import Table

    from mcp_memory.model import MEMORY_TYPES

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


def print_compact(tenant: str, report: Any, dry_run: bool, as_json: bool) -> None:
    data = dataclasses.asdict(report) if dataclasses.is_dataclass(report) else dict(report)
    if as_json:
        _json({"tenant": tenant, "dryRun": dry_run, **data})
        return
    console = _console()
    verb = "Would fold" if dry_run else "Folded"
    parts = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in data.items())
    console.print(f"{verb} counters of {tenant}: {parts}")
