"""`--from claude-code`: Claude Code's memory (docs/import_formats.md#claude-code).

A path may be a memory file (CLAUDE.md, CLAUDE.local.md, a rules file, a topic file), Claude
Code's auto-memory folder (it holds MEMORY.md), or a project folder: its CLAUDE.md,
.claude/CLAUDE.md, CLAUDE.local.md and .claude/rules/, and the project's auto-memory folder
under ~/.claude/projects/ when there is one (the folder is named after the project's path,
every character other than a letter or a digit made `-`).

- Each top-level bullet or paragraph is one memory, its heading its category (core/transfer/formats/text.py).
- A topic file of the auto memory (frontmatter with `name` and `description`) is one memory:
  its body, its `type` (or `metadata.type`) the source's type.
- MEMORY.md's index lines (`- [Title](file.md) — hook`) point at a topic file, which is read
  instead; other lines of MEMORY.md are memories.
- `@path` references are followed as Claude Code follows them: relative to the file that
  holds them, `~` for the home folder, not inside code, at most 5 hops deep. A reference
  outside the folders named on the command line is reported, not followed (Claude Code asks
  before it loads one), as is one to a file that is not Markdown or text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_memory.core.transfer.formats import Entry, Notice, Place, ReadContext, Reading
from mcp_memory.core.transfer.formats.files import not_utf8, shown, walk
from mcp_memory.core.transfer.formats.markdown import Block, blocks, frontmatter
from mcp_memory.core.transfer.formats.text import block_entry, read_lines

#: How deep `@path` references are followed (Claude Code's documented limit).
MAX_HOPS = 5
FOLLOWED_SUFFIXES = (".md", ".markdown", ".txt")
PROJECT_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
INDEX = "MEMORY.md"
_LINK_ONLY = re.compile(r"^\[[^\]]*\]\(<?([^)\s>]+)>?\)\s*(?:[—–-].*)?$")
_LEFTOVER = re.compile(r"[\s\-*+•·,;:.()\[\]]*")
#: Claude Code names a project's folder after its path with every other character made `-`,
#: cut at 200 characters (then a hash of its own follows, found by the prefix).
_NAME_CHARS = re.compile(r"[^a-zA-Z0-9]")
_NAME_MAX = 200


@dataclass
class _Walk:
    context: ReadContext
    reading: Reading
    roots: list[Path] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)


def read(paths: Sequence[Path], context: ReadContext) -> Reading:
    state = _Walk(context, Reading())
    planned: list[tuple[Path, bool]] = []  # (file, in an auto-memory folder)
    for path in paths:
        if path.is_file():
            state.roots.append(path.resolve().parent)
            planned.append((path, path.parent.joinpath(INDEX).is_file()))
        elif path.is_dir() and path.joinpath(INDEX).is_file():
            state.roots.append(path.resolve())
            planned.extend((f, True) for f in _memory_folder(path, state.reading))
        elif path.is_dir():
            state.roots.append(path.resolve())
            found = list(_project(path, context, state))
            if not found:
                state.reading.refused.append(
                    Notice(
                        Place(shown(path)),
                        "no Claude Code memory here: no CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, "
                        ".claude/rules/ or auto-memory folder",
                    )
                )
            planned.extend(found)
        else:
            state.reading.refused.append(Notice(Place(shown(path)), "no such file or folder"))
    for file, in_memory_folder in planned:
        _file(file, 0, in_memory_folder, state)
    return state.reading


def _memory_folder(folder: Path, reading: Reading) -> list[Path]:
    """MEMORY.md first, then the topic files beside it (and in its subfolders), in name order."""
    rest = [f for f in walk(folder, FOLLOWED_SUFFIXES, reading) if f != folder / INDEX]
    return [folder / INDEX, *rest]


def _project(folder: Path, context: ReadContext, state: _Walk) -> Iterator[tuple[Path, bool]]:
    for name in PROJECT_FILES:
        if folder.joinpath(name).is_file():
            yield folder / name, False
    rules = folder / ".claude" / "rules"
    if rules.is_dir():
        yield from ((f, False) for f in walk(rules, (".md",), state.reading))
    memory = auto_memory_folder(folder, context.claude_dir)
    if memory is not None:
        state.roots.append(memory.resolve())
        yield from ((f, True) for f in _memory_folder(memory, state.reading))


def auto_memory_folder(project: Path, claude_dir: Path) -> Path | None:
    """The auto-memory folder Claude Code keeps for `project`, if it has one: named after the
    repository's main checkout (all its worktrees share one), else the folder itself."""
    projects = claude_dir / "projects"
    for root in _roots(project.resolve()):
        name = _NAME_CHARS.sub("-", str(root))
        if len(name) <= _NAME_MAX:
            candidate = projects / name / "memory"
            if candidate.joinpath(INDEX).is_file() or candidate.is_dir():
                return candidate
            continue
        try:
            matches = sorted(p for p in projects.iterdir() if p.name.startswith(name[:_NAME_MAX] + "-"))
        except OSError:
            matches = []
        for match in matches:
            if (match / "memory").is_dir():
                return match / "memory"
    return None


