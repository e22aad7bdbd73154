"""The README's Quickstart, run as a stranger would: its commands verbatim, in a fresh copy of
the checkout, into a fresh virtual environment, with a home directory of its own. What the
README shows the recall printing is what it prints, the install is the runtime only, and the
memory lands in the data directory the README names.

pip keeps its own cache (the suite's install filled it), and the versions are constraints.txt's
through PIP_CONSTRAINT, so the README's `pip install .` stays the line a reader types."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from mcp_memory import __version__
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(heading: str) -> str:
    return README.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def blocks(text: str, kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", text, flags=re.DOTALL)


def shown(text_block: str) -> re.Pattern[str]:
    """A `text` block as a pattern: `…` stands for what differs between runs (an id, a date)."""
    lines = [re.escape(line.rstrip()).replace("…", ".+?") for line in text_block.strip("\n").splitlines()]
    return re.compile("\n".join(lines))


def fresh_checkout(target: Path) -> Path:
    """The files a clone holds (tracked, plus new ones not ignored), nothing built or installed."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_the_quickstart_installs_the_runtime_only_and_its_recall_prints_what_the_readme_shows(tmp_path) -> None:
    quickstart = section("Quickstart")
    (commands,) = blocks(quickstart, "bash")
    (expected,) = blocks(quickstart, "text")
    lines = [line for line in commands.splitlines() if line.strip()]
    assert lines[0] == "python3 -m venv .venv && .venv/bin/pip install ."  # the runtime, no extras
    assert [line.split()[1] for line in lines[1:]] == ["remember", "recall"]

    checkout = fresh_checkout(tmp_path / "mcp-memory")
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("MEMORY_", "EMBEDDING_", "RECALL_"))
    }
    environment |= {
        "HOME": str(home),
        "XDG_DATA_HOME": str(data),
        "PIP_CONSTRAINT": str(ROOT / "constraints.txt"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    }
    for name in ("DATABASE_URL", "VECTOR_BUCKET", "STATE_BUCKET", "VIRTUAL_ENV", "PYTHONPATH"):
        environment.pop(name, None)
    outputs = []
    for line in lines:
        done = subprocess.run(
            ["bash", "-c", line], cwd=checkout, env=environment, capture_output=True, text=True, timeout=1200
        )
        assert done.returncode == 0, f"{line!r} exited {done.returncode}:\n{done.stderr[-3000:]}"
        outputs.append(done.stdout)

    stored = re.fullmatch(r"Stored as ([0-9A-Z]{26})\.\n(?s:.*)", outputs[1])
    assert stored, outputs[1]
    assert quickstart.count("`Stored as 01…`") == 1 and stored.group(1).startswith("01")
    recalled = "\n".join(line.rstrip() for line in outputs[2].splitlines())
    assert shown(expected).fullmatch(recalled), f"the README shows:\n{expected}\nthe recall printed:\n{recalled}"
    assert stored.group(1) in recalled

    venv = checkout / ".venv" / "bin"
    version = subprocess.run([venv / "mcp-memory", "--version"], capture_output=True, text=True, env=environment)
    assert version.stdout.strip() == f"mcp-memory {__version__}"
    for extra in ("pytest", "psycopg", "boto3"):  # the runtime only: no test or deployment extra
        probe = subprocess.run([venv / "python", "-c", f"import {extra}"], capture_output=True, env=environment)
        assert probe.returncode != 0, f"the Quickstart's install brought {extra}"
    # the tenant `local`, in the data directory the README names
    assert (data / "mcp-tenant-memory" / "memory.db").is_file()
    assert "`~/.local/share/mcp-tenant-memory/memory.db` on Linux" in README
