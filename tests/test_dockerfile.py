"""The Dockerfile's essentials, read from the file (there is no Docker engine in CI;
.ci/dockerfile-install-check replays its install and starts the server, after the tests)."""

from __future__ import annotations

import json
import os
import re
import tomllib
from importlib.machinery import SourceFileLoader
from types import ModuleType

import pytest

from tests.conftest import ROOT

CHECK = ROOT / ".ci" / "dockerfile-install-check"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    loader = SourceFileLoader("dockerfile_install_check", str(CHECK))
    module = ModuleType(loader.name)
    module.__file__ = str(CHECK)
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stages(check: ModuleType) -> tuple[list, list, str]:
    return check.stages(check.instructions((ROOT / "Dockerfile").read_text()))


def lines(stage: list, word: str) -> list[str]:
    return [arguments for instruction, arguments in stage if instruction == word]


def test_the_base_is_a_slim_python_pinned_by_version(stages) -> None:
    _, _, image = stages
    assert re.fullmatch(r"python:3\.\d+\.\d+-slim-[a-z]+", image)
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11" and tuple(int(n) for n in image.split(":")[1].split(".")[:2]) >= (3, 11)


def test_every_runtime_extra_but_the_sqlite_index_is_installed_and_neither_test_nor_bench_is(stages) -> None:
    build, _, _ = stages
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    extras -= {"test", "bench"}  # the suite's and bench/'s tools have no place in the image
    # SQLITE_ANN_MIN_MEMORIES's library (57 MB, off by default): an image that wants it adds the
    # extra; without it the setting is refused at start-up (docs/serving_http.md#docker).
    extras -= {"ann"}
    (install,) = [run for run in lines(build, "RUN") if 'pip" install' in run]
    installed = set(re.search(r'"\.\[([a-z,]+)\]"', install).group(1).split(","))
    assert installed == extras == {"postgres", "aws", "oauth", "multilingual"}


def test_the_local_model_is_loaded_at_build_time_so_nothing_downloads_at_run_time(stages) -> None:
    build, final, _ = stages
    assert any('mcp-memory" calibrate --builtin' in run for run in lines(build, "RUN"))
    assert lines(final, "COPY") == ["--from=build /opt/mcp-memory /opt/mcp-memory"]
    assert not any(re.search(r"\b(curl|wget|hf_hub|huggingface)\b", run) for run in lines(final, "RUN"))


def test_it_runs_as_a_numeric_non_root_user(stages) -> None:
    _, final, _ = stages
    (user,) = lines(final, "USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0


def test_it_listens_on_every_interface_on_port_3000(stages, check: ModuleType) -> None:
    _, final, _ = stages
    env = {}
    for arguments in lines(final, "ENV"):
        env.update(check.env_pairs(arguments))
    assert env["HOST"] == "0.0.0.0" and env["PORT"] == "3000"
    assert env["PATH"].startswith("/opt/mcp-memory/bin:")
    assert lines(final, "EXPOSE") == ["3000"]


def test_the_healthcheck_asks_health_on_the_configured_port(stages) -> None:
    _, final, _ = stages
    (health,) = lines(final, "HEALTHCHECK")
    assert "CMD" in health and "/health" in health and "PORT" in health


def test_the_entrypoint_is_mcp_memory_and_the_default_command_serve_http(stages) -> None:
    _, final, _ = stages
    assert [json.loads(a) for a in lines(final, "ENTRYPOINT")] == [["mcp-memory"]]
    assert [json.loads(a) for a in lines(final, "CMD")] == [["serve-http"]]


def test_the_build_context_is_only_what_the_install_needs(stages) -> None:
    build, _, _ = stages
    assert lines(build, "COPY") == ["pyproject.toml README.md LICENSE constraints.txt ./", "mcp_memory ./mcp_memory"]
    ignore = (ROOT / ".dockerignore").read_text().split()
    assert ignore[ignore.index("*") :][:6] == [
        "*",
        "!pyproject.toml",
        "!README.md",
        "!LICENSE",
        "!constraints.txt",
        "!mcp_memory/",
    ]


def test_the_image_and_ci_install_the_versions_constraints_txt_pins() -> None:
    pins = (ROOT / "constraints.txt").read_text().splitlines()
    assert pins[1].startswith("# Regenerate: .ci/lock")
    named = {line.split("==")[0] for line in pins if line and not line.startswith("#")}
    for backbone in ("mcp", "typer", "rich", "aiohttp", "boto3", "psycopg", "python-ulid", "pytest", "filelock"):
        assert backbone in named, backbone
    assert "mcp-tenant-memory" not in named  # the project itself is never pinned
    assert '-c constraints.txt ".[postgres,aws,oauth,multilingual]"' in (ROOT / "Dockerfile").read_text()
    assert "-c constraints.txt -e '.[test,postgres,aws]'" in (ROOT / ".ci" / "run").read_text()


def test_ci_replays_the_dockerfile_install_after_the_tests() -> None:
    assert os.access(CHECK, os.X_OK)
    run = (ROOT / ".ci" / "run").read_text()
    assert run.index("python -m pytest") < run.index(".ci/dockerfile-install-check")


def test_the_replay_reads_continuations_and_skips_comments(check: ModuleType) -> None:
    text = '# c\nFROM a AS b\nRUN one \\\n  # inner comment\n  && two\nENV A=1 \\\n    B="x y"\n'
    steps = check.instructions(text)
    assert steps == [("FROM", "a AS b"), ("RUN", "one && two"), ("ENV", 'A=1 B="x y"')]
    assert check.env_pairs(steps[2][1]) == {"A": "1", "B": "x y"}


def test_the_replay_starts_the_images_own_command_with_its_environment(stages, check: ModuleType, tmp_path) -> None:
    _, final, _ = stages
    env, argv, health = check.final_stage(final, {"PATH": "/usr/bin:/bin"}, tmp_path / "venv", tmp_path)
    assert argv == ["mcp-memory", "serve-http"]
    assert (env["HOST"], env["PORT"]) == ("0.0.0.0", "3000")  # the replay then binds 127.0.0.1 and a free port
    assert env["PATH"] == f"{tmp_path / 'venv' / 'bin'}:/usr/bin:/bin"
    assert env["MEMORY_DB_PATH"] == str(tmp_path / "data" / "memory.db")
    assert health[0] == "python"


async def test_the_healthcheck_command_passes_against_the_server_and_fails_without_one(
    stages, check: ModuleType
) -> None:
    import asyncio
    import subprocess
    import sys

    from tests.conftest import Clock, make_env
    from tests.support.http_support import serving

    _, final, _ = stages
    _, _, health = check.final_stage(final, {"PATH": "/usr/bin:/bin"}, ROOT / "venv", ROOT)
    command = [sys.executable, *health[1:]]  # `python` in the image is its environment's python

    def probe(port: int) -> int:
        env = {**os.environ, "PORT": str(port)}
        return subprocess.run(command, env=env, capture_output=True, timeout=30).returncode

    async with serving(make_env(Clock()).service) as server:
        port = int(server.url.rsplit(":", 1)[1])
        assert await asyncio.to_thread(probe, port) == 0
    assert await asyncio.to_thread(probe, port) != 0  # stopped: the probe fails, as a health check must
