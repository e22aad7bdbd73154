"""`recall`, `remember`, `list`, `stats` and `forget` go through a running serve-stdio of the same
store, tenant and settings, and open the store themselves otherwise; both ways print the same
bytes and exit with the same code (docs/cli.md#a-running-server-answers).

One serve-stdio runs for the module, on a real SQLite file. A command run with its XDG_DATA_HOME
looks for that server's socket and finds it; the same command with another XDG_DATA_HOME (the
same MEMORY_DB_PATH, so the same store and settings) finds no socket and opens the store. Which
way each took is read from the modules its process imported: the served one never loads the
store's code or the model.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_memory.server.hooks import folder
from tests.cli.test_operator_imports import NOT_IMPORTED
from tests.conftest import ROOT

TENANT = "acme"
MISSING = "01KDVDNKR00000000000000000"  # a well-formed id no memory has
FACTS = (
    ["Deploys run on Fridays at noon.", "--tag", "deploy"],
    ["The wiki moved to Confluence in 2025.", "--type", "reference"],
    ["Use pnpm, not npm, in this repository.", "--type", "pattern"],
)

#: The console script's main, then the modules it imported, as the last line on stderr.
CHILD = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["mcp-memory", *sys.argv[1:]]
from mcp_memory.cli.entry import main
main()
"""


class Ran:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        *said, modules = done.stderr.rstrip("\n").split("\n")
        self.code = done.returncode
        self.out = done.stdout
        self.err = "\n".join(said)
        self.modules = set(json.loads(modules))

    @property
    def opened_the_store(self) -> bool:
        return "mcp_memory.stores.sqlite.store" in self.modules

    @property
    def heavy(self) -> list[str]:
        """What a served command must not import: the model's runtime, the SDK, Typer, pydantic."""
        return sorted(name for name in self.modules if name.split(".")[0] in NOT_IMPORTED or name in NOT_IMPORTED)

    @property
    def asked_the_server(self) -> bool:
        return "mcp_memory.cli.hooks.served" in self.modules


class Server:
    def __init__(self, home: Path) -> None:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "RECALL_"))}
        base = {k: v for k, v in base.items() if k not in ("DATABASE_URL", "XDG_DATA_HOME")}
        self.served = {
            **base,
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "served"),
            "MEMORY_DB_PATH": str(home / "memory.db"),
            "MEMORY_TENANT": TENANT,
            "PYTHONPATH": str(ROOT),
            "COLUMNS": "100",
        }
        #: Another data directory, so another socket path; the same store and settings.
        self.direct = {**self.served, "XDG_DATA_HOME": str(home / "direct")}
        self.log = open(home / "serve.log", "w+b")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_memory", "serve-stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env=self.served,
            cwd=str(ROOT),
        )
        self.socket = folder.socket_path(TENANT, self.served)

    def wait_listening(self, seconds: float = 120.0) -> None:
        deadline = time.monotonic() + seconds
        while not self.socket.exists():
            assert self.process.poll() is None, self.logged()
            assert time.monotonic() < deadline, "serve-stdio never listened"
            time.sleep(0.1)

    def logged(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()

    def run(self, args: list[str], *, served: bool = True, stdin: str | None = None, **extra: str) -> Ran:
        env = {**(self.served if served else self.direct), **extra}
        done = subprocess.run(
            [sys.executable, "-c", CHILD, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            cwd=str(ROOT),
            timeout=300,
        )
        return Ran(done)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """serve-stdio for tenant acme, with three memories remembered through it."""
    running = Server(tmp_path_factory.mktemp("served"))
    try:
        running.wait_listening()
        for fact in FACTS:
            stored = running.run(["remember", *fact])
            assert stored.code == 0 and stored.asked_the_server and not stored.opened_the_store, stored.err
        yield running
    finally:
        running.stop()


SAME = [
    ["recall", "when do deploys run"],
    ["recall", "when do deploys run", "--json"],
    ["recall", "when do deploys run", "--type", "reference", "--mode", "exploratory"],
    ["list"],
    ["list", "--limit", "1"],
    ["list", "--all", "--limit", "1", "--json"],
    ["stats"],
    ["stats", "--json"],
    ["forget", MISSING],
    ["remember", "Deploys run on Fridays at noon."],
]


@pytest.mark.parametrize("args", SAME, ids=lambda a: " ".join(a)[:40])
def test_a_command_prints_the_same_bytes_and_exit_code_through_the_server_as_from_its_own_store(
    server: Server, args: list[str]
) -> None:
    through = server.run(args)
    own = server.run(args, served=False)

    assert (through.out, through.err, through.code) == (own.out, own.err, own.code)
    assert through.asked_the_server and not through.opened_the_store and through.heavy == []
    assert own.opened_the_store
    assert through.out.strip()  # each says something (an empty answer is the same both ways too)


def test_forget_of_a_missing_id_exits_1_both_ways_naming_the_id(server: Server) -> None:
    through = server.run(["forget", MISSING])

    assert through.code == 1
    assert f"No memory with id {MISSING} exists for this project. Nothing was deleted." in through.out


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["list", "--cursor", "v1-not-a-cursor"], "--cursor is not a cursor this server gave out"),
        (["forget", "x" * 40], "is not a memory id (26 characters"),
        (["remember", "   "], "CONTENT"),
        (["recall", "when", "--limit", "0"], "--limit"),
    ],
    ids=["cursor refused by the service", "id too long", "blank content", "limit 0"],
)
def test_bad_input_is_refused_the_same_both_ways_naming_the_field_with_exit_2(
    server: Server, args: list[str], named: str
) -> None:
    through = server.run(args)
    own = server.run(args, served=False)

    assert (through.out, through.err, through.code) == (own.out, own.err, own.code)
    assert through.code == 2 and named in through.err, through.err
    assert not through.opened_the_store and "onnxruntime" not in through.modules


