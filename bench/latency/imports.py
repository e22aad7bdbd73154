"""How many modules `mcp-memory --help` and the `serve-stdio` handshake import, for one or more trees.

    python -m bench.latency.imports --tree before=/path/to/old/checkout --tree after=. [--rounds 3]

Each tree runs as its own child (`PYTHONPATH=<tree>`, a scratch HOME and SQLite file, the
default local model), with an audit hook that writes every module's first import, with the
clock, to a file. `--help` counts every import up to exit; the handshake counts the imports
made by the time the answer to `initialize` arrives, and by the time `tools/list` is answered
after `notifications/initialized` (from that notification on the model's warm-up may already
be importing, so that second count can vary by a few modules from round to round; the first
cannot). Prints one Markdown table: the counts (min–max over `--rounds`), of which
`mcp_memory.*`, and whether numpy was imported.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROTOCOL = "2025-06-18"

#: The child: an audit hook notes each module the first time it is imported, then the CLI runs.
CHILD = """
import os, sys, time
_seen = set(sys.modules)
_out = open(os.environ["BENCH_IMPORTS_FILE"], "a", buffering=1)
def _hook(event, args):
    if event == "import" and args[0] not in _seen:
        _seen.add(args[0])
        _out.write(f"{time.monotonic()} {args[0]}\\n")
sys.addaudithook(_hook)
sys.argv = ["mcp-memory", *sys.argv[1:]]
from mcp_memory.cli.entry import main
main()
"""


def _env(tree: Path, home: Path, record: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.pop("VIRTUAL_ENV", None)
    env.pop("XDG_DATA_HOME", None)  # the scratch HOME holds the data directory, never the user's
    env.update(
        PYTHONPATH=str(tree),
        HOME=str(home),
        MEMORY_DB_PATH=str(home / "memory.db"),
        BENCH_IMPORTS_FILE=str(record),
    )
    return env


def _read(record: Path, until: float | None = None) -> list[str]:
    names = []
    for line in record.read_text().splitlines():
        at, _, name = line.partition(" ")
        if until is None or float(at) <= until:
            names.append(name)
    return names


def help_imports(tree: Path, scratch: Path) -> list[str]:
    record = scratch / "help.txt"
    record.write_text("")
    subprocess.run(
        [sys.executable, "-c", CHILD, "--help"],
        env=_env(tree, scratch, record),
        cwd=scratch,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return _read(record)


def handshake_imports(tree: Path, scratch: Path) -> tuple[list[str], list[str]]:
    record = scratch / "stdio.txt"
    record.write_text("")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, "serve-stdio"],
        env=_env(tree, scratch, record),
        cwd=scratch,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None

    def send(message: dict) -> None:
        child.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")  # type: ignore[union-attr]
        child.stdin.flush()  # type: ignore[union-attr]

    def answer(number: int) -> float:
        while True:
            line = child.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError("serve-stdio ended before it answered")
            if json.loads(line).get("id") == number:
                return time.monotonic()

    try:
        params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        send({"id": 1, "method": "initialize", "params": params})
        initialized = answer(1)
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/list"})
        listed = answer(2)
    finally:
        child.stdin.close()
        child.wait(timeout=60)
        child.stdout.close()
    return _read(record, initialized), _read(record, listed)


def describe(rounds: list[list[str]]) -> str:
    counts = sorted(len(r) for r in rounds)
    ours = sorted(sum(n.startswith("mcp_memory") for n in r) for r in rounds)
    numpy = {"numpy" in r for r in rounds}

    def span(xs: list[int]) -> str:
        return f"{xs[0]}" if xs[0] == xs[-1] else f"{xs[0]}–{xs[-1]}"

    return f"{span(counts)} | {span(ours)} | {'/'.join(sorted('yes' if n else 'no' for n in numpy))}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=PATH of a checkout")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if bad := [spec for spec in args.tree if "=" not in spec.strip("=")]:
        parser.error(f"--tree takes NAME=PATH (e.g. main=.), got {bad[0]!r}")
    trees = {name: Path(path).resolve() for name, path in (spec.split("=", 1) for spec in args.tree)}
    got: dict[str, dict[str, list[list[str]]]] = {n: {"help": [], "init": [], "list": []} for n in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            with tempfile.TemporaryDirectory(prefix="mcp-memory-imports-") as tmp:
                got[name]["help"].append(help_imports(tree, Path(tmp)))
                init, listed = handshake_imports(tree, Path(tmp))
                got[name]["init"].append(init)
                got[name]["list"].append(listed)
    print("| tree | what | modules imported | of which mcp_memory.* | numpy |\n|---|---|---|---|---|")
    for name in trees:
        for key, what in (
            ("help", "`mcp-memory --help`"),
            ("init", "serve-stdio to `initialize` answered"),
            ("list", "serve-stdio to `tools/list` answered"),
        ):
            print(f"| {name} | {what} | {describe(got[name][key])} |")


if __name__ == "__main__":
    main()
