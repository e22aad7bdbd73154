"""Moves between real backends (memory, sqlite, postgres, s3): an export of one imported into
another holds the same memories, counts and vectors, and recall answers alike."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from mcp_memory.core.model import Caller
from tests.conftest import SERVICE_BACKENDS, Clock, Env, make_env, open_env

ACME = Caller("acme")
THREAD = Caller("acme", "thread-9")
QUERY = "which port does the billing service listen on"
#: What the seed asks three times: every word of it is in the billing memory, so the answer is HIGH
#: on every backend and each recall counts as a use.
USED_QUERY = "billing service port"


async def open_backend(name: str, clock: Clock, request: pytest.FixtureRequest, tmp_path: Path, tag: str) -> Env:
    """A service on `name`; SQLite in a file of its own per `tag`, so a test can have two."""
    if name != "sqlite":
        return await open_env(name, clock, request)
    from mcp_memory.stores.sqlite.store import open_sqlite

    vectors, objects = await open_sqlite(tmp_path / tag / "memory.db", model="fake-bag-of-words", dim=64)
    return make_env(clock, vectors=vectors, objects=objects)


async def seed(env: Env, clock: Clock) -> None:
    service = env.service
    await service.remember(ACME, "The billing service listens on port 8443 behind the gateway", category="ports")
    clock.advance(1000)
    await service.remember(ACME, "Run make release only from a clean checkout", memory_type="pattern", tags=["make"])
    clock.advance(1000)
    await service.remember(
        THREAD, "In this thread we agreed the billing port moves to 9443", scope="conversation", tags=["todo", "port"]
    )
    clock.advance(1000)
    await service.remember(Caller("beta"), "Beta's invoices live in the ledger", memory_type="reference")
    for _ in range(3):
        assert (await service.recall(ACME, USED_QUERY)).confidence == "high"
        clock.advance(500)
    await env.counters.flush()


async def export_lines(env: Env) -> list[bytes]:
    out: list[str] = []
    tenants = await env.service.export_tenants(all_tenants=True)
    await env.service.export(tenants, write=out.append, with_embeddings=True)
    return [line.encode() for line in "".join(out).splitlines(keepends=True)]


def records(lines: list[bytes]) -> list[dict]:
    return sorted((json.loads(line) for line in lines[1:]), key=lambda r: r["id"])


async def move(source: Env, target: Env) -> list[bytes]:
    lines = await export_lines(source)
    result = await target.service.import_(iter(lines))
    assert (result.imported, result.refused, result.re_embedded) == (len(lines) - 1, 0, 0)
    return lines


#: Each backend once as the source and once as the target (a ring): what a move depends on is the
#: export one backend writes and the import another reads, not the pair.
RING = list(zip(SERVICE_BACKENDS, SERVICE_BACKENDS[1:] + SERVICE_BACKENDS[:1]))


@pytest.mark.parametrize(("source_name", "target_name"), RING)
async def test_a_move_between_two_backends_keeps_every_memory_its_counts_and_recall(
    source_name: str, target_name: str, clock: Clock, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    source = await open_backend(source_name, clock, request, tmp_path, "source")
    target = await open_backend(target_name, clock, request, tmp_path, "target")
    try:
        await seed(source, clock)
        lines = await move(source, target)

        assert records(await export_lines(target)) == records(lines)
        assert [t.tenant for t in (await target.service.tenants()).tenants] == ["acme", "beta"]
        for caller in (ACME, THREAD):
            before = await source.service.recall(caller, QUERY)
            after = await target.service.recall(caller, QUERY)
            assert [r.memory.id for r in after.results] == [r.memory.id for r in before.results]
            assert after.results
            listed = await target.service.list(caller)
            assert [m.id for m in listed.memories] == [m.id for m in (await source.service.list(caller)).memories]
    finally:
        await source.service.close()
        await target.service.close()


async def test_sqlite_to_postgres_to_s3_to_sqlite_keeps_everything_identical(
    clock: Clock, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    chain = [
        await open_backend("sqlite", clock, request, tmp_path, "first"),
        await open_backend("postgres", clock, request, tmp_path, "pg"),
        await open_backend("s3", clock, request, tmp_path, "s3"),
        await open_backend("sqlite", clock, request, tmp_path, "last"),
    ]
    try:
        await seed(chain[0], clock)
        original = records(await export_lines(chain[0]))
        for source, target in itertools.pairwise(chain):
            await move(source, target)
        final = records(await export_lines(chain[-1]))

        assert final == original
        by_content = {r["content"]: r for r in final}
        note = by_content["In this thread we agreed the billing port moves to 9443"]
        assert (note["scope"], note["conversation"], note["tags"]) == ("conversation", "thread-9", ["todo", "port"])
        assert by_content["The billing service listens on port 8443 behind the gateway"]["accessCount"] == 3
        assert by_content["Run make release only from a clean checkout"]["type"] == "pattern"
        first = await chain[0].service.recall(THREAD, QUERY)
        last = await chain[-1].service.recall(THREAD, QUERY)
        assert [r.memory.id for r in last.results] == [r.memory.id for r in first.results]
    finally:
        for env in chain:
            await env.service.close()
