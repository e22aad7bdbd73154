"""`mcp-memory serve-http` as an operator runs it, in a subprocess, for the
end-to-end tests on each backend: a clean environment, `--port 0`, the boot
lines read as they come, and a stop by signal.

Every wait is bounded and none blocks the test's event loop (a stand-in
served from that loop must keep answering while the server boots). stderr
goes to a file, not a pipe, so a chatty run (`python -X importtime`) can never
fill a pipe nobody reads and stall the server.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from tests.conftest import ROOT

LISTENING = re.compile(r"mcp-memory v(\S+) listening on (http://\S+) \(POST /mcp\)")
#: Boot lines without MCP_API_KEY: listening, storage, embedder, docs.
BOOT_LINES = 4
BOOT_LIMIT_S = 120
STOP_LIMIT_S = 60

#: Variables of the developer's or CI's environment that would change what the server does.
_SETTINGS = (
    "MEMORY_",
    "EMBEDDING_",
    "DATABASE_URL",
    "VECTOR_",
    "STATE_BUCKET",
    "KNOWLEDGE_BASE_ID",
    "AWS_",
    "MCP_API_KEY",
    "HOST",
    "PORT",
    "RECALL_",
    "STATS_",
    "HTTP_",
    "PYTHON",
)


def clean_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """This process's environment without any setting of ours, AWS's or Python's; no AWS
    config files or instance metadata; then `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SETTINGS)}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "HOME": str(tmp_path),
            "MEMORY_DB_PATH": str(tmp_path / "not-used.db"),
            "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "HOSTNAME": "e2e-pod",
        }
    )
    env.update(settings)
    return env


class HttpProcess:
    """A running server whose boot lines are out (so it accepts connections)."""

    def __init__(self, process: subprocess.Popen[str], err_path: Path, boot: list[str], lines: queue.Queue) -> None:
        self.process = process
        self.err_path = err_path
        self.boot = boot
        self._lines = lines
        match = LISTENING.fullmatch(boot[0])
        assert match, boot
        self.version = match.group(1)
        self.url = match.group(2)
        self.mcp_url = self.url + "/mcp"

    async def stop(self, sig: signal.Signals = signal.SIGTERM) -> tuple[int, str, str]:
        """Send `sig`; (exit code, stdout after the boot lines, stderr) once it has exited."""
        self.process.send_signal(sig)
        code = await asyncio.to_thread(self.process.wait, STOP_LIMIT_S)
        return code, "".join(_drain(self._lines)), self.err()

    def err(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")


def _drain(lines: queue.Queue) -> list[str]:
    out = []
    while True:
        line = lines.get(timeout=STOP_LIMIT_S)
        if line is None:  # end of stdout
            return out
        out.append(line)


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


@asynccontextmanager
async def http_process(
    env: Mapping[str, str],
    err_path: Path,
    *,
    python_flags: Sequence[str] = (),
    boot_lines: int = BOOT_LINES,
    open_files: int | None = None,
) -> AsyncIterator[HttpProcess]:
    """`python [flags] -m mcp_memory serve-http --port 0` with exactly `env`; killed if still
    running when the block ends. `open_files` lowers its limit of open files (RLIMIT_NOFILE)."""

    def limit_files() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with open(err_path, "w", encoding="utf-8") as err:
        process = subprocess.Popen(
            [sys.executable, *python_flags, "-m", "mcp_memory", "serve-http", "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=dict(env),
            cwd=str(ROOT),
            preexec_fn=limit_files if open_files is not None else None,
        )
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stdout, lines), name="serve-http-stdout", daemon=True)
    reader.start()
    try:
        boot = []
        for _ in range(boot_lines):
            try:
                line = await asyncio.to_thread(lines.get, True, BOOT_LIMIT_S)
            except queue.Empty:
                line = None  # reported below, with what it wrote
            if line is None:
                break
            boot.append(line.rstrip("\n"))
        assert len(boot) == boot_lines and LISTENING.fullmatch(boot[0]), (
            f"serve-http did not boot: stdout {boot}, stderr:\n{err_path.read_text(errors='replace')[-4000:]}"
        )
        yield HttpProcess(process, err_path, boot, lines)
    finally:
        if process.poll() is None:
            process.kill()
        await asyncio.to_thread(process.wait, STOP_LIMIT_S)
        await asyncio.to_thread(reader.join, STOP_LIMIT_S)
        process.stdout.close()


def imported_modules(importtime_stderr: str) -> set[str]:
    """Every module named by `python -X importtime` in this stderr text."""
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":  # the header line
                names.add(name)
    return names


def log_lines(stderr: str) -> list[str]:
    """stderr without `-X importtime`'s lines: what the server itself wrote."""
    return [line for line in stderr.splitlines() if not line.startswith("import time:")]
