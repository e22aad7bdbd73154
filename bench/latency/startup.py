"""Start-up of `serve-stdio` and `mcp-memory --help`, beside the SDK's bare import, at two loads.

For each phase (the machine as it is, then with busy-loop processes added until the
1-minute load average reaches about 4), interleaved rounds of:

- `python -c "import mcp"`: spawn to exit, the floor any server on this SDK pays;
- `serve-stdio`: spawn to the answer of `initialize`, then (after
  `notifications/initialized`, as a client sends it) to the answer of `tools/list`;
- `mcp-memory --help`: spawn to exit.

Medians and maxima are printed as a table, with the load average at each phase's start
and end; `--json FILE` keeps them. The busy loops live only inside this run.

By default it runs this checkout with the Python running the script. `--venv NAME=DIR`
(repeatable) runs the `mcp-memory` installed in each virtual environment instead, e.g. a
fresh one with just the wheel, as a user gets it (no editable-install finder on the path);
the environments take turns within every round, so they see the same load.

    python -m bench.latency.startup [--rounds 7] [--load 4] [--venv after=/tmp/v] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = "2025-06-18"


class Target:
    """What is started: a Python and its `mcp-memory`, with the environment to start them in."""

    def __init__(self, name: str, python: str, cli: list[str], env: dict[str, str]) -> None:
        self.name, self.python, self.cli, self.env = name, python, cli, env


def _env(data: Path, checkout: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["MEMORY_DB_PATH"] = str(data / "memory.db")
    if checkout:
        env["PYTHONPATH"] = str(ROOT)
    for name in ("DATABASE_URL", "VECTOR_BUCKET", "STATE_BUCKET", "MEMORY_BACKEND", "EMBEDDING_PROVIDER"):
        env.pop(name, None)
    return env


def checkout_target(data: Path) -> Target:
    """This checkout, run by the Python running this script (its console script if it has one)."""
    script = Path(sys.executable).parent / "mcp-memory"
    cli = [str(script)] if script.exists() else [sys.executable, "-m", "mcp_memory"]
    return Target("checkout", sys.executable, cli, _env(data, checkout=True))


def venv_target(name: str, venv: Path, data: Path) -> Target:
    return Target(name, str(venv / "bin" / "python"), [str(venv / "bin" / "mcp-memory")], _env(data, checkout=False))


def timed_run(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


async def timed_stdio(target: Target) -> tuple[float, float]:
    """(seconds to the initialize answer, seconds to the tools/list answer), from the spawn."""
    env = target.env
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *target.cli,
        "serve-stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None

    async def send(message: dict) -> None:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        await process.stdin.drain()

    async def answer(request_id: int) -> dict:
        while True:
            line = await asyncio.wait_for(process.stdout.readline(), 60)
            if not line:
                raise RuntimeError("serve-stdio closed stdout")
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    try:
        params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        await send({"id": 1, "method": "initialize", "params": params})
        await answer(1)
        initialize = time.perf_counter() - started
        await send({"method": "notifications/initialized"})
        await send({"id": 2, "method": "tools/list", "params": {}})
        listed = await answer(2)
        tools_list = time.perf_counter() - started
        if not listed.get("result", {}).get("tools"):
            raise RuntimeError(f"tools/list answered {listed}")
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()
    return initialize, tools_list


def _busy() -> None:
    while True:
        pass


def load_to(target: float, wait_s: float) -> list[multiprocessing.Process]:
    """Start busy loops until about `target` runnable processes, then wait (at most
    `wait_s`) for the 1-minute load average to climb to within 0.4 of it."""
    ambient = os.getloadavg()[0]
    count = max(1, round(target - ambient))
    loops = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(count)]
    for loop in loops:
        loop.start()
    deadline = time.monotonic() + wait_s
    while os.getloadavg()[0] < target - 0.4 and time.monotonic() < deadline:
        time.sleep(2)
    return loops


def phase(name: str, rounds: int, targets: list[Target]) -> list[dict]:
    load_start = os.getloadavg()[0]
    samples: dict[str, dict[str, list[float]]] = {
        t.name: {"import_mcp": [], "initialize": [], "tools_list": [], "help": []} for t in targets
    }
    for _ in range(rounds):
        for t in targets:
            got = samples[t.name]
            got["import_mcp"].append(timed_run([t.python, "-c", "import mcp"], t.env))
            i, listed = asyncio.run(timed_stdio(t))
            got["initialize"].append(i)
            got["tools_list"].append(listed)
            got["help"].append(timed_run([*t.cli, "--help"], t.env))
    load_end = os.getloadavg()[0]

    def summary(values: list[float]) -> dict[str, float]:
        return {"median_s": round(statistics.median(values), 3), "max_s": round(max(values), 3)}

    return [
        {
            "phase": name,
            "target": t.name,
            "load_start": round(load_start, 2),
            "load_end": round(load_end, 2),
            "rounds": rounds,
            **{key: summary(values) for key, values in samples[t.name].items()},
        }
        for t in targets
    ]


def report(results: list[dict]) -> str:
    rows = [
        "| phase | load (start → end) | what | `import mcp` | initialize | tools/list | `--help` |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in results:

        def cell(key: str) -> str:
            return f"{r[key]['median_s']:.2f} s (max {r[key]['max_s']:.2f})"

        rows.append(
            f"| {r['phase']} | {r['load_start']:.2f} → {r['load_end']:.2f} | {r['target']} | {cell('import_mcp')} | "
            f"{cell('initialize')} | {cell('tools_list')} | {cell('help')} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--load", type=float, default=4.0, help="the loaded phase's target load average")
    parser.add_argument("--wait", type=float, default=90.0, help="at most this long for the load to climb")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--venv", action="append", default=[], help="NAME=DIR: run the mcp-memory installed there")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="startup-"))
    try:
        targets = []
        for spec in args.venv:
            name, _, directory = spec.partition("=")
            targets.append(venv_target(name, Path(directory), data / name))
        targets = targets or [checkout_target(data / "checkout")]
        for t in targets:
            Path(t.env["MEMORY_DB_PATH"]).parent.mkdir(parents=True, exist_ok=True)
            timed_run([*t.cli, "--help"], t.env)  # a first run compiles the bytecode
            asyncio.run(timed_stdio(t))
        results = phase("as found", args.rounds, targets)
        loops = load_to(args.load, args.wait)
        try:
            results += phase(f"+{len(loops)} busy loops", args.rounds, targets)
        finally:
            for loop in loops:
                loop.terminate()
            for loop in loops:
                loop.join()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
