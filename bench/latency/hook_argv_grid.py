"""Every hook command line of a grid (up to three words of 31) through cli/hooks/command.py
parse: one line each, the options read or the refusal's message. Run before and after a change
to the hook's reading of its command line and compare (bench/RESULTS.md, "The hook's command
line, imports and time").

    python -m bench.latency.hook_argv_grid > grid.txt
"""

from __future__ import annotations

import itertools
import sys

from mcp_memory.cli.hooks import command as hook

WORDS = [
    *("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUseFailure", "PreCompact", "Stop", "Bogus", ""),
    *("--tenant", "-t", "--tenant=acme", "-t=acme", "-tacme", "acme", "--tenant="),
    *(
        "--conversation",
        "-c",
        "--conversation=c1",
        "c1",
        "--conversation-from-session",
        "--conversation-from-session=1",
    ),
    *("--client", "--client=codex", "codex", "cursor", "--client=cursor", "claude-code"),
    *("--nope", "-", "--", "-h"),
]


def read(argv: list[str]) -> str:
    try:
        options = hook.parse(argv)
    except hook.Usage as exc:
        return f"usage {exc}"
    # the flag's attribute was `from_session` before 2026-12-06
    flag = getattr(options, "conversation_from_session", getattr(options, "from_session", None))
    return f"ok {options.event!r} {options.tenant!r} {options.conversation!r} {flag!r} {options.client!r}"


def main() -> None:
    count = 0
    for size in range(4):
        for argv in itertools.product(WORDS, repeat=size):
            count += 1
            print(repr(argv), read(list(argv)))
    print(count, file=sys.stderr)


if __name__ == "__main__":
    main()
