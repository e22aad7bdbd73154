"""A session's first prompt after a cold start: does its hook bring the memory? (issue 35 item 4)

    nice python -m bench.latency.first_prompt [--starts 10] [--memories 1000] [--install BIN]

One SQLite store of the benchmark corpus (real embeddings of the local model). Then, `--starts`
times, as Claude Code starts a session: a new `serve-stdio` (its model not loaded), its MCP
handshake sent at once (`initialize`, `notifications/initialized`: the warm-up starts after it),
and at the same moment the SessionStart hook, then the UserPromptSubmit hook with a prompt that
restates a stored fact, each with its plugin timeout. A start succeeds when the prompt's hook
injects that fact; the same prompt is then asked again, warm, to tell a start's miss from
recall's verdict on that prompt. Reported: successes, the prompt hook's time (p50, worst), what the failures
logged, and the load average before and after (this script makes no load of its own: the
machine's is what it is, and it says so). `--install BIN` times another environment's
`mcp-memory` (a wheel's venv) instead of this interpreter's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness.perf_corpus import corpus, embeddings
from bench.harness.perf_fill import TENANT, fill_to
from bench.latency.hook_latency import prompt, start

#: The plugin's timeouts (plugin/hooks/hooks.json): SessionStart 10 s, UserPromptSubmit 5 s.
SESSION_START_SECONDS = 10
PROMPT_SECONDS = 5
HANDSHAKE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        }
    )
    + "\n"
    + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    + "\n"
).encode()


def hook(console: str, event: str, payload: bytes, env: dict[str, str], seconds: float) -> tuple[float, str, str]:
    """(ms, stdout, stderr's event words) of one hook run, killed at the plugin's timeout as Claude Code would."""
    started = time.perf_counter()
    try:
        done = subprocess.run([console, "hook", event], input=payload, env=env, capture_output=True, timeout=seconds)
        out, err = done.stdout.decode(), done.stderr.decode()
    except subprocess.TimeoutExpired:
        out, err = "", '{"event":"killed at the plugin timeout"}'
    events = [json.loads(line).get("event", "?") for line in err.splitlines() if line.startswith("{")]
    return (time.perf_counter() - started) * 1000, out, ",".join(events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--install", default=None, help="the bin directory of the installed environment to run")
    args = parser.parse_args()
    bin_dir = Path(args.install) if args.install else Path(sys.executable).parent
    console = str(bin_dir / "mcp-memory")
    root = Path(tempfile.mkdtemp(prefix="first-prompt-"))
    db = root / "m.db"
    texts = corpus(args.memories)
    vectors, _ = asyncio.run(embeddings(texts, root / "cache"))
    asyncio.run(fill_to("sqlite", args.memories, texts, vectors, 0, db_path=str(db)))
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    load_before = os.getloadavg()
    results: list[tuple[bool, float, str]] = []
    warmed: list[bool] = []
    for i in range(args.starts):
        env = {**base, "MEMORY_DB_PATH": str(db), "MEMORY_TENANT": TENANT, "XDG_DATA_HOME": str(root / f"data{i}")}
        fact = texts[(i * 97) % len(texts)]
        server = subprocess.Popen(
            [console, "serve-stdio"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert server.stdin is not None
            server.stdin.write(HANDSHAKE)
            server.stdin.flush()
            hook(console, "SessionStart", start(f"cold{i}"), env, SESSION_START_SECONDS)
            ms, out, said = hook(console, "UserPromptSubmit", prompt(fact, f"cold{i}"), env, PROMPT_SECONDS)
            # the same prompt again, warm, in another session: a miss both times is recall's verdict, not the start's
            warm = fact in hook(console, "UserPromptSubmit", prompt(fact, f"warm{i}"), env, PROMPT_SECONDS)[1]
            results.append((fact in out, ms, said))
            warmed.append(warm)
            print(
                f"start {i + 1}: {'injected' if fact in out else 'missed'} in {ms:.0f} ms {said}; "
                f"warm: {'injected' if warm else 'missed'}",
                flush=True,
            )
        finally:
            assert server.stdin is not None
            server.stdin.close()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
    load_after = os.getloadavg()
    times = [ms for _, ms, _ in results]
    failures = sorted({said or "nothing logged" for ok, _, said in results if not ok})
    print(
        f"\n{sum(ok for ok, _, _ in results)} of {len(results)} cold starts' first prompts injected the fact "
        f"({sum(warmed)} of {len(warmed)} when asked again, warm); "
        f"prompt hook p50 {statistics.median(times):.0f} ms, worst {max(times):.0f} ms; "
        f"failures logged: {', '.join(failures) or 'none'}; "
        f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after; {console}"
    )


if __name__ == "__main__":
    main()
