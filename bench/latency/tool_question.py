"""The serving process's side of a tool hook at 10,000 memories: `MemoryService.concerning` for a
file read, then an edit of the same file, and the hook's whole answer (answers.answer) for a Read
and a shell command, each before and after the changes that made it faster, side by side.

    nice python -m bench.latency.tool_question [--memories 10000] [--rounds 15]

One SQLite store of the benchmark corpus (perf_fill.py's memories, random unit vectors), 5 of
them tagged `rule`; the question is embedded by the local model. Rows, interleaved round by round,
each a fresh file path (so nothing is reused across rounds):

- the `path:` tag lookup alone (`_filtered_nearest` with the file's tags), by SQL as before
  (json_each reads every row's tags), by SQL with the substring pre-test (`stores/sqlite/store.py`
  `_tags_start`), and from the rows kept per tenant version (`stores/sqlite/tagged.py`);
- `concerning` for the Read, then for the Edit of the same file (the Edit reuses the Read's
  embedding: `ACTION_EMBEDDINGS`);
- the hook's answer to a PreToolUse Read of a new file and to `git status --short <n>` (what
  `bench.hooks.handler_time`'s sessions call), as main before 2026-12-06 evening (the tag lookup by
  SQL each time, a command's program and a file's names worked out again for each candidate:
  `before`) and as now (`after`), alternating which goes first.

Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import tempfile
import time
from pathlib import Path

from bench.harness.perf_fill import TENANT
from bench.harness.timing import percentile
from bench.latency.digest_rules import fill, service_of
from mcp_memory.core import actions
from mcp_memory.core.model import Caller, MemoryFilter
from mcp_memory.server.budget import DEFAULT_TOOL_BUDGET, TOOL_LIMIT
from mcp_memory.server.hooks.answers import answer
from mcp_memory.server.hooks.wire import DEFAULT_TOOL_CONFIDENCE, Ask
from mcp_memory.stores.sqlite import store as sqlite_store

ROWS = (
    "path: tag lookup, json_each alone (SQL)",
    "path: tag lookup, substring pre-test first (SQL)",
    "path: tag lookup, rows kept per version",
    "concerning: Read of a new file (embeds)",
    "concerning: Edit of the same file (embedding reused)",
    "hook answer: Read of a new file, before",
    "hook answer: Read of a new file, after",
    "hook answer: shell command, before",
    "hook answer: shell command, after",
)


def question(tool: str, field: str, value: str) -> Ask:
    """A PreToolUse question as the hook asks it (events.handle), for a session shown nothing yet."""
    call = {"event": "PreToolUse", "tool": tool, "input": {field: value}, "cwd": "/p", "error": ""}
    return Ask(
        "tool",
        TENANT,
        None,
        "",
        frozenset(),
        DEFAULT_TOOL_BUDGET,
        TOOL_LIMIT,
        DEFAULT_TOOL_CONFIDENCE,
        call,
        "warnings",
    )


class Before:
    """Main as it was before the kept rows and the names worked out once: the tag filter's ids by
    SQL each time, and `naming` done again for every candidate (the per-memory cost it replaced)."""

    def __init__(self, store: sqlite_store.SqliteVectorStore) -> None:
        self.store = store
        self.rows = store._tagged.rows
        self.naming = actions.naming

    def __enter__(self) -> None:
        self.store._tagged.rows = lambda *args: None  # type: ignore[method-assign,assignment]
        naming = self.naming
        actions.naming = lambda action: lambda content: naming(action)(content)  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        self.store._tagged.rows = self.rows  # type: ignore[method-assign]
        actions.naming = self.naming


async def measure(db: Path, rounds: int) -> dict[str, list[float]]:
    caller = Caller(TENANT)
    service = await service_of(db)
    rows: dict[str, list[float]] = {row: [] for row in ROWS}
    shipped = sqlite_store._tags_start
    store = service.vectors
    assert isinstance(store, sqlite_store.SqliteVectorStore)
    try:
        warm = actions.action_of("PreToolUse", "Read", {"file_path": "/p/warm/up.py"}, "/p")
        assert warm is not None
        await service.concerning(caller, warm)  # the model loaded, the store's caches warm
        await answer(service, caller, question("Bash", "command", "git status --short"))
        for i in range(rounds):
            path = f"/p/services/billing{i}/refund_{i}.py"
            reading = actions.action_of("PreToolUse", "Read", {"file_path": path}, "/p")
            editing = actions.action_of("PreToolUse", "Edit", {"file_path": path}, "/p")
            assert reading is not None and editing is not None
            embedding = await service._embed(actions.query_of(reading))
            where = MemoryFilter(tags=tuple(actions.path_tags(reading.paths[0])))
            for row, pre_test, kept in ((ROWS[0], False, False), (ROWS[1], True, False), (ROWS[2], True, True)):
                sqlite_store._tags_start = shipped if pre_test else (lambda tags: [])  # type: ignore[assignment]
                with contextlib.nullcontext() if kept else Before(store):
                    started = time.perf_counter()
                    await service._filtered_nearest(caller, embedding, 10, where)
                    rows[row].append((time.perf_counter() - started) * 1000)
            sqlite_store._tags_start = shipped
            for row, action in ((ROWS[3], reading), (ROWS[4], editing)):
                started = time.perf_counter()
                await service.concerning(caller, action)
                rows[row].append((time.perf_counter() - started) * 1000)
            # the whole answer, each side a question of its own (nothing embedded by the other)
            sides = [("before", Before(store)), ("after", contextlib.nullcontext())]
            for side, state in sides if i % 2 == 0 else sides[::-1]:
                asked = {
                    "Read of a new file": question("Read", "file_path", f"/p/src/{side}{i}/refund.py"),
                    "shell command": question("Bash", "command", f"git status --short {side}{i}"),
                }
                for what, ask in asked.items():
                    with state:
                        started = time.perf_counter()
                        await answer(service, caller, ask)
                        rows[f"hook answer: {what}, {side}"].append((time.perf_counter() - started) * 1000)
    finally:
        sqlite_store._tags_start = shipped
        await service.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tool-question-"))
    try:
        db = root / "m.db"
        asyncio.run(fill(db, args.memories, 5))
        rows = asyncio.run(measure(db, args.rounds))
        print(f"{args.memories:,} memories (SQLite); {args.rounds} interleaved rounds in one process.\n")
        print("| step | runs | p50 ms | p95 ms |\n| --- | ---: | ---: | ---: |")
        for row, values in rows.items():
            print(f"| {row} | {len(values)} | {percentile(values, 50):.1f} | {percentile(values, 95):.1f} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
