"""Every repository file a docstring or a comment names exists: a moved or renamed module
otherwise leaves prose pointing at nothing (the package, bench/ and tests/ are read)."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mcp_memory"
#: A path with at least one folder and a file extension: `core/recall.py`, `docs/storage.md`.
PATH = re.compile(r"(?<![\w./:-])((?:[\w-]+/)+[\w.-]+\.(?:py|md|json|jsonl|toml|txt|yml|yaml|sh|html|css|png))\b")


@functools.cache
def prose(source: str) -> tuple[tuple[int, str], ...]:
    """(line, text) of each comment and each module, class and function docstring; each file is
    read once for the three checks below, which all walk the same files."""
    return tuple(_prose(source))


def _prose(source: str) -> Iterator[tuple[int, str]]:
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in statements(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                yield node.body[0].lineno, docstring


def statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node but those inside an expression, where no module, class or function starts
    (ast.walk's every node, at a fraction of the cost)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.expr))


def missing_paths(source: str, where: Path) -> list[tuple[int, str]]:
    """The named paths that resolve neither from the repository root, nor from the package,
    nor from the file's own folder."""
    bases = (ROOT, PACKAGE, where.parent)
    return [
        (line, named)
        for line, text in prose(source)
        for named in PATH.findall(text)
        if not any((base / named).exists() for base in bases)
    ]


#: A module named without its folder: `vectors.py`, `(tracker.py)`.
BARE_MODULE = re.compile(r"(?<![\w./:-])([\w-]+\.py)\b")


def missing_modules(source: str, modules: set[str]) -> list[tuple[int, str]]:
    """The modules named without a folder that are no module of the tree: a renamed file's old
    name (the SQLite cache's old flat name for stores/sqlite/vectors.py) the folder check cannot see."""
    return [
        (line, named) for line, text in prose(source) for named in BARE_MODULE.findall(text) if named not in modules
    ]


def python_files() -> list[Path]:
    return sorted(p for folder in ("mcp_memory", "bench", "tests") for p in (ROOT / folder).rglob("*.py"))


def test_every_file_a_docstring_or_comment_names_exists() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {named}"
        for path in python_files()
        for line, named in missing_paths(path.read_text(encoding="utf-8"), path)
    ]
    assert wrong == [], "docstrings and comments naming files that do not exist:\n" + "\n".join(wrong)


def test_a_comment_or_docstring_naming_a_missing_file_is_caught_and_an_existing_one_is_not() -> None:
    source = '"""See core/recall.py and guide/nowhere.md."""\n\n\ndef f():\n    """Uses stores/base.py."""\n    x = "bench/gone.py"  # from core/gone.py\n'
    found = sorted(missing_paths(source, PACKAGE / "app.py"))
    assert found == [
        (1, "guide/nowhere.md"),
        (5, "stores/base.py"),
        (6, "core/gone.py"),
    ]  # the string is code, not prose


def test_every_module_of_the_package_opens_with_a_docstring() -> None:
    """What the module holds and why, for a newcomer who opens it first (a package's too)."""
    bare = [
        str(path.relative_to(ROOT))
        for path in sorted(PACKAGE.rglob("*.py"))
        if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert bare == []


def test_every_module_a_docstring_or_comment_names_without_its_folder_exists() -> None:
    modules = {p.name for p in python_files()} | {p.name for p in (ROOT / ".ci").rglob("*.py")}
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {named}"
        for path in python_files()
        for line, named in missing_modules(path.read_text(encoding="utf-8"), modules)
    ]
    assert wrong == [], "docstrings and comments naming modules that do not exist:\n" + "\n".join(wrong)


def test_a_bare_module_name_that_is_no_module_is_caught() -> None:
    source = '"""The cache (vectors.py) and the codec (counter_codec.py)."""\n'
    assert missing_modules(source, {"vectors.py"}) == [(1, "counter_codec.py")]


#: A measured duration or rate: 16 ms, 10 µs, 54 recalls/s, 43.6 texts/s.
TIMING = re.compile(r"\d(?:[\d,.]*\d)? ?(?:ms|µs)\b|\d (?:recalls|texts|requests)/s\b")


def timing_figures(source: str) -> list[tuple[int, str]]:
    """(line, figure) of each duration or rate in a comment or docstring that links no
    RESULTS section of its own: figures live in bench/RESULTS.md, the code links to them."""
    return [
        (line, found)
        for line, text in prose(source)
        if "bench/RESULTS.md#" not in text
        for found in TIMING.findall(text)
    ]


def test_no_docstring_or_comment_of_the_package_carries_a_timing_figure_without_its_results_link() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {found}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, found in timing_figures(path.read_text(encoding="utf-8"))
    ]
    assert wrong == [], "move the figure to bench/RESULTS.md and link its section:\n" + "\n".join(wrong)


def test_a_timing_figure_is_caught_unless_its_results_section_is_linked() -> None:
    source = (
        '"""Fast."""\n\n\n'
        "def f():\n"
        '    """One pass: about 16 ms at 100,000 memories."""\n'
        "    # 54 recalls/s instead of 122 (bench/RESULTS.md#one-blas-thread-for-the-vector-scan)\n"
    )
    assert timing_figures(source) == [(5, "16 ms")]
