"""`mcp-memory serve-http` as an operator runs it, in a subprocess: the boot
lines (docs/operations.md), refusals before the port is bound and their exit codes, and a
stop on SIGTERM/SIGINT that flushes the counters exactly once (docs/operations.md)."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from mcp_memory import __version__
from tests.conftest import ROOT
from tests.server.test_stdio import server_env, shard_count
from tests.support.http_support import mcp_client, text

LISTENING = re.compile(r"mcp-memory v(\S+) listening on (http://\S+) \(POST /mcp\)")


class Served:
    def __init__(self, process: subprocess.Popen, boot: list[str]) -> None:
        self.process = process
        self.boot = boot
        self.url = LISTENING.fullmatch(boot[0]).group(2)

    def stop(self, *signals: signal.Signals) -> tuple[str, str]:
        for sig in signals:
            self.process.send_signal(sig)
        out, err = self.process.communicate(timeout=60)
        return out, err


def start(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen:
    variables = server_env(tmp_path / "m.db", **{"EMBEDDING_PROVIDER": "fake", **env})
    return subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-http", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=variables,
        cwd=str(ROOT),
    )


@contextmanager
def served(tmp_path: Path, *args: str, **env: str) -> Iterator[Served]:
    """A running server; ready once its boot lines are out (they follow the bind)."""
    process = start(tmp_path, *args, **env)
    try:
        boot = [process.stdout.readline().rstrip("\n") for _ in range(5 if env.get("MCP_API_KEY") else 4)]
        assert LISTENING.fullmatch(boot[0]), boot + [process.stderr.read()]
        yield Served(process, boot)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def finished(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


# --------------------------------------------------------------------------- boot


def test_the_boot_lines_say_where_it_listens_what_it_stores_in_and_that_anyone_may_call(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        assert LISTENING.fullmatch(server.boot[0]).group(1) == __version__
        assert server.url.startswith("http://127.0.0.1:")
        assert server.boot[1] == (
            f"storage: sqlite {tmp_path / 'm.db'} — embedded default: neither DATABASE_URL nor "
            "VECTOR_BUCKET/STATE_BUCKET is set"
        )
        assert server.boot[2] == "embedder: fake:fake-bag-of-words, 64d"
        assert server.boot[3] == "docs: no KNOWLEDGE_BASE_ID — memories only, search_docs not offered"
        health = httpx.get(server.url + "/health")
        assert health.json() == {"status": "ok"}
        out, err = server.stop(signal.SIGTERM)
    assert server.process.returncode == 0
    assert "answers ANY caller" in err
    assert "WARNING: HOST=" not in err
    assert "auth:" not in out


def test_with_a_key_the_boot_lines_say_so_and_nothing_is_warned(tmp_path: Path) -> None:
    with served(tmp_path, MCP_API_KEY="  s3cret  ") as server:
        assert server.boot[4] == "auth: MCP_API_KEY is set; every request must present it as a bearer token"
        assert httpx.post(server.url + "/mcp", json={}).status_code == 401
        out, err = server.stop(signal.SIGTERM)
    assert "NOT set" not in err
    assert "s3cret" not in "\n".join(server.boot) + out + err


def test_listening_beyond_loopback_without_a_key_is_warned_loudly(tmp_path: Path) -> None:
    with served(tmp_path, "--host", "0.0.0.0") as server:
        assert server.url.startswith("http://0.0.0.0:")
        _, err = server.stop(signal.SIGTERM)
    assert "WARNING: HOST=0.0.0.0 is not a loopback address and MCP_API_KEY is NOT set" in err


# --------------------------------------------------------------------------- refusals before binding


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_bad_setting_stops_it_with_exit_code_2_naming_the_variable(tmp_path: Path) -> None:
    code, out, err = finished(start(tmp_path, EMBEDDING_DIM="many"))
    assert code == 2
    assert out == ""
    assert err.strip() == 'configuration error: EMBEDDING_DIM must be an integer between 1 and 16000, got "many"'


def test_a_port_out_of_range_is_bad_usage(tmp_path: Path) -> None:
    code, out, _ = finished(start(tmp_path, "--port", "70000"))
    assert code == 2 and out == ""


def test_storage_that_cannot_be_opened_stops_it_before_the_port_is_bound(tmp_path: Path) -> None:
    (tmp_path / "m.db").write_text("this is not a database")
    (tmp_path / "m.db").chmod(0o600)  # private, so no warning about its mode comes first
    port = free_port()
    code, out, err = finished(start(tmp_path, "--port", str(port)))
    assert code == 1
    assert out == ""  # never listened
    assert err.startswith("error: ") and "m.db" in err


def test_a_port_already_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = finished(start(tmp_path, "--port", str(port)))
    assert code == 1
    assert out == ""
    assert err.strip() == f"error: cannot listen on 127.0.0.1:{port}: the port is already in use"


# --------------------------------------------------------------------------- requests it cannot answer

#: MCP's Streamable HTTP (2025-06-18 and later, "Sending Messages to the Server"): input the server
#: cannot accept gets an HTTP error status, 400 when the body breaks the rules; JSON-RPC 2.0
#: answers a request whose id cannot be read with an error whose id is null.
ODD_IDS = ["null", "true", "false", "1.5", "1e3", "{}", '{"n":20}', "[]", "[21]"]
MCP_HEADERS = {
    "x-memory-tenant": "acme",
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-06-18",
}


def test_a_request_whose_id_is_not_a_string_or_an_integer_is_answered_400_with_id_null_and_runs_nothing(
    tmp_path: Path,
) -> None:
    # The SDK took each for a notification: 202, an empty body, and the client waited for an answer.
    with served(tmp_path) as server, httpx.Client(timeout=30) as http:
        answers = {}
        for raw_id in ODD_IDS:
            for method, params in [
                ("tools/call", {"name": "remember", "arguments": {"content": f"stored under the id {raw_id}"}}),
                ("initialize", {}),
                ("server/discover", {}),
            ]:
                body = f'{{"jsonrpc":"2.0","id":{raw_id},"method":"{method}","params":{json.dumps(params)}}}'
                answer = http.post(server.url + "/mcp", content=body, headers=MCP_HEADERS)
                answers[raw_id, method] = (
                    answer.status_code,
                    answer.headers["content-type"],
                    answer.json() if answer.content else "",
                )
        listed = http.post(
            server.url + "/mcp",
            json={"jsonrpc": "2.0", "id": "a string", "method": "tools/call", "params": {"name": "memory_stats"}},
            headers=MCP_HEADERS,
        )
        out, _ = server.stop(signal.SIGTERM)
    refusal = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid request: a request's id must be a string or an integer (MCP: never null)",
        },
    }
    assert answers == dict.fromkeys(answers, (400, "application/json", refusal))
    assert len(answers) == 3 * len(ODD_IDS)
    assert listed.json()["id"] == "a string"
    assert listed.json()["result"]["content"][0]["text"] == "[MEMORY] This project has no memories yet."
    assert shard_count(tmp_path / "m.db") == "0"
    assert "stored under" not in out


# --------------------------------------------------------------------------- stopping


@pytest.mark.parametrize(
    "signals",
    [[signal.SIGTERM], [signal.SIGINT], [signal.SIGTERM, signal.SIGTERM]],
    ids=["SIGTERM", "SIGINT", "twice"],
)
async def test_a_signal_flushes_the_counters_exactly_once_and_exits_0(tmp_path: Path, signals) -> None:
    with served(tmp_path) as server:
        async with mcp_client(server.url + "/mcp", [("x-memory-tenant", "acme")]) as client:
            await client.call_tool("remember", {"content": "Deploys freeze on Fridays"})
            assert "1 memory matched" in text(await client.call_tool("recall", {"query": "Deploys freeze on Fridays"}))
        out, err = server.stop(*signals)
        code = server.process.returncode
    assert code == 0, err
    assert shard_count(tmp_path / "m.db") == "1"
    events = [json.loads(line)["event"] for line in out.splitlines()]
    assert events == ["tool_call", "tool_call", "shutdown_started"]


# --------------------------------------------------------------------------- the real model


async def test_the_embedded_default_answers_a_real_client_with_the_local_model(tmp_path: Path) -> None:
    with served(tmp_path, EMBEDDING_PROVIDER="") as server:
        assert server.boot[2] == "embedder: local:all-MiniLM-L6-v2, 384d"
        async with mcp_client(server.url + "/mcp", [("x-tenant-id", "acme")]) as client:
            stored = await client.call_tool(
                "remember", {"content": "Staging is restored from the nightly snapshot every Monday at 06:00 UTC"}
            )
            assert not stored.is_error
            recalled = text(await client.call_tool("recall", {"query": "when does staging get fresh data?"}))
        server.stop(signal.SIGTERM)
    assert "nightly snapshot" in recalled
    assert server.process.returncode == 0
