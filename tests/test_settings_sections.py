"""Settings by component: `open_service()` reads only the sections a service uses
(docs/development.md, docs/operations.md#configuration), and serve-http still refuses every bad variable at start."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_memory import Caller, open_service
from mcp_memory.config import SERVICE_SECTIONS, Settings
from mcp_memory.core.errors import ConfigError
from tests.conftest import ROOT
from tests.support import settings_grid

#: Variables a library script does not use, each set to a value serve-http or the CLI refuses.
SERVE_ONLY_BROKEN = {
    "RATE_LIMIT_PER_TENANT": "fast",
    "MCP_OAUTH_JWKS_URL": "https://issuer.example/jwks",  # without MCP_OAUTH_ISSUER
    "METRICS_PORT": "99999",
    "UI_ENABLED": "perhaps",
    "HTTP_HEADER_TIMEOUT_MS": "soon",
    "MEMORY_TENANT": "bad tenant!",
}

#: How a refusal of a variable a service does not read begins.
NOT_A_SERVICES = (
    "PORT",
    "HTTP_",
    "MCP_",
    "RATE_LIMIT_",
    "MAX_CONCURRENT_",
    "METRICS_",
    "UI_ENABLED",
    "MEMORY_TENANT",
    "MEMORY_CONVERSATION",
)


@pytest.fixture
def script_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("MEMORY_", "EMBEDDING_", "RECALL_", "MCP_", "RATE_LIMIT", "METRICS_", "HTTP_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEMORY_DB_PATH", str(tmp_path / "script.db"))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "fake")
    for name, value in SERVE_ONLY_BROKEN.items():
        monkeypatch.setenv(name, value)
    return tmp_path


async def test_a_library_script_with_broken_serve_variables_opens_a_service_and_remembers(script_env: Path) -> None:
    service = await open_service()
    try:
        stored = await service.remember(Caller("acme"), "Deploys go out on Tuesdays.")
        found = await service.recall(Caller("acme"), "Deploys go out on Tuesdays.")
    finally:
        await service.close()

    assert [r.memory.id for r in found.results] == [stored.memory.id]
    assert (script_env / "script.db").is_file()


async def test_a_library_script_is_still_refused_over_a_variable_the_service_uses(
    script_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALL_RETRIEVAL", "sparse")

    with pytest.raises(ConfigError) as refused:
        await open_service()

    assert str(refused.value) == 'RECALL_RETRIEVAL must be "hybrid", "dense" or "keyword", got "sparse"'
    assert not (script_env / "script.db").exists()


def test_every_variable_is_still_checked_when_every_section_is_read(script_env: Path) -> None:
    with pytest.raises(ConfigError) as alone:
        Settings.from_env({"MEMORY_TENANT": "bad tenant!"})
    with pytest.raises(ConfigError) as refused:
        Settings.from_env()

    assert str(refused.value) == str(alone.value)  # the first of the broken ones, in the fixed order
    assert str(refused.value).startswith("MEMORY_TENANT")


@pytest.mark.parametrize(("name", "value"), list(SERVE_ONLY_BROKEN.items()))
def test_serve_http_refuses_at_start_what_a_library_script_is_not_refused_over(
    tmp_path: Path, name: str, value: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in SERVE_ONLY_BROKEN and not k.startswith("MEMORY_")}
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "PYTHONPATH": str(ROOT)})
    env[name] = value
    try:
        Settings.from_env({"HOSTNAME": "pod-1", name: value})
    except ConfigError as exc:
        expected = f"configuration error: {exc}"
    else:
        raise AssertionError(f"{name}={value} is accepted by serve-http's reader")

    result = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "serve-http", "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=120,
    )

    assert result.returncode == 2
    assert expected in result.stderr
    assert not (tmp_path / "m.db").exists()


def test_over_every_pair_of_variables_the_service_reads_what_the_full_reader_reads_of_its_sections() -> None:
    """Where every section is accepted, the service's sections hold the same values; where the
    service's reading is refused, the full one is too, in the same words or naming an earlier
    serve or caller variable (PORT is read first)."""
    same = only_service = 0
    for env in settings_grid.pair_grid():
        full_env = {**settings_grid.BASE, **env}
        try:
            service = Settings.from_env(full_env, sections=SERVICE_SECTIONS)
        except ConfigError as exc:
            with pytest.raises(ConfigError) as refused:
                Settings.from_env(full_env)
            assert str(refused.value) == str(exc) or str(refused.value).startswith(NOT_A_SERVICES), env
            continue
        try:
            full = Settings.from_env(full_env)
        except ConfigError as exc:
            assert str(exc).startswith(NOT_A_SERVICES), env
            only_service += 1
            continue
        assert [getattr(service, name) for name in SERVICE_SECTIONS] == [
            getattr(full, name) for name in SERVICE_SECTIONS
        ]
        same += 1
    assert same > 1000
    assert only_service > 300


def test_sections_that_need_another_are_refused_without_it() -> None:
    with pytest.raises(ValueError, match="store for embedding"):
        Settings.from_env({}, sections=("embedding", "recall"))
    with pytest.raises(ValueError, match="sections must be among"):
        Settings.from_env({}, sections=("store", "storage"))


def test_an_empty_environment_reads_as_the_sections_own_defaults() -> None:
    """Each default is written once, in its section: what the readers fall back on is the field's
    default (only the reason, which names the table's backends, and the host name differ)."""
    read = Settings.from_env({"HOSTNAME": "pod-1", "MEMORY_DB_PATH": "memory.db"})

    default = Settings()
    differ = [
        f.name
        for section in dataclasses.fields(Settings)
        for f in dataclasses.fields(getattr(default, section.name))
        if getattr(getattr(read, section.name), f.name) != getattr(getattr(default, section.name), f.name)
    ]
    assert differ == ["backend_reason", "hostname"]
    assert read.store.backend_reason.startswith(default.store.backend_reason)
