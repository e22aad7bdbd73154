"""A serving process that is still starting (docs/hooks.md#a-sessions-first-seconds): serve-stdio
listens before its store opens and its model loads, and keeps a marker beside its socket until
then. A prompt that finds the marker waits for the answer up to STARTING_WAIT_MS instead of the
second; without it, the second is all a slow server gets."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from pathlib import Path

from mcp_memory.cli.hooks import command as hook
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.server.hooks import folder as hooks
from mcp_memory.server.hooks.listener import HookSocket
from tests.conftest import Env
from tests.hooks.support import environ, payload, run_hook, user_prompt
from tests.support.mcp_messages import INITIALIZE

DEPLOY = "Deploys go out on Tuesdays after the standup."
#: Longer than the prompt's default second, well within the starting wait.
OPENS_AFTER = 1.6


async def starting(env: dict[str, str]) -> HookSocket:
    server = HookSocket(None, Caller("acme"), NullLog(), path=hooks.socket_path("acme", env))
    await server.start()
    assert server.listening
    return server


async def test_a_prompt_asked_while_serve_stdio_opens_its_store_waits_past_the_second_and_gets_its_memory(
    env: Env, tmp_path: Path
) -> None:
    await env.service.remember(Caller("acme"), DEPLOY)
    variables = environ(tmp_path, MEMORY_TENANT="acme")
    server = await starting(variables)
    marker = hooks.starting_path(hooks.socket_path("acme", variables))
    try:
        assert stat.S_IMODE(os.stat(marker).st_mode) == 0o600
        assert marker.read_text() == str(os.getpid())
        started = time.monotonic()
        asked = asyncio.create_task(
            run_hook(["UserPromptSubmit"], payload(user_prompt("when do deploys go out")), variables)
        )
        await asyncio.sleep(OPENS_AFTER)
        server.serve(env.service)
        run = await asked
        elapsed = time.monotonic() - started
        server.warmed()
        assert not marker.exists()
    finally:
        await server.close()
    assert run.code == 0 and f"   {DEPLOY}" in (run.context or "").splitlines()
    assert hook.DEFAULT_TIMEOUT_MS / 1000 < elapsed < hook.STARTING_SECONDS


async def test_a_warm_server_that_does_not_answer_is_given_only_the_second(env: Env, tmp_path: Path, capsys) -> None:
    variables = environ(tmp_path, MEMORY_TENANT="acme")
    server = await starting(variables)
    server.warmed()  # no marker: this process is not starting, only slow
    try:
        started = time.monotonic()
        run = await run_hook(["UserPromptSubmit"], payload(user_prompt("when do deploys go out")), variables)
        elapsed = time.monotonic() - started
    finally:
        await server.close()
    assert (run.code, run.out) == (0, "")
    assert hook.DEFAULT_TIMEOUT_MS / 1000 <= elapsed < hook.STARTING_SECONDS
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["event"], line["reason"]) for line in lines] == [("hook_server_failed", "TimeoutError")]


async def test_a_marker_left_by_a_process_that_has_gone_is_not_believed(tmp_path: Path) -> None:
    variables = environ(tmp_path, MEMORY_TENANT="acme")
    path = hooks.socket_path("acme", variables)
    path.parent.mkdir(parents=True, exist_ok=True)
    marker = hooks.starting_path(path)
    marker.write_text("999999999")
    assert not hooks.server_starting(path)
    marker.write_text(str(os.getpid()))
    assert hooks.server_starting(path)


async def test_a_server_that_fails_to_open_its_store_refuses_the_waiting_question_and_removes_its_marker(
    tmp_path: Path,
) -> None:
    variables = environ(tmp_path, MEMORY_TENANT="acme")
    server = await starting(variables)
    marker = hooks.starting_path(hooks.socket_path("acme", variables))
    asked = asyncio.create_task(
        run_hook(["SessionStart"], payload({"session_id": "s", "source": "startup"}), variables)
    )
    await asyncio.sleep(0.3)
    await server.close()  # what run_stdio does when open_service raises
    run = await asyncio.wait_for(asked, 30)
    assert run.code == 0 and not marker.exists() and not hooks.socket_path("acme", variables).exists()


async def test_a_prompt_asked_before_serve_stdio_listens_waits_for_it_when_its_marker_is_there(
    env: Env, tmp_path: Path
) -> None:
    """serve-stdio marks itself starting before its app loads (cli/entry.py), seconds before its
    socket listens; a prompt that finds only the marker looks for the socket up to the starting
    wait, and starts no answer of its own meanwhile (the marker is there from the start: no thread
    of its own, so no early exit at the end; tests/hooks/conftest.py fails the test if it exited).
    Its store is held locked all the same, so that an answer of its own could not come either."""
    import sqlite3

    await env.service.remember(Caller("acme"), DEPLOY)
    variables = environ(tmp_path, MEMORY_TENANT="acme", EMBEDDING_PROVIDER="fake")
    path = hooks.socket_path("acme", variables)
    holder = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE held_by_the_test (x)")
    server = HookSocket(env.service, Caller("acme"), NullLog(), path=path)
    try:
        hooks.mark_starting(path)
        started = time.monotonic()
        asked = asyncio.create_task(
            run_hook(["UserPromptSubmit"], payload(user_prompt("when do deploys go out")), variables)
        )
        await asyncio.sleep(OPENS_AFTER)
        await server.start()
        run = await asked
        elapsed = time.monotonic() - started
    finally:
        await server.close()
        holder.execute("ROLLBACK")
        holder.close()
    assert run.code == 0 and f"   {DEPLOY}" in (run.context or "").splitlines()
    assert OPENS_AFTER < elapsed < hook.STARTING_SECONDS
    assert hook._THREADS == []
    assert not hooks.starting_path(path).exists()


def test_serve_stdio_marks_itself_starting_before_its_app_loads_and_removes_the_mark_once_warm(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.hooks.test_hook_process import process_env

    env = process_env(tmp_path)
    marker = hooks.starting_path(hooks.socket_path("acme", env))
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from mcp_memory.cli.entry import main; sys.argv[0] = 'mcp-memory'; main()",
            "serve-stdio",
        ],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.005)
        assert marker.read_text() == str(server.pid)
        assert server.stderr is not None
        assert "serving stdio for tenant acme" in server.stderr.readline().decode()
        assert server.stdin is not None
        server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        server.stdin.flush()
        while marker.exists() and time.monotonic() < deadline:  # the handshake starts the warm-up
            time.sleep(0.05)
        assert not marker.exists()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=30)
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()


async def test_a_prompt_with_nothing_listening_looks_for_a_marker_first_and_never_answers_itself_once_it_appears(
    env: Env, tmp_path: Path, monkeypatch
) -> None:
    """docs/hooks.md: a prompt answered in the hook's own process loads the model, so it first looks
    PROMPT_LOOKS_FIRST_SECONDS for a serve-stdio starting at the same moment. Its marker, written
    within that look, means the prompt never starts an answer of its own (no thread left running,
    no early exit) and gets the memory from the socket once it listens."""
    exits: list[int] = []
    monkeypatch.setattr(hook, "EXIT", exits.append)
    monkeypatch.setattr(hook, "_THREADS", [])
    await env.service.remember(Caller("acme"), DEPLOY)
    variables = environ(tmp_path, MEMORY_TENANT="acme", EMBEDDING_PROVIDER="fake")
    path = hooks.socket_path("acme", variables)
    server = HookSocket(env.service, Caller("acme"), NullLog(), path=path)
    try:
        asked = asyncio.create_task(
            run_hook(["UserPromptSubmit"], payload(user_prompt("when do deploys go out")), variables)
        )
        await asyncio.sleep(hook.PROMPT_LOOKS_FIRST_SECONDS / 3)
        hooks.mark_starting(path)
        await asyncio.sleep(OPENS_AFTER)
        await server.start()
        run = await asked
    finally:
        await server.close()
    assert run.code == 0 and f"   {DEPLOY}" in (run.context or "").splitlines()
    assert hook._THREADS == [] and exits == []


def broken_sdk(tmp_path: Path, body: str) -> dict[str, str]:
    """serve-stdio's variables with a package named as the SDK's first module earlier on the path,
    standing in for a broken install (server/runners/stdio.py imports the SDK after the socket listens and
    the store opens)."""
    from tests.hooks.test_hook_process import process_env

    shadow = tmp_path / "shadow" / "mcp_types"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(body)
    env = process_env(tmp_path)
    env["PYTHONPATH"] = f"{shadow.parent}{os.pathsep}{env['PYTHONPATH']}"
    return env


def test_serve_stdio_whose_sdk_fails_to_import_removes_its_socket_and_marker_and_says_so_in_one_line(
    tmp_path: Path,
) -> None:
    """A failure there closes the service and removes the socket and the marker, as a failure to
    open the store does, and the process ends with one line saying why."""
    import subprocess
    import sys

    env = broken_sdk(tmp_path, 'raise ImportError("mcp_types is broken here")\n')
    path = hooks.socket_path("acme", env)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "serve-stdio"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == [
        "error: the MCP SDK cannot be imported (mcp_types is broken here): reinstall mcp-memory"
    ]
    assert done.stdout == b""
    assert (tmp_path / "m.db").exists()  # the store was open: the failure came after it
    assert not path.exists() and not hooks.starting_path(path).exists()


def test_ctrl_c_while_serve_stdio_imports_its_sdk_removes_its_socket_and_marker_and_exits_at_once(
    tmp_path: Path,
) -> None:
    """The SDK's import (a second or more on a busy machine) is the window between the socket
    listening and the tools being served: a Ctrl-C there closes the service, removes both files
    and ends the process without waiting for the import's thread."""
    import signal
    import subprocess
    import sys

    importing = tmp_path / "importing"
    env = broken_sdk(
        tmp_path,
        f"import time\nopen({str(importing)!r}, 'w').close()\ntime.sleep(20)\nraise ImportError('slow')\n",
    )
    path = hooks.socket_path("acme", env)
    server = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-stdio"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not importing.exists() and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.02)
        assert importing.exists() and path.exists() and hooks.starting_path(path).exists()
        signalled = time.monotonic()
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=60)
        took = time.monotonic() - signalled
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0, err.decode()
    assert b"Traceback" not in err
    assert took < 10  # not the import's 20 s
    assert not path.exists() and not hooks.starting_path(path).exists()


