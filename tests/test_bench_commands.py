"""Every benchmark command quoted in bench/RESULTS.md, docs/ and the README names a module or script
that exists, so a figure can be reproduced as written after bench/ moves (bench/__init__.py)."""

from __future__ import annotations

import re

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", ROOT / "bench" / "RESULTS.md", *sorted((ROOT / "docs").glob("*.md"))]
MODULE = re.compile(r"python3? -m (bench(?:\.\w+)+)")
SCRIPT = re.compile(r"(?<![\w/<>])(bench/[\w/]+\.(?:py|sh))\b")


def quoted(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    return [(page.name, m[1]) for page in PAGES for m in pattern.finditer(page.read_text(encoding="utf-8"))]


def test_every_quoted_python_m_bench_command_names_a_module_that_exists():
    modules = quoted(MODULE)
    assert len(modules) > 50
    missing = [f"{page}: {name}" for page, name in modules if not (ROOT / f"{name.replace('.', '/')}.py").is_file()]
    assert not missing, "\n".join(missing)


def test_every_quoted_bench_script_path_exists():
    scripts = quoted(SCRIPT)
    assert scripts
    missing = [f"{page}: {path}" for page, path in scripts if not (ROOT / path).is_file()]
    assert not missing, "\n".join(missing)
