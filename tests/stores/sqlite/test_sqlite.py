"""What only the embedded SQLite backend promises: the file on disk, several
processes sharing it, and refusing a file it cannot use."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.core.errors import StartupError, StoreError
from mcp_memory.core.model import Memory
from mcp_memory.stores import open_stores
from mcp_memory.stores.records import ObjectStore, VectorStore
from mcp_memory.stores.section import StoreSection
from mcp_memory.stores.sqlite.store import SqliteObjectStore, SqliteVectorStore, open_sqlite, prefix_upper_bound
from tests.stores.test_contract import axis, let_other_tasks_run, memory, note, unit
from tests.support import store_worker

REPO = Path(__file__).resolve().parents[3]
DIM = 8


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memory.db"


async def open_pair(
    path: Path, model: str = "test-model", dim: int = DIM
) -> tuple[SqliteVectorStore, SqliteObjectStore]:
    return await open_sqlite(path, model=model, dim=dim)


async def close_pair(pair: tuple[VectorStore, ObjectStore]) -> None:
    await pair[0].close()
    await pair[1].close()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Everything the database holds, read with a plain connection."""
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("meta", "memories", "tenants", "objects", "etag_sequence")
        }
    finally:
        conn.close()


def run_workers(path: Path, mode: str, names: list[str], count: int) -> None:
    store_worker.run_workers("sqlite", str(path), "worker-test", DIM, mode, names, count)


# --------------------------------------------------------------------------- the file


async def test_the_embedding_model_and_dimension_are_recorded_on_first_open(db_path: Path) -> None:
    await close_pair(await open_pair(db_path, "all-MiniLM-L6-v2", 384))

    meta = dict(rows(db_path)["meta"])
    assert (meta["embedding_model"], meta["embedding_dim"]) == ("all-MiniLM-L6-v2", "384")


@pytest.mark.parametrize(("model", "dim"), [("fake-bag-of-words", 64), ("all-MiniLM-L6-v2", 64), ("other", 8)])
async def test_opening_with_another_embedder_is_refused_naming_both_and_leaves_the_data(
    db_path: Path, model: str, dim: int
) -> None:
    vectors, objects = await open_pair(db_path, "all-MiniLM-L6-v2", 8)
    await vectors.put(memory("m1"), unit(1))
    await objects.put("stats/acme/merged.json", "{}")
    await close_pair((vectors, objects))
    before, digest = rows(db_path), file_digest(db_path)

    with pytest.raises(StartupError) as refused:
        await open_pair(db_path, model, dim)

    message = str(refused.value)
    assert '"all-MiniLM-L6-v2" (8 dimensions)' in message
    assert f'"{model}" ({dim} dimensions)' in message
    assert "MEMORY_DB_PATH" in message and str(db_path) in message
    assert rows(db_path) == before
    assert file_digest(db_path) == digest


async def test_reopening_keeps_memories_objects_and_the_etag_sequence(db_path: Path) -> None:
    vectors, objects = await open_pair(db_path)
    kept = Memory(id="m1", tenant="acme", content="kept", tags=("a",), created_at="2026-01-02T03:04:05.006Z")
    await vectors.put(kept, unit(1))
    await objects.put("kept", "body")
    deleted_etag = await objects.put("recreated", "old")
    await objects.delete(["recreated"])
    await close_pair((vectors, objects))

    vectors, objects = await open_pair(db_path)
    try:
        assert await vectors.get("acme", ["m1"]) == [kept]
        assert [h.memory for h in await vectors.query("acme", unit(1), 5, None)] == [kept]
        stored = await objects.get("kept")
        assert stored is not None and stored.body == "body"
        new_etag = await objects.put("recreated", "new")
        assert int(new_etag) > int(deleted_etag)
    finally:
        await close_pair((vectors, objects))


