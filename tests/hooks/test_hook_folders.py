"""The hooks' folder sits in the data directory, which is also the default database's directory
(README: "private to you (0700/0600)"). Whoever creates it first — serve-stdio's hook socket and
marker, now made before the store opens, or a hook's session state — makes both 0700, whatever
the umask lets through (stores/sqlite/files.py makes the database's directory so).

When the socket's path would be too long, the hooks use a folder in the temporary directory,
where anyone may make `mcp-tenant-memory-<uid>` first: a folder that is not the user's own
directory is refused (docs/hooks.md#how-it-is-fast)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_memory.cli.hooks import command as hook
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.hooks import folder as hooks
from mcp_memory.server.hooks import state as hook_state
from mcp_memory.server.hooks.listener import HookSocket
from tests.conftest import ROOT
from tests.hooks.support import payload, run_hook, user_prompt


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def home() -> Iterator[Path]:
    """A fresh home with a short path: under pytest's tmp_path the socket's path would be too long
    for a Unix socket, and the hooks would use a folder in /tmp instead (server/hooks/folder.py socket_path)."""
    made = Path(tempfile.mkdtemp(prefix="h", dir="/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made)


def test_the_first_serve_stdio_on_a_fresh_home_leaves_the_database_directory_the_owners_alone(
    home: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "EMBEDDING_PROVIDER": "fake",
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "serve-stdio"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        umask=0o022,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    database = home / "data" / hooks.DATA_DIR_NAME / "memory.db"
    assert database.exists()
    assert mode(database.parent) == 0o700
    assert mode(database) == 0o600
    assert mode(database.parent / hooks.SOCKET_DIR_NAME) == 0o700


def test_a_marker_written_first_makes_the_data_directory_0700(home: Path, open_umask: None) -> None:
    variables = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home)}
    marker = hooks.mark_starting(hooks.socket_path("acme", variables))
    hooks.unmark_starting(marker)
    assert mode(hooks.data_dir(variables)) == 0o700
    assert mode(hooks.data_dir(variables) / hooks.SOCKET_DIR_NAME) == 0o700
    assert mode(home / "data") == 0o755  # above the data directory: not ours alone


def test_a_hook_run_before_any_store_makes_the_data_directory_0700(home: Path, open_umask: None) -> None:
    variables = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home)}
    with hook_state.session(hooks.state_path("acme", variables), "session-1") as state:
        state.prompts += 1
    assert mode(hooks.data_dir(variables)) == 0o700
    assert mode(hooks.data_dir(variables) / hooks.SOCKET_DIR_NAME) == 0o700


def test_an_existing_data_directory_keeps_its_mode(home: Path, open_umask: None) -> None:
    variables = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home)}
    hooks.data_dir(variables).mkdir(parents=True, mode=0o750)
    hooks.unmark_starting(hooks.mark_starting(hooks.socket_path("acme", variables)))
    assert mode(hooks.data_dir(variables)) == 0o750
    assert mode(hooks.data_dir(variables) / hooks.SOCKET_DIR_NAME) == 0o700


# --------------------------------------------------------------------------- the temporary folder


class Planted:
    """What another user could leave in a folder they made first: a listener answering every question
    with a memory of its own, and a marker naming a live process (this one) so that a hook would wait."""

    ANSWER = b'{"ok":true,"text":"[MEMORY] planted by someone else","ids":["p"]}\n'

    def __init__(self, folder: Path, name: str) -> None:
        self.connections = 0
        self._stop = threading.Event()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(folder / name))
        self.sock.listen(4)
        self.sock.settimeout(0.1)
        hooks.starting_path(folder / name).write_text(str(os.getpid()))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with connection:
                connection.settimeout(2)
                with contextlib.suppress(OSError):
                    connection.recv(65536)
                    connection.sendall(self.ANSWER)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def temporary(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory of the test's own, so that the shared /tmp/mcp-tenant-memory-<uid> of
    every other test run on this machine is never touched."""
    made = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(made))
    monkeypatch.setattr(hooks, "EARLY_MARKER", None)
    try:
        yield made
    finally:
        shutil.rmtree(made)


def long_home(temporary: Path) -> dict[str, str]:
    """Variables whose data directory is too deep for a Unix socket: the hooks fall back to the temporary folder."""
    home = temporary / "home"
    return {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ("d" * 80)),
        "MEMORY_DB_PATH": str(home / "m.db"),
        "MEMORY_TENANT": "acme",
    }


def fallback_folder(temporary: Path) -> Path:
    return temporary / f"mcp-tenant-memory-{os.getuid()}"


