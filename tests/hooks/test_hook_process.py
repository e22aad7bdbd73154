"""The hook as Claude Code runs it: a process, with serve-stdio listening, with nothing
listening, and with the store locked. Each exits 0 within its budget (the bounds are loose:
the machine may be busy) and never prints anything Claude Code would show as an error."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_memory.cli.hooks.command import STARTING_SECONDS
from tests.conftest import ROOT
from tests.hooks.support import payload, session_start, user_prompt

#: What a process start may add on a busy machine, beyond the hook's own budget.
START_SLACK = 4.0
DEPLOY = "Deploys go out on Tuesdays after the standup."


def process_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "HOME": str(tmp_path),
            "XDG_DATA_HOME": str(tmp_path / "d"),
            "MEMORY_DB_PATH": str(tmp_path / "m.db"),
            "MEMORY_TENANT": "acme",
            "EMBEDDING_PROVIDER": "fake",
        }
    )
    return env


def remember(env: dict[str, str], content: str) -> None:
    subprocess.run([sys.executable, "-m", "mcp_memory", "remember", content], env=env, check=True, capture_output=True)


def hook(env: dict[str, str], event: str, stdin: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "hook", event], input=stdin.encode(), env=env, capture_output=True
    )
    return time.monotonic() - started, done


@pytest.fixture
def serve_stdio(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = process_env(tmp_path)
    remember(env, DEPLOY)
    server = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-stdio"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stderr is not None
        first = server.stderr.readline().decode()  # printed once the hook socket listens
        assert "serving stdio for tenant acme" in first
        yield env
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=30)
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()


def test_with_serve_stdio_listening_a_prompt_is_answered_from_its_socket(serve_stdio: dict[str, str]) -> None:
    # a busy machine may take over the default second: this test is about the path, not the clock
    env = {**serve_stdio, "MEMORY_HOOK_TIMEOUT_MS": "10000"}
    elapsed, done = hook(env, "UserPromptSubmit", payload(user_prompt("when do deploys go out")))
    assert done.returncode == 0 and done.stderr == b""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"   {DEPLOY}" in context.splitlines()
    assert elapsed < 10.0 + START_SLACK


def test_with_nothing_listening_session_start_answers_itself_or_gives_up_after_its_wait(tmp_path: Path) -> None:
    env = process_env(tmp_path)
    remember(env, DEPLOY)
    elapsed, done = hook(env, "SessionStart", payload(session_start()))
    assert done.returncode == 0
    assert elapsed < STARTING_SECONDS + START_SLACK
    if done.stdout:
        assert f"   {DEPLOY}" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"].splitlines()
    else:  # a busy machine: the fallback did not finish in time, and said so in one line
        assert [json.loads(line)["event"] for line in done.stderr.decode().splitlines()] == ["hook_timed_out"]


def test_with_the_store_locked_session_start_gives_up_after_its_four_seconds_printing_nothing(
    tmp_path: Path,
) -> None:
    env = process_env(tmp_path)
    remember(env, DEPLOY)
    holder = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("CREATE TABLE held_by_the_test (x)")
        elapsed, done = hook(env, "SessionStart", payload(session_start()))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (done.returncode, done.stdout) == (0, b"")
    assert [json.loads(line)["event"] for line in done.stderr.decode().splitlines()] == ["hook_timed_out"]
    assert STARTING_SECONDS <= elapsed < STARTING_SECONDS + START_SLACK


def test_hooks_started_before_serve_stdio_get_the_digest_and_the_prompt_its_memory(tmp_path: Path) -> None:
    """A session's first hooks run while Claude Code starts serve-stdio (docs/hooks.md#a-sessions-first-seconds):
    with the default waits, the digest and the first prompt's memory still arrive."""
    env = process_env(tmp_path)
    remember(env, DEPLOY)
    hooks_first = [
        subprocess.Popen(
            [sys.executable, "-m", "mcp_memory", "hook", event],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for event in ("SessionStart", "UserPromptSubmit")
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-stdio"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        start_out, start_err = hooks_first[0].communicate(payload(session_start()).encode(), timeout=60)
        # another session's prompt: this session's digest has shown the memory, which it then leaves out
        asked = user_prompt("when do deploys go out", session_id="another-session")
        prompt_out, prompt_err = hooks_first[1].communicate(payload(asked).encode(), timeout=60)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=30)
        assert server.stdout is not None
        server.stdout.close()
    assert (hooks_first[0].returncode, hooks_first[1].returncode, start_err, prompt_err) == (0, 0, b"", b"")
    digest = json.loads(start_out)["hookSpecificOutput"]["additionalContext"]
    assert digest.startswith("[MEMORY] What this project remembers:") and f"   {DEPLOY}" in digest.splitlines()
    answer = json.loads(prompt_out)["hookSpecificOutput"]["additionalContext"]
    assert f"   {DEPLOY}" in answer.splitlines()


@pytest.mark.parametrize("client", [[], ["--client", "codex"]], ids=["claude-code", "codex"])
def test_the_hook_process_loads_no_typer_numpy_model_sdk_dataclasses_or_typing_on_the_socket_path(
    tmp_path: Path, client: list[str]
) -> None:
    """docs/hooks.md#how-it-is-fast: what a prompt's hook imports when a server answers it."""
    import socket
    import threading

    from mcp_memory.server.hooks import folder as hooks
    from tests.support.http_process import imported_modules

    env = process_env(tmp_path)
    path = hooks.socket_path("acme", env)
    path.parent.mkdir(parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def answer_once() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b'{"ok":true,"text":"[MEMORY] a stand-in answer","ids":["x"]}\n')

    server = threading.Thread(target=answer_once)
    server.start()
    try:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "mcp_memory", "hook", *client, "UserPromptSubmit"],
            input=payload(user_prompt("anything")).encode(),
            env=env,
            capture_output=True,
        )
    finally:
        server.join(timeout=30)
        listener.close()
    assert json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] == "[MEMORY] a stand-in answer"
    loaded = imported_modules(done.stderr.decode())
    heavy = {
        "typer",
        "click",
        "rich",
        "numpy",
        "onnxruntime",
        "tokenizers",
        "mcp",
        "mcp_types",
        "dataclasses",
        "typing",
    }
    assert "mcp_memory.cli.hooks.command" in loaded
    assert ("mcp_memory.cli.hooks.codex" in loaded) == bool(client)  # read only for Codex's payloads
    assert not heavy & loaded
    # of the server's rooms only the hooks' events, wire, folder and session state, and the budget they are
    # held to: no tool, HTTP or store module
    assert {m for m in loaded if m.startswith(("mcp_memory.server", "mcp_memory.stores", "mcp_memory.app"))} == {
        "mcp_memory.server",
        "mcp_memory.server.hooks",
        "mcp_memory.server.hooks.events",
        "mcp_memory.server.hooks.folder",
        "mcp_memory.server.hooks.state",
        "mcp_memory.server.hooks.wire",
        "mcp_memory.server.budget",
        "mcp_memory.stores",  # the backends' table, which names the variables of a socket's key; no backend
    }
    # of the settings only the one reader of the environment, no section (config/__init__.py loads them lazily)
    assert {m for m in loaded if m.startswith("mcp_memory.config")} == {"mcp_memory.config"}


