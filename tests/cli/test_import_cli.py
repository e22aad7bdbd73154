"""`mcp-memory import --from FORMAT PATH…` and `export --format` as an operator runs them: through
Typer's runner on a SQLite file, and a real process where a signal is the point (kill -9)."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_memory.cli.app import app
from tests.conftest import ROOT
from tests.support.import_fixtures import FORMATS, layout


@pytest.fixture
def mm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Run a command in-process against a SQLite file, the fake embedder and a home in tmp_path."""
    for name in list(os.environ):
        if name.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL", "RECALL_", "VECTOR_BUCKET", "STATE_BUCKET")):
            monkeypatch.delenv(name)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("MEMORY_DB_PATH", str(tmp_path / "memory.db"))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "fake")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)

    def run(*args: str):
        return CliRunner().invoke(app, list(args))

    return run


def count(db: Path, sql: str = "SELECT count(*) FROM memories") -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_import_help_lists_every_format(mm) -> None:
    shown = mm("import", "--help").stdout
    listed = shown.split("FORMAT (--from):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in listed] == ["jsonl", *FORMATS]
    assert all(len(line) <= 80 for line in listed)


def test_a_dry_run_shows_the_first_memories_the_counts_and_each_refusal_by_place_and_writes_nothing(
    mm, tmp_path: Path
) -> None:
    paths, _ = layout("text", tmp_path)
    long = tmp_path / "long.md"
    long.write_text(f"- kept\n- {'x' * 33_000}\n", encoding="utf-8")
    done = mm("import", "--from", "text", "--dry-run", "--tenant", "acme", str(paths[0]), str(long))
    assert done.exit_code == 1
    out = done.stdout.splitlines()
    assert out[0] == "The first 5 as they would be stored:"
    assert out[1].startswith("1. (project, stored ")
    assert out[2] == "   Our standup is at 09:30 Seoul time, every weekday."
    assert out[3] == "   category: Team notes"  # the heading it was under, outside the facets a model cannot write
    assert out[-1] == (
        "dry run, nothing written: would import 9 new memories into tenant acme from 3 files (text): "
        "0 already stored, 1 repeated in the files, 1 refused, 0 left out"
    )
    assert done.stderr.startswith(f"refused {long}:2: the text is 33000 bytes; the maximum a single memory")
    assert count(tmp_path / "memory.db") == 0
    assert mm("list", "--tenant", "acme").stdout == "No memories yet.\n"


def test_an_import_ends_with_one_line_and_json_for_scripts_and_a_rerun_writes_nothing(mm, tmp_path: Path) -> None:
    paths, _ = layout("mem0", tmp_path)
    done = mm("import", "--from", "mem0", *map(str, paths))
    assert done.exit_code == 1  # one record has no text
    assert done.stdout == (
        "imported 9 new memories into tenant local from 3 files (mem0): 0 already stored, "
        "1 repeated in the files, 1 refused, 3 left out\n"
    )
    assert f"left out {paths[0]} results[5]: it expired on 2024-09-30" in done.stderr
    assert "not read: agent_id (1 value), user_id (3 values) in the files; every memory goes to tenant local" in (
        done.stderr
    )
    again = mm("import", "--from", "mem0", "--json", *map(str, paths))
    report = json.loads(again.stdout)
    assert (report["new"], report["duplicatesOfStore"], report["duplicatesWithin"]) == (0, 10, 0)
    assert report["refused"] == [
        {
            "place": f"{paths[0]} results[8]",
            "reason": 'a memory needs its text in "memory" (or "content"), a string',
        }
    ]
    assert report["ignoredFields"] == {"agent_id": 1, "user_id": 3}
    assert count(tmp_path / "memory.db") == 9


def test_the_tenant_is_the_flags_never_the_files_and_is_named_once(mm, tmp_path: Path) -> None:
    paths, _ = layout("mcp-knowledge-graph", tmp_path)
    done = mm("import", "--from", "mcp-knowledge-graph", "--tenant", "beta", str(paths[0]))
    assert "into tenant beta" in done.stdout
    listed = json.loads(mm("stats", "--all-tenants", "--json").stdout)["tenants"]
    assert [(t["tenant"], t["total"]) for t in listed] == [("beta", 12)]  # not someone-else, the file's tenant
    twice = mm("import", "--from", "text", "-t", "a", "-t", "b", str(paths[0]))
    assert twice.exit_code == 2
    assert "another format's memories go into one tenant; give it once" in twice.stderr


def test_options_that_do_not_apply_are_refused_before_anything_is_read(mm, tmp_path: Path) -> None:
    export = tmp_path / "x.jsonl"
    export.write_text("", encoding="utf-8")
    for args, said in (
        (("import", "-c", "thread", str(export)), "--conversation applies to --from formats"),
        (("import", str(export), str(export)), "an export is one file"),
        (("import", "--from", "text", "-"), "--from text reads files and folders, not stdin (-)"),
        (("import", "--from", "text", "--scope", "conversation", str(export)), "--scope conversation needs"),
        (("export", "--format", "markdown", "--with-embeddings"), "--with-embeddings applies to --format jsonl"),
    ):
        done = mm(*args)
        assert done.exit_code == 2, args
        assert said in done.stderr, (args, done.stderr)
    assert not (tmp_path / "memory.db").exists() or count(tmp_path / "memory.db") == 0


def test_export_writes_markdown_and_the_reference_servers_graph(mm, tmp_path: Path) -> None:
    paths, _ = layout("mcp-knowledge-graph", tmp_path)
    mm("import", "--from", "mcp-knowledge-graph", str(paths[0]))
    graph = mm("export", "--format", "mcp-knowledge-graph", "-o", str(tmp_path / "memory.jsonl"))
    assert graph.stdout == "exported 12 memories of tenant local, as mcp-knowledge-graph, without embeddings\n"
    lines = [json.loads(line) for line in (tmp_path / "memory.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {line["type"] for line in lines} == {"entity", "relation"}
    markdown = mm("export", "--format", "markdown")
    assert markdown.stdout.splitlines()[1] == "# Memories of local"
    assert markdown.stderr == "exported 12 memories of tenant local, as markdown, without embeddings\n"


def test_the_progress_bar_shows_only_once_the_work_has_taken_two_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_memory.cli import transfer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    now = [100.0]
    with transfer._progress("importing", total=300, clock=lambda: now[0]) as advance:
        advance(64)
        now[0] += 1.9
        advance(64)
        assert screen.getvalue() == ""
        now[0] += 0.2
        advance(64)
    assert "importing" in screen.getvalue()


#: Run `mcp-memory` in a child that sends itself SIGKILL at one point of an import's writes (the
#: test names it): the real signal, at the worst moments, without waiting on a clock.
KILLED_AT = """
import os, runpy, signal, sys
from mcp_memory.stores.sqlite.store import SqliteObjectStore, SqliteVectorStore
point, nth = os.environ["KILL_AT"].split(":")
nth, calls = int(nth), {"memories": 0, "keys": 0}

def die():
    os.kill(os.getpid(), signal.SIGKILL)

put_memories, writer, put_objects = SqliteVectorStore.put_many, SqliteVectorStore._writer, SqliteObjectStore.put_many

async def memories(self, items):
    calls["memories"] += 1
    if point == "before-chunk" and calls["memories"] == nth:
        die()
    await put_memories(self, items)

def inside_transaction(self, items):
    write = writer(self, items)
    def written_then_killed(conn):
        write(conn)
        if point == "inside-transaction" and calls["memories"] == nth:
            die()  # the chunk's rows are in the transaction, not committed
    return written_then_killed

async def objects(self, items):
    if any(key.startswith("index/") for key, _ in items):
        calls["keys"] += 1
        if point == "before-index-keys" and calls["keys"] == nth:
            die()  # the chunk's memories are committed, their index keys not
    await put_objects(self, items)

SqliteVectorStore.put_many, SqliteVectorStore._writer, SqliteObjectStore.put_many = memories, inside_transaction, objects
sys.argv = ["mcp-memory", *sys.argv[1:]]
runpy.run_module("mcp_memory", run_name="__main__")
"""


@pytest.mark.parametrize("point", ["before-chunk", "inside-transaction", "before-index-keys"])
def test_an_import_killed_mid_way_and_run_again_loses_and_duplicates_nothing(tmp_path: Path, point: str) -> None:
    total = 640  # 10 chunks of 64
    notes = tmp_path / "notes.md"
    notes.write_text(
        "".join(f"- fact {i} about subsystem {i % 97} owned by team {i % 13}\n" for i in range(total)),
        encoding="utf-8",
    )
    db = tmp_path / "memory.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env |= {"MEMORY_DB_PATH": str(db), "EMBEDDING_PROVIDER": "fake", "PYTHONPATH": str(ROOT)}
    args = ["import", "--from", "text", "--tenant", "acme", str(notes), "--json"]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AT, *args], env=env | {"KILL_AT": f"{point}:4"}, capture_output=True, timeout=300
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert killed.stdout == b""
    partial = count(db)
    assert partial == (3 * 64 if point != "before-index-keys" else 4 * 64)
    keys = "SELECT count(*) FROM objects WHERE key LIKE 'index/acme/%'"
    assert count(db, keys) == 3 * 64

    rerun = subprocess.run([sys.executable, "-m", "mcp_memory", *args], env=env, capture_output=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert (report["new"], report["duplicatesOfStore"], report["duplicatesWithin"]) == (total - partial, partial, 0)
    assert count(db) == total
    assert count(db, "SELECT count(DISTINCT content) FROM memories") == total
    assert count(db, keys) == total  # the keys the kill cut off are written too
    listed = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "list", "--tenant", "acme", "--all", "--json"],
        env=env,
        capture_output=True,
        timeout=120,
    )
    shown = json.loads(listed.stdout)["memories"]
    assert sorted(m["content"] for m in shown) == sorted(
        f"fact {i} about subsystem {i % 97} owned by team {i % 13}" for i in range(total)
    )
