"""What the operator's commands print, exactly: list a page at a time with the cursor that
goes on, export naming the tenants it wrote and the ones it left out, content from stdin
without the final newline echo adds, one refusal for a malformed id wherever an id is taken,
and no trailing blanks after a stored text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.cli_runner import Ran, clean_environment, run_cli


@pytest.fixture
def cli(tmp_path: Path):
    env = clean_environment()
    env |= {"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "COLUMNS": "80"}

    def run(*args: str, stdin: str | None = None) -> Ran:
        return run_cli(*args, env=env, stdin=stdin, cwd=ROOT)

    return run


def remembered(cli, tenant: str, *facts: str) -> list[str]:
    ids = []
    for fact in facts:
        done = cli("remember", "-t", tenant, fact, "--json")
        assert done.returncode == 0, done.stderr
        ids.append(json.loads(done.stdout)["memory"]["id"])
    return ids


def dated(text: str) -> str:
    return re.sub(r"stored \d{4}-\d\d-\d\d", "stored DATE", text)


# --------------------------------------------------------------------------- list pages


def test_list_pages_through_every_memory_with_the_cursor_it_prints(cli) -> None:
    ids = remembered(cli, "acme", "fact one", "fact two", "fact three")
    first = cli("list", "-t", "acme", "--limit", "2")
    assert first.returncode == 0, first.stderr
    cursor = json.loads(cli("list", "-t", "acme", "--limit", "2", "--json").stdout)["nextCursor"]
    assert re.fullmatch(r"c2[A-Za-z0-9_-]+", cursor)  # c2 since cursors carry their tenant's mark (issue 36)
    assert dated(first.stdout) == (
        "2 memories, newest first\n"
        f"1. {ids[2]}  (project, stored DATE)\n"
        "   fact three\n"
        f"2. {ids[1]}  (project, stored DATE)\n"
        "   fact two\n"
        f"More after these: run the same command with --cursor {cursor} (or --all for every one).\n"
    )
    last = cli("list", "-t", "acme", "--limit", "2", "--cursor", cursor)
    assert dated(last.stdout) == f"1 memory, newest first\n1. {ids[0]}  (project, stored DATE)\n   fact one\n"
    assert json.loads(cli("list", "-t", "acme", "--limit", "2", "--cursor", cursor, "--json").stdout) == {
        "memories": [json.loads(cli("list", "-t", "acme", "--json").stdout)["memories"][2]],
        "nextCursor": None,
    }
    every = cli("list", "-t", "acme", "--limit", "1", "--all")
    assert [line.split()[1] for line in every.stdout.splitlines() if re.match(r"\d\. ", line)] == ids[::-1]
    assert every.stdout.startswith("3 memories, newest first\n") and "--cursor" not in every.stdout


def test_list_reaches_memories_past_the_old_stop_at_fifty(cli, tmp_path: Path) -> None:
    import asyncio

    from mcp_memory import Caller, Settings, open_service

    async def seed() -> None:
        settings = Settings.from_env({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake"})
        service = await open_service(settings)
        try:
            for n in range(60):
                await service.remember(Caller("acme"), f"numbered fact {n} of sixty")
        finally:
            await service.close()

    asyncio.run(seed())
    listed = json.loads(cli("list", "-t", "acme", "--all", "--json").stdout)
    assert len(listed["memories"]) == 60 and listed["nextCursor"] is None
    assert len({m["id"] for m in listed["memories"]}) == 60
    assert len(json.loads(cli("list", "-t", "acme", "--limit", "200", "--json").stdout)["memories"]) == 60
    assert json.loads(cli("list", "-t", "acme", "--json").stdout)["nextCursor"] is not None  # 20 a page


def test_a_cursor_that_is_not_one_is_refused_naming_the_option(cli) -> None:
    refused = cli("list", "-t", "acme", "--cursor", "banana")
    assert refused.returncode == 2
    assert refused.stderr == (
        "error: --cursor is not a cursor this server gave out; pass the next cursor of a page as it was returned.\n"
    )
    too_many = cli("list", "-t", "acme", "--limit", "201")
    assert too_many.returncode == 2 and too_many.stderr == "error: --limit must be a whole number from 1 to 200.\n"


# --------------------------------------------------------------------------- export


def test_a_bare_export_names_its_tenant_and_the_tenants_it_left_out(cli) -> None:
    remembered(cli, "local", "a local fact")
    remembered(cli, "acme", "an acme fact")
    remembered(cli, "beta", "a beta fact")
    bare = cli("export")
    assert bare.returncode == 0
    assert bare.stderr == (
        "exported 1 memory of tenant local, without embeddings\n"
        "not exported: 2 other tenants hold memories (acme, beta); --all-tenants exports every tenant, "
        "--tenant NAME (repeatable) the ones you name\n"
    )
    assert [json.loads(line).get("tenant") for line in bare.stdout.splitlines()[1:]] == ["local"]
    summary = json.loads(cli("export", "--json").stderr)
    assert summary["tenants"] == {"local": 1} and summary["otherTenants"] == ["acme", "beta"]
    both = cli("export", "-t", "acme", "-t", "beta")
    assert both.stderr == (
        "exported 2 memories of tenants acme (1), beta (1), without embeddings\n"
        "not exported: 1 other tenant holds memories (local); --all-tenants exports every tenant, "
        "--tenant NAME (repeatable) the ones you name\n"
    )
    every = cli("export", "--all-tenants")
    assert every.stderr == "exported 3 memories of tenants acme (1), beta (1), local (1), without embeddings\n"


# --------------------------------------------------------------------------- stdin


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("Use make test-all\n", "Use make test-all"),  # echo's newline
        ("Use make test-all\r\n", "Use make test-all"),  # a Windows editor's
        ("Use make test-all\n\n", "Use make test-all\n"),  # only the final one
        ("  indented, kept  \n", "  indented, kept  "),
        ("line one\nline two", "line one\nline two"),  # no final newline: nothing taken
    ],
)
def test_content_from_stdin_loses_its_final_newline_only(cli, sent: str, stored: str) -> None:
    done = cli("remember", "-t", "acme", "-", "--json", stdin=sent)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["memory"]["content"] == stored


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("bad", ["banana", "01ARZ3NDEKTSV4RRFFQ69G5FA", "9" * 27, "01arz3ndektsv4rrffq69g5fav"])
def test_a_malformed_id_is_refused_the_same_way_by_forget_and_replaces(cli, bad: str) -> None:
    remembered(cli, "acme", "a fact to keep")
    said = f'"{bad}" is not a memory id (26 characters, as recall and list_memories show it).\n'
    forgot = cli("forget", "-t", "acme", bad)
    assert forgot.returncode == 2 and forgot.stdout == "" and forgot.stderr == f"error: ID: {said}"
    replaced = cli("remember", "-t", "acme", "a new fact", "--replaces", bad)
    assert replaced.returncode == 2 and replaced.stderr == f"error: --replaces: {said}"
    assert json.loads(cli("stats", "-t", "acme", "--json").stdout)["total"] == 1  # nothing written or removed


def test_a_well_formed_id_that_names_nothing_is_still_not_found_with_exit_1(cli) -> None:
    missing = cli("forget", "-t", "acme", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert missing.returncode == 1
    assert (
        missing.stdout == "No memory with id 01ARZ3NDEKTSV4RRFFQ69G5FAV exists for this project. Nothing was deleted.\n"
    )


# --------------------------------------------------------------------------- layout


def test_a_stored_text_is_wrapped_at_words_and_indented_with_no_trailing_blanks(cli) -> None:
    text = "Deploys go out on Thursdays after the release checklist is signed by two reviewers of the team"
    (memory_id,) = remembered(cli, "acme", text)
    shown = cli("list", "-t", "acme").stdout
    assert dated(shown) == (
        "1 memory, newest first\n"
        f"1. {memory_id}  (project, stored DATE)\n"
        "   Deploys go out on Thursdays after the release checklist is signed by two\n"
        "   reviewers of the team\n"
    )
