"""`mcp-memory hook --client codex EVENT` (docs/hooks.md#codex): fed the payloads Codex CLI's hook
input schemas describe (codex-rs/hooks/schema/generated/*.command.input.schema.json), it prints
the JSON Codex's output schemas take, with the same memories a Claude Code session of the same
store is given, and exits 0 on every input."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_memory.cli.hooks import command as hook
from mcp_memory.cli.hooks.codex import patched_path
from mcp_memory.core.model import Caller
from mcp_memory.server.hooks.events import CAPTURE_REASON
from tests.conftest import Env
from tests.hooks.support import payload, pre_tool_use, run_hook, session_start, user_prompt

ACME = Caller("acme")
PROJECT = "/Users/ada/my-project"
DEPLOY = "Deploys go out on Tuesdays after the standup; never on Fridays."
REFUND_RULE = "Partial refunds must call ledger.reverse_entry(); finance reconciles on reverse entries only."
HELM_FIX = "When a deploy fails with 'another operation is in progress', run helm rollback harbor-api first."
KOREAN_RULE = "결제 모듈의 환불은 반드시 ledger.reverse_entry()를 호출한다."
CODEX = ["--client", "codex"]


def without_stops(served: dict[str, str]) -> dict[str, str]:
    """Claude Code's hook without stops (docs/hooks.md#stopped-before-it-runs): Codex's calls are never
    stopped, so these are the answers its hook must give byte for byte."""
    return {**served, "MEMORY_HOOK_STOP": "off"}


#: The fields every Codex hook input requires (its schemas' `required`), with values of their types.
CODEX_COMMON: dict[str, Any] = {
    "session_id": "019a7c1e-codex-session",
    "transcript_path": None,
    "cwd": PROJECT,
    "model": "gpt-5-codex",
    "permission_mode": "default",
}


def codex_session_start(source: str = "startup", **extra: Any) -> dict[str, Any]:
    return {**CODEX_COMMON, "hook_event_name": "SessionStart", "source": source, **extra}


def codex_prompt(prompt: str, **extra: Any) -> dict[str, Any]:
    return {**CODEX_COMMON, "hook_event_name": "UserPromptSubmit", "prompt": prompt, "turn_id": "t1", **extra}


def codex_tool(tool: str, command: str, **extra: Any) -> dict[str, Any]:
    """PreToolUse: a shell call is tool_name Bash, an edit apply_patch; both carry tool_input.command."""
    return {
        **CODEX_COMMON,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"command": command},
        "tool_use_id": "call_01",
        "turn_id": "t1",
        **extra,
    }


def codex_stop(active: bool = False) -> dict[str, Any]:
    return {
        **CODEX_COMMON,
        "hook_event_name": "Stop",
        "stop_hook_active": active,
        "last_assistant_message": "Done.",
        "turn_id": "t1",
    }


def patch(*headers: str) -> str:
    body = "".join(f"{h}\n+line\n" if h.startswith("*** Add") else f"{h}\n@@\n-a\n+b\n" for h in headers)
    return f"*** Begin Patch\n{body}*** End Patch\n"


def codex_context(out: str, event: str) -> str:
    """The additional context, after checking the line is exactly what Codex's output schema takes."""
    data = json.loads(out)
    assert set(data) == {"hookSpecificOutput"}
    assert set(data["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert data["hookSpecificOutput"]["hookEventName"] == event
    text: str = data["hookSpecificOutput"]["additionalContext"]
    return text


async def test_a_codex_session_start_gets_the_same_digest_as_a_claude_code_one(
    env: Env, served: dict[str, str]
) -> None:
    await env.service.remember(ACME, DEPLOY)
    codex = await run_hook([*CODEX, "SessionStart"], payload(codex_session_start()), served)
    claude = await run_hook(["SessionStart"], payload(session_start(session_id="claude")), served)
    assert codex.code == 0
    assert f"   {DEPLOY}" in codex_context(codex.out, "SessionStart").splitlines()
    assert codex.out == claude.out


async def test_a_codex_prompt_gets_the_same_memories_as_a_claude_code_one_in_korean_too(
    env: Env, served: dict[str, str]
) -> None:
    await env.service.remember(ACME, "배포는 매주 화요일 스탠드업 후에 진행합니다.")
    asked = "배포는 매주 화요일 스탠드업 후에 진행합니다"
    codex = await run_hook([*CODEX, "UserPromptSubmit"], payload(codex_prompt(asked)), served)
    claude = await run_hook(["UserPromptSubmit"], payload(user_prompt(asked, session_id="claude")), served)
    assert codex.code == 0
    assert (
        "   배포는 매주 화요일 스탠드업 후에 진행합니다." in codex_context(codex.out, "UserPromptSubmit").splitlines()
    )
    assert codex.out == claude.out


async def test_a_codex_shell_command_gets_the_memory_that_names_it(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, HELM_FIX)
    command = "helm rollback harbor-api 41"
    codex = await run_hook([*CODEX, "PreToolUse"], payload(codex_tool("Bash", command)), served)
    claude = await run_hook(  # Codex's calls are never stopped: Claude Code's without stops are the same
        ["PreToolUse"], payload(pre_tool_use("Bash", {"command": command}, session_id="claude")), without_stops(served)
    )
    assert f"   {HELM_FIX}" in codex_context(codex.out, "PreToolUse").splitlines()
    assert codex.out == claude.out


@pytest.mark.parametrize(
    ("tag", "header", "path"),
    [
        ("path:services/billing/", "*** Update File: services/billing/refund.py", "services/billing/refund.py"),
        ("path:services/billing/", "*** Add File: services/billing/v2.py", "services/billing/v2.py"),
        ("path:services/billing/", "*** Delete File: services/billing/old.py", "services/billing/old.py"),
        ("path:src/결제/", "*** Update File: src/결제/환불.py", "src/결제/환불.py"),
    ],
)
async def test_a_codex_patch_gets_the_memories_of_the_file_it_touches_as_a_claude_code_edit_does(
    env: Env, served: dict[str, str], tag: str, header: str, path: str
) -> None:
    await env.service.remember(ACME, KOREAN_RULE if "결제" in tag else REFUND_RULE, tags=[tag])
    codex = await run_hook([*CODEX, "PreToolUse"], payload(codex_tool("apply_patch", patch(header))), served)
    edit = {"file_path": f"{PROJECT}/{path}", "old_string": "a", "new_string": "b"}
    claude = await run_hook(
        ["PreToolUse"], payload(pre_tool_use("Edit", edit, session_id="claude")), without_stops(served)
    )
    rule = KOREAN_RULE if "결제" in tag else REFUND_RULE
    assert f"   {rule}" in codex_context(codex.out, "PreToolUse").splitlines()
    assert codex.out == claude.out


def test_a_patch_is_read_for_the_first_file_it_names_and_a_rename_for_its_source() -> None:
    assert patched_path(patch("*** Update File: a.py", "*** Add File: b.py")) == "a.py"
    assert (
        patched_path("*** Begin Patch\n*** Update File: old.py\n*** Move to: new.py\n@@\n*** End Patch\n") == "old.py"
    )
    assert patched_path("*** Begin Patch\n+*** Add File: inside-a-hunk.py\n*** End Patch\n") is None
    assert patched_path("*** Begin Patch\n*** Add File:    \n*** End Patch\n") is None


async def test_a_patch_of_a_file_nothing_concerns_prints_nothing(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/"])
    run = await run_hook(
        [*CODEX, "PreToolUse"], payload(codex_tool("apply_patch", patch("*** Add File: notes/todo.txt"))), served
    )
    assert (run.code, run.out) == (0, "")


async def test_a_huge_patch_is_read_for_its_file(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:services/billing/"])
    big = "*** Begin Patch\n*** Add File: services/billing/data.py\n" + "+x = 1\n" * 1_000_000 + "*** End Patch\n"
    assert len(big) > 6_000_000
    run = await run_hook([*CODEX, "PreToolUse"], payload(codex_tool("apply_patch", big)), served)
    assert f"   {REFUND_RULE}" in codex_context(run.out, "PreToolUse").splitlines()


@pytest.mark.parametrize(
    "stdin",
    [
        pytest.param("", id="empty"),
        pytest.param("{not json", id="malformed"),
        pytest.param("[1, 2]", id="not an object"),
        pytest.param(payload(codex_tool("apply_patch", "no patch here")), id="a patch naming no file"),
        pytest.param(payload({**codex_tool("apply_patch", ""), "tool_input": "text"}), id="tool_input not an object"),
        pytest.param(payload({**codex_tool("apply_patch", ""), "tool_input": {"command": 7}}), id="command not text"),
        pytest.param(payload(codex_tool("Bash", "   ")), id="a blank command"),
        pytest.param(payload(codex_tool("mcp__memory__recall", "x")), id="an MCP tool"),
    ],
)
async def test_codex_input_the_hook_cannot_use_prints_nothing_and_exits_0(
    env: Env, served: dict[str, str], stdin: str
) -> None:
    await env.service.remember(ACME, REFUND_RULE, tags=["path:*.py"])
    await env.service.remember(ACME, HELM_FIX)
    run = await run_hook([*CODEX, "PreToolUse"], stdin, served)
    assert (run.code, run.out) == (0, "")


async def test_unknown_codex_fields_are_ignored_and_never_choose_the_tenant(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(Caller("other"), DEPLOY)
    data = codex_prompt("when do deploys go out", tenant="other", agent_id="a1", agent_type="worker", future={"x": 1})
    assert (await run_hook([*CODEX, "UserPromptSubmit"], payload(data), served)).out == ""
    await env.service.remember(ACME, DEPLOY)
    run = await run_hook([*CODEX, "UserPromptSubmit"], payload(data), served)
    assert f"   {DEPLOY}" in codex_context(run.out, "UserPromptSubmit").splitlines()


async def test_a_codex_stop_asks_for_durable_facts_once_after_three_prompts(env: Env, served: dict[str, str]) -> None:
    capture = {**served, "MEMORY_HOOK_CAPTURE": "1"}
    for n in range(3):
        await run_hook([*CODEX, "UserPromptSubmit"], payload(codex_prompt(f"prompt {n}")), capture)
    first = await run_hook([*CODEX, "Stop"], payload(codex_stop()), capture)
    assert json.loads(first.out) == {"decision": "block", "reason": CAPTURE_REASON}
    assert (await run_hook([*CODEX, "Stop"], payload(codex_stop(active=True)), capture)).out == ""


async def test_a_codex_compaction_lets_the_next_stop_ask_before_three_prompts(served: dict[str, str]) -> None:
    capture = {**served, "MEMORY_HOOK_CAPTURE": "1"}
    await run_hook([*CODEX, "UserPromptSubmit"], payload(codex_prompt("one prompt")), capture)
    assert (await run_hook([*CODEX, "Stop"], payload(codex_stop()), capture)).out == ""
    compact = {**CODEX_COMMON, "hook_event_name": "PreCompact", "trigger": "auto", "turn_id": "t1"}
    assert (await run_hook([*CODEX, "PreCompact"], payload(compact), capture)).out == ""
    after = await run_hook([*CODEX, "Stop"], payload(codex_stop()), capture)
    assert json.loads(after.out) == {"decision": "block", "reason": CAPTURE_REASON}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*CODEX, "PostToolUseFailure"], "Codex sends no PostToolUseFailure event"),
        (["--client", "cursor", "Stop"], "--client must be one of claude-code, codex"),
        (["Stop", "--client"], "--client needs a value"),
    ],
)
async def test_a_client_or_event_codex_cannot_use_exits_0_with_one_line_naming_it(
    args: list[str], message: str, served: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    run = await run_hook(args, "{}", served)
    assert (run.code, run.out) == (0, "")
    (line,) = capsys.readouterr().err.splitlines()
    assert json.loads(line)["message"] == message and json.loads(line)["usage"] == hook.USAGE


async def test_the_client_option_may_come_before_or_after_the_event(env: Env, served: dict[str, str]) -> None:
    await env.service.remember(ACME, DEPLOY)
    before = await run_hook([*CODEX, "SessionStart"], payload(codex_session_start()), served)
    after = await run_hook(["SessionStart", "--client=codex"], payload(codex_session_start(session_id="s2")), served)
    assert before.out == after.out and f"   {DEPLOY}" in codex_context(after.out, "SessionStart").splitlines()