async def test_a_file_that_is_not_a_database_is_refused_at_open(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are my notes, not a database\n" * 200)

    with pytest.raises(StartupError, match="not a database") as refused:
        await open_pair(path)

    assert str(path) in str(refused.value)
    assert path.read_bytes() == b"these are my notes, not a database\n" * 200


async def test_a_directory_that_cannot_be_created_is_refused_at_open(tmp_path: Path) -> None:
    (tmp_path / "occupied").write_text("a file where the directory should go")
    path = tmp_path / "occupied" / "memory.db"

    with pytest.raises(StartupError, match="cannot create the directory") as refused:
        await open_pair(path)

    assert str(path) in str(refused.value)


async def test_two_first_opens_at_once_both_succeed(db_path: Path) -> None:
    pairs = await asyncio.gather(open_pair(db_path), open_pair(db_path))

    for pair in pairs:
        await close_pair(pair)
    assert dict(rows(db_path)["meta"])["embedding_model"] == "test-model"


async def test_closing_twice_is_harmless_and_a_closed_store_refuses_work(db_path: Path) -> None:
    vectors, objects = await open_pair(db_path)
    await close_pair((vectors, objects))
    await close_pair((vectors, objects))

    with pytest.raises(StoreError, match="closed"):
        await objects.get("key")


async def test_an_embedding_of_another_width_is_refused(db_path: Path) -> None:
    vectors, objects = await open_pair(db_path)
    try:
        with pytest.raises(StoreError, match="8-dimensional"):
            await vectors.put(memory("m1"), np.ones(4, dtype=np.float32) / 2)
        with pytest.raises(StoreError, match="8-dimensional"):
            await vectors.query("acme", np.ones(9, dtype=np.float32), 5, None)
        assert await vectors.get("acme", ["m1"]) == []
    finally:
        await close_pair((vectors, objects))


async def test_long_id_and_key_lists_are_handled_in_chunks(db_path: Path) -> None:
    vectors, objects = await open_pair(db_path)
    try:
        ids = [f"m{i:04d}" for i in range(1200)]
        for i, memory_id in enumerate(ids):
            await vectors.put(memory(memory_id), unit(1, i / 1200))
            await objects.put(f"k/{memory_id}", "")

        assert len(await vectors.get("acme", [*ids, "missing"])) == 1200
        await vectors.delete("acme", ids[:1100])
        await objects.delete([f"k/{memory_id}" for memory_id in ids[:1100]])

        assert sorted(m.id for m in await vectors.get("acme", ids)) == ids[1100:]
        assert len(await vectors.query("acme", unit(1), 1000, None)) == 100
        assert await objects.list("k/", limit=2000) == [f"k/{memory_id}" for memory_id in ids[1100:]]
    finally:
        await close_pair((vectors, objects))


def test_the_prefix_upper_bound_is_the_next_string_in_byte_order() -> None:
    assert prefix_upper_bound("index/t/") == "index/t0"
    assert prefix_upper_bound("a\U0010ffff") == "b"
    assert prefix_upper_bound("a\ud7ff") == "a\ue000"
    assert prefix_upper_bound("\U0010ffff") is None


# --------------------------------------------------------------------------- several writers


async def test_a_write_through_another_connection_reaches_the_next_query(db_path: Path) -> None:
    reader, writer = await open_pair(db_path), await open_pair(db_path)
    try:
        await reader[0].put(memory("old"), axis(0))
        assert [h.memory.id for h in await reader[0].query("acme", axis(1), 1, None)] == ["old"]

        await writer[0].put(memory("new"), axis(1))
        assert [h.memory.id for h in await reader[0].query("acme", axis(1), 1, None)] == ["new"]

        await writer[0].put(note("new", "c1"), axis(1))  # same id, now a conversation note
        assert [h.memory.id for h in await reader[0].query("acme", axis(1), 1, None)] == ["old"]
        assert [h.memory.id for h in await reader[0].query("acme", axis(1), 1, "c1")] == ["new"]

        await writer[0].delete("acme", ["new"])
        assert [h.memory.id for h in await reader[0].query("acme", axis(1), 5, "c1")] == ["old"]
    finally:
        await close_pair(reader)
        await close_pair(writer)


async def test_two_processes_writing_one_file_at_once_lose_nothing(db_path: Path) -> None:
    await close_pair(await open_pair(db_path, "worker-test"))

    run_workers(db_path, "write", ["alpha", "beta"], 200)

    vectors, objects = await open_pair(db_path, "worker-test")
    try:
        ids = [f"{name}-{i}" for name in ("alpha", "beta") for i in range(200)]
        assert len(await vectors.get("shared", ids)) == 400
        assert len(await vectors.query("shared", unit(1), 1000, None)) == 400
        keys = await objects.list("objects/")
        assert len(keys) == 400
        etags = {(await objects.get(key)).etag for key in keys}  # type: ignore[union-attr]
        assert len(etags) == 400
    finally:
        await close_pair((vectors, objects))


async def test_exclusive_excludes_another_store_on_the_same_file(db_path: Path) -> None:
    one, two = await open_pair(db_path), await open_pair(db_path)
    first_inside, release, second_trying, second_inside = (asyncio.Event() for _ in range(4))

    async def first() -> None:
        async with one[0].exclusive("acme"):
            first_inside.set()
            await release.wait()

    async def second() -> None:
        await first_inside.wait()
        second_trying.set()
        async with two[0].exclusive("acme"):
            second_inside.set()

    try:
        tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
        await second_trying.wait()
        for i in range(5):
            await two[0].put(memory(f"m{i}"), unit(1, i))
            await one[0].query("acme", unit(1), 3, None)
        await let_other_tasks_run()
        assert not second_inside.is_set()

        release.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        assert second_inside.is_set()
    finally:
        await close_pair(one)
        await close_pair(two)


async def test_exclusive_waits_while_the_lock_file_is_held_through_filelock(db_path: Path) -> None:
    """The uncontended hold is a bare flock; a holder that took the file through filelock (a
    waiter that came in on the slow path) must still keep it out, and let it in once released."""
    from filelock import FileLock

    vectors, objects = await open_pair(db_path)
    try:
        async with vectors.exclusive("acme"):  # creates the tenant's lock file
            pass
        (lock_file,) = db_path.with_name(db_path.name + ".locks").iterdir()
        held = FileLock(lock_file, thread_local=False, preserve_lock_file=True)
        held.acquire(timeout=5)
        inside = asyncio.Event()

        async def enter() -> None:
            async with vectors.exclusive("acme"):
                inside.set()

        waiter = asyncio.create_task(enter())
        for _ in range(5):
            await vectors.query("acme", unit(1), 1, None)
        await let_other_tasks_run()
        assert not inside.is_set()
        held.release()
        await asyncio.wait_for(waiter, timeout=30)
        assert inside.is_set()
    finally:
        await close_pair((vectors, objects))


async def test_a_memory_and_its_index_key_are_written_together_or_not_at_all(db_path: Path, tmp_path: Path) -> None:
    vectors, objects = await open_pair(db_path)
    other = await open_pair(tmp_path / "other" / "memory.db")
    try:
        await vectors.put_with_index(memory("m0"), unit(0, 0, 1), other[1], "index/acme/m0")  # another file
        assert [m.id for m in await vectors.get("acme", ["m0"])] == ["m0"]
        assert await objects.get("index/acme/m0") is None and await other[1].get("index/acme/m0") is not None

        await vectors.put_with_index(memory("m1"), unit(1), objects, "index/acme/m1")
        assert [m.content for m in await vectors.get("acme", ["m1"])] == ["fact m1"]
        stored = await objects.get("index/acme/m1")
        assert stored is not None and stored.body == ""

        with sqlite3.connect(db_path) as conn:  # the object write now fails inside the transaction
            conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON objects BEGIN SELECT RAISE(ABORT, 'no'); END")
        with pytest.raises(StoreError, match="put memory"):
            await vectors.put_with_index(memory("m2"), unit(0, 1), objects, "index/acme/m2")
        assert await vectors.get("acme", ["m2"]) == []
        assert sorted(h.memory.id for h in await vectors.query("acme", unit(0, 1), 5, None)) == ["m0", "m1"]
        assert await objects.get("index/acme/m2") is None
    finally:
        await close_pair((vectors, objects))
        await close_pair(other)


# --------------------------------------------------------------------------- open_stores


async def test_open_stores_opens_sqlite_at_the_configured_path(db_path: Path) -> None:
    vectors, objects = await open_stores(StoreSection(backend="sqlite", db_path=db_path), "fake-bag-of-words", 64)
    try:
        assert isinstance(vectors, VectorStore) and isinstance(objects, ObjectStore)
        await objects.put("key", "body")
    finally:
        await close_pair((vectors, objects))
    assert dict(rows(db_path)["meta"])["embedding_model"] == "fake-bag-of-words"


async def test_open_stores_refuses_an_unknown_backend_by_name() -> None:
    with pytest.raises(StartupError, match='unknown storage backend "nonexistent"'):
        await open_stores(StoreSection(backend="nonexistent"), "fake-bag-of-words", 64)


def test_importing_the_stores_package_imports_no_backend() -> None:
    probe = (
        "import sys, mcp_memory.stores; "
        "print(sorted(m for m in ('mcp_memory.stores.sqlite.store', 'sqlite3', 'psycopg', 'boto3') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


async def test_giving_up_while_waiting_for_exclusive_does_not_keep_the_lock(db_path: Path) -> None:
    one, two = await open_pair(db_path), await open_pair(db_path)
    holding, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with one[0].exclusive("acme"):
            holding.set()
            await release.wait()

    async def wait_forever() -> None:
        async with two[0].exclusive("acme"):
            pytest.fail("entered while another store held the lock")

    try:
        holder = asyncio.create_task(hold())
        await holding.wait()
        waiter = asyncio.create_task(wait_forever())
        await two[0].query("acme", unit(1), 1, None)  # the waiter is now blocked on the file lock
        await let_other_tasks_run()
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        release.set()
        await holder

        async with asyncio.timeout(30):
            async with two[0].exclusive("acme"):
                pass
            async with one[0].exclusive("acme"):
                pass
    finally:
        await close_pair(one)
        await close_pair(two)


async def test_a_tag_filter_finds_each_tag_however_written_and_only_those(db_path: Path) -> None:
    """The tag filter's substring pre-test (`_tags_start`) never loses a row json_each would keep:
    Korean, quotes and backslashes in tags, tags with no common start, and a row an earlier
    writer stored with ASCII escapes."""
    from mcp_memory.core.model import MemoryFilter

    vectors, objects = await open_pair(db_path)
    try:
        tagged = {
            "k": ("path:문서/가이드.md",),
            "q": ('path:say"hi".txt',),
            "b": ("path:C:\\dir\\x.py",),
            "r": ("rule",),
            "p": ("path:src/", "rule"),
            "n": ("paths",),
        }
        for i, (memory_id, tags) in enumerate(tagged.items()):
            await vectors.put(memory(memory_id, tags=tags), axis(i % DIM))
        conn = sqlite3.connect(db_path)
        conn.execute(
            "UPDATE memories SET tags = ? WHERE id = 'k'", (json.dumps(["path:문서/가이드.md"], ensure_ascii=True),)
        )
        conn.commit()
        conn.close()

        async def found(*tags: str) -> set[str]:
            answer = await vectors.filtered_query("acme", axis(0), 10, None, MemoryFilter(tags=tags))
            return {h.memory.id for h in answer.hits}

        assert await found("path:문서/가이드.md", "path:가이드.md") == {"k"}
        assert await found('path:say"hi".txt') == {"q"}
        assert await found("path:C:\\dir\\x.py") == {"b"}
        assert await found("rule") == {"r", "p"}
        assert await found("path:src/", "path:문서/가이드.md") == {"p", "k"}
        assert await found("rule", "paths") == {"r", "p", "n"}
        assert await found("path:") == set()
    finally:
        await close_pair((vectors, objects))


async def test_a_tag_filter_answers_as_its_sql_does_for_every_conversation_type_time_and_tags(db_path: Path) -> None:
    """The rows a tag filter may match are kept between searches (stores/sqlite/tagged.py); the
    ids it answers from them are those `_filter_sql` selects, for every filter tried."""
    import itertools
    import random

    from mcp_memory.core.model import MemoryFilter
    from mcp_memory.core.timespan import TimeSpan, parse_iso
    from mcp_memory.stores.sqlite.store import _filter_sql

    def day(n: int) -> float:
        return parse_iso(f"2026-12-0{n}T10:00:00.000Z")  # a memory's own time: both ends are inclusive

    def ids_of(conversation: str | None, where: MemoryFilter) -> Callable[[sqlite3.Connection], list[str]]:
        """The ids the store's filtered query scores, as it reads them (before its limit)."""

        def read(conn: sqlite3.Connection) -> list[str]:
            snapshot = vectors._cache.current(conn, "acme")
            return vectors._filtered_ids(conn, "acme", conversation, where, (snapshot.generation, snapshot.purged))

        return read

    rng = random.Random(35)
    pool = ["path:src/a.py", "path:a.py", "path:src/", "path:*.py", "path:문서/", "rule", "paths", "path:b.md"]
    types = ["project", "pattern", "reference"]
    vectors, objects = await open_pair(db_path)
    try:
        for i in range(60):
            tags = tuple(rng.sample(pool, rng.randint(0, 3)))
            fields: dict[str, object] = {"tags": tags, "memory_type": rng.choice(types)}
            fields["created_at"] = f"2026-12-0{1 + i % 6}T10:00:00.000Z"
            if i % 4 == 0:
                fields.update(scope="conversation", conversation=rng.choice(["c1", "c2"]))
            await vectors.put(memory(f"m{i}", **fields), axis(i % DIM))
        conn = sqlite3.connect(db_path)
        tried = answered = 0
        try:
            for size in (1, 2, 4):
                for tags, conversation, kind, span in itertools.product(
                    [tuple(rng.sample(pool, size)) for _ in range(4)],
                    [None, "c1"],
                    [None, "pattern"],
                    [TimeSpan(), TimeSpan(since=day(3)), TimeSpan(until=day(4)), TimeSpan(day(2), day(2))],
                ):
                    where = MemoryFilter(memory_type=kind, tags=tags, span=span)  # type: ignore[arg-type]
                    sql, params = _filter_sql("acme", conversation, where)
                    expected = [row[0] for row in conn.execute(sql, params)]
                    assert await vectors._db.read(ids_of(conversation, where), "test") == expected, (tags, where)
                    answer = await vectors.filtered_query("acme", axis(0), 100, conversation, where)
                    assert {h.memory.id for h in answer.hits} == set(expected)
                    tried, answered = tried + 1, answered + bool(expected)
        finally:
            conn.close()
        assert answered >= tried // 3  # most filters find something: the comparison is not of empties
        assert vectors._tagged._entries  # and the kept rows answered them
    finally:
        await close_pair((vectors, objects))


async def test_a_path_tag_another_process_writes_after_a_lookup_is_found_by_the_next_and_gone_once_forgotten(
    db_path: Path,
) -> None:
    from mcp_memory.core.model import MemoryFilter

    reader = await open_pair(db_path)
    writer = await open_pair(db_path)
    where = MemoryFilter(tags=("path:src/billing/refund.py", "path:refund.py", "path:src/"))

    async def found() -> set[str]:
        answer = await reader[0].filtered_query("acme", axis(0), 10, None, where)
        return {h.memory.id for h in answer.hits}

    try:
        await writer[0].put(memory("other", tags=("path:docs/",)), axis(1))
        assert await found() == set()
        await writer[0].put(memory("refund", tags=("path:refund.py",)), axis(2))
        assert await found() == {"refund"}
        await writer[0].delete("acme", ["refund"])
        assert await found() == set()
    finally:
        await close_pair(reader)
        await close_pair(writer)


async def test_a_warmed_store_answers_a_path_tag_lookup_from_the_rows_it_read_at_warm_up(db_path: Path) -> None:
    """serve-stdio's warm-up reads the `path:`-tagged rows (`warm_tags`): the first file's lookup
    reads none. Shown by a row changed behind the store's back (no new version): the lookup
    answers from what the warm-up read, and an ordinary write makes it read them again."""
    from mcp_memory.core.model import MemoryFilter

    vectors, objects = await open_pair(db_path)
    where = MemoryFilter(tags=("path:src/billing/refund.py", "path:refund.py", "path:src/"))
    try:
        await vectors.put(memory("refund", tags=("path:refund.py",)), axis(0))
        await vectors.put(memory("later"), axis(1))
        await vectors.warm_tags("acme", ["path:"])
        conn = sqlite3.connect(db_path)
        conn.execute("UPDATE memories SET tags = ? WHERE id = 'later'", (json.dumps(["path:src/"]),))
        conn.commit()
        conn.close()

        async def found() -> set[str]:
            answer = await vectors.filtered_query("acme", axis(0), 10, None, where)
            return {h.memory.id for h in answer.hits}

        assert await found() == {"refund"}
        await vectors.put(memory("third"), axis(2))
        assert await found() == {"refund", "later"}
    finally:
        await close_pair((vectors, objects))


async def test_a_tag_more_memories_hold_than_are_kept_is_still_found_in_every_one(db_path: Path) -> None:
    from mcp_memory.core.model import MemoryFilter

    vectors, objects = await open_pair(db_path)
    vectors._tagged.rows_max = 3
    try:
        for i in range(5):
            await vectors.put(memory(f"p{i}", tags=(f"path:f{i}.py", "path:src/")), axis(i % DIM))
        answer = await vectors.filtered_query("acme", axis(0), 10, None, MemoryFilter(tags=("path:src/",)))
        assert sorted(h.memory.id for h in answer.hits) == ["p0", "p1", "p2", "p3", "p4"]
    finally:
        await close_pair((vectors, objects))
