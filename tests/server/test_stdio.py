"""`mcp-memory serve-stdio` end to end: the MCP SDK's own client starts the
server as a subprocess and uses every tool; stdout carries nothing but protocol."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT
from tests.support.mcp_messages import INITIALIZE, INITIALIZED


def server_env(db: Path, **extra: str) -> dict[str, str]:
    """This process's environment without our settings, the store `db`, and a data directory
    beside it (where serve-stdio keeps its hook socket), never the user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update({"MEMORY_DB_PATH": str(db), "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(db.parent / "data"), **extra})
    return env


def params(db: Path, *args: str, **extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_memory", "serve-stdio", *args],
        env=server_env(db, **extra),
        cwd=str(ROOT),
    )


def text(result) -> str:
    return result.content[0].text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_lists_remembers_recalls_lists_forgets_and_counts_over_stdio(tmp_path: Path, mode: str) -> None:
    async with Client(params(tmp_path / "m.db", "--tenant", "acme", EMBEDDING_PROVIDER="fake"), mode=mode) as client:
        assert client.server_info is None or client.server_info.name == "mcp-memory"
        tools = await client.list_tools()
        # serve-stdio adds the tool of Claude Code's mcp_tool hooks after the memory tools (docs/hooks.md)
        names = [t.name for t in tools.tools]
        assert names == ["recall", "remember", "list_memories", "forget", "memory_stats", "claude_code_hook"]

        stored = await client.call_tool(
            "remember", {"content": "Rolling deploys drain in-flight streams before the pod exits"}
        )
        assert not stored.is_error
        memory_id = re.search(r"Stored as ([0-9A-Z]{26})", text(stored)).group(1)

        recalled = await client.call_tool("recall", {"query": "Rolling deploys drain in-flight streams before the pod"})
        assert text(recalled).startswith(
            '[MEMORY] 1 memory matched "Rolling deploys drain in-flight streams before the pod"'
        )
        assert memory_id in text(recalled)

        listed = await client.call_tool("list_memories", {})
        assert text(listed).startswith("[MEMORY] 1 memory, newest first.")

        stats = await client.call_tool("memory_stats", {})
        assert text(stats) == "[MEMORY] 1 memory for this project (project: 1)."

        refused = await client.call_tool("recall", {"query": "q", "limit": 99})
        assert refused.is_error and text(refused) == "Error: `limit` must be an integer between 1 and 50."

        forgotten = await client.call_tool("forget", {"id": memory_id})
        assert text(forgotten) == f"[MEMORY] Deleted {memory_id}."
        assert text(await client.call_tool("memory_stats", {})) == "[MEMORY] This project has no memories yet."


async def test_memories_outlive_the_server_process(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with Client(params(db, "--tenant", "acme", EMBEDDING_PROVIDER="fake")) as client:
        await client.call_tool("remember", {"content": "The release train leaves every second Thursday"})
    async with Client(params(db, "--tenant", "acme", EMBEDDING_PROVIDER="fake")) as client:
        listed = await client.call_tool("list_memories", {})
        assert "The release train leaves every second Thursday" in text(listed)
    async with Client(params(db, "--tenant", "other", EMBEDDING_PROVIDER="fake")) as client:
        assert text(await client.call_tool("list_memories", {})) == "[MEMORY] This project has no memories yet."


def rpc(process: subprocess.Popen, message: dict) -> None:
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def answer(process: subprocess.Popen, request_id: int) -> dict:
    """Read stdout until the answer to `request_id`; every line on the way must be JSON-RPC."""
    while True:
        line = process.stdout.readline()
        assert line, "the server closed stdout early"
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0"
        if message.get("id") == request_id:
            return message


def start_server(db: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-stdio", "--tenant", "acme"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(db, EMBEDDING_PROVIDER="fake"),
        cwd=str(ROOT),
    )
    rpc(process, INITIALIZE)
    assert answer(process, 1)["result"]["serverInfo"]["name"] == "mcp-memory"
    rpc(process, INITIALIZED)
    return process


def call(process: subprocess.Popen, request_id: int, name: str, arguments: dict) -> dict:
    rpc(
        process,
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
    )
    return answer(process, request_id)["result"]


def test_nothing_but_protocol_messages_reach_stdout(tmp_path: Path) -> None:
    process = start_server(tmp_path / "m.db")
    rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert len(answer(process, 2)["result"]["tools"]) == 6  # the five memory tools and claude_code_hook
    assert not call(process, 3, "remember", {"content": "secret fact about builds"}).get("isError")
    assert "1 memory matched" in call(process, 4, "recall", {"query": "secret fact about builds"})["content"][0]["text"]
    out, err = process.communicate(timeout=60)  # end of input: the server exits cleanly
    assert process.returncode == 0, err
    assert out == ""
    logs = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert [entry["tool"] for entry in logs if entry.get("event") == "tool_call"] == ["remember", "recall"]
    assert "secret" not in err
    boot = err.splitlines()[:4]  # the start-up lines, on stderr: which storage and why, the embedder
    assert boot[0].startswith("mcp-memory v") and boot[0].endswith("serving stdio for tenant acme")
    assert (
        boot[1]
        == f"storage: sqlite {tmp_path / 'm.db'} — embedded default: neither DATABASE_URL nor VECTOR_BUCKET/STATE_BUCKET is set"
    )
    assert boot[2] == "embedder: fake:fake-bag-of-words, 64d"
    assert boot[3] == "docs: no KNOWLEDGE_BASE_ID — memories only, search_docs not offered"


def test_under_stdio_every_log_line_after_the_boot_lines_is_json_and_quotes_no_request(tmp_path: Path) -> None:
    """The SDK's own warnings (here: notifications it drops as malformed) are JSON lines on
    stderr like ours, and carry nothing of the request that caused them."""
    marker = "zq-stdio-marker-5521"
    process = start_server(tmp_path / "m.db")
    rpc(process, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"x": marker}}})
    rpc(process, {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {marker: 1}}})
    assert not call(process, 2, "remember", {"content": f"{marker} builds run on the large runners"}).get("isError")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out == "" and marker not in err
    lines = err.splitlines()[4:]  # after the four start-up lines
    logs = [json.loads(line) for line in lines]  # every one of them JSON
    assert {"level": "warn", "event": "server_warning", "message": "dropped 'notifications/cancelled': malformed params",
            "source": "mcp.server.runner"} in logs  # fmt: skip
    assert [entry["tool"] for entry in logs if entry.get("event") == "tool_call"] == ["remember"]


