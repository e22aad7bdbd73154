"""The hooks' tests run `hook.main` in this process (tests/hooks/support.py run_hook). A hook whose
own answer did not come in time ends its process at once (cli/hooks/command.py EXIT, os._exit(0)): inside
pytest that would end the whole run with status 0, every later test unreported. Here it fails the
test instead; a test that means the hook to end replaces EXIT itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_memory.cli.hooks import command as hook
from tests.conftest import Env
from tests.hooks.support import environ, serving


@pytest.fixture(autouse=True)
def hooks_never_end_the_test_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(code: int) -> None:
        raise AssertionError(f"the hook ended its process (os._exit({code})) inside the test run")

    monkeypatch.setattr(hook, "EXIT", refuse)
    # each test's answering threads only: one still running from an earlier test would make this
    # test's hook end its process too
    monkeypatch.setattr(hook, "_THREADS", [])


@pytest.fixture
async def served(env: Env, tmp_path: Path):
    """A hook socket served for tenant acme by the test's service; yields the hook's environment."""
    variables = environ(tmp_path, MEMORY_TENANT="acme")
    server = await serving(env.service, variables)
    try:
        yield variables
    finally:
        await server.close()
