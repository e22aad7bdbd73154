"""serve-stdio answers `initialize` having imported no more than it needs: not the other commands'
modules, not the HTTP server's, not the docs tool's when no knowledge base is set, not python-ulid
or the model's heap tuning. Issue 24's constraint is that the handshake imports no more than before
it (bench/RESULTS.md, "Issue 24: the house, A/B"; `python -m bench.latency.imports` counts them)."""

from __future__ import annotations

from pathlib import Path

from bench.latency.imports import handshake_imports
from tests.conftest import ROOT

#: Loaded later, or only by other commands: each was once imported before the handshake's answer.
NOT_BEFORE_INITIALIZE = (
    "mcp_memory.cli.app",
    "mcp_memory.cli.oauth",
    "mcp_memory.cli.transfer",
    "mcp_memory.cli.ui",
    "mcp_memory.server.http.serve",
    "mcp_memory.server.protocol.search_docs",
    "mcp_memory.runtime.aws",
    "mcp_memory.runtime.heap",
    "ulid",
    # the other backends' drivers and the SQLite approximate index's library (stores/sqlite/ann.py)
    "psycopg",
    "boto3",
    "usearch",
)

#: Our own modules imported by the time `initialize` is answered (72 when this was written; 73 since
#: cli/common.py's plumbing moved, unchanged, to cli/plumbing.py so stats, list and forget can run
#: without Typer: the same code in one more file; 80 since issue 37 gave the server and the hooks
#: rooms: four package files holding only a docstring, the hooks' old core module in three (the
#: hooks' wire and folder, the injection budget) and the runners' shared boot lines apart: the same
#: code in seven more files, bench/RESULTS.md "Issue 37: the rooms"; 81 since core/invisible.py,
#: the rule on invisible characters, is its own module beside the argument checks that use it; 82
#: since issue 35 moved what each hook event asks out of cli/hooks/command.py into
#: server/hooks/events.py, so the serving process can run it too: the same code in one more file
#: (the tool hooks' own core/actions.py loads on first use); 83 with core/judgment.py, recall's
#: second stage, part of the service; 84 with server/hooks/tool.py, the `claude_code_hook` tool
#: Claude Code's mcp_tool hooks call, built with the catalogue (everything it imports was loaded
#: already: one more file); 83 again since the hook tool is built at the first tools/list or call
#: (the tool layer's `extra` as a function), after the handshake.
OURS_MAX = 83


def test_serve_stdio_answers_initialize_before_importing_other_commands_http_serving_or_ulid(tmp_path: Path) -> None:
    at_initialize, _ = handshake_imports(ROOT, tmp_path)

    assert "mcp_memory.cli.stdio" in at_initialize  # the record is real: the command's own module is there
    assert [name for name in NOT_BEFORE_INITIALIZE if name in at_initialize] == []
    ours = [name for name in at_initialize if name.startswith("mcp_memory")]
    assert len(ours) <= OURS_MAX, f"{len(ours)} of our modules before initialize is answered, at most {OURS_MAX}"
