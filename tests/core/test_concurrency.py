"""Several processes on one embedded database: identical concurrent remembers
leave one memory, and concurrent writers lose nothing (docs/storage.md, issue 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT

WORKER = """
import asyncio, json, os, sys, time
from pathlib import Path
from mcp_memory.config import Settings
from mcp_memory.core.model import Caller
from mcp_memory.app import open_service

async def main(go: Path, texts: list[str]) -> None:
    service = await open_service(Settings.from_env())
    try:
        Path(f"{go}.ready.{os.getpid()}").touch()
        while not go.exists():  # a start line, so the processes really race
            await asyncio.sleep(0.005)
        results = [await service.remember(Caller("acme"), t) for t in texts]
        print(json.dumps([r.created for r in results]))
    finally:
        await service.close()

asyncio.run(main(Path(sys.argv[1]), json.loads(sys.argv[2])))
"""


def race(tmp_path: Path, per_process: list[list[str]]) -> list[list[bool]]:
    go = tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "PYTHONPATH": str(ROOT)})
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(go), json.dumps(texts)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(ROOT),
        )
        for texts in per_process
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("go.ready.*"))) < len(processes):  # every process has opened the database
        assert time.monotonic() < deadline and all(p.poll() is None for p in processes)
        time.sleep(0.01)
    go.touch()
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        outputs.append(json.loads(out))
    return outputs


def count_memories(db: Path) -> int:
    import sqlite3

    connection = sqlite3.connect(db)
    try:
        return connection.execute("select count(*) from memories").fetchone()[0]
    finally:
        connection.close()


def test_identical_remembers_racing_in_four_processes_leave_one_memory(tmp_path: Path) -> None:
    text = "The on-call rotation hands over every Monday at 09:00 Berlin time"
    outputs = race(tmp_path, [[text]] * 4)
    assert sorted(created for [created] in outputs) == [False, False, False, True]
    assert count_memories(tmp_path / "m.db") == 1


def test_two_processes_writing_different_memories_lose_none(tmp_path: Path) -> None:
    a = [f"process alpha stored fact {chr(97 + i)}{chr(97 + j)} about billing" for i in range(5) for j in range(5)]
    b = [f"process beta stored fact {chr(97 + i)}{chr(97 + j)} about shipping" for i in range(5) for j in range(5)]
    outputs = race(tmp_path, [a, b])
    assert all(all(created) for created in outputs)
    assert count_memories(tmp_path / "m.db") == 50
