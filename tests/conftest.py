"""Shared fixtures: an injected clock, a MemoryService over the in-memory
reference stores with the deterministic fake embedder, a real HTTP AWS endpoint (moto in
server mode; see tests/support/moto_endpoint.py) and a real PostgreSQL (pgserver, or
TEST_DATABASE_URL), each started only when a test needs it."""

from __future__ import annotations

import gc
import os
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # tests import the checkout, not an installed copy
    sys.path.insert(0, str(ROOT))

from mcp_memory.core.counters.tracker import AccessCounters  # noqa: E402
from mcp_memory.core.ids import parse_iso  # noqa: E402
from mcp_memory.core.logs import NullLog  # noqa: E402
from mcp_memory.core.service import MemoryService  # noqa: E402
from mcp_memory.embedders.fake import FakeEmbedder  # noqa: E402
from mcp_memory.server.hooks.folder import DATA_DIR_NAME, data_dir  # noqa: E402
from mcp_memory.stores.in_memory import InMemoryObjectStore, InMemoryVectorStore  # noqa: E402
from mcp_memory.stores.records import ObjectStore, VectorStore  # noqa: E402
from tests.support.backends import BACKENDS, markers_for  # noqa: E402

T0 = parse_iso("2026-07-01T00:00:00.000Z")
DAY = 86_400_000
#: The data directory of whoever runs the tests (their memories, their hooks' sockets), worked
#: out before any test changes the environment: no test may write there (`data_dir_untouched`).
USERS_DATA_DIR = data_dir()


@dataclass
class Clock:
    """Epoch milliseconds that only move when a test moves them."""

    now: float = T0

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The common umask 022: without explicit modes, files would be 0644 and directories 0755."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@dataclass
class Env:
    service: MemoryService
    vectors: VectorStore
    objects: ObjectStore
    embedder: FakeEmbedder
    counters: AccessCounters
    clock: Clock
    #: Which storage backend the service runs on.
    backend: str = "memory"
    #: Rows in a backend table ("memories" / "objects"), counted behind the stores' backs.
    count: Callable[[str], Awaitable[int]] | None = None

    async def memory_count(self) -> int:
        """How many memories the backend holds, in every tenant."""
        if self.count is None:
            return self.vectors.size  # type: ignore[attr-defined]
        return await self.count("memories")

    async def object_count(self) -> int:
        """How many objects the backend holds."""
        if self.count is None:
            return self.objects.size  # type: ignore[attr-defined]
        return await self.count("objects")


def make_env(clock: Clock, *, floor: float = 0.3, embedder=None, vectors=None, objects=None) -> Env:
    vectors = vectors or InMemoryVectorStore()
    objects = objects or InMemoryObjectStore()
    embedder = embedder or FakeEmbedder()
    counters = AccessCounters(objects, pod_id="test-pod", log=NullLog(), clock=clock)
    service = MemoryService(vectors, objects, embedder, counters, floor=floor, clock=clock)
    return Env(service, vectors, objects, embedder, counters, clock)


@pytest.fixture
def env(clock: Clock) -> Env:
    """A service over the in-memory reference stores: where the service's policy is tested, once."""
    return make_env(clock)


@pytest.fixture(scope="session")
def real_model():
    """The real local model, each text embedded once for the whole run (tests/support/real_model.py):
    for the tests about its own cosines (the dedup table, remember's hint)."""
    import asyncio

    from tests.support.real_model import RememberedModel

    model = RememberedModel()
    yield model
    asyncio.run(model.shutdown())


@pytest.fixture(scope="session")
def aws_endpoint() -> Iterator[str]:
    """The URL of a moto server on 127.0.0.1 (S3 and S3 Vectors), for the whole session."""
    from tests.support.moto_endpoint import MotoEndpoint, close_admin_clients

    endpoint = MotoEndpoint()
    try:
        yield endpoint.url
    finally:
        close_admin_clients()
        endpoint.stop()


@pytest.fixture
def aws(aws_endpoint: str):
    """Fresh vector bucket + index (8 dimensions, cosine, the four non-filterable keys) and state bucket."""
    from tests.support.moto_endpoint import make_place

    return make_place(aws_endpoint)


