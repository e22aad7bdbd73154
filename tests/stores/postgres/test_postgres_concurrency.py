"""PostgreSQL shared by several replicas: boots that race, remembers that race,
and `exclusive(tenant)` across stores and processes without starving its own pool."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.stores.postgres.store import open_postgres
from tests.stores.postgres.test_postgres import close_pair, open_pair
from tests.stores.test_contract import let_other_tasks_run, memory, unit
from tests.support import pg_support

REPO = Path(__file__).resolve().parents[3]


def run_workers(url: str, mode: str, workers: int, count: int) -> list[int]:
    """Start `workers` OS processes, release them together, and return what each reported."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.support.pg_worker", url, mode, str(count)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(workers)
    ]
    reports = []
    try:
        for proc in procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                _, err = proc.communicate(timeout=60)
                pytest.fail(f"a worker failed before the start:\n{err}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, f"a worker failed:\n{err}"
            reports.append(int(out.split()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return reports


async def until_a_session_waits_for_an_advisory_lock(url: str) -> None:
    """Poll pg_locks until some session of this database waits for an advisory lock."""
    async with asyncio.timeout(30):
        while not pg_support.rows(
            url,
            "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        ):
            await asyncio.sleep(0.01)


def test_five_processes_starting_at_once_on_an_empty_database_create_one_schema(pg_admin_url: str) -> None:
    with pg_support.fresh_database(pg_admin_url) as url:
        run_workers(url, "open", workers=5, count=0)

        assert pg_support.rows(url, "SELECT count(*) FROM pg_extension WHERE extname = 'vector'") == [(1,)]
        tables = pg_support.rows(
            url, "SELECT tablename FROM pg_tables WHERE tablename IN ('memories', 'objects') ORDER BY 1"
        )
        assert tables == [("memories",), ("objects",)]
        assert pg_support.rows(url, "SELECT key, value FROM mcp_memory_meta ORDER BY key") == [
            ("embedding_dim", "64"),
            ("embedding_model", "fake-bag-of-words"),
            ("schema_version", "3"),
        ]


def test_two_processes_racing_identical_remembers_leave_one_memory(pg_url: str) -> None:
    created = run_workers(pg_url, "remember", workers=2, count=3)

    assert sum(created) == 1
    assert pg_support.count(pg_url, "memories") == 1
    assert len(pg_support.rows(pg_url, "SELECT key FROM objects WHERE starts_with(key, 'index/shared/')")) == 1


async def test_more_concurrent_remembers_than_connections_all_finish(pg_url: str) -> None:
    """Two statement connections and one lock connection for 40 remembers over 8 tenants:
    holders of the lock must never wait for a connection a waiter is sitting on."""
    embedder = FakeEmbedder()
    vectors, objects = await open_postgres(
        pg_url, model=embedder.model, dim=embedder.dim, pool_size=2, lock_connections=1, timeout=60
    )
    counters = AccessCounters(objects, pod_id="test", log=NullLog())
    service = MemoryService(vectors, objects, embedder, counters, floor=0.3)
    tenants = [f"tenant-{i}" for i in range(8)]
    try:
        results = await asyncio.wait_for(
            asyncio.gather(
                *(
                    service.remember(Caller(tenant), f"Deploy windows for {tenant} close at noon sharp")
                    for tenant in tenants
                    for _ in range(5)
                )
            ),
            timeout=120,
        )
    finally:
        await service.close()

    assert sum(r.created for r in results) == len(tenants)
    assert pg_support.count(pg_url, "memories") == len(tenants)


async def test_exclusive_excludes_another_store_on_the_same_database(pg_url: str) -> None:
    one, two = await open_pair(pg_url), await open_pair(pg_url)
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
        for i in range(5):  # the store's own statements still run while the lock is held
            await two[0].put(memory(f"m{i}"), unit(1, i))
            await one[0].query("acme", unit(1), 3, None)
        await until_a_session_waits_for_an_advisory_lock(pg_url)
        await let_other_tasks_run()
        assert not second_inside.is_set()

        release.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        assert second_inside.is_set()
    finally:
        await close_pair(one)
        await close_pair(two)


async def test_giving_up_while_waiting_for_exclusive_does_not_keep_the_lock(pg_url: str) -> None:
    one, two = await open_pair(pg_url), await open_pair(pg_url)
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
        await until_a_session_waits_for_an_advisory_lock(pg_url)
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


async def test_an_error_inside_exclusive_releases_the_lock(pg_url: str) -> None:
    one, two = await open_pair(pg_url), await open_pair(pg_url)
    try:
        with pytest.raises(RuntimeError, match="boom"):
            async with one[0].exclusive("acme"):
                raise RuntimeError("boom")
        async with asyncio.timeout(30):
            async with two[0].exclusive("acme"):
                pass
    finally:
        await close_pair(one)
        await close_pair(two)


@pytest.mark.parametrize("tenant_count", [1, 6])
async def test_many_exclusive_sections_on_a_tiny_pool_never_deadlock(pg_url: str, tenant_count: int) -> None:
    vectors, objects = await open_pair(pg_url, pool_size=1, lock_connections=2, timeout=60)

    async def section(tenant: str, i: int) -> None:
        async with vectors.exclusive(tenant):
            await vectors.query(tenant, unit(1), 5, None)
            await vectors.put(memory(f"m{i}", tenant), unit(1, i))
            await objects.put(f"index/{tenant}/{i}", "")

    try:
        await asyncio.wait_for(asyncio.gather(*(section(f"t{i % tenant_count}", i) for i in range(24))), timeout=120)
        assert pg_support.count(pg_url, "memories") == 24
    finally:
        await close_pair((vectors, objects))


async def test_one_process_holds_at_most_ten_statement_and_four_lock_connections(pg_url: str) -> None:
    """docs/backends.md: "Each process keeps at most 10 connections for statements and 4 for those locks"
    (what an operator sizes max_connections by), however many calls run at once."""
    import threading

    from psycopg.conninfo import make_conninfo

    name = f"mcpm-cap-{id(pg_url) % 100_000}"
    url = make_conninfo(pg_url, application_name=name)
    embedder = FakeEmbedder()
    vectors, objects = await open_postgres(url, model=embedder.model, dim=embedder.dim, timeout=60)
    counters = AccessCounters(objects, pod_id="test", log=NullLog())
    service = MemoryService(vectors, objects, embedder, counters, floor=0.3)
    peak, done = [0], threading.Event()

    def sample() -> None:
        with pg_support.connect(pg_url) as conn:
            while not done.is_set():
                held = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,))
                peak[0] = max(peak[0], int(held.fetchone()[0]))  # type: ignore[index]

    sampler = threading.Thread(target=sample)
    sampler.start()
    tenants = [f"tenant-{i}" for i in range(16)]
    try:
        for _ in range(3):
            await asyncio.wait_for(
                asyncio.gather(
                    *(
                        service.remember(Caller(t), f"Deploy windows for {t} close at noon w{n:03d}x")
                        for t in tenants
                        for n in range(6)
                    ),
                    *(service.recall(Caller(t), "when do deploy windows close?") for t in tenants for _ in range(6)),
                ),
                timeout=120,
            )
    finally:
        done.set()
        sampler.join()
        await service.close()
    assert pg_support.count(pg_url, "memories") == 16 * 6
    assert 2 <= peak[0] <= 10 + 4
