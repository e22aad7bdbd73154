"""Every tenant at once: finding tenants from the key layout, counting them, the bound,
and compacting them all, over the in-memory reference stores. What the CLI prints of them is
tests/cli/test_tenants_output.py's."""

from __future__ import annotations

from mcp_memory.core.errors import StoreError
from mcp_memory.core.model import Caller
from mcp_memory.core.tenants import INDEX_ROOT, scan_tenants
from mcp_memory.stores.in_memory import InMemoryObjectStore
from tests.conftest import DAY, make_env


async def test_every_tenant_is_found_once_whatever_its_name_and_size(env) -> None:
    for tenant in ("b", "ab", "ab-c", "ab.c", "ab_c", "ab0", "A1"):
        for n in range(3):
            await env.objects.put(f"index/{tenant}/{n}#01J{n}#project", "")
    assert await scan_tenants(env.objects, INDEX_ROOT) == (["A1", "ab-c", "ab.c", "ab", "ab0", "ab_c", "b"], False)


async def test_keys_that_are_not_a_tenants_are_stepped_over(env) -> None:
    for key in ("index/", "index/loose", "index//x", "index/-bad/1#a#project", "index/ok/1#a#project", "index/ok2"):
        await env.objects.put(key, "")
    assert await scan_tenants(env.objects, INDEX_ROOT) == (["ok"], False)


async def test_the_scan_stops_at_its_bound_and_says_so(env) -> None:
    for tenant in ("t1", "t2", "t3"):
        await env.objects.put(f"index/{tenant}/1#a#project", "")
    assert await scan_tenants(env.objects, INDEX_ROOT, limit=2) == (["t1", "t2"], True)
    assert await scan_tenants(env.objects, INDEX_ROOT, limit=3) == (["t1", "t2", "t3"], False)

    result = await env.service.tenants(limit=2)
    assert [t.tenant for t in result.tenants] == ["t1", "t2"] and result.truncated


async def test_tenant_counts_include_every_scope_and_type(env) -> None:
    await env.service.remember(Caller("acme"), "Backups are verified every Sunday morning")
    await env.service.remember(Caller("acme"), "Use make test-all before tagging", memory_type="pattern")
    await env.service.remember(Caller("acme", "chat:1"), "This thread wants terse answers", scope="conversation")
    await env.service.remember(Caller("beta"), "The release train leaves on Thursdays")

    result = await env.service.tenants()
    assert [(t.tenant, t.total, t.by_type, t.conversation_notes, t.lower_bound) for t in result.tenants] == [
        ("acme", 3, {"project": 2, "pattern": 1}, 1, False),
        ("beta", 1, {"project": 1}, 0, False),
    ]
    assert not result.truncated and result.limit == 1000


class RefusingMergedWrites(InMemoryObjectStore):
    """An object store that refuses to replace one tenant's merged counters."""

    def __init__(self, tenant: str) -> None:
        super().__init__()
        self.refused = f"stats/{tenant}/merged.json"

    async def put(self, key: str, body: str, **conditions) -> str:
        if key == self.refused:
            raise StoreError("the state bucket refused the write")
        return await super().put(key, body, **conditions)


async def test_compact_all_visits_tenants_with_counters_and_reports_failures(clock) -> None:
    env = make_env(clock, objects=RefusingMergedWrites("beta"))
    for tenant in ("acme", "beta", "gamma"):
        memory = (await env.service.remember(Caller(tenant), f"{tenant} verifies backups every Sunday")).memory
        if tenant != "gamma":  # gamma has no counters, so it is not visited
            env.counters.record(tenant, memory.id, clock())
    await env.counters.flush()
    clock.advance(DAY)  # every shard settles past the lag

    result = await env.service.compact_all()
    assert [(r.tenant, r.shards_folded, r.written) for r in result.reports] == [("acme", 1, True)]
    assert result.failed == [("beta", "the state bucket refused the write")] and not result.truncated


async def test_a_zero_bound_finds_nothing_but_says_there_is_more(env) -> None:
    await env.objects.put("index/t1/1#a#project", "")
    assert await scan_tenants(env.objects, INDEX_ROOT, limit=0) == ([], True)
