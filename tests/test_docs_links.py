"""The code cites the behaviour documented in docs/, and every citation leads somewhere.

A comment that cites a section of a specification outside the repository cannot be followed by
someone who clones it; a `docs/…` citation to a page or heading that does not exist is as bad.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    p
    for folder in ("mcp_memory", "tests", "bench", ".ci")
    for p in (ROOT / folder).rglob("*")
    if p.is_file() and (p.suffix == ".py" or p.parent.name == ".ci") and "__pycache__" not in p.parts
)
OUTSIDE = re.compile(r"\bB ?§ ?\d|\bSPEC\.md\b|\(A(?:10|[1-9])\b")
CITATION = re.compile(r"(?<![\w/.])docs/([a-z_]+\.md)(?:#([a-z0-9-]+))?")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as dashes."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return found


def test_no_code_cites_a_specification_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in SOURCES
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not offenders, "cite docs/… instead:\n" + "\n".join(offenders)


def test_every_docs_citation_names_a_page_and_heading_that_exist() -> None:
    broken = []
    for path in SOURCES + sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in CITATION.findall(line):
                target = ROOT / "docs" / page
                if not target.is_file() or (anchor and anchor not in anchors(target)):
                    broken.append(f"{path.relative_to(ROOT)}:{number}: docs/{page}{'#' + anchor if anchor else ''}")
    assert not broken, "citations that lead nowhere:\n" + "\n".join(broken)


def test_the_docs_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md")
    assert [p for p in pages if f"({p})" not in index] == []