def test_a_hook_that_reads_no_session_imports_thirteen_of_the_packages_modules_and_none_of_the_core(
    tmp_path: Path,
) -> None:
    """Issue 37's constraint: the hook imports no more than before the settings' one reader (13 of
    ours for a PreCompact without capture); the errors and the session state load when used."""
    from tests.support.http_process import imported_modules

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mcp_memory", "hook", "PreCompact"],
        input=payload({"session_id": "s1", "hook_event_name": "PreCompact", "trigger": "auto"}).encode(),
        env=process_env(tmp_path),
        capture_output=True,
    )

    assert (done.returncode, done.stdout) == (0, b"")
    assert sorted(m for m in imported_modules(done.stderr.decode()) if m.startswith("mcp_memory")) == [
        "mcp_memory",
        "mcp_memory.cli",
        "mcp_memory.cli.entry",
        "mcp_memory.cli.hooks",
        "mcp_memory.cli.hooks.command",
        "mcp_memory.config",
        "mcp_memory.server",
        "mcp_memory.server.budget",
        "mcp_memory.server.hooks",
        "mcp_memory.server.hooks.events",
        "mcp_memory.server.hooks.folder",
        "mcp_memory.server.hooks.wire",
        "mcp_memory.stores",
    ]


def test_a_question_on_the_socket_nested_thousands_deep_is_refused_as_a_question(serve_stdio: dict[str, str]) -> None:
    import socket

    from mcp_memory.server.hooks.folder import socket_path

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(30)
        sock.connect(str(socket_path("acme", serve_stdio)))
        sock.sendall(b'{"kind":' + b"[" * 5000 + b"]" * 5000 + b"}\n")
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = sock.recv(4096)
            assert chunk, "the socket closed without an answer"
            reply += chunk
    assert json.loads(reply) == {"ok": False, "refused": "question"}
