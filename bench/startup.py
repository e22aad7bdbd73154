"""Start-up of `serve-stdio` and `mcp-memory --help`, beside the SDK's bare import, at two loads.

For each phase (the machine as it is, then with busy-loop processes added until the
1-minute load average reaches about 4), interleaved rounds of:

- `python -c "import mcp"`: spawn to exit, the floor any server on this SDK pays;
- `serve-stdio`: spawn to the answer of `initialize`, then (after
  `notifications/initialized`, as a client sends it) to the answer of `tools/list`;
- `mcp-memory --help`: spawn to exit.

Medians and maxima are printed as a table, with the load average at each phase's start
and end; `--json FILE` keeps them. The busy loops live only inside this run.

    python bench/startup.py [--rounds 7] [--load 4] [--json out.json]
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

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = "2025-06-18"


def _env(data: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MEMORY_DB_PATH"] = str(data / "memory.db")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for name in ("DATABASE_URL", "VECTOR_BUCKET", "STATE_BUCKET", "MEMORY_BACKEND", "EMBEDDING_PROVIDER"):
        env.pop(name, None)
    return env


def _cli() -> list[str]:
    """The console script beside this Python, else `python -m mcp_memory`."""
    script = Path(sys.executable).parent / "mcp-memory"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcp_memory"]


def timed_run(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


async def timed_stdio(env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the initialize answer, seconds to the tools/list answer), from the spawn."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *_cli(),
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


def phase(name: str, rounds: int, env: dict[str, str]) -> dict:
    load_start = os.getloadavg()[0]
    bare, init, listed, helped = [], [], [], []
    for _ in range(rounds):
        bare.append(timed_run([sys.executable, "-c", "import mcp"], env))
        i, t = asyncio.run(timed_stdio(env))
        init.append(i)
        listed.append(t)
        helped.append(timed_run([*_cli(), "--help"], env))
    load_end = os.getloadavg()[0]

    def summary(values: list[float]) -> dict[str, float]:
        return {"median_s": round(statistics.median(values), 3), "max_s": round(max(values), 3)}

    return {
        "phase": name,
        "load_start": round(load_start, 2),
        "load_end": round(load_end, 2),
        "rounds": rounds,
        "import_mcp": summary(bare),
        "initialize": summary(init),
        "tools_list": summary(listed),
        "help": summary(helped),
    }


def report(results: list[dict]) -> str:
    rows = [
        "| phase | load (start → end) | `import mcp` | initialize | tools/list | `--help` |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in results:

        def cell(key: str) -> str:
            return f"{r[key]['median_s']:.2f} s (max {r[key]['max_s']:.2f})"

        rows.append(
            f"| {r['phase']} | {r['load_start']:.2f} → {r['load_end']:.2f} | {cell('import_mcp')} | "
            f"{cell('initialize')} | {cell('tools_list')} | {cell('help')} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--load", type=float, default=4.0, help="the loaded phase's target load average")
    parser.add_argument("--wait", type=float, default=90.0, help="at most this long for the load to climb")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="startup-"))
    try:
        env = _env(data)
        timed_run([*_cli(), "--help"], env)  # a first run compiles the bytecode
        asyncio.run(timed_stdio(env))
        results = [phase("as found", args.rounds, env)]
        loops = load_to(args.load, args.wait)
        try:
            results.append(phase(f"+{len(loops)} busy loops", args.rounds, env))
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