def test_remember_and_forget_through_the_server_write_the_store_the_direct_command_reads(server: Server) -> None:
    stored = server.run(["remember", "The staging database is rebuilt every Monday.", "--json"])
    memory_id = json.loads(stored.out)["memory"]["id"]
    listed = server.run(["list", "--json"], served=False)
    deleted = server.run(["forget", memory_id])
    again = server.run(["forget", memory_id], served=False)

    assert stored.code == 0 and json.loads(stored.out)["created"] is True
    assert stored.asked_the_server and not stored.opened_the_store and stored.heavy == []
    assert memory_id in [m["id"] for m in json.loads(listed.out)["memories"]]
    assert (deleted.code, deleted.out) == (0, f"Deleted {memory_id}.\n")
    assert deleted.asked_the_server and not deleted.opened_the_store
    assert again.code == 1 and "Nothing was deleted" in again.out


def test_content_from_stdin_in_korean_goes_through_the_server_unchanged(server: Server) -> None:
    text = "배포는 금요일 정오에 한다 — 스테이징 먼저."
    stored = server.run(["remember", "-", "--json"], stdin=text + "\n")
    found = server.run(["list", "--json", "--limit", "1"], served=False)

    assert stored.code == 0 and stored.asked_the_server and not stored.opened_the_store
    assert json.loads(found.out)["memories"][0]["content"] == text
    server.run(["forget", json.loads(stored.out)["memory"]["id"]])


def test_a_command_with_other_recall_settings_opens_the_store_and_answers_by_its_own(server: Server) -> None:
    mine = server.run(["recall", "when do deploys run", "--json"], RECALL_RETRIEVAL="keyword")
    served = server.run(["recall", "when do deploys run", "--json"])

    assert mine.code == 0 and mine.opened_the_store  # the server's answer would be by its own settings
    assert json.loads(mine.out)["results"][0]["content"] == "Deploys run on Fridays at noon."
    assert json.loads(mine.out) != json.loads(served.out)


def test_another_tenant_is_not_answered_by_this_tenants_server(server: Server) -> None:
    other = server.run(["stats", "--json", "--tenant", "globex"])

    assert other.code == 0 and json.loads(other.out) == {
        "tenant": "globex",
        "total": 0,
        "byType": {},
        "lowerBound": False,
    }
    assert other.opened_the_store


def test_a_socket_nothing_listens_on_is_passed_by_and_the_store_answers(
    server: Server, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data = tmp_path_factory.mktemp("stale")
    env = {"XDG_DATA_HOME": str(data)}
    stale = folder.socket_path(TENANT, {**server.served, **env})
    folder.private_folder(stale.parent)
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(stale))
    left.close()  # the file stays; nothing listens

    counted = server.run(["stats", "--json"], **env)

    assert counted.code == 0 and json.loads(counted.out)["total"] == 3
    assert counted.asked_the_server and counted.opened_the_store


def test_the_servers_log_names_each_command_without_its_content(server: Server) -> None:
    server.run(["recall", "secret-ish question about deploys"])
    logged = server.logged()

    assert re.search(r'"event":"hook_call","tenant":"acme","method":"command"', logged)
    assert "secret-ish" not in logged and "Fridays" not in logged
