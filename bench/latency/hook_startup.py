"""A session's first seconds: serve-stdio and the SessionStart and UserPromptSubmit hooks started
at the same moment, as Claude Code starts a session in print mode (docs/hooks.md#a-sessions-first-seconds).

    python -m bench.latency.hook_startup --tree before=/path/to/old/checkout --tree after=. [--rounds 4]

Each tree runs as `PYTHONPATH=<tree> python -m mcp_memory ...` (this interpreter), with the default
waits and the local model, over one SQLite store holding one memory; the trees are interleaved
round by round. Prints a Markdown table: how often the digest and the prompt's memory arrived,
each hook's time (median), and when the socket was first seen listening while the hooks ran.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FACT = "Deploys go out on Tuesdays after the standup."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=PATH, a checkout holding mcp_memory/")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    trees = {name: str(Path(path).resolve()) for name, path in trees.items()}
    py = sys.executable
    root = Path(tempfile.mkdtemp(prefix="hook-startup-"))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    base.update({"HOME": str(root), "MEMORY_DB_PATH": str(root / "m.db"), "MEMORY_TENANT": "acme"})
    first = next(iter(trees.values()))
    subprocess.run(
        [py, "-m", "mcp_memory", "remember", FACT],
        env={**base, "PYTHONPATH": first, "XDG_DATA_HOME": str(root / "x")},
        check=True,
        capture_output=True,
        cwd=root,
    )
    start = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}).encode()
    prompt = json.dumps(
        {"session_id": "s2", "hook_event_name": "UserPromptSubmit", "prompt": "when do deploys go out"}
    ).encode()
    rows: dict[str, dict[str, list[float]]] = {}
    for i in range(args.rounds):
        for n, (name, tree) in enumerate(trees.items()):
            data = root / f"d{i}-{n}"
            env = {**base, "PYTHONPATH": tree, "XDG_DATA_HOME": str(data)}
            t0 = time.monotonic()
            server = subprocess.Popen(
                [py, "-m", "mcp_memory", "serve-stdio"],
                env=env,
                cwd=root,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            hooks = [
                subprocess.Popen(
                    [py, "-m", "mcp_memory", "hook", event],
                    env=env,
                    cwd=root,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                for event in ("SessionStart", "UserPromptSubmit")
            ]
            for hook, payload in zip(hooks, (start, prompt)):
                assert hook.stdin is not None
                hook.stdin.write(payload)
                hook.stdin.close()
            listening: float | None = None
            ends: list[float | None] = [None, None]
            while any(end is None for end in ends):
                for k, hook in enumerate(hooks):
                    if ends[k] is None and hook.poll() is not None:
                        ends[k] = time.monotonic() - t0
                if listening is None and list(data.glob("**/*.sock")):
                    listening = time.monotonic() - t0
                time.sleep(0.01)
            outs = [hook.stdout.read().decode() if hook.stdout else "" for hook in hooks]
            row = rows.setdefault(name, {"digest": [], "prompt": [], "start_s": [], "prompt_s": [], "socket_s": []})
            row["digest"].append(float(FACT in outs[0]))
            row["prompt"].append(float(FACT in outs[1]))
            row["start_s"].append(float(ends[0] or 0.0))
            row["prompt_s"].append(float(ends[1] or 0.0))
            if listening is not None:
                row["socket_s"].append(listening)
            assert server.stdin is not None
            server.stdin.close()
            server.wait(60)
    n = args.rounds
    print(f"{n} rounds per tree, interleaved; serve-stdio and both hooks started together, default waits, local model")
    print()
    print(
        "| tree | digest arrived | prompt's memory arrived | SessionStart s (median) | UserPromptSubmit s (median) "
        "| socket seen listening after s (median; rounds) |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, row in rows.items():
        socket = (
            f"{statistics.median(row['socket_s']):.2f}; {len(row['socket_s'])}/{n}" if row["socket_s"] else f"—; 0/{n}"
        )
        print(
            f"| {name} | {sum(row['digest']):.0f}/{n} | {sum(row['prompt']):.0f}/{n} | {statistics.median(row['start_s']):.2f} "
            f"| {statistics.median(row['prompt_s']):.2f} | {socket} |"
        )


if __name__ == "__main__":
    main()
