"""`import --from`: other tools' memories read and remembered by remember's rules (the service's
policy, on the in-memory store; every backend in test_import_backends.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_memory.core.transfer.remembering as remembering_module
from mcp_memory.core.ids import iso, parse_iso, ulid_time
from mcp_memory.core.model import Caller
from mcp_memory.core.transfer.formats import ReadContext, read
from mcp_memory.core.transfer.formats import files as format_files
from tests.conftest import DAY, T0, Env
from tests.support.import_fixtures import DATA, EXPECTED, FORMATS, layout

ACME = Caller("acme")


async def run(env: Env, format_name: str, paths: list[Path], context: ReadContext, **options):
    return await env.service.import_from(ACME, format_name, paths, context=context, **options)


async def contents(env: Env, caller: Caller = ACME) -> list[str]:
    return sorted(m.content for m in (await env.service.list(caller, limit=50)).memories)


def context_at(tmp_path: Path, now: float = T0) -> ReadContext:
    return ReadContext(tmp_path / "home", tmp_path / "home" / ".claude", now)


# --------------------------------------------------------------------------- every format


@pytest.mark.parametrize("format_name", FORMATS)
async def test_each_formats_fixtures_import_with_the_counts_the_docs_give(
    env: Env, tmp_path: Path, format_name: str
) -> None:
    paths, context = layout(format_name, tmp_path)
    expected = EXPECTED[format_name]
    report = await run(env, format_name, paths, context)
    got = (report.files, report.read, report.new, report.duplicates_within, len(report.refused), len(report.skipped))
    assert got == (
        expected.files,
        expected.read,
        expected.new,
        expected.duplicates_within,
        expected.refused,
        expected.skipped,
    )
    assert report.duplicates_of_store == 0
    assert (await env.service.stats(ACME)).total == expected.new
    listed = (await env.service.list(ACME, limit=50)).memories
    assert all(f"source:{format_name}" in m.tags and "imported:2026-07-01" in m.tags for m in listed)


@pytest.mark.parametrize("format_name", FORMATS)
async def test_a_dry_run_writes_nothing_and_reports_what_the_real_run_does(
    env: Env, tmp_path: Path, format_name: str
) -> None:
    paths, context = layout(format_name, tmp_path)
    dry = await run(env, format_name, paths, context, dry_run=True)
    assert (await env.memory_count(), await env.object_count()) == (0, 0)
    real = await run(env, format_name, paths, context)
    assert (dry.new, dry.duplicates_within, len(dry.refused)) == (real.new, real.duplicates_within, len(real.refused))
    assert [m.content for m in dry.preview] == [m.content for m in real.preview]
    assert len(dry.preview) == min(5, real.new)


@pytest.mark.parametrize("format_name", FORMATS)
async def test_running_an_import_again_writes_nothing_twice(env: Env, tmp_path: Path, format_name: str) -> None:
    paths, context = layout(format_name, tmp_path)
    first = await run(env, format_name, paths, context)
    before = await contents(env)
    again = await run(env, format_name, paths, context)
    assert again.new == 0
    assert again.duplicates_of_store + again.duplicates_within == first.new + first.duplicates_within
    assert await contents(env) == before
    assert (await env.service.stats(ACME)).total == first.new


async def test_a_rerun_and_its_dry_run_report_stored_texts_as_duplicates_without_embedding_them(
    env: Env, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("- Deploys drain connections first\n- The cache holds 512 entries\n", encoding="utf-8")
    await run(env, "text", [notes], context_at(tmp_path))
    notes.write_text(
        "- Deploys drain connections first\n- The cache holds 512 entries\n- deploys drain connections first!\n",
        encoding="utf-8",
    )
    calls = env.embedder.calls

    dry = await run(env, "text", [notes], context_at(tmp_path), dry_run=True)
    real = await run(env, "text", [notes], context_at(tmp_path))

    assert [(r.new, r.duplicates_of_store, r.duplicates_within) for r in (dry, real)] == [(0, 3, 0), (0, 3, 0)]
    assert env.embedder.calls == calls + 2  # the third entry, once a run: the only text not stored as it is
    assert await contents(env) == ["Deploys drain connections first", "The cache holds 512 entries"]


@pytest.mark.parametrize(("window", "texts_embedded"), [(2, 4), (6, 6)])
async def test_a_repeat_in_a_later_batch_of_the_same_import_is_still_a_repeat_within_the_files(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int, texts_embedded: int
) -> None:
    """Written two at a time; embedded two at a time (the repeat's text was taken by then, so it
    is not embedded), or all six at once (it is, and the rule finds it the same)."""
    monkeypatch.setattr(remembering_module, "BULK_CHUNK", 2)
    monkeypatch.setattr(remembering_module, "BULK_WINDOW", window)
    notes = tmp_path / "notes.md"
    notes.write_text(
        "- Deploys drain connections first\n- The cache holds 512 entries\n"
        "- Deploys drain connections first\n- !!!\n- !!!\n- deploys drain connections first\n",
        encoding="utf-8",
    )
    dry = await run(env, "text", [notes], context_at(tmp_path), dry_run=True)
    embedded: list[str] = []
    embed = env.embedder.embed

    async def counted(texts: list[str]) -> object:
        embedded.extend(texts)
        return await embed(texts)

    env.embedder.embed = counted  # type: ignore[method-assign]
    real = await run(env, "text", [notes], context_at(tmp_path))

    # "!!!" has no word: remember's rule finds it the same only as itself, so it is written once
    assert [(r.new, r.duplicates_of_store, r.duplicates_within) for r in (dry, real)] == [(3, 0, 3), (3, 0, 3)]
    assert len(embedded) == texts_embedded
    assert await contents(env) == ["!!!", "Deploys drain connections first", "The cache holds 512 entries"]


async def test_remembering_a_text_with_no_word_twice_keeps_one_and_an_import_of_it_again_adds_none(
    env: Env, tmp_path: Path
) -> None:
    await env.service.remember(ACME, "!!!")
    again = await env.service.remember(ACME, " !!!")
    notes = tmp_path / "notes.md"
    notes.write_text("- !!!\n", encoding="utf-8")
    imported = await run(env, "text", [notes], context_at(tmp_path))

    first = (await env.service.list(ACME, limit=50)).memories[0]
    assert not again.created and again.memory.id == first.id
    assert (imported.new, imported.duplicates_of_store) == (0, 1)
    assert await contents(env) == ["!!!"]


async def test_a_text_stored_as_a_conversations_note_is_not_a_duplicate_of_a_project_import(
    env: Env, tmp_path: Path
) -> None:
    await env.service.remember(Caller("acme", "c1"), "Deploys drain connections first", scope="conversation")
    notes = tmp_path / "notes.md"
    notes.write_text("- Deploys drain connections first\n", encoding="utf-8")
    report = await run(env, "text", [notes], context_at(tmp_path))
    assert (report.new, report.duplicates_of_store) == (1, 0)
    assert await contents(env) == ["Deploys drain connections first"]


# --------------------------------------------------------------------------- remember's rules


async def test_an_entry_the_store_already_says_merges_and_a_correction_is_kept_apart(env: Env, tmp_path: Path) -> None:
    await env.service.remember(ACME, "The production database listens on port 5432")
    notes = tmp_path / "notes.md"
    notes.write_text(
        "- The production database listens on port 5432\n- The production database listens on port 6432\n",
        encoding="utf-8",
    )
    report = await run(env, "text", [notes], context_at(tmp_path))
    assert (report.duplicates_of_store, report.new) == (1, 1)
    assert await contents(env) == [
        "The production database listens on port 5432",
        "The production database listens on port 6432",
    ]


async def test_an_entry_over_the_size_limit_is_refused_by_its_place_in_remembers_words(
    env: Env, tmp_path: Path
) -> None:
    notes = tmp_path / "long.md"
    notes.write_text(f"- first fact stays\n- {'x' * 40_000}\n\n한국어 문단도 그대로 남는다\n", encoding="utf-8")
    report = await run(env, "text", [notes], context_at(tmp_path))
    assert [(str(n.place), n.reason) for n in report.refused] == [
        (
            f"{notes}:2",
            "the text is 40000 bytes; the maximum a single memory may hold is 32000. Store the essential fact, "
            "and leave the detail where it lives.",
        )
    ]
    assert await contents(env) == ["first fact stays", "한국어 문단도 그대로 남는다"]


async def test_too_many_tags_or_a_tag_too_long_refuse_the_entry_naming_the_limit(env: Env, tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    memories = [
        {"content": "twenty tags of its own leave no room for the import's two", "tags": [f"t{i}" for i in range(19)]},
        {"content": "a tag longer than a label", "tags": ["y" * 65]},
        {"content": "eighteen tags fit", "tags": [f"t{i}" for i in range(18)]},
    ]
    export.write_text(json.dumps({"export_metadata": {}, "memories": memories}), encoding="utf-8")
    report = await run(env, "mcp-memory-service", [export], context_at(tmp_path))
    assert [(str(n.place), n.reason[:40]) for n in report.refused] == [
        (f"{export} memories[0]", "the tags may hold at most 20 entries."),
        (f"{export} memories[1]", 'each tag may be at most 64 bytes; "yyyyy'),
    ]
    assert await contents(env) == ["eighteen tags fit"]


async def test_dates_from_the_source_are_kept_and_since_and_until_see_them(env: Env, tmp_path: Path) -> None:
    paths, context = layout("mem0", tmp_path)
    await run(env, "mem0", paths, context)
    old = await env.service.list(ACME, until="2024-12-31", limit=50)
    assert sorted(m.content for m in old.memories) == [
        "Alex is planning a trip to San Francisco from July 1st to July 10th",
        "Alex prefers vegetarian restaurants",
        "Likes to play cricket and plays cricket on weekends.",
    ]
    page = await env.service.list(ACME, since="2026-01-01", until="2026-01-31")
    assert [m.content for m in page.memories] == ["Alex moved to San Francisco from New York in January 2026"]
    moved = page.memories[0]
    assert moved.created_at == "2026-01-15T10:30:00.000Z" and ulid_time(moved.id) == parse_iso(moved.created_at)
    recalled = await env.service.recall(ACME, "Alex moved to San Francisco", since="2026-01-01")
    assert [r.memory.id for r in recalled.results][:1] == [moved.id]


async def test_a_date_after_the_import_or_before_1970_becomes_the_time_of_the_import(env: Env, tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    memories = [
        {"content": "stated in the future", "created_at": (T0 + 10 * DAY) / 1000},
        {"content": "stated before the epoch", "created_at_iso": "1969-07-20T20:17:00Z"},
        {"content": "stated yesterday", "created_at": (T0 - DAY) / 1000},
    ]
    export.write_text(json.dumps({"export_metadata": {}, "memories": memories}), encoding="utf-8")
    await run(env, "mcp-memory-service", [export], context_at(tmp_path))
    dates = {m.content: m.created_at for m in (await env.service.list(ACME, limit=10)).memories}
    assert dates == {
        "stated in the future": iso(T0),
        "stated before the epoch": iso(T0),
        "stated yesterday": iso(T0 - DAY),
    }


async def test_a_source_type_that_is_ours_is_the_type_and_any_other_the_category(env: Env, tmp_path: Path) -> None:
    paths, context = layout("mcp-memory-service", tmp_path)
    await run(env, "mcp-memory-service", paths, context, memory_type="pattern")
    kinds = {m.content[:20]: (m.memory_type, m.category) for m in (await env.service.list(ACME, limit=10)).memories}
    assert kinds == {
        "Lumen's invoice numb": ("pattern", "note"),
        "Key development comm": ("reference", None),
        "회계 마감은 매월 마지막 영업일이다.": ("pattern", "observation"),
        "An ISO date only: th": ("pattern", "decision"),
    }


async def test_conversation_scope_keeps_the_imported_memories_to_that_conversation(env: Env, tmp_path: Path) -> None:
    paths, context = layout("text", tmp_path)
    thread = Caller("acme", "thread-7")
    report = await env.service.import_from(thread, "text", paths, context=context, scope="conversation")
    assert report.new == 8
    assert await contents(env, ACME) == []
    assert len(await contents(env, thread)) == 8


# --------------------------------------------------------------------------- identity is never read from a file


async def test_a_tenant_or_user_field_in_a_file_is_never_read_and_is_reported(env: Env, tmp_path: Path) -> None:
    paths, context = layout("mcp-knowledge-graph", tmp_path)
    report = await run(env, "mcp-knowledge-graph", paths, context)
    assert report.ignored == {"conversation": 1, "tenant": 1}
    assert "Stray: Has a tenant field that is never read" in await contents(env)
    assert await env.service.export_tenants(all_tenants=True) == ["acme"]

    mem0_paths, _ = layout("mem0", tmp_path)
    mem0 = await run(env, "mem0", mem0_paths, context)
    assert mem0.ignored == {"agent_id": 1, "user_id": 3}


# --------------------------------------------------------------------------- claude-code


async def test_claude_code_follows_imports_as_claude_code_does_and_reports_the_rest(env: Env, tmp_path: Path) -> None:
    paths, context = layout("claude-code", tmp_path)
    report = await run(env, "claude-code", paths, context)
    stored = await contents(env)
    assert "Every public function has a docstring that says why" in stored  # the conventions file it imports
    assert "On Lumen I own the invoice exporter" in stored  # @~/.claude/lumen-personal.md, inside a named folder
    assert "Code spans hold no import: `@docs/not-an-import.md` stays text." in stored
    project = paths[0]
    assert sorted((str(n.place), n.reason) for n in report.skipped if "CLAUDE.md" in str(n.place)) == [
        (f"{project / 'CLAUDE.md'}:22", "@missing.md not followed: no such file"),
        (f"{project / 'CLAUDE.md'}:23", "@package.json not followed: not a Markdown or text file"),
    ]


async def test_claude_code_reports_an_import_outside_the_named_folders_and_does_not_read_it(
    env: Env, tmp_path: Path
) -> None:
    secret = tmp_path / "elsewhere" / "secrets.md"
    secret.parent.mkdir()
    secret.write_text("- the deploy key is hunter2\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text(f"- Read @../elsewhere/secrets.md and @{secret}\n", encoding="utf-8")
    report = await run(env, "claude-code", [project], context_at(tmp_path))
    assert "the deploy key is hunter2" not in await contents(env)
    assert [n.reason for n in report.skipped] == [
        "@../elsewhere/secrets.md not followed: it is outside the folders named on the command line "
        "(name it too to import it)",
        f"@{secret} not followed: it is outside the folders named on the command line (name it too to import it)",
    ]


async def test_claude_code_follows_at_most_five_hops_and_reads_a_cycle_once(env: Env, tmp_path: Path) -> None:
    chain = tmp_path / "chain"
    chain.mkdir()
    for i in range(8):
        (chain / f"f{i}.md").write_text(f"- fact number {i} of the chain\n\n@f{i + 1}.md\n", encoding="utf-8")
    (chain / "f8.md").write_text("@f0.md\n", encoding="utf-8")
    report = await run(env, "claude-code", [chain / "f0.md"], context_at(tmp_path))
    assert await contents(env) == sorted(f"fact number {i} of the chain" for i in range(6))
    assert [n.reason for n in report.skipped] == ["@f6.md not followed: more than 5 hops from the file named"]

    loop = tmp_path / "loop"
    loop.mkdir()
    (loop / "a.md").write_text("- alpha says hello\n\n@b.md\n", encoding="utf-8")
    (loop / "b.md").write_text("- beta says goodbye\n\n@a.md\n", encoding="utf-8")
    again = await run(env, "claude-code", [loop / "a.md"], context_at(tmp_path))
    assert (again.read, again.new, again.skipped) == (2, 2, [])


async def test_claude_codes_memory_index_points_at_topic_files_which_are_read_instead(env: Env, tmp_path: Path) -> None:
    paths, context = layout("claude-code", tmp_path)
    memory_folder = next((tmp_path / "home" / ".claude" / "projects").iterdir()) / "memory"
    report = await run(env, "claude-code", [memory_folder], context)
    memories = {m.content.split("\n")[0]: m for m in (await env.service.list(ACME, limit=10)).memories}
    assert sorted(memories) == [
        "Staging redeploys from main every hour, on the hour.",
        'The billing dashboards are in Grafana under the folder "Lumen / Billing".',
        "The invoice exporter writes CSV with a semicolon separator",
        "[Old note](gone.md) — a pointer whose file is gone",
        "test_invoice_totals fails when the machine is loaded; rerun it alone before suspecting the code.",
    ]
    assert memories['The billing dashboards are in Grafana under the folder "Lumen / Billing".'].memory_type == (
        "reference"
    )
    assert (
        memories[
            "test_invoice_totals fails when the machine is loaded; rerun it alone before suspecting the code."
        ].category
        == "feedback"
    )
    assert [n.reason for n in report.skipped] == ["an index line of MEMORY.md: its topic file is read"] * 2


# --------------------------------------------------------------------------- hostile files


async def test_bytes_that_are_not_utf8_refuse_their_entry_by_line_and_the_rest_import(env: Env, tmp_path: Path) -> None:
    notes = tmp_path / "mixed.md"
    notes.write_bytes(b"- clean first line\n- broken \xff\xfe line\n- clean last line\n")
    report = await run(env, "text", [notes], context_at(tmp_path))
    assert [(str(n.place), n.reason) for n in report.refused] == [(f"{notes}:2", "not UTF-8 text (the byte 0xFF)")]
    assert await contents(env) == ["clean first line", "clean last line"]

    export = tmp_path / "export.json"
    export.write_bytes(b'{"memories": [\n{"content": "ok"},\n{"content": "bad \xc3"}]}')
    whole = await run(env, "mcp-memory-service", [export], context_at(tmp_path))
    assert [(str(n.place), n.reason) for n in whole.refused] == [
        (str(export), "line 3 is not UTF-8 text (the byte 0xC3)")
    ]


async def test_deep_nesting_huge_files_and_yaml_aliases_are_refused_without_harm(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    graph = tmp_path / "graph.jsonl"
    graph.write_text('{"type":"entity","name":"x","observations":' + "[" * 100_000 + "]" * 100_000 + "}\n")
    bomb = tmp_path / "bomb.md"
    bomb.write_text(
        "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: [*b, *b, *b, *b, *b, *b, *b, *b]\n---\n- [fact] after the frontmatter\n",
        encoding="utf-8",
    )
    quotes = tmp_path / "quotes.md"
    quotes.write_text(">" * 50_000 + " deep\n\n- a fact after deep quotes\n", encoding="utf-8")
    context = context_at(tmp_path)

    assert [n.reason for n in (await run(env, "mem0", [nested], context)).refused] == [
        "the JSON is nested too deeply to read"
    ]
    assert [n.reason for n in (await run(env, "mcp-knowledge-graph", [graph], context)).refused] == [
        "the line's JSON is nested too deeply to read"
    ]
    refused = (await run(env, "basic-memory", [bomb], context)).refused
    assert [(str(n.place), n.reason) for n in refused] == [
        (f"{bomb}:3", "the frontmatter is not valid YAML: aliases (*name) are not read")
    ]
    deep = await run(env, "text", [quotes], context)
    assert "a fact after deep quotes" in await contents(env)
    assert [(str(n.place), n.reason[:24]) for n in deep.refused] == [(f"{quotes}:1", "the text is 50005 bytes;")]

    monkeypatch.setattr(format_files, "FILE_MAX_BYTES", 1000)
    big = tmp_path / "big.md"
    big.write_text("- " + "word " * 400 + "\n", encoding="utf-8")
    assert [n.reason for n in (await run(env, "text", [big], context)).refused] == [
        "the file is 2003 bytes; an import reads files of at most 1000"
    ]


async def test_a_file_that_is_not_the_format_is_refused_whole_by_name(env: Env, tmp_path: Path) -> None:
    context = context_at(tmp_path)
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}', encoding="utf-8")
    assert [(str(n.place), n.reason) for n in (await run(env, "mem0", [other], context)).refused] == [
        (
            str(other),
            'not a mem0 export: expected {"results": [...]} (get_all), a list of memories, '
            'or OpenMemory\'s {"memories": [...]}',
        )
    ]
    assert [n.reason for n in (await run(env, "mcp-memory-service", [other], context)).refused] == [
        'not an mcp-memory-service export: it has no "memories" list'
    ]
    assert [n.reason for n in (await run(env, "text", [tmp_path / "nowhere"], context)).refused] == [
        "no such file or folder"
    ]
    assert (await env.memory_count(), await env.object_count()) == (0, 0)


async def test_lines_ended_any_way_and_an_empty_file_read_as_text(env: Env, tmp_path: Path) -> None:
    crlf = tmp_path / "windows.md"
    crlf.write_bytes(b"# Heading\r\n\r\n- first on windows\r\n- second on windows\r\n")
    old_mac = tmp_path / "mac.txt"
    old_mac.write_bytes(b"- first on an old mac\r- second on an old mac\r")
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    report = await run(env, "text", [crlf, old_mac, empty], context_at(tmp_path))
    assert (report.files, report.new, report.refused) == (3, 4, [])
    assert await contents(env) == [
        "first on an old mac",
        "first on windows",
        "second on an old mac",
        "second on windows",
    ]


# --------------------------------------------------------------------------- provenance


async def test_each_real_import_is_listed_with_its_format_date_and_counts(env: Env, tmp_path: Path) -> None:
    for format_name in ("text", "mem0"):
        paths, context = layout(format_name, tmp_path)
        await run(env, format_name, paths, context, dry_run=True)
        await run(env, format_name, paths, context)
        env.clock.advance(DAY)
    runs = await env.service.imports(ACME)
    assert [(r.format, r.started_at[:10], r.new, r.duplicates, r.refused, r.finished_at is not None) for r in runs] == [
        ("mem0", "2026-07-02", 9, 1, 1, True),
        ("text", "2026-07-01", 8, 1, 0, True),
    ]
    assert await env.service.imports(Caller("beta")) == []


def test_every_reader_is_named_in_the_format_list_and_the_cli_choice() -> None:
    from typing import get_args

    from mcp_memory.core.transfer.formats import _MODULES, FORMATS, FormatName

    assert tuple(FORMATS) == get_args(FormatName)
    assert sorted(_MODULES) == sorted(n for n in FORMATS if n != "jsonl")
    for name in _MODULES:
        assert read(name, [], ReadContext(Path("/nonexistent"), Path("/nonexistent"), T0)).entries == []
    assert sorted(p.name for p in DATA.iterdir()) == sorted(_MODULES)
