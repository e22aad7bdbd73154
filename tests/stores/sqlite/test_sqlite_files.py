"""The database is private from the moment it exists: its directory 0700, the file and
SQLite's -wal and -shm files 0600, the lock directory 0700, whatever the umask lets through;
an existing file keeps its mode, with a warning when others can read it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcp_memory.stores.sqlite.files import exposure_warning
from tests.stores.sqlite.test_sqlite import close_pair, open_pair
from tests.stores.test_contract import memory, unit


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def no_chmod(monkeypatch: pytest.MonkeyPatch) -> None:
    """Made private as created: a chmod afterwards would leave a moment when others can open it."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("chmod called: the mode must be given at creation")

    monkeypatch.setattr(os, "chmod", refuse)
    monkeypatch.setattr(os, "fchmod", refuse)
    monkeypatch.setattr(Path, "chmod", refuse)


async def test_a_new_database_its_directory_wal_shm_and_lock_files_are_the_owners_alone(
    tmp_path: Path, open_umask: None, no_chmod: None
) -> None:
    db_path = tmp_path / "fresh" / "memory.db"
    vectors, objects = await open_pair(db_path)
    try:
        await vectors.put(memory("m1", tenant="acme"), unit(1))
        async with vectors.exclusive("acme"):
            pass
        assert mode(db_path.parent) == 0o700
        assert mode(db_path) == 0o600
        for suffix in ("-wal", "-shm"):
            sidecar = db_path.with_name(db_path.name + suffix)
            assert sidecar.exists(), suffix
            assert mode(sidecar) == 0o600, suffix
        locks = db_path.with_name(db_path.name + ".locks")
        assert mode(locks) == 0o700
        assert list(locks.iterdir())  # the tenant's lock file, empty, inside the private directory
    finally:
        await close_pair((vectors, objects))
    assert exposure_warning(db_path) is None


async def test_an_existing_directory_and_file_keep_their_modes_and_an_exposed_file_is_warned_about(
    tmp_path: Path, open_umask: None
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    db_path = shared / "memory.db"
    db_path.touch(mode=0o644)
    vectors, objects = await open_pair(db_path)
    try:
        await vectors.put(memory("m1", tenant="acme"), unit(1))
    finally:
        await close_pair((vectors, objects))
    assert mode(shared) == 0o755
    assert mode(db_path) == 0o644
    assert exposure_warning(db_path) == (
        f"warning: the database {db_path} can be read by other users (mode 0644); "
        f"to keep its memories private: chmod 600 '{db_path}'"
    )


def test_a_file_only_its_owner_and_group_cannot_read_is_not_warned_about(tmp_path: Path) -> None:
    db_path = tmp_path / "memory.db"
    db_path.touch(mode=0o600)
    os.chmod(db_path, 0o620)  # group may write but not read: nobody else can read memories
    assert exposure_warning(db_path) is None
    assert exposure_warning(tmp_path / "absent.db") is None
