"""Claude Code hook latency, end to end (process start to exit), at 10,000 memories.

    nice python -m bench.latency.hook_latency [--memories 10000] [--rounds 40] [--inprocess-rounds 8]
                                     [--cache DIR] [--out FILE.md] [--install BIN]

`--install BIN` times the `python` and `mcp-memory` of another installed environment (its bin
directory: a venv a wheel was installed into, as `uv tool install` or `pipx` make one) instead of
this interpreter's; the store is filled by this one either way. `--inprocess-rounds 0` leaves the
in-process rows out.

One SQLite store is filled with the benchmark corpus (perf_fill.py, real embeddings of the local
model), then, interleaved round by round so the machine's load falls on every row alike:

- `python -c pass`: the floor, a bare interpreter start;
- socket: `mcp-memory hook UserPromptSubmit` (and `SessionStart`, and `PreToolUse` of a file read) with serve-stdio listening
  (the design that ships: the serving process answers on its Unix socket);
- in-process: the same question answered by the hook's own process with no time limit (what a
  hook that opens the store and loads the model itself costs; the shipped hook gives up after
  1 s on this path, so it is measured by bench/latency/hook_inprocess.py, the same code without the limit).

Every prompt comes from a fresh session (no memory is left out for having been shown); every
other one restates a stored fact, so recall answers it HIGH and the hook injects memories, the
others are the corpus's questions. Prints a markdown table (p50 / p95 per row, and the ratio to `python -c pass`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.harness.timing import Stopwatch, percentile

ROOT = Path(__file__).resolve().parents[2]

from bench.harness.perf_corpus import queries  # noqa: E402
from bench.harness.perf_fill import TENANT, fill_sqlite  # noqa: E402

OUTCOMES: dict[str, dict[str, int]] = {}
#: CPU milliseconds (user + system) of each process, by row: what a run costs on a quiet machine.
CPU: dict[str, list[float]] = {}


def timed(command: list[str], stdin: bytes, env: dict[str, str], row: str | None = None) -> tuple[float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with Stopwatch() as hooking:
        done = subprocess.run(command, input=stdin, env=env, capture_output=True, check=True)
    ms = hooking.last * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    CPU.setdefault(row or " ".join(command[-2:]), []).append(cpu)
    if row is not None and row != "python -c pass":  # what the hook did: injected, nothing qualified, gave up
        gave_up = b"hook_server_failed" in done.stderr or b"hook_timed_out" in done.stderr
        outcome = "injected" if done.stdout.strip() else "gave up" if gave_up else "nothing qualified"
        counts = OUTCOMES.setdefault(row, {})
        counts[outcome] = counts.get(outcome, 0) + 1
    return ms, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--inprocess-rounds", type=int, default=8)
    parser.add_argument("--cache", default=None)
    parser.add_argument(
        "--vectors-from",
        type=int,
        default=None,
        help="embed only the first N texts and give memory i the vector of text i %% N (the scan costs "
        "the same; on a busy machine embedding 10,000 texts takes most of an hour)",
    )
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--install",
        default=None,
        help="the bin directory of the installed environment to time (its python and mcp-memory)",
    )
    args = parser.parse_args()
    bin_dir = Path(args.install) if args.install else Path(sys.executable).parent
    python = str(bin_dir / "python")
    console = str(bin_dir / "mcp-memory")

    root = Path(tempfile.mkdtemp(prefix="hook-bench-"))
    db = root / "m.db"
    texts = fill_sqlite(db, args.memories, args.vectors_from, args.cache)
    real = min(args.vectors_from or args.memories, args.memories)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env = {**base, "MEMORY_DB_PATH": str(db), "MEMORY_TENANT": TENANT, "XDG_DATA_HOME": str(root / "data")}
    # the in-process design must not find the socket: its own data directory
    alone = {**env, "XDG_DATA_HOME": str(root / "alone")}
    hook = [console, "hook"]
    inprocess = [python, str(ROOT / "bench" / "latency" / "hook_inprocess.py")]
    asked = queries(args.rounds + args.inprocess_rounds + 10)

    server = subprocess.Popen(
        [console, "serve-stdio"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stderr is not None
        server.stderr.readline()  # the socket listens once the first boot line is out
        served: list[dict[str, object]] = []

        def pump() -> None:
            assert server.stderr is not None
            for line in server.stderr:
                if line.startswith(b"{") and b'"hook_call"' in line:
                    served.append(json.loads(line))

        threading.Thread(target=pump, daemon=True).start()
        # warm-up: the first question starts the model's load; wait until one is answered
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ms, out = timed(
                [*hook, "UserPromptSubmit"], prompt(asked[0], "warm"), {**env, "MEMORY_HOOK_TIMEOUT_MS": "10000"}
            )
            if ms < 900:
                break
        served_before = len(served)
        rows: dict[str, list[float]] = {
            "python -c pass": [],
            "socket: UserPromptSubmit": [],
            "socket: SessionStart": [],
            "socket: PreToolUse": [],
        }
        rows["in-process: UserPromptSubmit"] = []
        rows["in-process: SessionStart"] = []
        injected = 0
        for i in range(args.rounds):
            rows["python -c pass"].append(timed([python, "-c", "pass"], b"", env, "python -c pass")[0])
            # every other prompt restates a stored fact (recall answers HIGH, memories are injected)
            question = asked[1 + i] if i % 2 else texts[(i * 97) % real]
            ms, out = timed([*hook, "UserPromptSubmit"], prompt(question, f"s{i}"), env, "socket: UserPromptSubmit")
            rows["socket: UserPromptSubmit"].append(ms)
            injected += bool(out.strip())
            rows["socket: SessionStart"].append(
                timed([*hook, "SessionStart"], start(f"d{i}"), env, "socket: SessionStart")[0]
            )
            rows["socket: PreToolUse"].append(
                timed(
                    [*hook, "PreToolUse"], read_file(f"src/module_{i}/handler.py", f"t{i}"), env, "socket: PreToolUse"
                )[0]
            )
            if i < args.inprocess_rounds:
                q = asked[1 + args.rounds + i] if i % 2 else texts[(i * 89) % real]
                rows["in-process: UserPromptSubmit"].append(
                    timed([*inprocess, "UserPromptSubmit"], prompt(q, f"p{i}"), alone, "in-process: UserPromptSubmit")[
                        0
                    ]
                )
                rows["in-process: SessionStart"].append(
                    timed([*inprocess, "SessionStart"], start(f"q{i}"), alone, "in-process: SessionStart")[0]
                )
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)
    floor = statistics.median(rows["python -c pass"])
    lines = [
        f"{args.memories:,} memories (SQLite, local model; {real:,} distinct vectors), {args.rounds} interleaved rounds "
        f"({args.inprocess_rounds} for in-process); {injected} of {args.rounds} socket prompts injected memories; "
        f"timed: {console} ({'installed' if args.install else 'this environment'}).",
        "",
        "| command | runs | p50 ms | p95 ms | p50 / `python -c pass` | CPU p50 ms | outcomes |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, values in rows.items():
        if not values:  # --inprocess-rounds 0
            continue
        p50 = statistics.median(values)
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(OUTCOMES.get(name, {}).items())) or "—"
        cpu = statistics.median(CPU.get(name, [0.0]))
        lines.append(
            f"| {name} | {len(values)} | {p50:.0f} | {percentile(values, 95):.0f} | {p50 / floor:.2f} "
            f"| {cpu:.0f} | {outcomes} |"
        )
    for method in ("prompt", "digest", "tool"):
        answered = [float(str(r["ms"])) for r in served[served_before:] if r.get("method") == method]
        if answered:
            lines.append(
                f"| serve-stdio's answer to a {method} question (its hook_call ms) | {len(answered)} "
                f"| {statistics.median(answered):.0f} | {percentile(answered, 95):.0f} | — | — | — |"
            )
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


def read_file(path: str, session: str) -> bytes:
    """A PreToolUse of Claude Code's Read (docs/hooks.md#at-the-moment-of-action)."""
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/tmp/project",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": f"/tmp/project/{path}"},
            "tool_use_id": f"toolu_{session}",
        }
    ).encode()


def prompt(question: str, session: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/tmp",
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": question,
        }
    ).encode()


def start(session: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/tmp",
            "hook_event_name": "SessionStart",
            "source": "startup",
            "model": "claude-sonnet-4-6",
        }
    ).encode()


if __name__ == "__main__":
    main()
