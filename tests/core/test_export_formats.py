"""`export --format markdown|mcp-knowledge-graph`, and what a round trip through each keeps
(docs/import_formats.md#what-a-round-trip-keeps)."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_memory.core.model import Caller
from tests.conftest import DAY, Env, make_env
from tests.support.import_fixtures import DATA, layout

ACME = Caller("acme")


async def exported(env: Env, format_name: str) -> str:
    out: list[str] = []
    await env.service.export(["acme"], write=out.append, format_name=format_name)
    return "".join(out)


def graph(text: str) -> tuple[dict, list]:
    """{entity name: (type, sorted observations)} and the sorted relations."""
    entities, relations = {}, []
    for line in text.splitlines():
        if not line.strip():
            continue
        value = json.loads(line)
        if value["type"] == "entity":
            entities[value["name"]] = (value["entityType"], sorted(value["observations"]))
        else:
            relations.append((value["from"], value["relationType"], value["to"]))
    return entities, sorted(relations)


async def test_a_knowledge_graph_goes_round_unchanged_except_what_it_could_not_hold(env: Env, tmp_path: Path) -> None:
    paths, context = layout("mcp-knowledge-graph", tmp_path)
    await env.service.import_from(ACME, "mcp-knowledge-graph", paths, context=context)
    entities, relations = graph(await exported(env, "mcp-knowledge-graph"))
    assert entities == {
        "John_Smith": ("person", ["Graduated in 2019", "Prefers morning meetings", "Speaks fluent Spanish"]),
        "Anthropic": ("organization", ["Builds the Claude models"]),
        "김민준": ("person", ["서울 사무소에서 일한다", "커피보다 차를 좋아한다"]),
        "Lumen": (
            "project",
            ["The invoice exporter runs nightly at 02:00 UTC", "The invoice exporter runs nightly at 03:00 UTC"],
        ),
        "Stray": ("person", ["Has a tenant field that is never read"]),
        "Last": ("place", ["The file ends without a line break, as the server writes it"]),
    }
    assert relations == [("John_Smith", "works_at", "Anthropic"), ("김민준", "maintains", "Lumen")]

    first = tmp_path / "first.jsonl"
    first.write_text(await exported(env, "mcp-knowledge-graph"), encoding="utf-8")
    again = make_env(env.clock)
    report = await again.service.import_from(ACME, "mcp-knowledge-graph", [first], context=context)
    assert (report.new, report.refused) == (12, [])
    assert graph(await exported(again, "mcp-knowledge-graph")) == (entities, relations)


async def test_any_memory_exports_to_a_graph_the_reference_server_can_read(env: Env) -> None:
    await env.service.remember(ACME, "Deploys go out on Tuesdays", category="deploys", tags=["ops"])
    env.clock.advance(1_000)  # entities come in the order their first memory was stored
    await env.service.remember(ACME, "Use make release from a clean checkout", memory_type="pattern")
    lines = (await exported(env, "mcp-knowledge-graph")).splitlines()
    assert [json.loads(line) for line in lines] == [
        {"type": "entity", "name": "deploys", "entityType": "ops", "observations": ["Deploys go out on Tuesdays"]},
        {
            "type": "entity",
            "name": "pattern",
            "entityType": "pattern",
            "observations": ["Use make release from a clean checkout"],
        },
    ]


async def test_markdown_groups_by_type_and_tags_and_a_text_import_of_it_keeps_text_type_tags_and_date(
    env: Env, tmp_path: Path
) -> None:
    await env.service.remember(ACME, "Staging is restored every Monday", tags=["staging", "ops"])
    env.clock.advance(DAY)
    await env.service.remember(
        ACME, "Use `make release`\nfrom a clean checkout\n\n```bash\nmake release\n```", memory_type="pattern"
    )
    env.clock.advance(DAY)
    await env.service.remember(ACME, "- a text that starts like a bullet", memory_type="reference", tags=["odd"])
    text = await exported(env, "markdown")
    originals = {m.content: m for m in (await env.service.list(ACME)).memories}
    ids = {m.content[:5]: m.id for m in originals.values()}
    assert text.splitlines()[1:] == [
        "# Memories of acme",
        "",
        "## project",
        "",
        "### ops, staging",
        "",
        f"- Staging is restored every Monday — 2026-07-01 · {ids['Stagi']}",
        "",
        "## pattern",
        "",
        "### no tags",
        "",
        "- Use `make release`",
        "  from a clean checkout",
        "",
        "  ```bash",
        "  make release",
        "  ```",
        f"  — 2026-07-02 · {ids['Use `']}",
        "",
        "## reference",
        "",
        "### odd",
        "",
        f"- - a text that starts like a bullet — 2026-07-03 · {ids['- a t']}",
    ]
    assert text.startswith("<!-- mcp-memory export of tenant acme at ")

    file = tmp_path / "memories.md"
    file.write_text(text, encoding="utf-8")
    again = make_env(env.clock)
    await again.service.import_from(ACME, "text", [file], context=layout("text", tmp_path)[1])
    back = {m.content: m for m in (await again.service.list(ACME)).memories}
    assert sorted(back) == sorted(originals)
    for content, memory in back.items():
        original = originals[content]
        assert (memory.memory_type, memory.created_at) == (original.memory_type, original.created_at)
        assert set(memory.tags) - {"source:text", "imported:2026-07-03"} == set(original.tags)


def test_the_knowledge_graph_fixture_ends_without_a_line_break_as_the_server_writes_it() -> None:
    assert (DATA / "mcp-knowledge-graph" / "memory.jsonl").read_bytes().endswith(b"}")  # no final newline
