"""The SQLite vector cache's float16 scan and its snapshot files (stores/sqlite/vectors.py,
stores/sqlite/sidecar.py): answers are the exact float32 scan's, a file is used only while it
agrees with the database (writes and deletes since it are applied to it), and anything else (a
torn file, an edit behind the store's back, an older copy of the database) means it is read again."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.stores.sqlite import sidecar
from mcp_memory.stores.sqlite import vectors as sqlite_vectors
from mcp_memory.stores.sqlite.store import open_sqlite
from tests.stores.sqlite.small_cache import DIM, TENANT, exact, memory, small_blocks, unit_rows

COUNT = 60


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    small_blocks(monkeypatch)


async def fill(path: Path, embeddings: dict[str, np.ndarray]) -> None:
    vectors, objects = await open_sqlite(path, model="m", dim=DIM)
    try:
        await vectors.put_many([(memory(int(i[1:])), e) for i, e in embeddings.items()])
    finally:
        await vectors.close()
        await objects.close()


async def ask(path: Path, queries: np.ndarray, top_k: int = 5) -> list[list[str]]:
    """Each query's ids by the store, in a fresh process's worth of store (a new cache)."""
    vectors, objects = await open_sqlite(path, model="m", dim=DIM)
    try:
        answers = [[h.memory.id for h in await vectors.query(TENANT, q, top_k, None)] for q in queries]
        vectors._cache._sidecars.wait()
        return answers
    finally:
        await vectors.close()
        await objects.close()


def sidecar_file(path: Path) -> Path:
    return path.with_name(path.name + ".vectors") / sidecar._name(TENANT)


def refuse_full_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the tenant was read from the database")

    monkeypatch.setattr(sqlite_vectors, "build", refuse)


async def test_rows_closer_than_float16_can_tell_apart_come_back_in_the_exact_scans_order(tmp_path: Path):
    base = np.full(DIM, DIM**-0.5, np.float32)
    rows = {}
    for i in range(COUNT):  # a few float32 steps apart: float16 sees one direction; their norms shrink
        nudged = base.copy()
        nudged[0] += i * 3e-6
        rows[f"m{i:03d}"] = nudged * np.float32(1 - i * 1e-6)
    await fill(tmp_path / "m.db", rows)
    query = base.copy()
    query[0] += 3.0  # favours the largest first component: m059, m058, ...

    [got] = await ask(tmp_path / "m.db", query[None, :], top_k=3)

    assert got == exact(rows, query, 3) == ["m059", "m058", "m057"]


async def test_answers_are_the_exact_scans_for_every_query_and_conversation(tmp_path: Path):
    embeddings = unit_rows(2, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    queries = unit_rows(3, 20)

    for top_k in (1, 5, 17):
        assert await ask(tmp_path / "m.db", queries, top_k) == [exact(rows, q, top_k) for q in queries]


async def test_a_large_tenants_first_load_writes_a_private_file_the_next_open_maps_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    embeddings = unit_rows(4, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    queries = unit_rows(5, 8)
    first = await ask(tmp_path / "m.db", queries)
    file = sidecar_file(tmp_path / "m.db")

    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    refuse_full_loads(monkeypatch)
    assert await ask(tmp_path / "m.db", queries) == first == [exact(rows, q, 5) for q in queries]


async def test_a_small_tenant_has_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sidecar, "MIN_ROWS", 1000)
    embeddings = unit_rows(6, COUNT)
    await fill(tmp_path / "m.db", {f"m{i:03d}": embeddings[i] for i in range(COUNT)})

    await ask(tmp_path / "m.db", embeddings[:1])

    assert not sidecar_file(tmp_path / "m.db").exists()


async def test_memories_written_after_the_file_are_found_without_reading_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    embeddings = unit_rows(7, COUNT + 5)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    later = {f"m{i:03d}": embeddings[i] for i in range(COUNT, COUNT + 5)}
    later["m003"] = -embeddings[3]  # and a rewrite of one in the file
    await fill(tmp_path / "m.db", later)
    rows.update(later)

    refuse_full_loads(monkeypatch)
    queries = np.concatenate([embeddings[COUNT:], -embeddings[3:4], unit_rows(8, 5)])
    assert await ask(tmp_path / "m.db", queries) == [exact(rows, q, 5) for q in queries]


async def delete(path: Path, ids: list[str]) -> None:
    vectors, objects = await open_sqlite(path, model="m", dim=DIM)
    try:
        await vectors.delete(TENANT, ids)
    finally:
        await vectors.close()
        await objects.close()


async def test_a_delete_since_the_file_hides_the_row_without_reading_the_tenant_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    embeddings = unit_rows(9, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    await delete(tmp_path / "m.db", ["m010", "m011"])
    del rows["m010"], rows["m011"]

    refuse_full_loads(monkeypatch)
    assert await ask(tmp_path / "m.db", embeddings[10:12]) == [exact(rows, q, 5) for q in embeddings[10:12]]
    assert len((await ask(tmp_path / "m.db", embeddings[10:11], top_k=COUNT))[0]) == COUNT - 2


async def test_a_memory_deleted_and_written_again_is_found_by_its_new_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    embeddings = unit_rows(18, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    await delete(tmp_path / "m.db", ["m020"])
    await fill(tmp_path / "m.db", {"m020": -embeddings[20]})
    rows["m020"] = -embeddings[20]

    refuse_full_loads(monkeypatch)
    queries = np.concatenate([embeddings[20:21], -embeddings[20:21], unit_rows(19, 4)])
    assert await ask(tmp_path / "m.db", queries) == [exact(rows, q, 5) for q in queries]


async def test_a_file_written_after_deletes_opens_without_reading_the_tenant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    embeddings = unit_rows(20, COUNT + 20)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    await delete(tmp_path / "m.db", ["m000", "m030", "m059"])
    for i in (0, 30, 59):
        del rows[f"m{i:03d}"]
    later = {f"m{i:03d}": embeddings[i] for i in range(COUNT, COUNT + 20)}
    await fill(tmp_path / "m.db", later)  # grown enough that the next load writes the file again
    rows.update(later)
    file = sidecar_file(tmp_path / "m.db")
    before = file.read_bytes()
    await ask(tmp_path / "m.db", embeddings[:1])
    assert file.read_bytes() != before  # the file now holds the deleted rows, hidden

    refuse_full_loads(monkeypatch)
    queries = np.concatenate([embeddings[[0, 30, 59]], unit_rows(21, 5)])
    assert await ask(tmp_path / "m.db", queries) == [exact(rows, q, 5) for q in queries]
    assert len((await ask(tmp_path / "m.db", embeddings[:1], top_k=2 * COUNT))[0]) == len(rows)


async def test_past_the_kept_deletes_an_older_cache_reads_the_tenant_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from mcp_memory.stores.sqlite import store

    monkeypatch.setattr(store, "KEPT_DELETES", 2)
    embeddings = unit_rows(22, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    await delete(tmp_path / "m.db", ["m001", "m002", "m003"])  # the list is emptied: the file is too old
    for i in (1, 2, 3):
        del rows[f"m{i:03d}"]
    loads = []
    monkeypatch.setattr(sqlite_vectors, "build", lambda *a, build=sqlite_vectors.build: loads.append(1) or build(*a))

    queries = np.concatenate([embeddings[1:4], unit_rows(23, 3)])
    assert await ask(tmp_path / "m.db", queries) == [exact(rows, q, 5) for q in queries]
    assert loads == [1]


def raw(path: Path, sql: str, params: tuple = ()) -> None:
    """A write behind the store's back: no generation is bumped."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, params)
    conn.close()


