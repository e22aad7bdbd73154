"""The recency index is walked in one place (core/object_keys.py `Walk`, issue 37): list's pages, the digest,
a filtered recall's fallback, stats, the tenants' counts and the growth chart all read it through
`Walk`, so no other module spells the index's prefix or parses its keys."""

from __future__ import annotations

import ast
from pathlib import Path

from mcp_memory.core.model import Caller
from mcp_memory.core.object_keys import Walk, count_index
from tests.conftest import T0, Env
from tests.core.test_paging import store

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_memory"
#: The key layout's own module, and its walk's.
HOMES = {"core/object_keys.py"}
ACME = Caller("acme")


def test_no_module_but_the_walk_reads_the_index_keys() -> None:
    walkers = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        if names & {"index_prefix", "parse_index_key", "rule_prefix"}:
            walkers.add(path.relative_to(PACKAGE).as_posix())
    assert walkers == HOMES


class Listing:
    """An object store that records every listing asked of it: (size, the key it lists after)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.asked: list[tuple[int, str | None]] = []

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        self.asked.append((limit, start_after))
        return await self.inner.list(prefix, limit, start_after)


async def test_a_walk_goes_on_after_its_last_key_and_says_when_the_index_ended(env: Env) -> None:
    ids = await store(env, "acme", 5)
    listing = Listing(env.objects)
    walk = Walk(listing, ACME)
    first = await walk.next(3)
    assert [i.id for i in first] == ids[::-1][:3] and not walk.ended and walk.read == 3
    second = await walk.next(3)
    assert [i.id for i in second] == ids[::-1][3:] and walk.ended and walk.read == 5
    assert listing.asked == [(3, None), (3, first[-1].key)]
    assert [i.at_ms() for i in first] == [T0 + 4000, T0 + 3000, T0 + 2000]


async def test_a_walk_down_to_a_time_ends_at_the_first_older_key_unread(env: Env) -> None:
    ids = await store(env, "acme", 5)
    walk = Walk(env.objects, ACME, since_ms=T0 + 2000)
    found = await walk.next(10)
    assert [i.id for i in found] == ids[::-1][:3] and walk.ended and walk.read == 3


async def test_a_walk_sees_what_its_reader_may_and_the_operator_every_scope(env: Env) -> None:
    await store(env, "acme", 2)
    await store(env, "acme", 3, start=T0 + 100, scope="conversation", conversation="chat:thread-b")
    assert len(await Walk(env.objects, ACME).entries(10)) == 2
    assert len(await Walk(env.objects, Caller("acme", "chat:thread-b")).entries(10)) == 5
    everything = await count_index(Walk(env.objects, ACME, every_scope=True), 4)
    assert (everything.total, everything.notes, everything.lower_bound) == (4, 3, True)