def shard_count(db: Path) -> str:
    listing = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
                "print(sum(1 for (k,) in c.execute('select key from objects') if k.startswith('stats/acme/shard/')))"
            ),
            str(db),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return listing.stdout.strip()


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT", "end of input"])
def test_the_access_counters_are_flushed_once_on_exit(tmp_path: Path, stop: str) -> None:
    db = tmp_path / "m.db"
    process = start_server(db)
    call(process, 2, "remember", {"content": "Deploys freeze on Fridays"})
    assert (
        "1 memory matched" in call(process, 3, "recall", {"query": "Deploys freeze on Fridays"})["content"][0]["text"]
    )
    if stop != "end of input":
        process.send_signal(getattr(signal, stop))
        process.wait(timeout=30)  # exits on the signal alone, with stdin still open
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert shard_count(db) == "1"


def test_everything_before_the_handshake_is_ready_without_numpy_or_the_model(tmp_path: Path) -> None:
    # What serve-stdio does before it can answer initialize and tools/list: open the
    # store, build the tools and the MCP server. numpy and the model load afterwards,
    # with the first vector (about 0.1 s and 0.5 s of the start otherwise).
    script = (
        "import asyncio, json, sys\n"
        "from mcp_memory.config import Settings\n"
        "from mcp_memory.core.logs import JsonLog\n"
        "from mcp_memory.server.protocol.server import build_mcp_server\n"
        "from mcp_memory.app import open_service\n"
        "from mcp_memory.server.protocol.tools import build_tool_layer\n"
        "async def main():\n"
        "    settings = Settings.from_env({'MEMORY_DB_PATH': sys.argv[1]})\n"
        "    service = await open_service(settings)\n"
        "    build_mcp_server(build_tool_layer(settings, service, JsonLog(stdio=True)), lambda ctx: None)\n"
        "    loaded = [m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules]\n"
        "    await service.close()\n"
        "    print(json.dumps(loaded))\n"
        "asyncio.run(main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "m.db")], cwd=ROOT, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


async def test_the_start_loads_the_model_and_the_tenants_vectors_and_logs_what_fails(tmp_path: Path) -> None:
    import io

    import numpy as np

    from mcp_memory.core import ports
    from mcp_memory.core.counters.tracker import AccessCounters
    from mcp_memory.core.logs import JsonLog
    from mcp_memory.core.model import Memory
    from mcp_memory.core.service import MemoryService
    from mcp_memory.stores.sqlite.store import open_sqlite

    class Embedder(ports.Embedder):
        warmed = False

        async def warm_up(self) -> None:
            self.warmed = True

    class BrokenStore(ports.VectorStore):
        async def warm(self, tenant: str) -> None:
            raise OSError("disk gone")

    vectors, objects = await open_sqlite(tmp_path / "m.db", model="m", dim=4)
    try:
        await vectors.put(
            Memory(id="m1", tenant="acme", content="c", created_at="2026-01-01T00:00:00.000Z"),
            np.array([1, 0, 0, 0], np.float32),
        )
        vectors._cache.clear()
        embedder, err = Embedder(), io.StringIO()
        log = JsonLog(io.StringIO(), err)
        counters = AccessCounters(objects, pod_id="p", log=log)
        await MemoryService(vectors, objects, embedder, counters, log=log).warm_up("acme")
        assert embedder.warmed and "acme" in vectors._cache._tenants and err.getvalue() == ""

        await MemoryService(BrokenStore(), objects, Embedder(), counters, log=log).warm_up("acme")
        assert json.loads(err.getvalue())["event"] == "vectors_warm_up_failed"
    finally:
        await vectors.close()
        await objects.close()


#: A fresh process's warm-up, then which of the modules a first recall imports it has loaded.
_WARM_UP_IMPORTS = """
import asyncio, json, sys
from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.service import MemoryService
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore

first_recall = ("snowballstemmer", "ulid")
objects = InMemoryObjectStore()
service = MemoryService(InMemoryVectorStore(), objects, FakeEmbedder(), AccessCounters(objects, pod_id="p", log=NullLog()))
before = [name for name in first_recall if name in sys.modules]
asyncio.run(service.warm_up("acme"))
print(json.dumps([before, [name for name in first_recall if name in sys.modules]]))
"""


def test_the_start_imports_what_a_first_recall_would_so_the_first_question_waits_for_no_import(
    tmp_path: Path,
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _WARM_UP_IMPORTS],
        capture_output=True,
        text=True,
        env=server_env(tmp_path / "m.db"),
        cwd=str(tmp_path),
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [[], ["snowballstemmer", "ulid"]]


async def test_an_import_the_start_cannot_make_is_logged_and_the_start_goes_on(env, monkeypatch) -> None:
    import io

    from mcp_memory.core import keywords
    from mcp_memory.core.logs import JsonLog

    def missing() -> None:
        raise ImportError("No module named 'snowballstemmer'")

    monkeypatch.setattr(keywords, "warm_up", missing)
    err = io.StringIO()
    env.service.log = JsonLog(io.StringIO(), err)

    await env.service.warm_up("acme")

    assert [json.loads(line)["event"] for line in err.getvalue().splitlines()] == ["imports_warm_up_failed"]


def test_nothing_loads_the_model_before_the_handshake_is_done(tmp_path: Path) -> None:
    # Loading it while initialize and tools/list are still unanswered only slows them down;
    # the warm-up starts at notifications/initialized (or the first tools/list or call).
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-stdio", "--tenant", "acme"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=server_env(tmp_path / "m.db"),
        cwd=str(ROOT),
    )
    try:
        rpc(
            process,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        assert answer(process, 1)["result"]["serverInfo"]["name"] == "mcp-memory"
        mapped = Path(f"/proc/{process.pid}/maps").read_text()
        assert "onnxruntime" not in mapped and "numpy" not in mapped
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        process.stdout.close()


async def test_a_conversation_note_without_a_conversation_names_the_stdio_way_to_give_one(tmp_path: Path) -> None:
    async with Client(params(tmp_path / "m.db", "--tenant", "acme", EMBEDDING_PROVIDER="fake")) as client:
        refused = await client.call_tool("remember", {"content": "a private note", "scope": "conversation"})
        listed = await client.call_tool("list_memories", {})
    assert refused.is_error
    assert text(refused) == (
        "Error: scope 'conversation' needs a conversation, but this server serves none: start serve-stdio "
        "with --conversation (or set MEMORY_CONVERSATION). Store it for the project instead, or leave scope unset."
    )
    assert "X-Conversation-Id" not in text(refused)
    assert text(listed) == "[MEMORY] This project has no memories yet."
