"""One version number: the package metadata, `mcp-memory --version` and the server
version an MCP client is told all come from mcp_memory.__version__ (core/version.py)."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from mcp import Client

from mcp_memory import __version__
from tests.conftest import ROOT
from tests.server.test_stdio import params


def test_the_version_is_a_release_number() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_the_package_metadata_takes_its_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mcp_memory.core.version.__version__"}
    assert importlib.metadata.version("mcp-tenant-memory") == __version__, (
        "the installed metadata is from another version: reinstall with pip install -e ."
    )


def test_the_command_prints_the_same_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "--version"], capture_output=True, text=True, cwd=str(ROOT), check=True
    )
    assert result.stdout == f"mcp-memory {__version__}\n"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_mcp_client_is_told_the_same_version(tmp_path: Path, mode: str) -> None:
    async with Client(params(tmp_path / "m.db", "--tenant", "acme", EMBEDDING_PROVIDER="fake"), mode=mode) as client:
        info = client.server_info  # from initialize (legacy) or the discover stamp (2026-07-28)
        assert info is not None and (info.name, info.version) == ("mcp-memory", __version__)