def _roots(folder: Path) -> list[Path]:
    """The main checkout of the repository holding `folder`, its own checkout, and `folder`."""
    found: list[Path] = []
    for parent in [folder, *folder.parents]:
        dot_git = parent / ".git"
        if dot_git.is_file():  # a worktree: "gitdir: <main>/.git/worktrees/<name>"
            try:
                pointer = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                pointer = ""
            if pointer.startswith("gitdir:") and "/.git/worktrees/" in pointer:
                found.append(Path(pointer[len("gitdir:") :].strip().split("/.git/worktrees/")[0]))
            found.append(parent)
            break
        if dot_git.is_dir():
            found.append(parent)
            break
    found.append(folder)
    return list(dict.fromkeys(found))


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _file(path: Path, hops: int, in_memory_folder: bool, state: _Walk) -> None:
    real = path.resolve()
    if real in state.seen:
        return
    state.seen.add(real)
    reading = state.reading
    lines = read_lines(path, reading)
    if lines is None:
        return
    file = shown(path)
    front = frontmatter(lines)
    if front.error is not None and in_memory_folder:
        reading.refused.append(Notice(Place(file, front.error[0]), front.error[1]))
        return
    fields = front.fields if front.error is None else {}
    if "name" in fields and "description" in fields:
        _topic(lines, front.body_start, fields, file, reading)
        return
    index = in_memory_folder and path.name == INDEX
    for block in blocks(lines, front.body_start if front.error is None else 0):
        if index and _points_at_topic(block, path.parent):
            reading.skipped.append(
                Notice(Place(file, block.line), "an index line of MEMORY.md: its topic file is read")
            )
            continue
        # a block that only says what to import states nothing itself
        if not block.references or not _LEFTOVER.fullmatch(_without_references(block)):
            entry = block_entry(block, file, reading)
            if entry is not None:
                reading.entries.append(entry)
        for line, reference in block.references:
            _follow(path, line, reference, hops, state)


def _without_references(block: Block) -> str:
    text = block.text
    for _, reference in block.references:
        text = text.replace("@" + reference, "")
    return text


def _points_at_topic(block: Block, folder: Path) -> bool:
    if block.kind != "item":
        return False
    match = _LINK_ONLY.match(block.text.strip())
    return match is not None and folder.joinpath(match.group(1)).is_file()


def _topic(lines: list[str], start: int, fields: dict[str, object], file: str, reading: Reading) -> None:
    """An auto-memory topic file: one memory, its body (its description when the body is empty)."""
    body = "\n".join(line.rstrip() for line in lines[start:]).strip()
    description = fields.get("description")
    text = body or (description if isinstance(description, str) else "")
    if not text.strip():
        return
    line = start + 1
    while line <= len(lines) and not lines[line - 1].strip():
        line += 1
    place = Place(file, line if body else 1)
    problem = not_utf8(text)
    if problem is not None:
        reading.refused.append(Notice(place, problem))
        return
    metadata = fields.get("metadata")
    kind = fields.get("type")
    if isinstance(metadata, dict) and isinstance(metadata.get("type"), str):
        kind = metadata["type"]
    reading.entries.append(Entry(place, text, kind=kind if isinstance(kind, str) else None))


def _follow(holder: Path, line: int, reference: str, hops: int, state: _Walk) -> None:
    place = Place(shown(holder), line)
    skip = state.reading.skipped
    if reference.startswith("~"):
        target = state.context.home / reference[1:].lstrip("/")
    else:
        target = holder.parent / reference
    if hops + 1 > MAX_HOPS:
        skip.append(Notice(place, f"@{reference} not followed: more than {MAX_HOPS} hops from the file named"))
        return
    if not target.is_file():
        skip.append(Notice(place, f"@{reference} not followed: no such file"))
        return
    if not target.name.lower().endswith(FOLLOWED_SUFFIXES):
        skip.append(Notice(place, f"@{reference} not followed: not a Markdown or text file"))
        return
    real = target.resolve()
    if not _inside(real, state.roots):
        skip.append(
            Notice(
                place,
                f"@{reference} not followed: it is outside the folders named on the command line "
                "(name it too to import it)",
            )
        )
        return
    _file(target, hops + 1, False, state)
