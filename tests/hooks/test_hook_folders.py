"""The hooks' folder sits in the data directory, which is also the default database's directory
(README: "private to you (0700/0600)"). Whoever creates it first — serve-stdio's hook socket and
marker, now made before the store opens, or a hook's session state — makes both 0700, whatever
the umask lets through (stores/sqlite/files.py makes the database's directory so)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_memory.cli import hook_state
from mcp_memory.core import hooks
from tests.conftest import ROOT


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def home() -> Iterator[Path]:
    """A fresh home with a short path: under pytest's tmp_path the socket's path would be too long
    for a Unix socket, and the hooks would use a folder in /tmp instead (core/hooks.py socket_path)."""
    made = Path(tempfile.mkdtemp(prefix="h", dir="/tmp"))
    try:
        yield made
    finally:
        shutil.rmtree(made)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The common 022: a folder made without an explicit mode would be 0755."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


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