class RecordingObjectStore(ObjectStore):
    """Any ObjectStore, remembering every key written, in order (as the in-memory one does)."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.writes: list[str] = []

    async def get(self, key: str):
        return await self.inner.get(key)

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        etag = await self.inner.put(key, body, if_match=if_match, if_none_match=if_none_match)
        self.writes.append(key)
        return etag

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        return await self.inner.list(prefix, limit, start_after)

    async def delete(self, keys) -> None:
        await self.inner.delete(keys)

    async def close(self) -> None:
        await self.inner.close()


#: The storage backends the smoke suite (tests/stores/test_smoke.py) runs a MemoryService on: all
#: of them. Policy tests use `env` (the in-memory store); a test parametrised over this list
#: tests what a backend can break.
SERVICE_BACKENDS = BACKENDS


@pytest.fixture(params=SERVICE_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Every storage backend in turn: for `backend_env`, and for a test of what a backend can break."""
    return request.param


@pytest.fixture
async def backend_env(backend: str, clock: Clock, request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    """A service over real stores of each backend in turn (the in-memory one, SQLite, PostgreSQL, S3)."""
    opened = await open_env(backend, clock, request)
    yield opened
    await opened.service.close()


#: The one test that takes a minute or more, mostly waiting on pip: run first, so that under two
#: workers (`-n 2`) the other worker works meanwhile instead of waiting at the end for it.
FIRST = ("tests/test_readme_quickstart.py",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs PostgreSQL or the moto endpoint (tests/support/backends.py),
    and put FIRST first."""
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in FIRST)
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = dict(callspec.params) if callspec is not None else {}
        parts = item.path.relative_to(ROOT / "tests").parts[:-1]
        for marker in sorted(markers_for(set(getattr(item, "fixturenames", ())), params, parts)):
            item.add_marker(getattr(pytest.mark, marker))


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collect with the cyclic garbage collector off, then freeze what collection left (every
    imported module and collected item): the collector no longer walks those objects in each
    full pass of the run. Collection cost about 4 s of collector time per process, and a run of
    pytest inside a test (tests/test_markers.py) several times its own time, in a process
    holding the whole suite (bench/RESULTS.md "The suite under five minutes")."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()


@pytest.hookimpl(tryfirst=True)  # before a parallel run's worker reports what it collected
def pytest_collection_finish(session: pytest.Session) -> None:
    """Stop before the first test, with one message naming what to install, when a selected
    test needs what this machine lacks (tests/support/needs.py): never a skip, never a failure
    per test. A worker of a parallel run (`-n 2`, pytest-xdist) runs nothing and hands the
    message to the run that started it, which says it (`pytest_testnodedown` below)."""
    from tests.support.needs import NEEDS, missing_message

    if session.config.option.collectonly:
        return
    counts = {marker: sum(1 for item in session.items if item.get_closest_marker(marker)) for marker in NEEDS}
    message = missing_message(counts)
    if message is None:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is None:
        pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)
    workeroutput["missing"] = message
    session.items.clear()


_MISSING: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """A parallel run's worker found a need missing (pytest_collection_finish above)."""
    message = getattr(node, "workeroutput", {}).get("missing")
    if message and message not in _MISSING:
        _MISSING.append(message)


_SKIPPED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under CI (CI=true, as .ci/run runs) a skipped test fails the run: CI runs everything."""
    if _MISSING:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("!", _MISSING[0])
        _MISSING.clear()
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        return
    if _SKIPPED and os.environ.get("CI", "").lower() in ("1", "true") and session.exitstatus == 0:
        sys.stderr.write(f"\nCI runs every test, and {len(_SKIPPED)} were skipped: {', '.join(_SKIPPED[:5])}\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def claude_code() -> str:
    """The path of Claude Code's CLI (tests/support/needs.py says where it is looked for)."""
    from tests.support.needs import NEEDS, claude_code_path

    found = claude_code_path()
    if found is None:
        pytest.fail(f"{NEEDS['claude_code'].what} is needed: {NEEDS['claude_code'].install}")
    return found


@pytest.fixture(scope="session")
def codex() -> str:
    """The path of Codex CLI (tests/support/needs.py says where it is looked for)."""
    from tests.support.needs import NEEDS, codex_path

    found = codex_path()
    if found is None:
        pytest.fail(f"{NEEDS['codex'].what} is needed: {NEEDS['codex'].install}")
    return found


async def open_env(
    backend: str, clock: Clock, request: pytest.FixtureRequest, *, floor: float = 0.3, embedder=None
) -> Env:
    """A service over real stores of `backend` (close with `env.service.close()`).

    SQLite gets a file in the test's tmp_path, PostgreSQL a fresh schema.
    """
    embedder = embedder or FakeEmbedder()
    if backend == "memory":
        return make_env(clock, floor=floor, embedder=embedder)
    if backend == "sqlite":
        import sqlite3

        from mcp_memory.stores.sqlite.store import open_sqlite

        path = request.getfixturevalue("tmp_path") / "service" / "memory.db"
        vectors, objects = await open_sqlite(path, model=embedder.model, dim=embedder.dim)

        async def count(table: str) -> int:
            conn = sqlite3.connect(path)
            try:
                return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            finally:
                conn.close()

    elif backend == "postgres":
        from mcp_memory.stores.postgres.store import open_postgres
        from tests.support import pg_support

        url = request.getfixturevalue("pg_url")
        vectors, objects = await open_postgres(url, model=embedder.model, dim=embedder.dim)

        async def count(table: str) -> int:
            return pg_support.count(url, table)

    elif backend == "s3":
        from tests.support.s3_env import make_s3_env

        return make_s3_env(clock, request.getfixturevalue("aws_endpoint"), floor=floor, embedder=embedder)
    else:
        raise ValueError(f"unknown backend {backend}")
    recording = RecordingObjectStore(objects)
    counters = AccessCounters(recording, pod_id="test-pod", log=NullLog(), clock=clock)
    service = MemoryService(vectors, recording, embedder, counters, floor=floor, clock=clock)
    return Env(service, vectors, recording, embedder, counters, clock, backend, count)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the user's data directory


@pytest.fixture(scope="session", autouse=True)
def not_the_users_data_dir() -> Iterator[Path]:
    """XDG_DATA_HOME, for the whole run, a folder of the run's: a test, or a process it starts,
    that names no data directory of its own writes there instead of into the user's
    (USERS_DATA_DIR), and `data_dir_untouched` fails it. A short path, as the user's is, so
    that a hook socket is made there too (folder.py: a long one moves to the temporary folder)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="data-"))
    previous = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(folder)
    try:
        yield folder
    finally:
        if previous is None:
            os.environ.pop("XDG_DATA_HOME", None)
        else:
            os.environ["XDG_DATA_HOME"] = previous
        written = (folder / DATA_DIR_NAME).exists()  # by the session's own fixtures, after the last test
        shutil.rmtree(folder, ignore_errors=True)
    if written:
        pytest.fail(f"the session's fixtures wrote into the user's data directory {USERS_DATA_DIR} (here {folder})")


@pytest.fixture(autouse=True)
def data_dir_untouched(not_the_users_data_dir: Path, request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the test after which the run's stand-in for the user's data directory holds
    anything: without the stand-in, that would have been written into the user's own."""
    yield
    written = not_the_users_data_dir / DATA_DIR_NAME
    if written.exists():
        found = sorted(str(path.relative_to(written)) for path in written.rglob("*"))
        shutil.rmtree(written, ignore_errors=True)  # the next test starts clean
        pytest.fail(
            f"{request.node.nodeid} wrote into the data directory of the environment it was given, "
            f"the user's own {USERS_DATA_DIR} outside the tests (here a stand-in, {written}: "
            f"{found or 'the folder itself'}): give what it runs a HOME and an XDG_DATA_HOME of its own"
        )


# --------------------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """A PostgreSQL with pgvector for the whole session: TEST_DATABASE_URL, else pgserver.

    Started only when a test asks for it. A failure to start is an error with its
    reason, never a skip.
    """
    from tests.support.pg_support import prepare_admin, start_pgserver

    given = os.environ.get("TEST_DATABASE_URL", "").strip()
    if given:
        prepare_admin(given)
        yield given
        return
    server = start_pgserver()
    try:
        url = server.get_uri()
        prepare_admin(url)
        yield url
    finally:
        server.cleanup()


@pytest.fixture
def pg_url(pg_admin_url: str) -> Iterator[str]:
    """A URL selecting a fresh, empty schema of its own (dropped after the test)."""
    from tests.support.pg_support import fresh_schema

    with fresh_schema(pg_admin_url) as url:
        yield url
