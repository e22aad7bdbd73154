"""The package is usable as a library: `mcp_memory` exports the service, its
inputs and its results, each listed in the package's docstring, and importing
it stays as cheap as before (nothing loads until a name is used)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mcp_memory
from tests.conftest import ROOT

PUBLIC = [name for name in mcp_memory.__all__ if name != "__version__"]


def test_the_public_api_is_the_service_its_inputs_and_its_results() -> None:
    assert {"open_service", "MemoryService", "Caller", "Settings", "RecallResult", "RememberResult"} <= set(PUBLIC)
    assert set(PUBLIC) == set(mcp_memory._PUBLIC)  # __all__ and the lazy table agree


@pytest.mark.parametrize("name", PUBLIC)
def test_every_exported_name_is_importable_and_is_the_object_its_module_defines(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from mcp_memory import {name}", namespace)
    value = namespace[name]
    assert getattr(value, "__name__", None) == name
    assert value.__module__.startswith("mcp_memory.")


@pytest.mark.parametrize("name", PUBLIC)
def test_every_exported_name_is_described_in_the_package_docstring(name: str) -> None:
    described = {line.split()[0] for line in (mcp_memory.__doc__ or "").splitlines() if line.startswith("    ")}
    assert name in described


def test_the_docstring_describes_nothing_that_is_not_exported() -> None:
    doc = (mcp_memory.__doc__ or "").split("For example:")[0]
    described = {line.split()[0] for line in doc.splitlines() if line.startswith("    ") and line.strip()}
    assert described == set(PUBLIC)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'open_services'"):
        mcp_memory.open_services  # noqa: B018


def test_importing_the_package_loads_none_of_its_modules() -> None:
    script = "import json, sys, mcp_memory; print(json.dumps(sorted(m for m in sys.modules if 'mcp_memory.' in m)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=str(ROOT), check=True)
    assert json.loads(result.stdout) == []
