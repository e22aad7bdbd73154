"""`pytest -m "not postgres and not s3"` leaves out exactly the tests that need
PostgreSQL or the moto endpoint, so a developer without them can still run the
rest; an unknown marker is an error (--strict-markers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

FILES = ["tests/stores/test_contract.py", "tests/core/counters/test_cache.py", "tests/stores/postgres/test_postgres.py"]


def collect(*args: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args, *FILES],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        check=True,
    )
    return [line for line in result.stdout.splitlines() if "::" in line]


def test_deselecting_the_services_leaves_every_other_backend_and_no_postgres_or_s3_test() -> None:
    everything = collect()
    local = collect("-m", "not postgres and not s3")
    needing = [t for t in everything if "[postgres" in t or "[s3" in t or "/postgres/" in t]
    assert needing and local
    assert sorted(local) == sorted(set(everything) - set(needing))
    assert any("[memory" in t for t in local) and any("[sqlite" in t for t in local)


def test_each_marker_selects_its_own_backend_only() -> None:
    postgres = collect("-m", "postgres")
    s3 = collect("-m", "s3")
    assert postgres and all("[postgres" in t or "/postgres/" in t for t in postgres)
    assert s3 and all("[s3" in t for t in s3)


def test_a_misspelt_marker_is_an_error_not_a_silently_new_marker(tmp_path: Path) -> None:
    test = tmp_path / "test_typo.py"
    test.write_text("import pytest\n\n\n@pytest.mark.postgress\ndef test_x():\n    assert True\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(test)],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=False,
    )
    assert result.returncode != 0
    assert "'postgress' not found in `markers` configuration option" in result.stdout + result.stderr


def test_no_test_is_ever_skipped_or_expected_to_fail() -> None:
    """docs/development.md: "Every test runs on every run — nothing is skipped"."""
    import re

    forbidden = re.compile(r"pytest\.(skip|xfail|importorskip)\b|mark\.(skip|skipif|xfail)\b|unittest\.skip")
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == "test_markers.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if forbidden.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "-m " not in config.split("addopts", 1)[1].split("\n", 1)[0]  # no marker deselected by default
