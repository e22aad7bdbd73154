"""`mcp-memory export`, `import` and `backup` as an operator runs them, on SQLite files in
tmp_path: run in process (tests/support/cli_runner.py), and real processes where the process
is the point (kill -9 mid-import, a terminal's progress bar, a serve-http writing during a
backup)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_memory.core.ids import iso, ulid
from mcp_memory.embedders.fake import fake_vector
from tests.conftest import ROOT
from tests.support.cli_runner import Ran, clean_environment, run_cli
from tests.support.http_process import clean_env, http_process
from tests.support.http_support import mcp_client, text


@pytest.fixture
def cli(tmp_path: Path):
    base = clean_environment("RECALL_")
    base.update({"MEMORY_DB_PATH": str(tmp_path / "a.db"), "EMBEDDING_PROVIDER": "fake", "PYTHONPATH": str(ROOT)})

    def run(*args: str, input: bytes | None = None, **extra: str) -> Ran:
        return run_cli(*args, env={**base, **extra}, stdin=input, cwd=ROOT, text=False)

    run.env = base  # type: ignore[attr-defined]
    return run


def seed(cli) -> None:
    for args in (
        ("--tenant", "acme", "--category", "decision", "Deploys drain connections before the pods stop"),
        ("--tenant", "acme", "-c", "thread-1", "--scope", "conversation", "--tag", "date", "Release date is May"),
        ("--tenant", "beta", "--type", "reference", "Beta keeps its invoices in the ledger service"),
    ):
        assert cli("remember", *args).returncode == 0
    assert cli("recall", "--tenant", "acme", "how do deploys drain connections").returncode == 0


def rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_export_to_a_pipe_carries_only_records_and_says_what_it_did_on_stderr(cli, tmp_path: Path) -> None:
    seed(cli)
    done = cli("export", "--all-tenants", "--with-embeddings")

    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert json.loads(lines[0])["format"] == "mcp-memory-export"
    assert sorted(json.loads(line)["tenant"] for line in lines[1:]) == ["acme", "acme", "beta"]
    assert done.stderr.decode() == "exported 3 memories of tenants acme (2), beta (1), with embeddings\n"

    summary = cli("export", "--tenant", "beta", "--json")
    assert json.loads(summary.stderr) == {
        "exported": 1,
        "tenants": {"beta": 1},
        "withEmbeddings": False,
        "format": "jsonl",
        "output": "-",
        "otherTenants": ["acme"],  # left out, and named
    }


def test_export_to_a_file_prints_the_summary_on_stdout(cli, tmp_path: Path) -> None:
    seed(cli)
    done = cli("export", "-t", "acme", "-o", str(tmp_path / "acme.jsonl"), "--json")
    assert done.returncode == 0 and done.stderr == b""
    assert json.loads(done.stdout)["exported"] == 2
    assert len((tmp_path / "acme.jsonl").read_text().splitlines()) == 3
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_export_without_a_tenant_exports_the_local_default_as_every_command_does(cli) -> None:
    assert cli("remember", "Backups are verified every Sunday").returncode == 0  # tenant local
    seed(cli)  # acme's memories stay out
    done = cli("export")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [r["content"] for r in lines[1:]] == ["Backups are verified every Sunday"]
    assert {r["tenant"] for r in lines[1:]} == {"local"}


def test_export_refuses_a_tenant_with_all_tenants(cli) -> None:
    both = cli("export", "--all-tenants", "--tenant", "acme")
    assert both.returncode == 2 and b"cannot be combined" in both.stderr


def test_export_piped_into_import_moves_every_memory_and_a_second_run_writes_nothing(cli, tmp_path: Path) -> None:
    seed(cli)
    data = cli("export", "--all-tenants", "--with-embeddings").stdout
    target = {"MEMORY_DB_PATH": str(tmp_path / "b.db")}

    first = cli("import", "-", input=data, **target)
    assert first.returncode == 0, first.stderr
    assert first.stdout.decode() == "imported 3, already present 0, re-embedded 0, refused 0\n"
    listed = cli("list", "--tenant", "acme", "-c", "thread-1", "--json", **target)
    assert [m["content"] for m in json.loads(listed.stdout)["memories"]] == [
        "Release date is May",
        "Deploys drain connections before the pods stop",
    ]
    before = rows(tmp_path / "b.db", "SELECT count(*), max(etag) FROM objects")

    second = cli("import", "-", "--json", input=data, **target)
    assert second.returncode == 0
    assert json.loads(second.stdout) == {
        "imported": 0,
        "alreadyPresent": 3,
        "reEmbedded": 0,
        "refused": 0,
        "skipped": 0,
        "tenants": {},
        "dryRun": False,
    }
    assert rows(tmp_path / "b.db", "SELECT count(*), max(etag) FROM objects") == before
    assert (
        cli("export", "--all-tenants", "--with-embeddings", **target).stdout.splitlines()[1:] == data.splitlines()[1:]
    )


def test_an_import_under_another_model_re_embeds_every_memory(cli, tmp_path: Path) -> None:
    seed(cli)
    data = cli("export", "--all-tenants", "--with-embeddings").stdout
    other = {"MEMORY_DB_PATH": str(tmp_path / "c.db"), "EMBEDDING_DIM": "32"}

    done = cli("import", "-", input=data, **other)

    assert done.stdout.decode() == "imported 3, already present 0, re-embedded 3, refused 0\n"
    found = cli("recall", "--tenant", "acme", "how do deploys drain connections", "--json", **other)
    assert json.loads(found.stdout)["results"][0]["content"] == "Deploys drain connections before the pods stop"


def test_import_reports_each_refused_record_by_line_and_exits_1(cli, tmp_path: Path) -> None:
    seed(cli)
    lines = cli("export", "--all-tenants").stdout.splitlines(keepends=True)
    broken = json.loads(lines[2]) | {"type": "diary"}
    data = b"".join([lines[0], lines[1], json.dumps(broken).encode() + b"\n", lines[3][:20]])

    done = cli("import", "-", input=data, MEMORY_DB_PATH=str(tmp_path / "b.db"))

    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == [
        "line 3: `type` must be one of: project, pattern, reference, conversation.",
        "line 4: the file ends in the middle of this record (it was cut short)",
    ]
    assert done.stdout.decode() == "imported 1, already present 0, re-embedded 1, refused 2\n"


def test_import_refuses_a_newer_format_by_name_and_writes_nothing(cli, tmp_path: Path) -> None:
    header = {"format": "mcp-memory-export", "version": 7, "exportedBy": "mcp-memory 9.1.0"}
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps(header) + "\n")

    done = cli("import", str(path), MEMORY_DB_PATH=str(tmp_path / "b.db"))

    assert done.returncode == 1
    assert done.stderr.decode().startswith(
        'error: line 1: this file is "mcp-memory-export" version 7, written by mcp-memory 9.1.0; '
        "this mcp-memory reads version 1 and older"
    )
    assert rows(tmp_path / "b.db", "SELECT count(*) FROM memories") == [(0,)]


def test_import_with_a_tenant_skips_the_files_other_tenants(cli, tmp_path: Path) -> None:
    seed(cli)
    data = cli("export", "--all-tenants").stdout
    done = cli("import", "-", "--tenant", "beta", input=data, MEMORY_DB_PATH=str(tmp_path / "b.db"))
    assert done.returncode == 0
    assert done.stdout.decode() == (
        "imported 1, already present 0, re-embedded 1, refused 0, skipped 2 of tenants not asked for\n"
    )
    assert rows(tmp_path / "b.db", "SELECT DISTINCT tenant FROM memories") == [("beta",)]


def write_export(path: Path, count: int, *, dim: int = 64) -> list[str]:
    """An export of `count` memories of tenant acme, each used once, written straight to a file."""
    start = time.time() * 1000 - 10_000_000
    ids = []
    with path.open("w") as out:
        header = {"format": "mcp-memory-export", "version": 1, "exportedBy": "test", "exportedAt": iso(start)}
        header |= {"embedding": {"provider": "fake", "model": "fake-bag-of-words", "dim": dim}, "withEmbeddings": True}
        out.write(json.dumps(header) + "\n")
        for i in range(count):
            memory_id = ulid(start + i)
            ids.append(memory_id)
            content = f"fact {i} about subsystem {i % 97} and its owner {i % 13}"
            vector = base64.b64encode(fake_vector(content, dim).astype("<f4").tobytes()).decode()
            record = {"id": memory_id, "tenant": "acme", "content": content, "type": "project", "tags": []}
            record |= {"scope": "project", "createdAt": iso(start + i), "trustBase": 1, "accessCount": 1}
            record |= {"lastAccessedAt": iso(start + i + 5), "embedding": vector}
            out.write(json.dumps(record) + "\n")
    return ids


def test_an_import_killed_mid_way_completes_on_the_rerun_with_every_record_exactly_once(cli, tmp_path: Path) -> None:
    count = 12_000
    ids = write_export(tmp_path / "big.jsonl", count)
    target = tmp_path / "b.db"
    env = {**cli.env, "MEMORY_DB_PATH": str(target)}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "import", str(tmp_path / "big.jsonl")],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    written = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if target.exists():
            try:
                written = rows(target, "SELECT count(*) FROM memories")[0][0]
            except sqlite3.OperationalError:  # the schema is still being created
                written = 0
            if written:
                break
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    partial = rows(target, "SELECT count(*) FROM memories")[0][0]
    assert 0 < partial < count, "the import was not stopped mid-way"

    rerun = cli("import", str(tmp_path / "big.jsonl"), "--json", MEMORY_DB_PATH=str(target))

    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["imported"] + report["alreadyPresent"] == count and report["alreadyPresent"] >= partial
    assert rows(target, "SELECT count(*), count(DISTINCT id) FROM memories") == [(count, count)]
    assert sorted(r[0] for r in rows(target, "SELECT id FROM memories")) == sorted(ids)
    index = rows(target, "SELECT count(*) FROM objects WHERE key LIKE 'index/acme/%'")
    assert index == [(count,)]
    (body,) = rows(target, "SELECT body FROM objects WHERE key = 'stats/acme/merged.json'")[0]
    counts = json.loads(body)["counts"]
    assert len(counts) == count and {entry["access"] for entry in counts.values()} == {1}
    assert rows(target, "SELECT count(*) FROM objects WHERE key LIKE 'stats/acme/shard/%'") == [(0,)]


def test_a_short_export_on_a_terminal_draws_no_progress_bar(cli, tmp_path: Path) -> None:
    """The bar is for work that takes a while (cli/transfer.py PROGRESS_AFTER_S); the bar itself
    is tested in tests/cli/test_import_cli.py with an injected clock."""
    seed(cli)
    leader, follower = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mcp_memory", "export", "--all-tenants", "-o", str(tmp_path / "x.jsonl")],
            env={**cli.env, "TERM": "xterm", "COLUMNS": "100"},
            cwd=str(ROOT),
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=120,
        )
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0
    assert drawn == b""  # the summary goes to stdout with -o, and no bar was drawn
    assert done.stdout.startswith(b"exported 3 memories")
    assert cli("export", "--all-tenants", "-o", str(tmp_path / "y.jsonl")).stderr == b""


# --------------------------------------------------------------------------- backup


def test_backup_refuses_an_existing_file_and_other_backends(cli, tmp_path: Path) -> None:
    seed(cli)
    first = cli("backup", str(tmp_path / "copy.db"))
    assert first.returncode == 0 and first.stdout.decode().startswith("backed up 3 memories from ")
    assert rows(tmp_path / "copy.db", "PRAGMA journal_mode") == [("delete",)]  # one self-contained file
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("copy", ".copy"))) == ["copy.db"]
    again = cli("backup", str(tmp_path / "copy.db"))
    assert again.returncode == 1 and b"already exists" in again.stderr
    other = cli("backup", str(tmp_path / "pg.db"), DATABASE_URL="postgresql://memory@localhost/memory")
    assert other.returncode == 2 and b"back PostgreSQL up with pg_dump" in other.stderr
    assert not (tmp_path / "pg.db").exists()


async def test_a_backup_taken_while_serve_http_writes_holds_every_memory_acknowledged_before_it(
    tmp_path: Path,
) -> None:
    from mcp_memory.stores.sqlite.store import open_sqlite

    db = tmp_path / "live.db"
    # The writer goes as fast as it can: this test is about the snapshot, not the per-tenant limit.
    env = clean_env(
        tmp_path,
        MEMORY_DB_PATH=str(db),
        EMBEDDING_PROVIDER="fake",
        RATE_LIMIT_PER_TENANT="100000",
        RATE_LIMIT_BURST="100000",
    )
    acknowledged: list[str] = []
    stop = asyncio.Event()

    async def write(client) -> None:
        i = 0
        while not stop.is_set():
            reply = text(await client.call_tool("remember", {"content": f"alpha{i} bravo{i} charlie{i} delta{i}"}))
            acknowledged.append(re.search(r"Stored as ([0-9A-Z]{26})\.", reply).group(1))  # type: ignore[union-attr]
            i += 1

    async with http_process(env, tmp_path / "stderr.txt") as server:
        async with mcp_client(server.mcp_url, [("x-memory-tenant", "acme")]) as client:
            writer = asyncio.create_task(write(client))
            while len(acknowledged) < 20:
                await asyncio.sleep(0.01)
            before = list(acknowledged)
            backup = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "mcp_memory",
                "backup",
                str(tmp_path / "snapshot.db"),
                env=env,
                cwd=str(ROOT),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await backup.communicate()
            during = len(acknowledged)
            stop.set()
            await writer
        await server.stop()

    assert backup.returncode == 0, err
    assert during > len(before)  # the server kept writing while the copy was made
    vectors, objects = await open_sqlite(tmp_path / "snapshot.db", model="fake-bag-of-words", dim=64)
    try:
        held = {m.id for m in await vectors.get("acme", acknowledged)}
        assert set(before) <= held
        assert len(await objects.list("index/acme/", 10_000)) >= len(before)
    finally:
        await vectors.close()
        await objects.close()


def test_an_export_to_a_file_that_fails_part_way_leaves_no_file(tmp_path: Path) -> None:
    from mcp_memory.cli.transfer import _output

    with pytest.raises(RuntimeError):
        with _output(tmp_path / "half.jsonl") as stream:
            stream.write('{"format": "mcp-memory-export"}\n')
            raise RuntimeError("the store went away")
    assert list(tmp_path.iterdir()) == []


def test_a_backup_and_an_export_file_are_private_like_the_store(cli, tmp_path: Path) -> None:
    """The store is 0600 from its creation; a copy of it made by backup, or an export written with
    -o, holds the same memories and is as private, whatever the umask."""
    seed(cli)
    previous = os.umask(0o022)  # the common default: new files readable by everyone
    try:
        assert cli("backup", str(tmp_path / "copy.db")).returncode == 0
        assert cli("export", "--all-tenants", "-o", str(tmp_path / "all.jsonl")).returncode == 0
    finally:
        os.umask(previous)
    for name in ("copy.db", "all.jsonl"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
