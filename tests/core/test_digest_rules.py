"""The digest's rules come from their own keys (`rules/<tenant>/…`), on every backend: written with
the memory by remember, import and restore, gone with forget, found once the old way for a store
written before they existed, and the read does not grow with the tenant's other memories."""

from __future__ import annotations

from mcp_memory.core.digest import DIGEST_SCAN
from mcp_memory.core.model import Caller
from mcp_memory.core.object_keys import rule_prefix, rules_marker
from mcp_memory.core.service import MemoryService
from tests.conftest import DAY, Env

ACME = Caller("acme")


def reopened(env: Env) -> MemoryService:
    """Another process's service over the same stores (it has not seen the tenant's rules yet)."""
    return MemoryService(env.vectors, env.objects, env.embedder, env.counters, floor=0.3, clock=env.clock)


class CountingGets:
    """Wraps a vector store's `get` to count the ids read."""

    def __init__(self, env: Env) -> None:
        self.ids = 0
        self._get = env.vectors.get

        async def get(tenant, ids):  # type: ignore[no-untyped-def]
            self.ids += len(ids)
            return await self._get(tenant, ids)

        env.vectors.get = get  # type: ignore[method-assign]


async def test_a_remembered_rule_has_its_key_and_leads_the_digest_on_every_backend(backend_env: Env) -> None:
    rule = (await backend_env.service.remember(ACME, "Never edit a merged migration.", tags=["rule", "db"])).memory
    await backend_env.service.remember(ACME, "The API is versioned in the path.")
    keys = await backend_env.objects.list(rule_prefix("acme"))
    assert len(keys) == 1 and keys[0].split("#")[1] == rule.id
    result = await backend_env.service.digest(ACME)
    assert result.memories[0].id == rule.id and result.rules == 1


async def test_a_forgotten_rule_leaves_the_digest_and_its_key_is_deleted_on_every_backend(backend_env: Env) -> None:
    rule = (await backend_env.service.remember(ACME, "Amounts are integer cents.", tags=["rule"])).memory
    await backend_env.service.remember(ACME, "The API is versioned in the path.")
    assert (await backend_env.service.forget(ACME, rule.id)).deleted
    assert await backend_env.objects.list(rule_prefix("acme")) == []
    result = await backend_env.service.digest(ACME)
    assert [m.content for m in result.memories] == ["The API is versioned in the path."] and result.rules == 0


async def test_a_rule_stored_before_rules_had_keys_is_found_once_and_then_has_its_key(backend_env: Env) -> None:
    rule = (await backend_env.service.remember(ACME, "Deploys only from main.", tags=["rule"])).memory
    for _ in range(DIGEST_SCAN + 5):
        backend_env.clock.advance(DAY)
    await backend_env.service.remember(ACME, "Newer fact.")
    # the store as an earlier version left it: no rule key, no marker
    await backend_env.objects.delete([*await backend_env.objects.list(rule_prefix("acme")), rules_marker("acme")])
    later = reopened(backend_env)
    result = await later.digest(ACME)
    assert result.memories[0].id == rule.id and result.rules == 1
    assert [k.split("#")[1] for k in await backend_env.objects.list(rule_prefix("acme"))] == [rule.id]
    assert await backend_env.objects.get(rules_marker("acme")) is not None


async def test_a_rule_restored_from_an_export_leads_the_digest_on_every_backend(env: Env, backend_env: Env) -> None:
    rule = (await env.service.remember(ACME, "Run the linter before every push.", tags=["rule"])).memory
    await env.service.remember(ACME, "The API is versioned in the path.")
    lines: list[str] = []
    await env.service.export(["acme"], write=lines.append)
    await backend_env.service.import_(line.encode("utf-8") for line in "".join(lines).splitlines(keepends=True))
    result = await backend_env.service.digest(ACME)
    assert result.rules == 1 and result.memories[0].id == rule.id


async def test_the_rules_read_does_not_grow_with_the_tenants_other_memories(env: Env) -> None:
    rule = (await env.service.remember(ACME, "Never force-push to main.", tags=["rule"])).memory
    for i in range(DIGEST_SCAN + 300):
        await env.service.remember(ACME, f"Fact {i}: service {i} listens on port {9000 + i}.")
    await env.service.digest(ACME)  # the tenant's first digest in this process
    counting = CountingGets(env)
    result = await env.service.digest(ACME)
    assert result.memories[0].id == rule.id
    # the newest 200 and the one rule; no longer every memory's tags (500 here)
    assert counting.ids == DIGEST_SCAN + 1


async def test_another_conversations_rule_key_never_brings_it_into_this_digest(backend_env: Env) -> None:
    await backend_env.service.remember(Caller("acme", "conv-b"), "Rule for b.", tags=["rule"], scope="conversation")
    mine = (
        await backend_env.service.remember(Caller("acme", "conv-a"), "Rule for a.", tags=["rule"], scope="conversation")
    ).memory
    result = await backend_env.service.digest(Caller("acme", "conv-a"))
    assert [m.id for m in result.memories] == [mine.id] and result.rules == 1
    assert (await backend_env.service.digest(Caller("other"))).rules == 0