async def refuses_everything_there(
    variables: dict[str, str], folder: Path, reason: str, prompt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No marker (early or not), no socket, a server that serves on without one after one log line,
    and a hook that injects nothing from what it finds there, saying why in one line."""
    path = hooks.socket_path("acme", variables)
    assert path.parent == folder
    planted = Planted(folder.resolve(), path.name)
    before = sorted(os.listdir(folder))
    try:
        with pytest.raises(hooks.NotOurs):
            hooks.mark_starting(path)
        hook.mark_serve_stdio_starting([], variables)
        assert hooks.EARLY_MARKER is None
        lines = io.StringIO()
        server = HookSocket(None, Caller("acme"), JsonLog(err=lines), path=path)
        await server.start()
        assert not server.listening
        logged = [json.loads(line) for line in lines.getvalue().splitlines()]
        assert [(line["event"], reason in line["message"]) for line in logged] == [("hook_socket_failed", True)]
        server.warmed()  # what serve-stdio's warm-up does at its end: nothing to remove there
        await server.close()
        capsys.readouterr()
        started = time.monotonic()
        run = await run_hook(["UserPromptSubmit"], prompt, variables)
        elapsed = time.monotonic() - started
    finally:
        planted.close()
    assert (run.code, run.out) == (0, "")
    assert elapsed < hook.DEFAULT_TIMEOUT_MS / 1000  # the planted marker is not believed either
    assert [json.loads(line) for line in capsys.readouterr().err.splitlines()] == [
        {"level": "warn", "event": "hook_folder_refused", "hook": "UserPromptSubmit", "reason": reason}
    ]
    assert planted.connections == 0
    assert sorted(os.listdir(folder)) == before  # nothing written there


async def test_a_symbolic_link_planted_as_the_temporary_folder_gets_no_marker_no_socket_and_no_hook_trusts_it(
    temporary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    variables = long_home(temporary)
    elsewhere = temporary / "elsewhere"
    elsewhere.mkdir()
    os.chmod(elsewhere, 0o777)
    fallback_folder(temporary).symlink_to(elsewhere)
    await refuses_everything_there(
        variables, fallback_folder(temporary), "a symbolic link", payload(user_prompt("when do deploys go out")), capsys
    )
    assert mode(elsewhere) == 0o777  # not made private through the link: it is not ours to change


async def test_a_temporary_folder_another_user_made_first_is_refused_and_left_as_it_is(
    temporary: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tests run as root here, and cannot make a folder as another user: the folder is made by
    this process and the hooks are told another uid (os.getuid), so its owner is not theirs. The
    prompt carries no session id: the session state lives in the data directory, which under the
    told uid is not theirs either."""
    monkeypatch.setattr(os, "getuid", lambda: os.geteuid() + 4242)
    folder = fallback_folder(temporary)
    folder.mkdir()
    os.chmod(folder, 0o777)
    assert folder.stat().st_uid != os.getuid()
    await refuses_everything_there(
        long_home(temporary),
        folder,
        "another user's",
        payload({"hook_event_name": "UserPromptSubmit", "prompt": "when do deploys go out"}),
        capsys,
    )
    assert mode(folder) == 0o777  # another user's mode is theirs to set


def test_a_temporary_folder_of_ours_with_another_mode_is_made_0700_before_the_marker_goes_in(
    temporary: Path, open_umask: None
) -> None:
    folder = fallback_folder(temporary)
    folder.mkdir(mode=0o755)
    marker = hooks.mark_starting(hooks.socket_path("acme", long_home(temporary)))
    try:
        assert marker.parent == folder and marker.exists()
        assert mode(folder) == 0o700
    finally:
        hooks.unmark_starting(marker)


def test_the_session_state_is_rewritten_where_it_is_0600_and_a_shorter_state_leaves_no_tail(
    home: Path, open_umask: None
) -> None:
    """docs/hooks.md#once-per-session: no temporary file renamed over it (ext4 flushed each one to disk)."""
    variables = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home)}
    path = hooks.state_path("acme", variables)
    with hook_state.session(path, "session-1") as state:
        state.show([f"id-{i}" for i in range(50)])
    inode = path.stat().st_ino
    path.chmod(0o644)
    with hook_state.session(path, "session-1") as state:
        state.shown = ["id-1"]

    assert (path.stat().st_ino, mode(path)) == (inode, 0o600)
    assert [s["shown"] for s in json.loads(path.read_text())["sessions"].values()] == [["id-1"]]
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_state_file_cut_short_is_read_as_no_state_and_written_whole_again(home: Path) -> None:
    variables = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home)}
    path = hooks.state_path("acme", variables)
    with hook_state.session(path, "session-1") as state:
        state.show(["id-1", "id-2"])
    path.write_bytes(path.read_bytes()[:20])

    with hook_state.session(path, "session-1") as state:
        assert (state.shown, state.prompts) == ([], 0)
        state.prompts += 1

    assert [s["prompts"] for s in json.loads(path.read_text())["sessions"].values()] == [1]


def test_a_block_that_fails_leaves_the_state_as_it_was_and_the_folder_unlocked(home: Path) -> None:
    variables = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home)}
    path = hooks.state_path("acme", variables)
    with hook_state.session(path, "session-1") as state:
        state.prompts = 2
    before = path.read_bytes()

    with pytest.raises(RuntimeError), hook_state.session(path, "session-1") as state:
        state.prompts = 9
        raise RuntimeError

    with hook_state.session(path, "session-1") as state:  # would wait forever on a lock left held
        assert state.prompts == 2
    assert json.loads(before)["sessions"]
