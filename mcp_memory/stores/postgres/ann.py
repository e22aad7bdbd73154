"""Approximate nearest neighbours for large tenants: one partial HNSW index per tenant (docs/storage.md#large-tenants).

Below `POSTGRES_HNSW_MIN_MEMORIES` memories a tenant is searched by the exact scan. A tenant that
reaches it gets its own index, `CREATE INDEX CONCURRENTLY … USING hnsw (embedding) WHERE tenant_id
= '<tenant>'`, built in the background without blocking writes; until it is valid every query
stays exact. The builds of one table run one at a time, across replicas too: two concurrent
builds on one table wait for each other's snapshots, and PostgreSQL ended one with "deadlock
detected" (issue 36). A process that finds the table's build lock taken asks again after a
pause, so every large tenant gets its index without waiting for a write. The index is partial so the walk
never spends its candidates on other tenants' rows, and small tenants keep their exact scan.
What walks it: the closeness questions (`VectorStore.near`: remember's duplicate check, a
memory's neighbours) always; recall's ranking only when `ranks` (POSTGRES_HNSW_RECALL).

pgvector 0.6 has no iterative scan: an index walk returns at most `hnsw.ef_search` rows, and the
visibility, type, tag and time conditions are applied to those. The store asks for its `top_k`
with those conditions in the same statement; when fewer come back than it asked for, it runs the
exact scan instead (stores/postgres/store.py), so a filter never empties an answer the exact scan
would have filled. Quality against the exact scan: bench/RESULTS.md, "PostgreSQL's HNSW index:
why its recall was low, and the duplicate check through it".

At start-up every process reads which tenants are large and which of their indexes are valid
(a failed concurrent build leaves an invalid one: it is dropped and built again), and builds the
missing ones in the background. While serving, a process counts its writes per tenant and checks
again every CHECK_EVERY of them, so a tenant that grows past the threshold gets its index.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from collections import Counter
from typing import Any

import psycopg

from mcp_memory.stores.postgres.db import PostgresDatabase

__all__ = ["DEFAULT_MIN_MEMORIES", "EF_SEARCH", "AnnIndexes", "index_name", "walk_settings"]

#: A tenant this large gets its HNSW index (POSTGRES_HNSW_MIN_MEMORIES; 0: never). Where the exact
#: scan starts to cost a remember several times its small-tenant time, and where the walk was
#: measured to find the duplicate check's neighbours as the exact scan does (docs/storage.md#large-tenants).
DEFAULT_MIN_MEMORIES = 100_000
#: Candidates an index walk keeps (pgvector's hnsw.ef_search): the over-fetch, and the most rows
#: one walk can return before the visibility and filter conditions.
EF_SEARCH = 200
#: The graph's build parameters (m, ef_construction): above pgvector's defaults (16, 64), which
#: left memories written after the build harder to reach (bench/RESULTS.md, issue 27's HNSW section).
M, EF_CONSTRUCTION = 32, 200
#: A process checks a tenant's size again after this many of its own writes to it.
CHECK_EVERY = 1000
#: maintenance_work_mem of a build: pgvector builds in memory while the graph fits (about 2 kB a
#: memory of 384 dimensions), far slower beyond.
BUILD_MEMORY = "1GB"
#: Pauses (seconds) between a process's tries for the table's build lock while another builds:
#: not a waiting statement, whose open snapshot the running build would wait for in turn.
LOCK_RETRY, LOCK_RETRY_MAX = 0.05, 2.0
PREFIX = "memories_hnsw_"


def index_name(tenant: str) -> str:
    """The tenant's index: a hash, since a tenant id is not an identifier."""
    return PREFIX + hashlib.sha256(tenant.encode()).hexdigest()[:20]


def walk_settings(ef_search: int) -> str:
    """Sent before each index query, in its transaction: the walk's candidates, and a plan that
    walks the index (the planner would scan and sort a small tenant, or one it has no statistics
    for yet, and the statement must mean the index walk at every size)."""
    return (
        f"SET LOCAL hnsw.ef_search = {max(1, int(ef_search))}; "
        "SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off"
    )


