"""What every local entry point shares: one default tenant (serve-stdio and the CLI read and
write the same memories without naming one), the database notices on stderr, and PORT=0."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_memory.core.identity import DEFAULT_TENANT
from tests.conftest import ROOT
from tests.support.cli_runner import Ran, run_cli


def local_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No setting of ours, the fake embedder, a store and a data directory (serve-stdio's hook
    socket) in `tmp_path`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "PYTHONPATH": str(ROOT)})
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env.update(extra)
    return env


def cli(env: dict[str, str], *args: str) -> Ran:
    """In process (tests/support/cli_runner.py); serve-http, which would serve, in a real one."""
    if args[:1] != ("serve-http",):
        return run_cli(*args, env=env, cwd=ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory", *args], capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=120
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def test_the_default_tenant_is_local() -> None:
    assert DEFAULT_TENANT == "local"


def test_a_hook_without_a_tenant_uses_every_commands_default_tenant() -> None:
    from mcp_memory.cli.hooks.command import Options, caller_of
    from mcp_memory.core import identity
    from mcp_memory.server.hooks import folder as hooks

    assert hooks.DEFAULT_TENANT == identity.DEFAULT_TENANT == DEFAULT_TENANT
    assert caller_of(Options("UserPromptSubmit"), {}, {}) == (DEFAULT_TENANT, None)


async def test_what_serve_stdio_stored_without_a_tenant_every_cli_command_reads_without_one(tmp_path: Path) -> None:
    env = local_env(tmp_path)
    server = StdioServerParameters(command=sys.executable, args=["-m", "mcp_memory", "serve-stdio"], env=env)
    async with Client(server) as client:
        stored = await client.call_tool("remember", {"content": "The staging cluster is rebuilt every Monday"})
        assert not stored.is_error, stored.content[0].text
    memory_id = re.search(r"Stored as ([0-9A-Z]{26})", stored.content[0].text).group(1)

    listed = cli(env, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [m["id"] for m in json.loads(listed.stdout)["memories"]] == [memory_id]
    recalled = json.loads(cli(env, "recall", "The staging cluster is rebuilt every Monday", "--json").stdout)
    assert [r["id"] for r in recalled["results"]] == [memory_id]
    counted = json.loads(cli(env, "stats", "--tenant", DEFAULT_TENANT, "--json").stdout)
    assert counted["total"] == 1
    compacted = json.loads(cli(env, "compact", "--json").stdout)
    assert compacted["tenant"] == DEFAULT_TENANT

    written = cli(env, "remember", "Release notes are drafted on Thursdays", "--json")
    assert written.returncode == 0, written.stderr
    cli_id = json.loads(written.stdout)["memory"]["id"]
    async with Client(server) as client:
        found = await client.call_tool("recall", {"query": "Release notes are drafted on Thursdays"})
    assert cli_id in found.content[0].text

    assert cli(env, "forget", memory_id, "--json").returncode == 0
    assert cli(env, "forget", cli_id, "--json").returncode == 0
    assert json.loads(cli(env, "list", "--json").stdout)["memories"] == []


def test_memory_tenant_moves_every_command_together(tmp_path: Path) -> None:
    env = local_env(tmp_path, MEMORY_TENANT="acme")
    cli(env, "remember", "Backups are verified every Sunday")
    assert json.loads(cli(env, "stats", "--tenant", "acme", "--json").stdout)["total"] == 1
    assert json.loads(cli(local_env(tmp_path), "list", "--json").stdout)["memories"] == []


def test_the_help_of_every_tenant_option_names_the_one_default(tmp_path: Path) -> None:
    for command in ("serve-stdio", "remember", "recall", "list", "forget", "compact"):
        shown = cli(local_env(tmp_path, COLUMNS="200"), command, "--help")
        assert f"$MEMORY_TENANT, else {DEFAULT_TENANT}" in " ".join(shown.stdout.split()), command


# --------------------------------------------------------------------------- the database's notices


def test_a_database_at_the_old_place_is_used_and_said_so_on_stderr_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = home / ".local" / "share" / "mcp-memory" / "memory.db"
    env = local_env(tmp_path, HOME=str(home))
    env.pop("MEMORY_DB_PATH")
    env.pop("XDG_DATA_HOME", None)
    old.parent.mkdir(parents=True)
    old_env = {**env, "MEMORY_DB_PATH": str(old)}
    assert cli(old_env, "remember", "The VPN certificate expires in March", "--json").returncode == 0

    listed = cli(env, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [m["content"] for m in json.loads(listed.stdout)["memories"]] == ["The VPN certificate expires in March"]
    lines = listed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"note: using the database at {old}, the old default place")
    assert "mv " in lines[0] and "MEMORY_DB_PATH=" in lines[0]
    new = home / ".local" / "share" / "mcp-tenant-memory"
    assert not new.exists()


def test_a_database_others_can_read_is_warned_about_and_left_as_it_is(tmp_path: Path) -> None:
    env = local_env(tmp_path)
    db = tmp_path / "m.db"
    db.touch(mode=0o600)
    os.chmod(db, 0o644)  # as an older version, or another tool, left it
    result = cli(env, "list", "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"warning: the database {db} can be read by other users (mode 0644); "
        f"to keep its memories private: chmod 600 '{db}'\n"
    )
    assert db.stat().st_mode & 0o777 == 0o644


def test_a_private_database_brings_no_notice(tmp_path: Path) -> None:
    env = local_env(tmp_path)
    cli(env, "remember", "Backups are verified every Sunday")
    result = cli(env, "list", "--json")
    assert result.returncode == 0 and result.stderr == ""


# --------------------------------------------------------------------------- PORT=0


def test_port_0_in_the_environment_serves_on_a_free_port(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory", "serve-http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=local_env(tmp_path, PORT="0"),
        cwd=str(ROOT),
    )
    try:
        first = process.stdout.readline()
        match = re.fullmatch(r"mcp-memory v\S+ listening on http://127\.0\.0\.1:(\d+) \(POST /mcp\)\n", first)
        assert match, first + process.stderr.read()
        assert int(match.group(1)) not in (0, 3000)
    finally:
        process.kill()
        process.communicate()


@pytest.mark.parametrize("raw", ["-1", "65536"])
def test_a_port_outside_0_to_65535_is_still_refused(tmp_path: Path, raw: str) -> None:
    result = cli(local_env(tmp_path, PORT=raw), "serve-http")
    assert result.returncode == 2
    assert result.stderr.strip() == f'configuration error: PORT must be an integer between 0 and 65535, got "{raw}"'
