"""The release pipeline holds together: server.json is valid by the MCP registry's own schema
(vendored under tests/data/mcp_registry with its licence) and names the package, the version,
the command and the variables as the code has them; the README carries the `mcp-name:` line the
registry looks for on PyPI; the workflows run .ci/run on pull requests and, on a version tag,
build, `twine check` and publish with trusted publishing; the CHANGELOG is Keep a Changelog."""

from __future__ import annotations

import copy
import json
import re
import tomllib

import jsonschema
import pytest
import yaml

from mcp_memory import __version__
from tests.conftest import ROOT

VENDORED = ROOT / "tests" / "data" / "mcp_registry"
SERVER = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
SCHEMA = json.loads((VENDORED / "server.schema.json").read_text(encoding="utf-8"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
README = (ROOT / "README.md").read_text(encoding="utf-8")


def workflow(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))


def errors(document: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [error.message for error in validator.iter_errors(document)]


# --------------------------------------------------------------------------- server.json


def test_server_json_is_valid_by_the_registrys_schema_it_names() -> None:
    assert SERVER["$schema"] == SCHEMA["$id"]
    assert errors(SERVER) == []
    assert (VENDORED / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda s: s.update(description="x" * 101), "a description over 100 characters"),
        (lambda s: s.update(name="mcp-tenant-memory"), "a name without its namespace"),
        (lambda s: s["packages"][0].pop("transport"), "a package without a transport"),
        (lambda s: s["packages"][0].update(version="latest"), "a package version of latest"),
    ],
)
def test_the_vendored_schema_refuses_what_the_registry_refuses(change, why: str) -> None:
    broken = copy.deepcopy(SERVER)
    change(broken)
    assert errors(broken), f"the schema accepted {why}"


def test_server_json_names_the_package_and_version_the_project_builds() -> None:
    (package,) = SERVER["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == PYPROJECT["project"]["name"]
    assert SERVER["version"] == package["version"] == __version__
    assert PYPROJECT["project"]["dynamic"] == ["version"]  # read from mcp_memory.__version__ only
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mcp_memory.core.version.__version__"}
    # `uvx mcp-tenant-memory serve-stdio`: the console script of that name runs the stdio server
    assert package["runtimeHint"] == "uvx" and package["transport"] == {"type": "stdio"}
    assert [a["value"] for a in package["packageArguments"]] == ["serve-stdio"]
    scripts = PYPROJECT["project"]["scripts"]
    assert scripts[package["identifier"]] == scripts["mcp-memory"]  # the same command under both names


def test_server_json_lists_only_variables_the_server_reads_with_their_defaults() -> None:
    from mcp_memory.core.identity import DEFAULT_TENANT
    from mcp_memory.embedders import PROVIDERS

    configuration = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]{3,})`", configuration))
    variables = {v["name"]: v for v in SERVER["packages"][0]["environmentVariables"]}
    assert sorted(set(variables) - documented) == []
    assert {"MEMORY_TENANT", "DATABASE_URL", "EMBEDDING_PROVIDER", "EMBEDDING_API_KEY"} <= set(variables)
    assert variables["MEMORY_TENANT"]["default"] == DEFAULT_TENANT
    assert sorted(variables["EMBEDDING_PROVIDER"]["choices"]) == sorted(set(PROVIDERS) - {"fake"})
    secret = {name for name, v in variables.items() if v.get("isSecret")}
    assert secret == {"DATABASE_URL", "EMBEDDING_API_KEY"}  # a URL may carry the password


def test_the_readme_carries_the_mcp_name_line_the_registry_verifies_on_pypi() -> None:
    assert PYPROJECT["project"]["readme"] == "README.md"  # the README is PyPI's description
    assert re.findall(r"mcp-name: (\S+)", README) == [SERVER["name"]]


# --------------------------------------------------------------------------- workflows


def test_pull_requests_run_the_projects_ci_script() -> None:
    ci = workflow("ci.yml")
    triggers = ci[True]  # YAML 1.1 reads the key `on` as true
    assert "pull_request" in triggers
    steps = [step for job in ci["jobs"].values() for step in job["steps"]]
    assert any(step.get("run") == "bash .ci/run" for step in steps)
    assert any(step.get("with", {}).get("python-version") == "3.11" for step in steps)


def test_a_version_tag_builds_checks_and_publishes_with_trusted_publishing() -> None:
    release = workflow("release.yml")
    assert release[True] == {"push": {"tags": ["v*"]}}
    jobs = release["jobs"]
    build = "\n".join(step.get("run", "") for step in jobs["build"]["steps"])
    assert "v${version}" in build and "mcp_memory/core/version.py" in build  # the tag must be the version
    assert "python -m build" in build and "twine check --strict dist/*" in build
    pypi = jobs["pypi"]
    assert pypi["needs"] == "build" and pypi["permissions"] == {"id-token": "write"}
    assert [s["uses"] for s in pypi["steps"]][-1] == "pypa/gh-action-pypi-publish@release/v1"
    assert not any("password" in step.get("with", {}) for step in pypi["steps"])  # no token: trusted
    registry = jobs["mcp-registry"]
    assert registry["needs"] == "pypi" and "mcp-publisher publish" in registry["steps"][-1]["run"]


def test_the_version_is_written_in_one_place() -> None:
    init = (ROOT / "mcp_memory" / "core" / "version.py").read_text(encoding="utf-8")
    assert re.findall(r'^__version__ = "([^"]+)"$', init, flags=re.MULTILINE) == [__version__]
    # the release workflow reads it with the same pattern
    pattern = r"__version__ = \"([^\"]+)\""
    assert pattern in (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "version" not in PYPROJECT["project"]


# --------------------------------------------------------------------------- changelog


def test_the_changelog_keeps_a_changelog() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog\n")
    assert "https://keepachangelog.com/en/1.1.0/" in changelog
    versions = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.MULTILINE)
    assert versions[0] == "Unreleased"
    kinds = set(re.findall(r"^### (\w+)", changelog, flags=re.MULTILINE))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    released = re.findall(r"^## \[(\d[^\]]*)\] - (\d{4}-\d\d-\d\d)$", changelog, flags=re.MULTILINE)
    assert [version for version, _ in released] == versions[1:]  # each with its date
    if released:  # the newest release is the version the package says it is
        assert released[0][0] == __version__


def test_every_command_of_the_cli_is_in_the_changelog() -> None:
    """'Every change a user can notice is listed here': a command is one."""
    import typer.main

    from mcp_memory.cli.app import app

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    commands = sorted(typer.main.get_command(app).commands)
    assert [name for name in commands if f"`{name}" not in changelog and f"mcp-memory {name}" not in changelog] == []
