"""CPU share of a serve-http process while it is out of file descriptors, with the accept
back-off (server/http_serve.py `ListeningSocket`) and without it, side by side.

Each run starts `serve-http` in a child held to `--open-files` descriptors, with a
connection cap above that (so the file limit is what runs out) and long header timeouts
(so nothing frees a descriptor during the run). It opens enough idle connections to exhaust
the child and leave more waiting in the backlog, then reads the child's CPU time
(/proc/<pid>/stat) over `--seconds`. "before" replaces the back-off with the plain
`socket.accept`, in the child only. Runs are interleaved: before, after, before, after...

    nice python -m bench.latency.accept_exhaustion --rounds 3 --seconds 12

(12 s or more, so that the child's rate-limited `accept_failed` line, written at most once
per 10 s, reports how many failures it held back.)
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import runpy, socket, sys
if {before!r}:
    import mcp_memory.server.http_serve as serve
    serve.ListeningSocket.accept = socket.socket.accept
sys.argv = ["mcp-memory", "serve-http", "--port", "0"]
runpy.run_module("mcp_memory", run_name="__main__")
"""


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def exhausted_cpu_share(before: bool, open_files: int, seconds: float, workdir: Path) -> tuple[float, int]:
    """The child's CPU time per wall second while out of descriptors, and how many failed
    accepts its rate-limited `accept_failed` lines held back (reported every 10 s)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "HTTP_", "MCP_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        MEMORY_DB_PATH=str(workdir / f"m-{time.monotonic_ns()}.db"),
        EMBEDDING_PROVIDER="fake",
        HTTP_MAX_CONNECTIONS="5000",
        HTTP_HEADER_TIMEOUT_MS="600000",
        HTTP_KEEP_ALIVE_MS="600000",
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    err_path = workdir / f"err-{time.monotonic_ns()}.log"
    err = open(err_path, "w", encoding="utf-8")  # closed below, once the child is gone
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(before=before)],
        stdout=subprocess.PIPE,
        stderr=err,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=str(ROOT),
        preexec_fn=limit,
    )
    held: list[socket.socket] = []
    try:
        first = child.stdout.readline()  # type: ignore[union-attr]
        url = first.split(" listening on ", 1)[1].split(" ", 1)[0]
        host, port = url.removeprefix("http://").rsplit(":", 1)
        for _ in range(open_files + 100):  # the limit's worth accepted, a hundred more in the backlog
            held.append(socket.create_connection((host, int(port)), timeout=5))
        time.sleep(1.5)  # let the child accept what it can and hit the limit
        cpu0, wall0 = cpu_seconds(child.pid), time.monotonic()
        time.sleep(seconds)
        share = (cpu_seconds(child.pid) - cpu0) / (time.monotonic() - wall0)
    finally:
        for sock in held:
            sock.close()
        child.kill()  # a stop would wait out the open connections' grace; nothing is measured after this
        child.wait(30)
        child.stdout.close()  # type: ignore[union-attr]
        err.close()
    held_back = sum(int(n) for n in re.findall(r"\((\d+) more like it", err_path.read_text(encoding="utf-8")))
    return share, held_back


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--open-files", type=int, default=96)
    args = parser.parse_args()
    shares: dict[str, list[float]] = {"before": [], "after": []}
    failures: dict[str, list[int]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name in ("before", "after"):
                share, failed = exhausted_cpu_share(name == "before", args.open_files, args.seconds, Path(tmp))
                shares[name].append(share)
                failures[name].append(failed)
                print(
                    f"round {round_ + 1} {name:6} cpu share {share:.3f} of a core, {failed} failed accepts held back",
                    flush=True,
                )
    print()
    print(
        "| variant | CPU share while out of descriptors (median) | runs | failed accepts held back by the log (runs) |"
    )
    print("| --- | --- | --- | --- |")
    for name, values in shares.items():
        runs = ", ".join(f"{v:.3f}" for v in values)
        held = ", ".join(str(n) for n in failures[name])
        print(f"| {name} | {statistics.median(values):.3f} | {runs} | {held} |")
    print(
        f"\nratio before/after: {statistics.median(shares['before']) / max(statistics.median(shares['after']), 1e-3):.0f}x"
    )


if __name__ == "__main__":
    main()
