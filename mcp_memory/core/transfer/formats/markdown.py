"""Markdown as the readers see it: YAML frontmatter, then blocks (a list item, a paragraph, a code
block, a table, a quote), each with its lines, the headings above it and the `@path` references
outside code. Parsed by markdown-it-py (CommonMark), so a lazy continuation line, an indented
code block or a setext heading mean what a Markdown viewer shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Block", "Frontmatter", "blocks", "frontmatter", "lines_of"]

#: Frontmatter longer than this is not read (it holds a note's fields, not its text).
FRONTMATTER_MAX_BYTES = 64 * 1024
_MARKER = re.compile(r"^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+|$)")
#: An `@path` reference (Claude Code's import): after a space or the start, not inside a word
#: (an e-mail address is not one).
_REFERENCE = re.compile(r"(?<![\w@/.`])@((?:~|\.{1,2})?/?[\w.~+-][^\s`()\[\]<>\"']*)")
_COMMENT = re.compile(r"^\s*<!--.*?-->\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Block:
    kind: str  # item | paragraph | code | table | quote | html
    #: 1-based line of the block's first line in the file.
    line: int
    text: str
    #: The headings above the block, outermost first.
    headings: tuple[str, ...] = ()
    #: (1-based line, path) of each `@path` outside code in the block.
    references: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Frontmatter:
    fields: dict[str, Any] = field(default_factory=dict)
    #: The 0-based index of the body's first line.
    body_start: int = 0
    #: Why the frontmatter could not be read (with its 1-based line), or None.
    error: tuple[int, str] | None = None


def lines_of(text: str) -> list[str]:
    """The lines of `text`, whatever ended them (\\r\\n, \\r or \\n)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def frontmatter(lines: list[str]) -> Frontmatter:
    """The YAML between a first line `---` and the next `---` (or `...`); aliases are refused
    (an alias can make a few bytes of YAML into gigabytes)."""
    if not lines or lines[0].rstrip() != "---":
        return Frontmatter()
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        return Frontmatter(error=(1, "the frontmatter that opens on this line is never closed by a `---` line"))
    source = "\n".join(lines[1:end])
    if len(source.encode("utf-8", "surrogateescape")) > FRONTMATTER_MAX_BYTES:
        return Frontmatter(
            body_start=end + 1, error=(1, f"the frontmatter is longer than {FRONTMATTER_MAX_BYTES} bytes")
        )
    parsed = _yaml(source)
    if isinstance(parsed, tuple):
        return Frontmatter(body_start=end + 1, error=(parsed[0] + 1, parsed[1]))
    return Frontmatter(parsed, end + 1)


def _yaml(source: str) -> dict[str, Any] | tuple[int, str]:
    """The mapping, or (its line, why it is not one)."""
    import yaml

    class NoAliases(yaml.SafeLoader):  # type: ignore[misc]
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not read", mark)
            return super().compose_node(parent, index)

    try:
        value = yaml.load(source, Loader=NoAliases)  # a SafeLoader that refuses aliases
    except RecursionError:
        return 0, "the frontmatter is nested too deeply to read"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return (mark.line + 1 if mark is not None else 0), (
            f"the frontmatter is not valid YAML: {getattr(exc, 'problem', None) or exc}"
        )
    if value is None:
        return {}
    if not isinstance(value, dict):
        return 0, "the frontmatter is not a mapping of fields"
    return {str(k): v for k, v in value.items()}


def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def blocks(lines: list[str], start: int = 0) -> Iterator[Block]:
    """The top-level blocks of `lines[start:]`, each top-level list item on its own; headings
    are not blocks but the path above the ones that follow. Blank blocks and HTML comments
    are left out."""
    source = "\n".join(lines[start:])
    tokens = _parser().parse(source)
    headings: list[tuple[int, str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            level = int(token.tag[1:])
            text = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            headings = [h for h in headings if h[0] < level] + [(level, text)]
            i += 3
            continue
        if token.level != 0 or token.map is None or token.nesting == -1:
            i += 1
            continue
        end = _closing(tokens, i)
        path = tuple(h[1] for h in headings)
        if token.type in ("bullet_list_open", "ordered_list_open"):
            for j in range(i + 1, end):
                item = tokens[j]
                if item.type == "list_item_open" and item.level == 1 and item.map is not None:
                    yield from _block("item", lines, start, item.map, tokens[j : _closing(tokens, j) + 1], path)
        else:
            kind = {
                "paragraph_open": "paragraph",
                "fence": "code",
                "code_block": "code",
                "table_open": "table",
                "blockquote_open": "quote",
                "html_block": "html",
            }.get(token.type)
            if kind is not None:
                yield from _block(kind, lines, start, token.map, tokens[i : end + 1], path)
        i = end + 1


def _closing(tokens: list[Any], i: int) -> int:
    """The index of the token that closes tokens[i] (itself when it opens nothing)."""
    if tokens[i].nesting != 1:
        return i
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def _block(
    kind: str, lines: list[str], start: int, span: list[int], tokens: list[Any], path: tuple[str, ...]
) -> Iterator[Block]:
    first, last = span[0] + start, span[1] + start
    chunk = lines[first:last]
    while chunk and not chunk[-1].strip():
        chunk.pop()
    if not chunk:
        return
    if kind == "item":
        chunk = _without_marker(chunk)
    text = "\n".join(line.rstrip() for line in chunk).strip("\n")
    if not text.strip() or (kind == "html" and _COMMENT.match(text)):
        return
    references = tuple(_references(tokens, start))
    yield Block(kind, first + 1, text, path, references)


def _without_marker(chunk: list[str]) -> list[str]:
    match = _MARKER.match(chunk[0])
    if match is None:
        return chunk
    indent = len(match.group(0)) if match.group(3) else len(match.group(1)) + len(match.group(2)) + 1
    out = [chunk[0][len(match.group(0)) :]]
    for line in chunk[1:]:
        strip = min(indent, len(line) - len(line.lstrip(" ")))
        out.append(line[strip:])
    return out


def _references(tokens: list[Any], start: int) -> Iterator[tuple[int, str]]:
    """`@path` in the plain text of these tokens (code spans and code blocks hold none)."""
    for token in tokens:
        if token.type != "inline" or token.map is None:
            continue
        line = token.map[0] + start + 1
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "text":
                for match in _REFERENCE.finditer(child.content):
                    yield line, match.group(1).rstrip(".,;:!?")
