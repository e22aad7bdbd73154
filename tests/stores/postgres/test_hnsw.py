"""A large PostgreSQL tenant is searched through an HNSW index of its own (docs/storage.md#large-tenants):
built in the background once the tenant reaches POSTGRES_HNSW_MIN_MEMORIES, found valid (or built
again) at start-up, and never trusted to fill an answer it cannot: when visibility or a filter leaves
the index walk with fewer memories than asked for, the exact scan answers. Small stores, small
thresholds: the same code paths a tenant of a million takes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from mcp_memory.core.ids import iso
from mcp_memory.core.model import Memory, MemoryFilter
from mcp_memory.core.timespan import TimeSpan
from mcp_memory.stores.postgres.ann import index_name
from mcp_memory.stores.postgres.store import PgVectorStore, open_postgres
from tests.support import pg_support

DIM = 16


def unit_rows(count: int, seed: int = 4) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def memory(n: int, tenant: str = "big", **fields: Any) -> Memory:
    return Memory(id=f"m{n:04d}", tenant=tenant, content=f"fact number {n}", **fields)


async def opened(url: str, minimum: int = 50, ef_search: int = 10, recall: bool = True) -> tuple[PgVectorStore, Any]:
    """A store whose large tenants get their index; with `recall`, recall ranks through it too
    (POSTGRES_HNSW_RECALL), so `query` and `filtered_query` take the index path these tests are about."""
    return await open_postgres(
        url, model="test-model", dim=DIM, hnsw_min_memories=minimum, hnsw_ef_search=ef_search, hnsw_recall=recall
    )


def index_state(url: str, tenant: str) -> bool | None:
    """In the schema `url` selects (its current_schema()): True: valid; False: present but invalid; None: absent."""
    found = pg_support.rows(
        url,
        "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(quote_ident(current_schema()) || '.' || %s)",
        (f'"{index_name(tenant)}"',),
    )
    return None if not found else bool(found[0][0])


def plan(url: str, statement: str, settings: str, params: Sequence[Any]) -> str:
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        if settings:
            conn.execute(settings)
        text = statement.replace("%b", "%s::vector")
        return "\n".join(row[0] for row in conn.execute("EXPLAIN " + text, params).fetchall())


def exact_ids(embeddings: np.ndarray, query: np.ndarray, allowed: Sequence[int], k: int) -> list[str]:
    scores = embeddings[list(allowed)] @ query
    order = np.argsort(-scores, kind="stable")[:k]
    return sorted(f"m{list(allowed)[i]:04d}" for i in order)


async def test_a_tenant_that_reaches_the_threshold_gets_its_own_index_and_a_smaller_one_does_not(pg_url: str) -> None:
    vectors, objects = await opened(pg_url)
    try:
        rows = unit_rows(80)
        await vectors.put_many([(memory(n), rows[n]) for n in range(60)])
        await vectors.put_many([(memory(n, tenant="small"), rows[n]) for n in range(20)])
        await vectors.ann.settled()
        assert vectors.ann.ready("big") and not vectors.ann.ready("small")
        assert index_state(pg_url, "big") is True and index_state(pg_url, "small") is None
        # Its answers are the exact scan's (a graph of 60 points misses nothing).
        for n in (0, 17, 59):
            hits = await vectors.query("big", rows[n], 5, None)
            assert sorted(h.memory.id for h in hits) == exact_ids(rows[:60], rows[n], range(60), 5)
            assert hits and max(hits, key=lambda h: h.similarity).memory.id == f"m{n:04d}"
    finally:
        await vectors.close()
        await objects.close()


async def test_by_default_recall_ranks_by_the_exact_scan_and_the_duplicate_check_walks_the_index(pg_url: str) -> None:
    # A walk of one candidate (ef_search 1) stops at the first local minimum of a graph of 400
    # points, so for some queries its nearest is not the exact scan's: those show which path ran.
    rows = unit_rows(400, seed=8)
    queries = unit_rows(200, seed=9)
    vectors, objects = await opened(pg_url, ef_search=1, recall=False)
    try:
        await vectors.put_many([(memory(n), rows[n]) for n in range(400)])
        assert await vectors.ann.ensure("big")
        walked_elsewhere = 0
        for q in queries:
            exact = exact_ids(rows, q, range(400), 1)
            ranked = [h.memory.id for h in await vectors.query("big", q, 1, None)]
            near = [h.memory.id for h in await vectors.near("big", q, 1, None)]
            filtered = await vectors.filtered_query("big", q, 1, None, MemoryFilter())
            assert ranked == exact and [h.memory.id for h in filtered.hits] == exact
            assert len(near) == 1
            walked_elsewhere += near != exact
        assert walked_elsewhere > 0
    finally:
        await vectors.close()
        await objects.close()
    # With POSTGRES_HNSW_RECALL, recall ranks through the same walk.
    vectors, objects = await opened(pg_url, ef_search=1, recall=True)
    try:
        assert vectors.ann.ready("big")
        for q in queries[:50]:
            ranked = [h.memory.id for h in await vectors.query("big", q, 1, None)]
            assert ranked == [h.memory.id for h in await vectors.near("big", q, 1, None)]
    finally:
        await vectors.close()
        await objects.close()


async def test_when_visibility_leaves_the_duplicate_checks_walk_short_the_exact_scan_answers(pg_url: str) -> None:
    vectors, objects = await opened(pg_url, ef_search=10, recall=False)
    try:
        rows = unit_rows(200)
        items = [(memory(n), rows[n]) for n in range(10)]
        items += [(memory(n, scope="conversation", conversation="other"), rows[n]) for n in range(10, 200)]
        await vectors.put_many(items)
        assert await vectors.ann.ensure("big")
        hits = await vectors.near("big", rows[150], 10, None)
        assert sorted(h.memory.id for h in hits) == [f"m{n:04d}" for n in range(10)]
    finally:
        await vectors.close()
        await objects.close()


async def test_the_index_query_walks_the_index_and_the_exact_scan_never_does(pg_url: str) -> None:
    vectors, objects = await opened(pg_url)
    try:
        rows = unit_rows(60)
        await vectors.put_many([(memory(n), rows[n]) for n in range(60)])
        assert await vectors.ann.ensure("big")
        params = (str(rows[3].tolist()), "big", None, None, 5)
        assert index_name("big") in plan(pg_url, vectors._approximate, vectors.ann.settings, params)
        # Even with the planner pushed towards the index, the exact statement scans and sorts.
        exact = plan(pg_url, vectors._query, vectors.ann.settings, params)
        assert index_name("big") not in exact and "Sort" in exact
    finally:
        await vectors.close()
        await objects.close()


async def test_when_visibility_leaves_the_index_walk_short_the_exact_scan_answers(pg_url: str) -> None:
    # 10 project memories among 190 notes of another conversation: a walk of 10 candidates finds
    # few the caller may see, so the store answers from the exact scan, all 10 of them.
    vectors, objects = await opened(pg_url, ef_search=10)
    try:
        rows = unit_rows(200)
        items = [(memory(n), rows[n]) for n in range(10)]
        items += [(memory(n, scope="conversation", conversation="other"), rows[n]) for n in range(10, 200)]
        await vectors.put_many(items)
        assert await vectors.ann.ensure("big")
        query = rows[150]
        hits = await vectors.query("big", query, 10, None)
        assert sorted(h.memory.id for h in hits) == [f"m{n:04d}" for n in range(10)]
        # The conversation itself sees its own notes through the index, nearest first.
        own = await vectors.query("big", query, 3, "other")
        assert "m0150" in {h.memory.id for h in own}
    finally:
        await vectors.close()
        await objects.close()


async def test_a_rare_tag_is_found_by_the_exact_scan_when_the_index_walk_holds_none_of_it(pg_url: str) -> None:
    vectors, objects = await opened(pg_url, ef_search=10)
    try:
        rows = unit_rows(200)
        query = rows[0]
        far = [int(i) for i in np.argsort(rows @ query)[:3]]  # the three memories farthest from the query
        items = [(memory(n, tags=("rare",) if n in far else ("common",)), rows[n]) for n in range(200)]
        await vectors.put_many(items)
        assert await vectors.ann.ensure("big")
        answer = await vectors.filtered_query("big", query, 5, None, MemoryFilter(None, ("rare",)))
        assert sorted(h.memory.id for h in answer.hits) == sorted(f"m{n:04d}" for n in far)
        decisions = await vectors.filtered_query("big", query, 5, None, MemoryFilter("decision", ()))
        assert decisions.hits == []
    finally:
        await vectors.close()
        await objects.close()


async def test_a_time_span_few_memories_fall_in_is_answered_by_the_exact_scan(pg_url: str) -> None:
    # Memory n was stored at minute n; since minute 195 holds five memories, none near the query.
    vectors, objects = await opened(pg_url, ef_search=10)
    try:
        rows = unit_rows(200)
        start = 1_780_000_000_000
        query = rows[0]
        order = [int(i) for i in np.argsort(rows @ query)]  # farthest first
        at = {n: start + 60_000 * rank for rank, n in enumerate(reversed(order))}  # nearest stored first
        items = [(memory(n, created_at=iso(at[n])), rows[n]) for n in range(200)]
        await vectors.put_many(items)
        assert await vectors.ann.ensure("big")
        span = TimeSpan(since=start + 60_000 * 195)
        answer = await vectors.filtered_query("big", query, 10, None, MemoryFilter(span=span))
        assert sorted(h.memory.id for h in answer.hits) == sorted(f"m{n:04d}" for n in order[:5])
    finally:
        await vectors.close()
        await objects.close()


async def test_a_restart_finds_the_valid_index_and_builds_an_invalid_one_again(pg_url: str) -> None:
    vectors, objects = await opened(pg_url)
    rows = unit_rows(60)
    try:
        await vectors.put_many([(memory(n), rows[n]) for n in range(60)])
        await vectors.ann.settled()
    finally:
        await vectors.close()
        await objects.close()
    vectors, objects = await opened(pg_url)
    try:
        assert vectors.ann.ready("big")  # read at start-up, no build needed
    finally:
        await vectors.close()
        await objects.close()
    # An interrupted CREATE INDEX CONCURRENTLY leaves the index invalid: never used, rebuilt.
    with pg_support.connect(pg_url) as conn:
        conn.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass(%s)", (f'"{index_name("big")}"',)
        )
    vectors, objects = await opened(pg_url)
    try:
        assert not vectors.ann.ready("big")
        await vectors.ann.settled()
        assert vectors.ann.ready("big") and index_state(pg_url, "big") is True
        hits = await vectors.query("big", rows[9], 1, None)
        assert [h.memory.id for h in hits] == ["m0009"]
    finally:
        await vectors.close()
        await objects.close()


async def test_a_deployment_in_its_own_schema_builds_its_own_index_for_a_tenant_public_has_one_for(
    pg_admin_url: str,
) -> None:
    """docs/backends.md: deployments in other schemas of one database, each with its own tables.
    The recommended path `<schema>,public` reaches public, so the look for a tenant's index is made
    in the deployment's own schema: found through the path, public's index of a tenant of the same
    name was taken as built, and the deployment's own tenant never got one (its walks scanned)."""
    rows = unit_rows(60)
    with pg_support.fresh_database(pg_admin_url) as database:
        with pg_support.connect(database) as conn:
            conn.execute("CREATE SCHEMA team_b")
        team_b = pg_support.in_schema(database, "team_b")
        vectors, objects = await opened(database)  # the default path: public
        try:
            await vectors.put_many([(memory(n), rows[n]) for n in range(60)])
            await vectors.ann.settled()
            assert vectors.ann.ready("big") and index_state(database, "big") is True
        finally:
            await vectors.close()
            await objects.close()
        vectors, objects = await opened(team_b)
        try:
            await vectors.put_many([(memory(n), rows[n]) for n in range(60)])
            await vectors.ann.settled()
            assert vectors.ann.ready("big") and index_state(team_b, "big") is True
            params = (str(rows[3].tolist()), "big", None, None, 5)
            assert index_name("big") in plan(team_b, vectors._approximate, vectors.ann.settings, params)
            hits = await vectors.query("big", rows[3], 1, None)
            assert [h.memory.id for h in hits] == ["m0003"]
        finally:
            await vectors.close()
            await objects.close()
        built = pg_support.rows(
            database,
            "SELECT schemaname, tablename FROM pg_indexes WHERE indexname = %s ORDER BY 1",
            (index_name("big"),),
        )
        assert built == [("public", "memories"), ("team_b", "memories")]


