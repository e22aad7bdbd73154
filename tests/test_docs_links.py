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
#: A string that is a path and nothing else (`read("docs/…")` of a benchmark's made-up
#: project, bench/hooks/scenarios.py) names no page of ours; a docstring that opens with a
#: citation (`"""docs/web.md: ...`) still counts.
PATH_LITERAL = re.compile(r'(?<!")"docs/[a-z_]+\.md"')


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as dashes,
    and a repeated heading's anchor numbered (-1, -2, ...)."""
    found: set[str] = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchor = base = re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title))
            n = 0
            while anchor in found:
                n += 1
                anchor = f"{base}-{n}"
            found.add(anchor)
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
            for page, anchor in CITATION.findall(PATH_LITERAL.sub("", line)):
                target = ROOT / "docs" / page
                if not target.is_file() or (anchor and anchor not in anchors(target)):
                    broken.append(f"{path.relative_to(ROOT)}:{number}: docs/{page}{'#' + anchor if anchor else ''}")
    assert not broken, "citations that lead nowhere:\n" + "\n".join(broken)


RESULTS = ROOT / "bench" / "RESULTS.md"
#: A measured figure's home: `bench/RESULTS.md#section` (docstrings and comments link there).
RESULTS_CITATION = re.compile(r"(?<![\w/.])bench/RESULTS\.md#([\w-]+)")


def missing_results_sections(lines: list[str], sections: set[str]) -> list[tuple[int, str]]:
    """(line, anchor) of each `bench/RESULTS.md#anchor` citation naming no heading of RESULTS."""
    return [
        (number, anchor)
        for number, line in enumerate(lines, 1)
        for anchor in RESULTS_CITATION.findall(line)
        if anchor not in sections
    ]


def test_every_results_citation_names_a_section_that_exists() -> None:
    """A figure moved out of a docstring is linked by its RESULTS section: a heading renamed
    since, or a section never written, leaves the figure's reader nowhere."""
    sections = anchors(RESULTS)
    broken = [
        f"{path.relative_to(ROOT)}:{number}: bench/RESULTS.md#{anchor}"
        for path in SOURCES + sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md", RESULTS]
        if path != Path(__file__).resolve()
        for number, anchor in missing_results_sections(path.read_text(encoding="utf-8").splitlines(), sections)
    ]
    assert not broken, "RESULTS sections that do not exist:\n" + "\n".join(broken)


def test_a_results_citation_of_a_missing_section_is_caught_and_an_existing_one_is_not() -> None:
    lines = [
        "#: Fast enough (bench/RESULTS.md#the-web-view-at-100000-memories-benchlatencyweb_viewpy-issue-23).",
        "#: Measured in bench/RESULTS.md#a-section-nobody-wrote, twice.",
    ]
    assert missing_results_sections(lines, anchors(RESULTS)) == [(2, "a-section-nobody-wrote")]


def test_a_repeated_heading_gets_a_numbered_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Runs\n## Targets\n## Targets\n", encoding="utf-8")
    assert anchors(page) == {"runs", "targets", "targets-1"}


def test_the_docs_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md")
    assert [p for p in pages if f"({p})" not in index] == []


LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_link_in_the_readme_and_the_docs_leads_to_a_page_and_heading_that_exist() -> None:
    """The README was cut into docs/ pages: a link to a section that moved, or to a heading
    renamed since, is caught here rather than by a reader."""
    broken = []
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                file = (page.parent / path).resolve() if path else page
                if file.is_dir():
                    file = file / "README.md"
                if not file.is_file() or (anchor and file.suffix == ".md" and anchor not in anchors(file)):
                    broken.append(f"{page.relative_to(ROOT)}:{number}: {target}")
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    """Each page is linked from the README or from the docs index the README links to."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/README.md)" in readme
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(readme + index)}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert sorted(pages - linked) == []
