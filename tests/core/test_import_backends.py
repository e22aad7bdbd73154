"""Each format's fixtures imported into every backend (in-memory, SQLite, PostgreSQL, S3): the
same memories, dates and provenance everywhere, and a second run writes nothing and embeds
no entry whose text is stored word for word (each backend's `same_text`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_memory.core.model import Caller
from tests.conftest import Env, make_env
from tests.support.import_fixtures import EXPECTED, FORMATS, layout

ACME = Caller("acme")


async def stored(env: Env) -> list[tuple[str, str, str, tuple[str, ...]]]:
    page = await env.service.list(ACME, limit=200)
    return sorted((m.content, m.created_at, m.memory_type, tuple(sorted(m.tags))) for m in page.memories)


@pytest.mark.parametrize("format_name", FORMATS)
async def test_each_format_imports_alike_into_every_backend_and_a_rerun_finds_its_texts_without_embedding(
    backend_env: Env, tmp_path: Path, format_name: str
) -> None:
    paths, context = layout(format_name, tmp_path)
    reference = make_env(backend_env.clock)
    await reference.service.import_from(ACME, format_name, paths, context=context)

    report = await backend_env.service.import_from(ACME, format_name, paths, context=context)
    assert (report.new, report.duplicates_within, len(report.refused)) == (
        EXPECTED[format_name].new,
        EXPECTED[format_name].duplicates_within,
        EXPECTED[format_name].refused,
    )
    assert await stored(backend_env) == await stored(reference)
    assert (await backend_env.service.stats(ACME)).total == EXPECTED[format_name].new

    backend_env.clock.advance(60_000)
    embedded: list[str] = []
    embed = backend_env.embedder.embed

    async def counted(texts: list[str]) -> object:
        embedded.extend(texts)
        return await embed(texts)

    backend_env.embedder.embed = counted  # type: ignore[method-assign]
    again = await backend_env.service.import_from(ACME, format_name, paths, context=context)
    assert again.new == 0
    assert (again.duplicates_of_store, again.duplicates_within) == (report.new + report.duplicates_within, 0)
    assert not set(embedded) & {content for content, *_ in await stored(backend_env)}
    assert len(embedded) <= report.duplicates_within
    assert await backend_env.memory_count() == EXPECTED[format_name].new
    assert [r.new for r in await backend_env.service.imports(ACME)] == [0, EXPECTED[format_name].new]