async def test_a_threshold_of_zero_never_builds_an_index(pg_url: str) -> None:
    vectors, objects = await opened(pg_url, minimum=0)
    try:
        rows = unit_rows(60)
        await vectors.put_many([(memory(n), rows[n]) for n in range(60)])
        assert not await vectors.ann.ensure("big")
        assert index_state(pg_url, "big") is None
        hits = await vectors.query("big", rows[5], 1, None)
        assert [h.memory.id for h in hits] == ["m0005"]
    finally:
        await vectors.close()
        await objects.close()


async def test_a_process_starts_while_a_large_tenants_index_is_being_built(pg_url: str) -> None:

    vectors, objects = await opened(pg_url, minimum=0)
    await vectors.close()
    await objects.close()
    # CREATE INDEX CONCURRENTLY holds SHARE UPDATE EXCLUSIVE on memories for the whole build
    with psycopg.connect(pg_url) as building:
        building.execute("LOCK TABLE memories IN SHARE UPDATE EXCLUSIVE MODE")

        vectors, objects = await asyncio.wait_for(opened(pg_url, minimum=0), timeout=20)
        await vectors.put(memory(1), unit_rows(1)[0])  # and writes while it builds

        assert [h.memory.id for h in await vectors.query("big", unit_rows(1)[0], 1, None)] == ["m0001"]
        building.rollback()
    await vectors.close()
    await objects.close()


async def test_several_large_tenants_at_start_up_all_get_their_index_one_build_at_a_time(pg_url: str) -> None:
    # Issue 36, defect 9: two CREATE INDEX CONCURRENTLY on one table wait for each other's
    # transactions ("deadlock detected"); the tenant whose build lost stayed on the exact scan
    # until its next write. Builds of one table are now one at a time, across processes too.
    tenants = [f"tenant-{i}" for i in range(4)]
    rows = unit_rows(60)
    vectors, objects = await opened(pg_url, minimum=0)
    try:
        for tenant in tenants:
            await vectors.put_many([(memory(n, tenant=tenant), rows[n]) for n in range(60)])
    finally:
        await vectors.close()
        await objects.close()
    first, first_objects = await opened(pg_url)
    second, second_objects = await opened(pg_url)  # another replica starting at the same moment
    try:
        await asyncio.gather(first.ann.settled(), second.ann.settled())
        for store in (first, second):
            assert [t for t in tenants if not store.ann.ready(t)] == []
        assert [index_state(pg_url, t) for t in tenants] == [True] * 4
    finally:
        for closing in (first, first_objects, second, second_objects):
            await closing.close()