async def test_a_second_serve_stdio_starting_beside_a_starting_one_leaves_the_first_ones_marker_in_place(
    tmp_path: Path,
) -> None:
    """Two sessions of one project start two serve-stdio for one store and tenant. The second's
    first act is its own marker (cli/entry.py); it then finds the first listening and serves the
    tools without a socket. The first is still loading its model: its marker must still be there
    for the hooks to wait for it."""
    import sys

    from tests.hooks.test_hook_process import process_env

    env = process_env(tmp_path)
    path = hooks.socket_path("acme", env)
    first = HookSocket(None, Caller("acme"), NullLog(), path=path)
    await first.start()
    try:
        assert first.listening and hooks.starting_path(path).read_text() == str(os.getpid())
        second = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import sys; from mcp_memory.cli.entry import main; sys.argv[0] = 'mcp-memory'; main()",
            "serve-stdio",
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(second.communicate(), 120)
        assert second.returncode == 0, err.decode()
        assert "serving stdio for tenant acme" in err.decode()  # it came as far as serving, and then ended
        assert hooks.starting_path(path).read_text() == str(os.getpid())
        assert hooks.server_starting(path)
        first.warmed()
        assert not hooks.starting_path(path).exists()
    finally:
        await first.close()


async def test_the_serve_stdio_that_listens_takes_the_marker_over_from_one_that_will_not(tmp_path: Path) -> None:
    """The other order: the second wrote its marker first (it is still running, here a sleeping
    child), and the first is the one that listens. The marker becomes the listener's, so that the
    other, finding it listening and removing only its own, leaves it."""
    import sys

    variables = environ(tmp_path, MEMORY_TENANT="acme")
    path = hooks.socket_path("acme", variables)
    other = await asyncio.create_subprocess_exec(sys.executable, "-c", "import time; time.sleep(60)")
    try:
        hooks.private_folder(path.parent)
        hooks.starting_path(path).write_text(str(other.pid))
        assert hooks.mark_starting(path) == hooks.starting_path(path)  # an early mark leaves it
        assert hooks.starting_path(path).read_text() == str(other.pid)
        listener = await starting(variables)
        try:
            assert hooks.starting_path(path).read_text() == str(os.getpid())
        finally:
            await listener.close()
        assert not hooks.starting_path(path).exists()
    finally:
        other.kill()
        await other.wait()