def _lock_key(namespace: str) -> int:
    """The build lock of the namespace's memories table (one build at a time on it)."""
    digest = hashlib.sha256(f"mcp-memory/hnsw/{namespace}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class AnnIndexes:
    """Which tenants have a valid HNSW index, and the background work that builds them."""

    def __init__(
        self,
        db: PostgresDatabase,
        vector_schema: str,
        min_memories: int,
        ef_search: int = EF_SEARCH,
        ranks: bool = False,
    ) -> None:
        self._db = db
        #: Whether recall's ranking goes through the index too (POSTGRES_HNSW_RECALL); the
        #: closeness questions (`VectorStore.near`) always do where a tenant has one.
        self.ranks = ranks
        self.settings = walk_settings(ef_search)
        self._opclass = f"{_quoted(vector_schema)}.vector_cosine_ops"
        self.min_memories = max(0, min_memories)
        self.build_memory = BUILD_MEMORY
        self.m, self.ef_construction = M, EF_CONSTRUCTION
        self._ready: set[str] = set()
        self._written: Counter[str] = Counter()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._building = asyncio.Lock()  # this process's builds, one at a time
        self._closed = False

    @property
    def enabled(self) -> bool:
        return self.min_memories > 0

    def ready(self, tenant: str) -> bool:
        """Whether `tenant`'s queries may go through its index."""
        return tenant in self._ready

    # ------------------------------------------------------------------ start-up

    async def start(self) -> None:
        """Read the valid indexes and the large tenants; build what is missing in the background."""
        if not self.enabled:
            return
        rows = await self._db.fetch(
            "check the HNSW indexes",
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE i.indrelid = to_regclass(quote_ident(current_schema()) || '.memories') AND c.relname LIKE %s",
            (PREFIX + "%",),
        )
        valid = {str(name) for name, ok in rows if ok}
        for tenant in await self._large_tenants():
            if index_name(tenant) in valid:
                self._ready.add(tenant)
            else:
                self._schedule(tenant)

    async def _large_tenants(self) -> list[str]:
        # The planner's row estimate first: a table smaller than the threshold has no large tenant,
        # and is not counted row by row at every start.
        rows = await self._db.fetch(
            "count memories",
            "SELECT reltuples::bigint FROM pg_class "
            "WHERE oid = to_regclass(quote_ident(current_schema()) || '.memories')",
        )
        estimate = int(rows[0][0]) if rows else 0
        if 0 <= estimate < self.min_memories // 2:  # -1: never analysed, so not known to be small
            return []
        rows = await self._db.fetch(
            "count memories",
            "SELECT tenant_id FROM memories GROUP BY tenant_id HAVING count(*) >= %s",
            (self.min_memories,),
        )
        return [str(row[0]) for row in rows]

    # ------------------------------------------------------------------ growth

    def wrote(self, tenant: str, count: int) -> None:
        """`count` memories were written to `tenant`: check its size now and then."""
        if not self.enabled or self._closed or tenant in self._ready:
            return
        before = self._written[tenant]
        self._written[tenant] = before + count
        if before == 0 or (before + count) // CHECK_EVERY > before // CHECK_EVERY:
            self._schedule(tenant)

    def _schedule(self, tenant: str) -> None:
        if self._closed or tenant in self._tasks:
            return
        task = asyncio.get_running_loop().create_task(self._check(tenant), name=f"mcp-memory-hnsw-{index_name(tenant)}")
        self._tasks[tenant] = task
        task.add_done_callback(lambda _: self._tasks.pop(tenant, None))

    async def ensure(self, tenant: str) -> bool:
        """Check `tenant` now and build its index if it is large enough; True when it is ready."""
        if not self.enabled:
            return False
        task = self._tasks.get(tenant)
        if task is not None:
            await asyncio.shield(task)
        else:
            await self._check(tenant)
        return self.ready(tenant)

    async def settled(self) -> None:
        """Wait for the checks and builds under way (tests; an operator's script)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)

    async def _check(self, tenant: str) -> None:
        try:
            rows = await self._db.fetch(
                "count memories",
                "SELECT count(*) FROM (SELECT 1 FROM memories WHERE tenant_id = %s LIMIT %s) AS held",
                (tenant, self.min_memories),
            )
            if rows and int(rows[0][0]) >= self.min_memories:
                await self._build(tenant)
        except Exception as exc:  # a failed build is retried at the next check; queries stay exact
            print(f"mcp-memory: the HNSW index of a large tenant was not built: {exc}", file=sys.stderr)

    async def _build(self, tenant: str) -> None:
        """CREATE INDEX CONCURRENTLY on a connection of its own (not in a transaction), one build
        of the table at a time; an invalid leftover of an interrupted build is dropped first, and
        an index another process built meanwhile is taken as it is."""
        name = index_name(tenant)
        async with self._building:
            conn = await self._db.connect_once()
            try:  # the session's advisory lock goes with the connection, however the build ends
                await self._lock_table(conn)
                found = await (
                    await conn.execute(
                        "SELECT i.indisvalid FROM pg_index i "
                        "WHERE i.indexrelid = to_regclass(quote_ident(current_schema()) || '.' || %s)",
                        (_quoted(name),),
                    )
                ).fetchone()
                if found is None or not found[0]:
                    if found is not None:
                        await conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {_quoted(name)}")
                    await conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (self.build_memory,))
                    literal = "'" + tenant.replace("'", "''") + "'"
                    await conn.execute(
                        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {_quoted(name)} ON memories "
                        f"USING hnsw (embedding {self._opclass}) WITH (m = {int(self.m)}, ef_construction = {int(self.ef_construction)}) "
                        f"WHERE tenant_id = {literal}"
                    )
                self._ready.add(tenant)
            except psycopg.Error as exc:
                raise RuntimeError(str(exc.diag.message_primary or type(exc).__name__)) from None
            finally:
                await conn.close()

    async def _lock_table(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Take the table's build lock on `conn`'s session, trying again after a pause while
        another process holds it (pg_advisory_lock would wait inside a statement, and the
        holder's build waits for that statement's snapshot: the deadlock this lock prevents)."""
        key, pause = _lock_key(self._db.namespace), LOCK_RETRY
        while True:
            got = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
            if got and got[0]:
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, LOCK_RETRY_MAX)

    # ------------------------------------------------------------------ closing

    async def close(self) -> None:
        """Stop any build (an interrupted one leaves an invalid index, dropped at the next start)."""
        self._closed = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
