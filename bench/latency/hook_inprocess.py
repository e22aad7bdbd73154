"""The in-process design, for bench/latency/hook_latency.py: a hook process that opens the store and
loads the model itself, with no time limit (the shipped hook stops waiting after 1 s).

    python -m bench.latency.hook_inprocess EVENT < payload.json

Same code as `mcp-memory hook` on its fallback path (cli/hooks/fallback.py answer_here), same
output; only the deadline is gone, so the time it takes is the design's whole cost.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from mcp_memory.cli.hooks.fallback import answer_here
from mcp_memory.server.budget import query_of
from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.wire import Ask


def main() -> None:
    event = sys.argv[1]
    payload = json.loads(sys.stdin.read())
    tenant = os.environ.get("MEMORY_TENANT") or folder.DEFAULT_TENANT
    if event == "SessionStart":
        ask = Ask("digest", tenant)
    else:
        ask = Ask("prompt", tenant, prompt=query_of(payload["prompt"]))
    text, _ = asyncio.run(answer_here(ask, os.environ))
    if text:
        print(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}))


if __name__ == "__main__":
    main()
