"""`mcp-memory --help` stays light: it names the default tenant from core/identity.py and loads
none of the settings (mcp_memory.config and what its sections import), so a split of the settings
into more modules costs --help nothing (bench/RESULTS.md, "Issue 24: the house, A/B")."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_help_reads_no_settings_module_and_still_names_the_default_tenant() -> None:
    code = (
        "import sys; from typer.testing import CliRunner; from mcp_memory.cli.app import app;"
        "r = CliRunner().invoke(app, ['remember', '--help']); assert r.exit_code == 0, r.output;"
        "print('local' in r.output);"
        "print([m for m in sys.modules if m.startswith(('mcp_memory.config', 'mcp_memory.core.fusion'))])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    assert result.stdout.split("\n")[-3:-1] == ["True", "[]"]
