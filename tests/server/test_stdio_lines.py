"""serve-stdio answers every line: a real server process fed raw lines, each of the
kinds the SDK's own reader dropped without a word (so the client hung), answered with a
JSON-RPC error carrying the request's id, one log line each that quotes nothing of the
line, and the server still serving afterwards."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from mcp_memory.server.runners.stdio_transport import MAX_LINE_BYTES, _Lines, request_id, screen
from tests.conftest import ROOT
from tests.server.test_stdio import params, server_env
from tests.support.mcp_messages import INITIALIZE, INITIALIZED

#: The longest a test waits for one answer: a guard against a hang, not a timing check.
ANSWER_WAIT_S = 60
MARKER = "zq-line-marker-8812"


class RawStdio:
    """A serve-stdio process spoken to in raw bytes, one line at a time."""

    def __init__(self, db: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_memory", "serve-stdio", "--tenant", "acme"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(db, EMBEDDING_PROVIDER="fake"),
            cwd=str(ROOT),
        )
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        self.send(INITIALIZE)
        assert self.next()["result"]["serverInfo"]["name"] == "mcp-memory"
        self.send(INITIALIZED)

    def send(self, message: dict | bytes) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def next(self) -> dict:
        """The next message on stdout; fails (instead of hanging) when none comes."""
        deadline = time.monotonic() + ANSWER_WAIT_S
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0 and self._selector.select(left), "the server did not answer the line"
            chunk = os.read(self.process.stdout.fileno(), 65536)
            assert chunk, "the server closed stdout"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return message

    def call(self, request_id: int, name: str, arguments: dict) -> dict:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
        answer = self.next()
        assert answer["id"] == request_id
        return answer["result"]

    def close(self) -> tuple[int, str]:
        self.process.stdin.close()
        err = self.process.stderr.read().decode("utf-8")
        self.process.wait(timeout=ANSWER_WAIT_S)
        self.process.stdout.close()
        self.process.stderr.close()
        self._selector.close()
        return self.process.returncode, err


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawStdio]:
    server = RawStdio(tmp_path / "m.db")
    yield server
    if server.process.poll() is None:
        server.close()


def tool_call(request_id: int, content: str) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": content}},
        }
    )


def nested(depth: int, request_id: int) -> bytes:
    args = "[" * depth + "]" * depth
    head = f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{"name":"remember","arguments":'
    return (head + '{"content":' + args + "}}}").encode()


#: (what the line is, the line, the id of the answer, its code, the start of its message)
BAD_LINES = [
    ("not JSON", f"{MARKER} hello".encode(), None, -32700, "Parse error: not valid JSON: Expecting value"),
    (
        "bytes after the JSON",
        b'{"jsonrpc":"2.0","id":11,"method":"tools/list"} ' + MARKER.encode(),
        11,
        -32700,
        "Parse error: not valid JSON: Extra data",
    ),
    (
        "a method that is not a string",
        b'{"jsonrpc":"2.0","id":12,"method":5}',
        12,
        -32600,
        "Invalid request: not a JSON-RPC",
    ),
    ("no jsonrpc member", b'{"id":13,"method":"tools/list"}', 13, -32600, "Invalid request: not a JSON-RPC"),
    ("a batch", b'[{"jsonrpc":"2.0","id":14,"method":"tools/list"}]', None, -32600, "Invalid request: batches"),
    (
        "nesting 10,000 deep",
        nested(10_000, 15),
        15,
        -32600,
        "Invalid request: the JSON nests arrays or objects deeper than 64",
    ),
    (
        "nesting 50,000 deep",
        nested(50_000, 16),
        16,
        -32600,
        "Invalid request: the JSON nests arrays or objects deeper than 64",
    ),
    (
        "raw bytes that are not UTF-8",
        tool_call(17, MARKER + " caf").encode().replace(b" caf", b" caf\xff\xfe"),
        17,
        -32700,
        "Parse error: not valid UTF-8 (byte",
    ),
    (
        "a lone surrogate in the method",
        b'{"jsonrpc":"2.0","id":18,"method":"tools/\\ud800list"}',
        18,
        -32700,
        "Parse error: an unpaired surrogate outside a tool argument",
    ),
    *[
        (
            f"a request whose id is {raw_id}",  # the SDK took it for a notification: no answer, no line
            b'{"jsonrpc":"2.0","id":' + raw_id.encode() + b',"method":"tools/list"}',
            None,
            -32600,
            "Invalid request: a request's id must be a string or an integer",
        )
        for raw_id in ("null", "true", "1.5", '{"n":20}', "[21]")
    ],
    (
        "a line over the size limit",
        tool_call(19, MARKER + "x" * MAX_LINE_BYTES).encode(),
        19,
        -32600,
        f"Invalid request: the line is longer than {MAX_LINE_BYTES} bytes",
    ),
]


def test_every_line_the_sdk_would_drop_is_answered_with_a_json_rpc_error_and_one_log_line(raw: RawStdio) -> None:
    for request, (kind, line, answer_id, code, message) in enumerate(BAD_LINES, start=100):
        raw.send(line)
        answer = raw.next()
        assert (answer["id"], answer["error"]["code"]) == (answer_id, code), kind
        assert answer["error"]["message"].startswith(message), (kind, answer)
        assert MARKER not in json.dumps(answer), kind
        # nothing was stored, and the server goes on serving
        stats = raw.call(request, "memory_stats", {})
        assert stats["content"][0]["text"] == "[MEMORY] This project has no memories yet.", kind
    returncode, err = raw.close()
    assert returncode == 0, err
    assert MARKER not in err
    refused = [json.loads(x) for x in err.splitlines() if '"stdio_line_refused"' in x]
    assert [entry["message"].rsplit("; answered ", 1)[1] for entry in refused] == [str(c[3]) for c in BAD_LINES]
    for entry in refused:
        assert entry["level"] == "warn" and entry["message"].startswith("a line on stdin was refused: ")


def test_a_lone_surrogate_in_content_is_refused_by_the_tool_naming_the_field(raw: RawStdio) -> None:
    raw.send(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"remember",'
             b'"arguments":{"content":"half a pair \\ud800 here"}}}')  # fmt: skip
    answer = raw.next()
    assert answer["id"] == 5
    assert answer["result"]["isError"] is True
    assert answer["result"]["content"][0]["text"] == (
        "Error: `content` contains an unpaired surrogate (U+D800 at position 12), which is not valid Unicode; "
        "send the text as UTF-8."
    )
    raw.send(b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"remember",'
             b'"arguments":{"content":"tagged","tags":["ok","\\udc00"]}}}')  # fmt: skip
    tagged = raw.next()
    assert tagged["id"] == 6 and tagged["result"]["isError"] is True
    assert "`tags`" in tagged["result"]["content"][0]["text"]
    assert raw.call(7, "memory_stats", {})["content"][0]["text"] == "[MEMORY] This project has no memories yet."


def test_invalid_utf_8_is_refused_not_stored_as_replacement_characters(raw: RawStdio) -> None:
    raw.send(tool_call(3, "caf").encode().replace(b"caf", b"caf\xe9 au lait"))  # Latin-1, not UTF-8
    assert raw.next()["error"]["code"] == -32700
    listed = raw.call(4, "list_memories", {})["content"][0]["text"]
    assert listed == "[MEMORY] This project has no memories yet."
    assert "\ufffd" not in listed


def test_blank_lines_and_crlf_line_ends_are_served_without_a_refusal(raw: RawStdio) -> None:
    raw.send(b"")
    raw.send(b"   ")
    raw.send(b'{"jsonrpc":"2.0","id":8,"method":"tools/list"}\r')
    names = [tool["name"] for tool in raw.next()["result"]["tools"]]
    assert names == ["recall", "remember", "list_memories", "forget", "memory_stats", "claude_code_hook"]
    returncode, err = raw.close()
    assert returncode == 0 and "stdio_line_refused" not in err


async def test_the_sdk_client_still_works_end_to_end_over_our_transport(tmp_path: Path) -> None:
    async with Client(params(tmp_path / "m.db", "--tenant", "acme", EMBEDDING_PROVIDER="fake")) as client:
        stored = await client.call_tool("remember", {"content": "café 日本語 — deploys drain streams first"})
        assert not stored.is_error
        listed = await client.call_tool("list_memories", {})
        assert "café 日本語 — deploys drain streams first" in listed.content[0].text


# ---------------------------------------------------------------- the pieces, in process


def test_the_id_is_read_from_a_line_that_does_not_parse_whatever_the_member_order() -> None:
    deep = "[" * 5000 + "]" * 5000
    assert request_id('{"jsonrpc":"2.0","params":{"a":' + deep + '},"id":"abc","method":"x"}') == "abc"
    assert request_id('{"id": 42, "method": "tools/list"} trailing') == 42
    assert request_id('{"id": true}') is None
    assert request_id('{"id": "\\ud800"}') is None
    assert request_id("[1, 2]") is None
    assert request_id('{"jsonrpc": "2.0", "params": [[[') is None


def test_lines_longer_than_the_limit_are_held_only_up_to_the_limit() -> None:
    lines = _Lines()
    out: list[bytes] = []
    for _ in range(40):  # 40 x 64 KiB, one line
        out += lines.feed(b"x" * 65536)
        assert len(lines._pending) <= MAX_LINE_BYTES + 1
    out += lines.feed(b'x\n{"id":1}\n')
    assert [len(x) for x in out] == [MAX_LINE_BYTES + 1, 8]
    assert screen(out[0]).code == -32600


def test_nan_is_not_json() -> None:
    assert screen(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":NaN}}').code == -32700
