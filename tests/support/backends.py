"""The one list of storage backends every parametrised suite runs on, and the
pytest markers that let a developer leave out the tests needing a service or a tool.

`pytest -m "not postgres and not s3"` runs without PostgreSQL or the moto
endpoint, `-m "not browser and not claude_code and not codex"` without Chromium, Claude Code's
CLI or Codex CLI; CI runs everything. A test is marked when it asks for a service's
fixture, when a backend fixture is parametrised with that backend, or when it
lives in that backend's test folder (tests/conftest.py applies the markers).
"""

from __future__ import annotations

from mcp_memory.stores import BACKENDS as STORE_BACKENDS

#: Every storage backend, in the order the suites run them: the in-memory reference
#: store, then every backend of the table a deployment chooses from.
BACKENDS = ("memory", *STORE_BACKENDS)

#: The backends whose `exclusive` holds across processes sharing the storage. S3 has no
#: lock to take across replicas (a duplicate is tolerated there, never a lost memory);
#: the in-memory store lives in one process.
CROSS_PROCESS = ("sqlite", "postgres")

#: marker -> the fixtures that start its service or tool (what each needs: tests/support/needs.py)
SERVICE_FIXTURES: dict[str, frozenset[str]] = {
    "postgres": frozenset({"pg_url", "pg_admin_url"}),
    "s3": frozenset({"aws_endpoint", "aws"}),
    "browser": frozenset({"chromium"}),
    "claude_code": frozenset({"claude_code"}),
    "codex": frozenset({"codex"}),
}

#: Fixtures parametrised with backend names (their parameter picks the backend).
BACKEND_FIXTURES = frozenset({"stores", "backend"})


def markers_for(fixturenames: set[str], params: dict[str, object], path_parts: tuple[str, ...]) -> set[str]:
    """The markers a test needs: its services' names."""
    found = set()
    for marker, fixtures in SERVICE_FIXTURES.items():
        if fixturenames & fixtures or marker in path_parts:
            found.add(marker)
        if any(params.get(name) == marker for name in BACKEND_FIXTURES):
            found.add(marker)
    return found
