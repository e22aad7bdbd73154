"""The tool-time scenarios (bench/hooks/scenarios.py) answered in process, without Claude Code:
what the tool hooks would inject at each MEMORY_HOOK_TOOL_MIN_CONFIDENCE (default high), side by side in one run.

    nice python -m bench.hooks.tool_injection [--json]

The store is filled as bench/hooks/tool_time.py fills it (the 40 scenario memories with their
`path:` tags, then the project-memory dev set's 302 facts), in a scratch SQLite file with the local
model. Each scenario is one session: its unrelated call first, then its own calls in order, each
asked as the hook asks it (server/hooks/answers.py: a PreToolUse question for every call, and a
PostToolUseFailure question for a command whose shimmed answer fails), memories shown earlier in
the session excluded. Counted per setting: scenarios whose memory a tool hook injected at or before
the relevant call (Claude Code's timing, "late" for a command's PreToolUse, is tool_time.py's to
measure), and unrelated calls given any memory (the target is none). The digest and the prompt
hook are left out: only the tool hooks' rule changes with the setting.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.hooks.scenarios import SCENARIOS, UNRELATED, Call, Scenario
from bench.hooks.tool_time import TENANT, fill

SETTINGS = ("high", "medium", "likely")
CWD = "/work/harbor"


def _failure(scenario: Scenario, call: Call, seen: dict[str, int]) -> str | None:
    """The error Claude Code would report for this command (its shimmed answer), None if it succeeds."""
    command = str(call.input.get("command", ""))
    keys = sorted((k for k in scenario.outputs if command == k or command.startswith(k + " ")), key=len, reverse=True)
    if call.tool != "Bash" or not keys:
        return None
    answers = scenario.outputs[keys[0]]
    n = seen.get(keys[0], 0)
    seen[keys[0]] = n + 1
    code, out, err = answers[min(n, len(answers) - 1)]
    return f"Exit code {code}\n{err}{out}".strip() if code else None


def _question(event: str, call: Call, error: str = "") -> dict[str, Any]:
    fields = {k: v for k, v in call.input.items() if k in ("file_path", "notebook_path", "command")}
    if "file_path" in fields:
        fields["file_path"] = f"{CWD}/{fields['file_path']}"
    return {"event": event, "tool": call.tool, "input": fields, "cwd": CWD, "error": error}


async def run() -> dict[str, dict[str, Any]]:
    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller
    from mcp_memory.server.hooks.answers import answer
    from mcp_memory.server.hooks.wire import Ask

    with tempfile.TemporaryDirectory() as scratch:
        env = {"MEMORY_DB_PATH": str(Path(scratch) / "memory.db"), "EMBEDDING_PROVIDER": "local"}
        await fill(env)
        service = await open_service(Settings.from_env(env))
        caller = Caller(TENANT)
        try:
            out: dict[str, dict[str, Any]] = {}
            for setting in SETTINGS:
                counts: dict[str, Any] = {"scenarios": 0, "in_time": 0, "unrelated": 0, "unrelated_injected": 0}
                counts["missed"], counts["unrelated_given"] = [], []
                for scenario, unrelated in zip(SCENARIOS, UNRELATED, strict=True):
                    shown: set[str] = set()

                    async def ask(event: str, call: Call, error: str = "") -> str:
                        question = Ask("tool", TENANT, exclude=frozenset(shown), budget=600, limit=2)
                        question.min_confidence = setting
                        question.call = _question(event, call, error)
                        text, ids = await answer(service, caller, question)
                        shown.update(ids)
                        return " ".join((text or "").split())

                    counts["unrelated"] += 1
                    if await ask("PreToolUse", unrelated):
                        counts["unrelated_injected"] += 1
                        counts["unrelated_given"].append(unrelated.input)
                    seen: dict[str, int] = {}
                    got = False
                    for i, call in enumerate(scenario.calls[: scenario.relevant + 1]):
                        text = await ask("PreToolUse", call)
                        error = _failure(scenario, call, seen) if i < scenario.relevant else None
                        if error:
                            text += await ask("PostToolUseFailure", call, error)
                        got = got or scenario.marker in text
                    counts["scenarios"] += 1
                    counts["in_time"] += got
                    if not got:
                        counts["missed"].append(scenario.id)
                out[setting] = counts
            return out
        finally:
            await service.close()


def main(argv: Sequence[str]) -> int:
    results = asyncio.run(run())
    if "--json" in argv:
        print(json.dumps(results))
        return 0
    for setting, c in results.items():
        print(
            f"MEMORY_HOOK_TOOL_MIN_CONFIDENCE={setting:6s}: scenarios given their memory by a tool hook "
            f"{c['in_time']}/{c['scenarios']}, unrelated calls given one {c['unrelated_injected']}/{c['unrelated']}"
        )
        print(f"  missed: {', '.join(c['missed']) or 'none'}; unrelated given one: {c['unrelated_given'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
