"""Rows found by a search are kept between searches, and never outlive a write to their tenant."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_memory.core.model import Memory
from mcp_memory.stores.sqlite import store as sqlite_module
from mcp_memory.stores.sqlite.row_cache import RowCache
from tests.stores.sqlite.test_sqlite import close_pair, open_pair
from tests.stores.test_contract import axis, memory


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def fetched(monkeypatch) -> list[list[str]]:
    """The ids each row read from SQLite asked for."""
    calls: list[list[str]] = []
    real = sqlite_module._fetch

    def counting(conn, tenant, ids):
        calls.append(sorted(ids))
        return real(conn, tenant, ids)

    monkeypatch.setattr(sqlite_module, "_fetch", counting)
    return calls


async def test_a_repeated_search_of_an_unchanged_tenant_reads_no_rows_again(db_path, fetched) -> None:
    pair = await open_pair(db_path)
    try:
        await pair[0].put(memory("a"), axis(0))
        await pair[0].put(memory("b"), axis(1))

        first = await pair[0].query("acme", axis(0), 2, None)
        second = await pair[0].query("acme", axis(0), 2, None)

        assert [h.memory for h in second] == [h.memory for h in first]
        assert fetched == [["a", "b"]]
    finally:
        await close_pair(pair)


async def test_a_rewrite_by_another_process_is_seen_by_the_next_search(db_path, fetched) -> None:
    reader, writer = await open_pair(db_path), await open_pair(db_path)
    try:
        await writer[0].put(memory("a"), axis(0))
        assert [h.memory.content for h in await reader[0].query("acme", axis(0), 1, None)] == ["fact a"]

        await writer[0].put(Memory(id="a", tenant="acme", content="rewritten", tags=("x",)), axis(0))
        (hit,) = await reader[0].query("acme", axis(0), 1, None)

        assert (hit.memory.content, hit.memory.tags) == ("rewritten", ("x",))
        assert fetched[-1] == ["a"]  # read again: the tenant's version moved
    finally:
        await close_pair(reader)
        await close_pair(writer)


async def test_a_memory_deleted_by_another_process_is_not_returned_from_the_cache(db_path) -> None:
    reader, writer = await open_pair(db_path), await open_pair(db_path)
    try:
        await writer[0].put(memory("a"), axis(0))
        await writer[0].put(memory("b"), axis(1))
        assert {h.memory.id for h in await reader[0].query("acme", axis(0), 2, None)} == {"a", "b"}

        await writer[0].delete("acme", ["a"])

        assert [h.memory.id for h in await reader[0].query("acme", axis(0), 2, None)] == ["b"]
    finally:
        await close_pair(reader)
        await close_pair(writer)


async def test_one_tenants_cached_rows_never_answer_another_tenants_search(db_path) -> None:
    pair = await open_pair(db_path)
    try:
        await pair[0].put(memory("same-id", tenant="acme"), axis(0))
        await pair[0].put(Memory(id="same-id", tenant="globex", content="globex's fact"), axis(0))
        await pair[0].query("acme", axis(0), 1, None)

        (hit,) = await pair[0].query("globex", axis(0), 1, None)

        assert (hit.memory.tenant, hit.memory.content) == ("globex", "globex's fact")
    finally:
        await close_pair(pair)


def test_the_cache_keeps_the_most_recently_used_rows_within_its_row_and_byte_bounds() -> None:
    rows = RowCache(max_rows=3, max_bytes=10_000)
    version = (1, 0)
    rows.put_many("acme", version, [memory(i) for i in "abc"])
    rows.get_many("acme", version, ["a"])  # a is now the most recently used

    rows.put_many("acme", version, [memory("d")])

    found, missing = rows.get_many("acme", version, ["a", "b", "c", "d"])
    assert sorted(found) == ["a", "c", "d"] and missing == ["b"]

    rows.put_many("acme", version, [Memory(id="big", tenant="acme", content="x" * 20_000)])
    assert len(rows) == 0  # larger than the whole budget: nothing stays


def test_an_entry_read_at_another_version_of_its_tenant_is_a_miss() -> None:
    rows = RowCache()
    rows.put_many("acme", (1, 0), [memory("a")])

    assert rows.get_many("acme", (2, 0), ["a"]) == ({}, ["a"])
    assert rows.get_many("acme", (1, 1), ["a"]) == ({}, ["a"])
    assert list(rows.get_many("acme", (1, 0), ["a", "a"])[0]) == ["a"]
