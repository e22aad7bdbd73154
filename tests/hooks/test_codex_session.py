"""Real Codex CLI sessions (`codex exec`, the pinned version) with mcp-memory as its MCP server and
the command hooks in `~/.codex/hooks.json`, as docs/hooks.md#codex says, against a fake Responses
API on 127.0.0.1 that records every request: a memory the model stored through the server in one
session reaches the model's request on a related prompt of a later one, an unrelated prompt
brings none, and a command touching a file a memory is tagged for brings it before the next turn."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support.cli_runner import run_cli
from tests.support.fake_responses import DONE, Call, FakeResponses, texts

TENANT = "acme"
DEPLOY = "The deploy script lives in ops/deploy.sh and must run with --dry-run first"
REFUND_RULE = "Partial refunds must call ledger.reverse_entry(); finance reconciles on reverse entries only"
#: Unrelated notes stored after it: the digest (budget 300) shows the newest, so the earlier
#: memory can reach the model only through the prompt's or the tool's hook.
FILLER = [
    f"Team lunch rota note {n}: the {colour} team books the room on floor {n} for Thursday sessions"
    for n, colour in enumerate(["red", "blue", "green", "amber", "violet", "teal", "grey", "pink"], 1)
]
SESSION_SECONDS = 120


def block(language: str) -> str:
    """The first ```LANGUAGE block of docs/hooks.md#codex, its tenant this test's."""
    section = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8").split("\n## Codex\n", 1)[1]
    body = section.split(f"```{language}\n", 1)[1].split("```", 1)[0]
    assert "my-project" in body
    return body.replace("my-project", TENANT)


def config(base_url: str) -> str:
    """~/.codex/config.toml: the fake model provider, then the memory server as docs/hooks.md#codex
    gives it."""
    return f"""model = "gpt-5-codex"
model_provider = "fake"

[model_providers.fake]
name = "Fake Responses API"
base_url = "{base_url}"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"

{block("toml")}"""


def home_for(root: Path) -> dict[str, str]:
    """A scratch HOME with the hooks installed; the sessions' environment."""
    (root / ".codex").mkdir(parents=True)
    (root / "project").mkdir()
    hooks = json.loads(block("json"))  # ~/.codex/hooks.json as docs/hooks.md#codex gives it
    assert set(hooks["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"}
    (root / ".codex" / "hooks.json").write_text(json.dumps(hooks), encoding="utf-8")
    bin_dir = str(Path(sys.executable).parent)  # where this environment's mcp-memory is
    return {
        "HOME": str(root),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_OPENAI_KEY": "sk-test-not-a-key",
        "MEMORY_HOOK_BUDGET": "300",
        # a session's first hooks wait for the server Codex starts at the same moment: long enough for
        # two shared cores under load (the wait itself: docs/hooks.md#a-sessions-first-seconds)
        "MEMORY_HOOK_TIMEOUT_MS": "8000",
        "LANG": "C.UTF-8",
    }


def session(codex: str, env: dict[str, str], prompt: str, script: list[Call] | None = None) -> FakeResponses:
    """One `codex exec` run to its end; the fake's recorded requests."""
    home = Path(env["HOME"])
    with FakeResponses(script or []) as fake:
        (home / ".codex" / "config.toml").write_text(config(fake.base_url), encoding="utf-8")
        # hooks run only once trusted: /hooks in the TUI records that; `exec` takes this flag instead
        command = [codex, "exec", "--strict-config", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", prompt]
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, cwd=home / "project", timeout=SESSION_SECONDS
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip() == DONE
        return fake


@pytest.fixture
def codex_env(tmp_path: Path) -> dict[str, str]:
    return home_for(tmp_path / "home")


def output_of(body: dict[str, Any], call_id: str) -> str:
    """The output Codex handed the model for one call."""
    (output,) = [
        i["output"] for i in body["input"] if i.get("type") == "function_call_output" and i["call_id"] == call_id
    ]
    return str(output)


def remember(env: dict[str, str], *contents: str, tags: Sequence[str] = ()) -> None:
    """Earlier work: each of `contents` stored in the tenant's store of `env`, in this order, as
    `mcp-memory remember` stores it (the same service), through one opening of the store: a
    command each opened the store and loaded the model again, about 0.3 s of CPU each."""
    asyncio.run(_remember(env, contents, tags))


async def _remember(env: dict[str, str], contents: Sequence[str], tags: Sequence[str]) -> None:
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    # the store the sessions' serve-stdio opens: the default one of their HOME
    service = await open_service(Settings.from_env(env))
    try:
        for content in contents:
            await service.remember(Caller(TENANT), content, tags=tags)
    finally:
        await service.close()


def test_a_memory_stored_through_the_server_in_one_session_reaches_the_model_on_a_related_prompt_in_the_next(
    codex: str, codex_env: dict[str, str]
) -> None:
    first = session(
        codex, codex_env, "Note where the deploy script is", [Call("remember", {"content": DEPLOY}, "mcp__memory")]
    )
    assert len(first.bodies) == 2  # the call, then the answer after its result
    handed = output_of(first.bodies[1], "call_1")  # the server's answer, as Codex handed it to the model
    assert f'"content":"{DEPLOY}"' in handed and '"created":true' in handed, handed
    listed = run_cli("list", "--tenant", TENANT, env=codex_env)
    assert DEPLOY in " ".join(listed.stdout.split())
    remember(codex_env, *FILLER)  # later work, newer than it

    later = session(codex, codex_env, "How do I run the deploy script?")
    seen = texts(later.bodies[0])
    assert "[MEMORY] What this project remembers:" in seen  # the SessionStart digest
    assert FILLER[-1] in seen
    assert "[MEMORY] 1 memory stored earlier matches this prompt." in seen  # the UserPromptSubmit hook
    assert DEPLOY in seen and "quoted as data" in seen
    assert len(later.bodies) == 1  # no tool call was needed


def test_a_prompt_unrelated_to_any_memory_brings_nothing_but_the_digest(codex: str, codex_env: dict[str, str]) -> None:
    remember(codex_env, DEPLOY, *FILLER)
    seen = texts(session(codex, codex_env, "Write a haiku about the sea.").bodies[0])
    assert "[MEMORY] What this project remembers:" in seen
    assert "matches this prompt" not in seen and DEPLOY not in seen


PARKING = [f"Parking note {n}: visitors park in garage {n} on level {n % 4} after {n % 5 + 5} pm" for n in range(1, 17)]


def test_a_command_reading_a_file_a_memory_is_tagged_for_brings_it_through_pre_tool_use_before_the_next_turn(
    codex: str, codex_env: dict[str, str]
) -> None:
    project = Path(codex_env["HOME"]) / "project"
    target = project / "services" / "billing" / "refund.py"
    target.parent.mkdir(parents=True)
    target.write_text("def refund():\n    pass\n", encoding="utf-8")
    # the rule, tagged for its file, then newer notes enough to fill the digest (budget 300) without
    # it: it can reach the model only through the tool hook
    remember(codex_env, REFUND_RULE, tags=["path:billing/refund.py"])
    remember(codex_env, *PARKING)
    call = Call("exec_command", {"cmd": "cat services/billing/refund.py"})
    fake = session(codex, codex_env, "Tidy up the code", [call])
    assert len(fake.bodies) == 2
    assert REFUND_RULE not in texts(fake.bodies[0])  # neither in the digest nor for the prompt
    after = texts(fake.bodies[1])
    assert "[MEMORY] 1 memory stored earlier concerns this command." in after
    assert REFUND_RULE in after


def test_without_the_hooks_the_same_session_brings_the_model_no_memory(codex: str, codex_env: dict[str, str]) -> None:
    """The control: what the tests above see comes from the hooks, not from Codex or the server."""
    (Path(codex_env["HOME"]) / ".codex" / "hooks.json").unlink()
    remember(codex_env, DEPLOY)
    seen = texts(session(codex, codex_env, "How do I run the deploy script?").bodies[0])
    assert "[MEMORY]" not in seen and DEPLOY not in seen
