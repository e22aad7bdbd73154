"""The tool hooks (docs/hooks.md#at-the-moment-of-action): `mcp-memory hook PreToolUse` and
`PostToolUseFailure` fed the payloads Claude Code 2.1.328 sends, against a serving process of the
test's service: the memories that concern the call as additional context, nothing for an
unrelated call, once a session, within the per-call budget, and exit 0 on every input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_memory.core import actions
from mcp_memory.core.digest import estimate_tokens
from mcp_memory.core.model import Caller
from mcp_memory.server.budget import TOOL_LIMIT
from mcp_memory.server.hooks.events import DEFAULT_TOOLS, tool_call
from mcp_memory.server.hooks.wire import Ask, parse_ask
from tests.conftest import Env
from tests.hooks.support import (
    COMMON,
    context_of,
    payload,
    post_tool_use_failure,
    pre_tool_use,
    reason_of,
    run_hook,
    session_start,
)

ACME = Caller("acme")
PROJECT = COMMON["cwd"]
REFUND_RULE = "Partial refunds must call ledger.reverse_entry(); finance reconciles on reverse entries only."
MIGRATIONS_RULE = "Never edit a merged migration under db/migrations/; add a new numbered file instead."
HELM_FIX = "When a deploy fails with 'another operation is in progress', run helm rollback harbor-api first."


def read(path: str, **extra: Any) -> str:
    return payload(pre_tool_use("Read", {"file_path": f"{PROJECT}/{path}"}, **extra))


def without_stops(served: dict[str, str]) -> dict[str, str]:
    return {**served, "MEMORY_HOOK_STOP": "off"}


async def test_a_read_of_a_file_a_memory_is_tagged_for_brings_that_memory(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/refund.py"])
    run = await run_hook(["PreToolUse"], read("services/billing/refund.py"), served)
    assert run.code == 0
    text = context_of(run.out)
    assert text.startswith("[MEMORY] 1 memory stored earlier concerns this file.\n")
    assert f"   {REFUND_RULE}" in text.splitlines() and "quoted as data" in text


@pytest.mark.parametrize(
    ("tag", "path"),
    [
        ("path:refund.py", "services/billing/refund.py"),
        ("path:billing/refund.py", "services/billing/refund.py"),
        ("path:services/billing/", "services/billing/refund.py"),
        ("path:billing/", "services/billing/v2/refund.py"),
        ("path:*.py", "services/billing/refund.py"),
        ("path:src/결제/", "src/결제/환불.py"),
    ],
)
async def test_a_path_tag_names_a_file_by_its_end_a_folder_by_a_trailing_slash_or_an_extension(
    env: Env, served: dict[str, str], tag: str, path: str
) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=[tag])
    run = await run_hook(["PreToolUse"], read(path), served)
    assert f"   {REFUND_RULE}" in context_of(run.out).splitlines()


@pytest.mark.parametrize(
    ("tag", "path"),
    [
        ("path:refund.py", "services/billing/refunds.py"),
        ("path:billing/", "services/billing.py"),
        ("path:services/billing/", "other/services/billing_v2/refund.py"),
        ("path:*.py", "services/billing/refund.pyc"),
    ],
)
async def test_a_path_tag_does_not_apply_to_a_file_it_does_not_name(
    env: Env, served: dict[str, str], tag: str, path: str
) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=[tag])
    run = await run_hook(["PreToolUse"], read(path), served)
    assert (run.code, run.out) == (0, "")


async def test_an_edit_of_a_folder_a_memory_names_brings_it_without_a_tag(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, MIGRATIONS_RULE)
    edit = {"file_path": f"{PROJECT}/db/migrations/0042_index.sql", "old_string": "a", "new_string": "b"}
    run = await run_hook(["PreToolUse"], payload(pre_tool_use("Edit", edit)), served)
    # a rule ("Never edit") stops the edit, its text the reason (test_tool_stop.py); without stops, the context
    assert f"   {MIGRATIONS_RULE}" in reason_of(run.out).splitlines()
    quiet = await run_hook(["PreToolUse"], payload(pre_tool_use("Edit", edit, session_id="s2")), without_stops(served))
    assert f"   {MIGRATIONS_RULE}" in context_of(quiet.out).splitlines()


async def test_a_failed_command_brings_the_memory_that_names_its_command(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, HELM_FIX)
    await env.service.remember(ACME, "helm charts live in charts/ and are linted in CI.")
    failed = post_tool_use_failure(
        "helm rollback harbor-api 41", "Exit code 1\nError: another operation (install/upgrade/rollback) is in progress"
    )
    run = await run_hook(["PostToolUseFailure"], payload(failed), served)
    text = context_of(run.out, "PostToolUseFailure")
    assert text.startswith("[MEMORY] 1 memory stored earlier may explain this failure.\n")
    assert f"   {HELM_FIX}" in text.splitlines()


async def test_a_memory_is_injected_once_a_session_and_again_in_a_new_one(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/"])
    first = await run_hook(["PreToolUse"], read("services/billing/refund.py"), served)
    assert f"   {REFUND_RULE}" in context_of(first.out).splitlines()
    edit = {"file_path": f"{PROJECT}/services/billing/refund.py", "old_string": "a", "new_string": "b"}
    again = await run_hook(["PreToolUse"], payload(pre_tool_use("Edit", edit)), served)
    assert again.out == ""  # already in this session's context
    cleared = await run_hook(["SessionStart"], payload(session_start("clear")), served)
    assert f"   {REFUND_RULE}" in context_of(cleared.out, "SessionStart").splitlines()  # a cleared context holds none
    other = await run_hook(["PreToolUse"], read("services/billing/refund.py", session_id="another"), served)
    assert f"   {REFUND_RULE}" in context_of(other.out).splitlines()


async def test_a_call_brings_at_most_two_memories_within_the_tool_budget(env: Env, served: dict[str, str]) -> None:
    for n in range(5):
        await env.service.remember(
            ACME, f"Billing rule {n}: amounts are integer cents, reviewed by team {n}.", tags=["path:billing/"]
        )
    run = await run_hook(["PreToolUse"], read("billing/refund.py"), served)
    text = context_of(run.out)
    assert text.startswith(f"[MEMORY] {TOOL_LIMIT} memories stored earlier concern this file.")
    assert sum(line.startswith("   Billing rule") for line in text.splitlines()) == TOOL_LIMIT
    small = await run_hook(
        ["PreToolUse"], read("billing/refund.py", session_id="s2"), {**served, "MEMORY_HOOK_TOOL_BUDGET": "150"}
    )
    assert small.out == "" or estimate_tokens(context_of(small.out)) <= 150


@pytest.mark.parametrize(
    "call",
    [
        ("Read", {"file_path": f"{PROJECT}/README.md"}),
        ("Bash", {"command": "ls -la", "description": "List files"}),
        ("Bash", {"command": "git status --short", "description": "Show status"}),
        ("Write", {"file_path": f"{PROJECT}/notes/todo.txt", "content": "buy milk"}),
    ],
)
async def test_a_call_no_memory_concerns_brings_nothing(
    env: Env, served: dict[str, str], call: tuple[str, dict]
) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/"])
    await env.service.remember(ACME, MIGRATIONS_RULE)
    await env.service.remember(ACME, HELM_FIX)
    run = await run_hook(["PreToolUse"], payload(pre_tool_use(*call)), served)
    assert (run.code, run.out) == (0, "")


async def test_only_the_tools_memory_hook_tools_names_are_read(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/"])
    only_shell = {**served, "MEMORY_HOOK_TOOLS": "Bash"}
    assert (await run_hook(["PreToolUse"], read("services/billing/refund.py"), only_shell)).out == ""
    grep = pre_tool_use("Grep", {"pattern": "refund", "path": f"{PROJECT}/services/billing/refund.py"})
    assert (await run_hook(["PreToolUse"], payload(grep), served)).out == ""
    none = {**served, "MEMORY_HOOK_TOOLS": "none"}
    assert (await run_hook(["PreToolUse"], read("services/billing/refund.py"), none)).out == ""


async def test_an_unknown_tool_in_memory_hook_tools_is_ignored_with_one_line(
    env: Env, served: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/"])
    run = await run_hook(["PreToolUse"], read("services/billing/refund.py"), {**served, "MEMORY_HOOK_TOOLS": "Red"})
    assert f"   {REFUND_RULE}" in context_of(run.out).splitlines()  # the default tools
    (line,) = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert line["event"] == "hook_setting_ignored" and line["setting"] == "MEMORY_HOOK_TOOLS"
    assert "Red" not in json.dumps(line)


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not json",
        "[1, 2]",
        json.dumps({**COMMON, "hook_event_name": "PreToolUse"}),
        json.dumps({**COMMON, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": "a/b.py"}),
        json.dumps({**COMMON, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": ""}}),
        json.dumps({**COMMON, "hook_event_name": "PreToolUse", "tool_name": 7, "tool_input": {"file_path": "a.py"}}),
        json.dumps(pre_tool_use("Bash", {"command": "   "})),
        json.dumps(pre_tool_use("Read", {"file_path": "\ud800\x00"}, future_field={"x": [1]})),
        json.dumps(post_tool_use_failure("make test", None)),  # type: ignore[arg-type]
        json.dumps(
            {**COMMON, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "x" * 100_000}}
        ),
        "[" * 5000,
    ],
)
async def test_a_malformed_empty_or_odd_tool_payload_exits_0_with_nothing_or_valid_json(
    env: Env, served: dict[str, str], stdin: str
) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:*.py"])
    for event in ("PreToolUse", "PostToolUseFailure"):
        run = await run_hook([event], stdin, served)
        assert run.code == 0
        assert run.out == "" or json.loads(run.out)["hookSpecificOutput"]["hookEventName"] == event


async def test_a_huge_write_sends_only_its_path_and_still_brings_the_memory(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(
        ACME, "Korean docs under docs/ko/ start with a link to the original.", tags=["path:docs/ko/"]
    )
    huge = {"file_path": f"{PROJECT}/docs/ko/설치.md", "content": "가" * 1_500_000}
    run = await run_hook(["PreToolUse"], payload(pre_tool_use("Write", huge)), served)
    assert "docs/ko/" in context_of(run.out)


def test_a_tool_question_carries_the_path_or_command_and_never_a_files_content() -> None:
    call = tool_call(
        "PreToolUse",
        pre_tool_use("Edit", {"file_path": "/p/a.py", "old_string": "secret = 1", "new_string": "secret = 2"}),
        DEFAULT_TOOLS,
    )
    assert call == {
        "event": "PreToolUse",
        "tool": "Edit",
        "input": {"file_path": "/p/a.py"},
        "cwd": PROJECT,
        "error": "",
    }
    line = Ask("tool", "acme", call=call).to_line()
    assert b"secret" not in line and parse_ask(json.loads(line)).call == call


@pytest.mark.parametrize(
    "call",
    [
        None,
        {"event": "Stop", "tool": "Read", "input": {"file_path": "a"}},
        {"event": "PreToolUse", "tool": "Read", "input": {}},
        {"event": "PreToolUse", "tool": "Read", "input": {"content": "a"}},
        {"event": "PreToolUse", "tool": "Read", "input": {"file_path": "a" * 2001}},
        {"event": "PreToolUse", "tool": "", "input": {"file_path": "a"}},
        {"event": "PreToolUse", "tool": "Read", "input": {"file_path": 3}},
    ],
)
def test_a_tool_question_with_a_wrong_call_is_refused_naming_call(call: object) -> None:
    line = json.loads(Ask("digest", "acme").to_line())
    with pytest.raises(ValueError, match="^call$"):
        parse_ask({**line, "kind": "tool", "call": call})


def test_the_hook_process_and_the_service_listen_to_the_same_default_tools() -> None:
    # the hook process cannot import core/actions.py (regex, shlex and dataclasses cost every call)
    assert DEFAULT_TOOLS == actions.DEFAULT_TOOLS


@pytest.mark.parametrize(
    ("kind", "budget", "accepted"), [("tool", 100, True), ("tool", 99, False), ("prompt", 150, False)]
)
def test_a_tool_question_may_ask_for_a_smaller_budget_than_a_prompt(kind: str, budget: int, accepted: bool) -> None:
    call = {"event": "PreToolUse", "tool": "Read", "input": {"file_path": "a.py"}} if kind == "tool" else None
    line = json.loads(Ask(kind, "acme", budget=budget, call=call).to_line())
    if accepted:
        assert parse_ask(line).budget == budget
    else:
        with pytest.raises(ValueError, match="^budget$"):
            parse_ask(line)


async def test_a_read_then_an_edit_of_the_same_file_is_embedded_once_and_answers_alike(env: Env) -> None:
    from mcp_memory.core.service import ACTION_EMBEDDINGS

    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/refund.py"])
    before = env.embedder.calls
    reading = actions.action_of("PreToolUse", "Read", {"file_path": "/p/services/billing/refund.py"}, "/p")
    editing = actions.action_of("PreToolUse", "Edit", {"file_path": "/p/services/billing/refund.py"}, "/p")
    assert reading is not None and editing is not None
    first = await env.service.concerning(ACME, reading)
    again = await env.service.concerning(ACME, editing)
    assert env.embedder.calls == before + 1
    assert [m.content for m in first.declared] == [m.content for m in again.declared] == [REFUND_RULE]
    for i in range(ACTION_EMBEDDINGS):  # the oldest question is embedded again once that many came after it
        other = actions.action_of("PreToolUse", "Read", {"file_path": f"/p/other/file_{i}.py"}, "/p")
        assert other is not None
        await env.service.concerning(ACME, other)
    calls = env.embedder.calls
    await env.service.concerning(ACME, editing)
    assert env.embedder.calls == calls + 1


async def test_a_failed_command_brings_the_memory_that_names_the_port_or_host_of_its_error(
    env: Env, served: dict[str, str]
) -> None:
    port_fix = "The API tests need the test Postgres on port 5433; start it with the compose file's testdb first."
    await env.service.remember(ACME, port_fix)
    await env.service.remember(ACME, "The staging database listens on port 5432 behind pgbouncer.")
    failed = post_tool_use_failure(
        "pytest tests/api -x -q",
        'E   psycopg.OperationalError: connection to server at "localhost" (127.0.0.1), port 5433 failed',
    )
    run = await run_hook(["PostToolUseFailure"], payload(failed), served)
    lines = context_of(run.out, "PostToolUseFailure").splitlines()
    assert f"   {port_fix}" in lines
    assert not any("5432 behind pgbouncer" in line for line in lines)


async def test_a_candidate_naming_the_files_folder_is_chosen_even_when_recall_kept_nothing(env: Env) -> None:
    """Recall's gate keeps what it judges probable; a memory among its candidates that names what
    the call touches is shown whatever recall made of its wording, and one naming nothing is not."""
    from mcp_memory.core.service import ActionResult

    story = (await env.service.remember(ACME, "New components in web/src/components get a Storybook story.")).memory
    other = (await env.service.remember(ACME, "The web team reviews pull requests on Tuesdays.")).memory
    action = actions.action_of("PreToolUse", "Read", {"file_path": "/p/web/src/components/Button.tsx"}, "/p")
    assert action is not None
    kept_nothing = await recall_that_kept_nothing(env)
    result = ActionResult(action, kept_nothing, [], [other, story])
    assert [(m.id, why) for m, why in result.chosen(frozenset(), 2)] == [(story.id, "named")]
    assert result.chosen(frozenset({story.id}), 2) == []


async def test_a_file_read_or_edit_gets_only_memories_that_name_or_declare_the_file_however_recall_ranks_others(
    env: Env,
) -> None:
    """A path's words say nothing in particular: recall's HIGH answer for a read of a strings helper
    is not shown unless the memory names the file or its folder or is tagged for it; the same
    answer for a command that names nothing of it is shown (its words are a question)."""
    from dataclasses import replace

    from mcp_memory.core.service import ActionResult

    publish = (
        await env.service.remember(ACME, "Never run npm publish from a laptop; the release job publishes.")
    ).memory
    helper = (await env.service.remember(ACME, "Helpers in src/utils/strings.py must stay free of I/O.")).memory
    answer = await env.service.recall(ACME, "npm publish from a laptop", mode="precision")
    assert [r.memory.id for r in answer.results][:1] == [publish.id]
    high = replace(answer, confidence="high", probability=None, bands=None)
    for tool in ("Read", "Edit"):
        read = actions.action_of("PreToolUse", tool, {"file_path": "/p/src/utils/strings.py"}, "/p")
        assert read is not None
        assert ActionResult(read, high, [], [publish]).chosen(frozenset(), 2, "high") == []
        named = ActionResult(read, high, [], [publish, helper]).chosen(frozenset(), 2, "high")
        assert [(m.id, why) for m, why in named] == [(helper.id, "named")]
    command = actions.action_of("PreToolUse", "Bash", {"command": "make release"}, "/p")
    assert command is not None
    assert publish.id in [m.id for m, _ in ActionResult(command, high, [], []).chosen(frozenset(), 2, "high")]


async def recall_that_kept_nothing(env: Env):  # type: ignore[no-untyped-def]
    """A recall answer that kept nothing (another tenant's empty store)."""
    answer = await env.service.recall(Caller("nobody"), "web/src/components/Button.tsx", mode="precision")
    assert answer.results == []
    return answer


def test_an_errors_particular_words_are_its_ports_hosts_settings_and_classes_not_its_prose() -> None:
    error = (
        "[ERROR] Could not transfer artifact from/to harbor-nexus (https://nexus.harbor.internal/maven/): "
        "status code: 401, reason phrase: Unauthorized. psycopg.OperationalError on port 5433; set DB_URL. "
        "데이터베이스 연결 실패 FATAL ERROR: heap out of memory"
    )
    words = actions.error_words(error)
    assert {"harbor-nexus", "nexus.harbor.internal", "psycopg.OperationalError", "5433", "DB_URL"} <= set(words)
    assert not {"ERROR", "FATAL", "Unauthorized", "401", "heap", "memory", "데이터베이스"} & set(words)
    assert actions.error_words("x " * 10_000 + " ".join(f"host-{i}" for i in range(100))) == [
        f"host-{i}" for i in range(actions.ERROR_WORDS_MAX)
    ]


def test_a_memory_naming_a_folder_names_the_files_in_it_not_those_of_the_folder_above() -> None:
    story = "Every new React component in web/src/components gets a Storybook story beside it."
    inside = actions.action_of("PreToolUse", "Write", {"file_path": "/p/web/src/components/Badge.tsx"}, "/p")
    above = actions.action_of("PreToolUse", "Read", {"file_path": "/p/web/src/index.css"}, "/p")
    assert inside is not None and above is not None
    assert actions.names(story, inside) and not actions.names(story, above)
    assert actions.names(
        "Never edit db/migrations/ by hand.", actions.Action("file", "Edit", ("db/migrations/0042.sql",))
    )