async def test_embeddings_changed_behind_the_stores_back_are_noticed_and_read_again(tmp_path: Path):
    embeddings = unit_rows(10, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    flipped = {i: -e for i, e in rows.items()}
    conn = sqlite3.connect(tmp_path / "m.db")
    with conn:
        conn.executemany(
            "UPDATE memories SET embedding = ? WHERE id = ?",
            [(e.astype("<f4").tobytes(), i) for i, e in flipped.items()],
        )
    conn.close()

    queries = unit_rows(11, 6)
    assert await ask(tmp_path / "m.db", queries) == [exact(flipped, q, 5) for q in queries]


async def test_a_row_deleted_behind_the_stores_back_is_noticed_by_the_count(tmp_path: Path):
    embeddings = unit_rows(12, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    raw(tmp_path / "m.db", "DELETE FROM memories WHERE id = 'm021'")

    assert "m021" not in (await ask(tmp_path / "m.db", embeddings[21:22], top_k=COUNT))[0]
    # the file written again agrees: the next open maps it and still leaves m021 out
    assert "m021" not in (await ask(tmp_path / "m.db", embeddings[21:22], top_k=COUNT))[0]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "another tenant's"])
async def test_a_torn_or_foreign_file_is_ignored_and_written_again(tmp_path: Path, damage: str):
    embeddings = unit_rows(13, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    await ask(tmp_path / "m.db", embeddings[:1])
    file = sidecar_file(tmp_path / "m.db")
    whole = file.read_bytes()
    if damage == "truncated":
        file.write_bytes(whole[: len(whole) - 100])
    elif damage == "garbage":
        file.write_bytes(os.urandom(len(whole)))
    elif damage == "empty":
        file.write_bytes(b"")
    else:
        file.write_bytes(whole.replace(b'"tenant": "acme"', b'"tenant": "acmf"'))

    queries = unit_rows(14, 6)
    assert await ask(tmp_path / "m.db", queries) == [exact(rows, q, 5) for q in queries]
    assert file.read_bytes() == whole  # rebuilt from the database, byte for byte


async def test_a_database_restored_from_an_older_copy_does_not_use_the_newer_file(tmp_path: Path):
    embeddings = unit_rows(15, COUNT + 10)
    old = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", old)
    copy = (tmp_path / "m.db").read_bytes()
    newer = {f"m{i:03d}": embeddings[i] for i in range(COUNT, COUNT + 10)}
    await fill(tmp_path / "m.db", newer)
    await ask(tmp_path / "m.db", embeddings[:1])  # the file holds all 70
    (tmp_path / "m.db").write_bytes(copy)  # the older 60 come back (its WAL was checkpointed at close)

    assert (await ask(tmp_path / "m.db", embeddings[COUNT:], top_k=3)) == [exact(old, q, 3) for q in embeddings[COUNT:]]


async def test_a_file_that_cannot_be_written_leaves_answers_as_they_were(tmp_path: Path):
    embeddings = unit_rows(16, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)
    (tmp_path / "m.db.vectors").write_text("a file where the directory belongs")

    queries = unit_rows(17, 4)
    assert await ask(tmp_path / "m.db", queries) == [exact(rows, q, 5) for q in queries]


async def test_a_file_written_while_new_conversations_arrive_holds_only_its_own_rows_conversations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import json
    import threading

    embeddings = unit_rows(18, COUNT + 20)
    release = threading.Event()
    real_write = sidecar.write

    def slow_write(*args, **kwargs):  # the background writer starts late, as under load
        release.wait(10)
        real_write(*args, **kwargs)

    monkeypatch.setattr(sidecar, "write", slow_write)
    vectors, objects = await open_sqlite(tmp_path / "m.db", model="m", dim=DIM)
    try:
        await vectors.put_many([(memory(i, "first"), embeddings[i]) for i in range(COUNT)])
        await vectors.query(TENANT, embeddings[0], 3, "first")  # loads; the file is scheduled
        later = [(memory(i, f"later-{i}"), embeddings[i]) for i in range(COUNT, COUNT + 20)]
        await vectors.put_many(later)
        hits = await vectors.query(TENANT, embeddings[COUNT], 1, f"later-{COUNT}")  # appends, new conversations
        release.set()
        vectors._cache._sidecars.wait()
    finally:
        await vectors.close()
        await objects.close()

    assert [h.memory.id for h in hits] == [f"m{COUNT:03d}"]
    file = sidecar_file(tmp_path / "m.db")
    raw = file.read_bytes()
    (length,) = np.frombuffer(raw[8:16], dtype="<u8")
    header = json.loads(raw[16 : 16 + int(length)])
    assert header["n"] == COUNT
    assert header["conversations"] == {"first": 0}


async def test_a_file_write_failing_for_any_reason_is_said_without_ids_and_answers_stay_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    embeddings = unit_rows(19, COUNT)
    rows = {f"m{i:03d}": embeddings[i] for i in range(COUNT)}
    await fill(tmp_path / "m.db", rows)

    def broken(*args, **kwargs):
        raise RuntimeError("dictionary changed size during iteration")

    monkeypatch.setattr(sidecar, "write", broken)
    queries = unit_rows(20, 4)
    with caplog.at_level("WARNING", logger="mcp_memory.stores.sqlite.sidecar"):
        answers = await ask(tmp_path / "m.db", queries)

    assert answers == [exact(rows, q, 5) for q in queries]
    said = [r.getMessage() for r in caplog.records if r.name == "mcp_memory.stores.sqlite.sidecar"]
    assert said  # once per attempt: each later load tries again
    for message in said:
        assert "could not write a vector snapshot file" in message and message.endswith(": RuntimeError")
        assert f"{TENANT} " not in message and "m0" not in message and "dictionary" not in message
    assert not sidecar_file(tmp_path / "m.db").exists()
