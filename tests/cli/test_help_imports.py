"""`mcp-memory --help` stays light: it names the default tenant from core/identity.py and loads
none of the settings (mcp_memory.config and what its sections import), so a split of the settings
into more modules costs --help nothing (bench/RESULTS.md, "Issue 24: the house, A/B")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


#: Our own modules `mcp-memory --help` imports (36 before and after issue 37's requests: the export's
#: record reader, which --help loads, imports core/requests.py only when it reads a record).
HELP_OURS_MAX = 36


def test_help_imports_no_more_of_our_modules_than_before_and_not_the_requests(tmp_path: Path) -> None:
    from bench.latency.imports import help_imports

    ours = [name for name in help_imports(ROOT, tmp_path) if name.startswith("mcp_memory")]
    assert "mcp_memory.cli.app" in ours  # the record is real
    assert [name for name in ("mcp_memory.core.requests", "mcp_memory.core.paging") if name in ours] == []
    assert len(ours) <= HELP_OURS_MAX, f"{len(ours)} of our modules for --help, at most {HELP_OURS_MAX}"
