"""The README's Claude Code section: right after the plugin, one command brings in what Claude
Code already knows, so the first session's digest is not empty. Run as a user would: the
README's command verbatim under bash (which expands `~`), in a project folder, with a home of its
own holding Claude Code's files; then the SessionStart hook exactly as the plugin's hooks.json
runs it, with the tenant the README's install line sets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.hooks.support import session_start
from tests.support.import_fixtures import DATA, EXPECTED, auto_memory_name

README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("\n## Claude Code\n", 1)[1].split("\n## ", 1)[0]
HOOKS = json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))


def readme_line(prefix: str) -> str:
    (line,) = [line for line in SECTION.splitlines() if line.startswith(prefix)]
    return line


def the_tenant_the_plugin_is_installed_with() -> str:
    """The tenant every `claude plugin install` line of the section sets (one install, or the
    two-step one for an older Claude Code): the same in all of them."""
    installs = [line for line in SECTION.splitlines() if line.startswith("claude plugin install ")]
    tenants = {m.group(1) for m in (re.search(r"--config tenant=(\S+)", line) for line in installs) if m}
    assert installs and len(tenants) == 1, installs
    return tenants.pop()


def test_the_readmes_one_command_imports_claude_codes_memory_and_the_first_digest_holds_it(tmp_path: Path) -> None:
    command = readme_line("mcp-memory import ")
    assert command.startswith("mcp-memory import --from claude-code ")
    tenant = the_tenant_the_plugin_is_installed_with()
    assert f"--tenant {tenant} " in command  # the import fills the tenant the hooks read
    home = tmp_path / "home"
    project = tmp_path / "my-project"
    shutil.copytree(DATA / "claude-code" / "project", project)
    shutil.copytree(DATA / "claude-code" / "home" / ".claude", home / ".claude")
    shutil.copytree(
        DATA / "claude-code" / "auto-memory", home / ".claude" / "projects" / auto_memory_name(project) / "memory"
    )
    shim = tmp_path / "bin" / "mcp-memory"  # `mcp-memory` on PATH, as `uv tool install` puts it
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcp_memory "$@"\n')
    shim.chmod(0o755)
    db = tmp_path / "memory.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env |= {"HOME": str(home), "MEMORY_DB_PATH": str(db), "EMBEDDING_PROVIDER": "fake", "PYTHONPATH": str(ROOT)}
    env.pop("XDG_DATA_HOME", None)  # the scratch HOME holds the data directory, never the user's
    env |= {"PATH": f"{shim.parent}:{os.environ['PATH']}", "CLAUDE_PLUGIN_OPTION_TENANT": tenant}

    def bash(line: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["bash", "-c", line], cwd=project, env=env, input=stdin, capture_output=True, timeout=120)

    expected = EXPECTED["claude-code"]
    dry = bash(command + " --dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (
        dry.stdout.decode()
        .splitlines()[-1]
        .startswith(f"dry run, nothing written: would import {expected.new} new memories")
    )
    listed = bash(f"mcp-memory list --tenant {tenant} --json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["memories"] == []  # the dry run wrote nothing

    done = bash(command)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == (
        f"imported {expected.new} new memories into tenant {tenant} from {expected.files} files (claude-code): "
        f"0 already stored, {expected.duplicates_within} repeated in the files, 0 refused, "
        f"{expected.skipped} left out\n"
    )
    again = bash(command + " --json")  # "running it again writes nothing twice"
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["new"] == 0
    assert len(json.loads(bash(f"mcp-memory list --tenant {tenant} --json --limit 100").stdout)["memories"]) == (
        expected.new
    )

    (start,) = HOOKS["hooks"]["SessionStart"]
    hook = bash(start["hooks"][0]["command"], stdin=json.dumps(session_start()).encode())
    assert hook.returncode == 0, hook.stderr
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    for fact in (
        "Run `make test` before every push",  # the project's CLAUDE.md
        "Staging redeploys from main every hour, on the hour.",  # its auto memory
        "Answer in short paragraphs, no tables",  # the user's ~/.claude/CLAUDE.md
    ):
        assert fact in context
