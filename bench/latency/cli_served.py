"""The CLI's five memory commands with a serve-stdio running and without, side by side (issue 35 item 5).

    nice python -m bench.latency.cli_served [--memories 1000] [--vectors-from 200] [--rounds 15]
                                            [--cache DIR] [--install BIN]

One SQLite store is filled with the benchmark corpus (perf_fill.py, real embeddings of the local
model). serve-stdio listens on it; then, round by round so the machine's load falls on every row
alike, each command runs as a whole process twice: once finding the server's socket (served),
once with another XDG_DATA_HOME, so it finds none and opens the store itself (direct; the same
MEMORY_DB_PATH). The rows: `python -c pass` (the floor), `recall` of a corpus question, `remember`
of a new fact, `list`, `stats`, `forget` of an id no memory has. Prints a markdown table: wall p50
and p95, CPU p50 (user + system of the process), in ms; docs/cli.md#a-running-server-answers.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness.perf_corpus import queries
from bench.harness.perf_fill import TENANT, fill_sqlite
from bench.harness.timing import Stopwatch, percentile

MISSING = "01KDVDNKR00000000000000000"


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run, which must exit 0 (forget of a missing id: 1)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with Stopwatch() as run:
        done = subprocess.run(command, env=env, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[1:3]} failed: {done.stderr.decode()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return run.last * 1000, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--vectors-from", type=int, default=200, help="embed only N texts; memory i gets text i %% N's")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--install", default=None, help="the bin directory of an installed environment to time")
    args = parser.parse_args()
    bin_dir = Path(args.install) if args.install else Path(sys.executable).parent
    console, python = str(bin_dir / "mcp-memory"), str(bin_dir / "python")

    root = Path(tempfile.mkdtemp(prefix="cli-served-"))
    db = root / "m.db"
    fill_sqlite(db, args.memories, args.vectors_from, args.cache)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "RECALL_"))}
    served = {**base, "MEMORY_DB_PATH": str(db), "MEMORY_TENANT": TENANT, "XDG_DATA_HOME": str(root / "data")}
    direct = {**served, "XDG_DATA_HOME": str(root / "alone")}
    asked = queries(args.rounds + 1)

    server = subprocess.Popen(
        [console, "serve-stdio"], env=served, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert server.stderr is not None
        server.stderr.readline()  # listening once its first line is out
        deadline = time.monotonic() + 180
        while timed([console, "recall", asked[0]], served)[0] > 1500 and time.monotonic() < deadline:
            pass  # the first question loads the server's model
        rows: dict[str, list[tuple[float, float]]] = {}
        for n in range(args.rounds):
            commands = {
                "python -c pass": [python, "-c", "pass"],
                "recall": [console, "recall", asked[1 + n]],
                "remember": [
                    console,
                    "remember",
                    f"Bench fact {n} of {os.getpid()}: the build cache is pruned weekly.",
                ],
                "list": [console, "list"],
                "stats": [console, "stats"],
                "forget (missing id)": [console, "forget", MISSING],
            }
            for name, command in commands.items():
                if name == "python -c pass":
                    rows.setdefault(name, []).append(timed(command, served))
                    continue
                rows.setdefault(f"{name}, served", []).append(timed(command, served))
                direct_command = command if name != "remember" else [*command[:-1], command[-1] + " (direct)"]
                rows.setdefault(f"{name}, direct", []).append(timed(direct_command, direct))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(30)
        shutil.rmtree(root, ignore_errors=True)  # the filled store, the model cache's copy, the sockets

    load = os.getloadavg()[0]
    print(f"{args.memories} memories, {args.rounds} rounds, load average {load:.1f} at the end\n")
    print("| command | wall p50 ms | wall p95 ms | CPU p50 ms |")
    print("|---|---:|---:|---:|")
    for name, runs in rows.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(f"| {name} | {percentile(walls, 50):.0f} | {percentile(walls, 95):.0f} | {percentile(cpus, 50):.0f} |")


if __name__ == "__main__":
    main()
