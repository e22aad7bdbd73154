"""Every benchmark command quoted in bench/RESULTS.md, docs/ and the README names a module or script
that exists, so a figure can be reproduced as written after bench/ moves (bench/__init__.py) — or,
for a one-off probe retired once its result was recorded, a commit that still holds it."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", ROOT / "bench" / "RESULTS.md", *sorted((ROOT / "docs").glob("*.md"))]
MODULE = re.compile(r"python3? -m (bench(?:\.\w+)+)")
SCRIPT = re.compile(r"(?<![\w/<>:])(bench/[\w/]+\.(?:py|sh))\b")
#: A retired script's line in its RESULTS section: `git show <commit>:bench/<group>/<script>.py`.
RETIRED = re.compile(r"git show ([0-9a-f]{7,40}):(bench/[\w/]+\.py)")


def quoted(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    return [(page.name, m[1]) for page in PAGES for m in pattern.finditer(page.read_text(encoding="utf-8"))]


def retired() -> dict[str, str]:
    text = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    return {m[2]: m[1] for m in RETIRED.finditer(text)}


def test_every_quoted_python_m_bench_command_names_a_module_that_exists():
    modules = quoted(MODULE)
    assert len(modules) > 50
    gone = retired()
    missing = [
        f"{page}: {name}"
        for page, name in modules
        if not (ROOT / f"{name.replace('.', '/')}.py").is_file() and f"{name.replace('.', '/')}.py" not in gone
    ]
    assert not missing, "\n".join(missing)


def test_every_quoted_bench_script_path_exists():
    scripts = quoted(SCRIPT)
    assert scripts
    gone = retired()
    missing = [f"{page}: {path}" for page, path in scripts if not (ROOT / path).is_file() and path not in gone]
    assert not missing, "\n".join(missing)


def test_a_retired_script_is_gone_from_the_tree_and_held_by_the_commit_its_section_names():
    gone = retired()
    assert gone
    for path, commit in gone.items():
        assert not (ROOT / path).exists(), f"{path} is named as retired but is still in the tree"
        found = subprocess.run(["git", "cat-file", "-e", f"{commit}:{path}"], cwd=ROOT, capture_output=True)
        assert found.returncode == 0, f"{commit} does not hold {path}"


def test_the_high_evidence_bench_counts_share_over_answerable_questions_and_precision_over_high_ones():
    from bench.quality import high_evidence as he
    from bench.quality import retrieval_eval as ev

    probes = [ev.Probe("t", f"q{i}", frozenset({i})) for i in range(4)] + [ev.Probe("t", "absent", frozenset())]
    outcomes = [
        ev.Outcome([0], "high", False),  # right
        ev.Outcome([9, 1], "high", False),  # HIGH, top wrong
        ev.Outcome([2], "medium", False),
        ev.Outcome([], "none", True),
        ev.Outcome([7], "high", False),  # an absent question labelled HIGH
    ]
    assert he.high(outcomes, probes) == {"n": 4, "high": 2, "share": 50.0, "precision": 50.0, "absent_high": 1}
    row = he.row(outcomes, probes)
    assert row["even half"]["high"] == 1 and row["odd half"]["high"] == 1 and row["R@1"] == 50.0
