"""The fake Messages API the tool-time benchmark runs Claude Code against (bench/harness/fake_model.py):
with `retry_stopped` a call a PreToolUse hook denied is made again before the script goes on, as
Claude Code 2.1.328 hands the model the denial (docs/hooks.md#stopped-before-it-runs)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from bench.harness.fake_model import Call, FakeModel, denied

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]
FIRST = Call("Bash", {"command": "df -h /"})
PRUNE = Call("Bash", {"command": "docker system prune -a -f"})


def result(text: str, error: bool) -> dict[str, Any]:
    part = {"type": "tool_result", "tool_use_id": "toolu_1", "content": text, "is_error": error}
    return {"role": "user", "content": [part]}


def ask(fake: FakeModel, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = json.dumps({"model": "m", "tools": TOOLS, "messages": messages}).encode()
    request = urllib.request.Request(f"{fake.url}/v1/messages", body, {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        data: dict[str, Any] = json.loads(answer.read())
    return data["content"][0]


STOPPED = "PreToolUse:Bash hook error: [MEMORY] Stopped before this call ran: 1 memory stored earlier concerns it."


def test_a_denied_call_is_made_again_then_the_script_goes_on() -> None:
    start = [{"role": "user", "content": "Free some space."}]
    with FakeModel([FIRST, PRUNE], retry_stopped=True) as fake:
        assert ask(fake, start)["input"] == FIRST.input
        assert ask(fake, [*start, result("/dev/sda1 98%", False)])["input"] == PRUNE.input
        assert ask(fake, [*start, result(STOPPED, True)])["input"] == PRUNE.input  # made again
        assert ask(fake, [*start, result("Total reclaimed space: 41.2GB", False)]) == {"type": "text", "text": "Done."}
    assert [(t.step, t.retry) for t in fake.turns] == [(0, False), (1, False), (1, True), (None, False)]


def test_without_retry_stopped_or_for_another_error_the_script_goes_on() -> None:
    start = [{"role": "user", "content": "Free some space."}]
    with FakeModel([FIRST, PRUNE]) as fake:
        ask(fake, start)
        assert ask(fake, [*start, result(STOPPED, True)])["input"] == PRUNE.input
    with FakeModel([FIRST, PRUNE], retry_stopped=True) as fake:
        ask(fake, start)
        assert ask(fake, [*start, result("Exit code 1\ndf: /: No such file", True)])["input"] == PRUNE.input


def test_the_denial_reason_is_read_from_the_last_tool_result_only() -> None:
    assert denied({"messages": [result(STOPPED, True)]}) == STOPPED.split("hook error: ", 1)[1]
    assert denied({"messages": [result(STOPPED, True), result("ok", False)]}) is None
    assert denied({"messages": [result(STOPPED, False)]}) is None
    assert denied({"messages": [{"role": "user", "content": "hello"}]}) is None
