"""Stored text shown to a model as data: it can never pass for our own lines.

A memory (or a documentation excerpt) may hold text written by anyone the agent
once read, including text written to look like this server's answers. Rendered
results keep one rule: only our lines start at the left margin — the `[MEMORY]`
header, the guidance line, each result's "N. [id:…]" line. Stored text is
quoted under them:

- every line of it is indented, so none starts at the margin;
- our markers inside it (`[MEMORY]`, `[DOCS]`, `[id:`) are escaped with a
  backslash, so no line of it reads as a result header;
- a line of it that opens like one of our guidance or label lines ("HIGH CONFIDENCE:",
  "tags:" …) is escaped the same way;
- a short field shown on one of our lines (a category, a tag, the query) is
  kept on that line: its line breaks become spaces. A category and tags are shown on their
  own indented lines under the text, never on a result's header line.

Text with none of these is shown unchanged.
"""

from __future__ import annotations

import re

INDENT = "   "

#: Our own markers, wherever they appear in stored text.
_MARKER = re.compile(r"\[(?=MEMORY\]|DOCS\]|id:)")
#: The opening of one of our guidance or label lines (render.py, search_docs.py).
_LABEL = re.compile(
    r"^(\s*)(?=(HIGH CONFIDENCE|MEDIUM CONFIDENCE|LOW CONFIDENCE|NOTHING STORED ANSWERS THIS|NO MATCH FOUND"
    r"|NO CONFIDENT MATCH|CLOSE TO AN EXISTING MEMORY"
    r"|NOT REPLACED|Replaced|tags|category):|Each memory below is a note)",
    re.IGNORECASE,
)


def _escape(line: str) -> str:
    return _LABEL.sub(r"\1\\", _MARKER.sub(r"\\[", line))


def quoted(text: str) -> str:
    """`text` as indented lines that cannot pass for a header, a result or a guidance line."""
    return "\n".join(INDENT + _escape(line) for line in (text.splitlines() or [""]))


def inline(text: str) -> str:
    """A short field shown inside one of our lines: on that line, with our markers escaped."""
    return _MARKER.sub(r"\\[", " ".join(text.splitlines()))


#: An echoed query is cut to this many characters: the caller has the rest, and a query may be
#: 32,000 bytes (the structured result carries it whole).
ECHO_CHARS = 120


def echoed(text: str) -> str:
    """The caller's words echoed in one of our lines: between double quotes that its own quotes
    cannot close (escaped with a backslash), on that line, at most ECHO_CHARS characters."""
    words = " ".join(text.split())
    if len(words) > ECHO_CHARS:
        words = words[: ECHO_CHARS - 1] + "…"
    return '"' + inline(words.replace("\\", "\\\\").replace('"', '\\"')) + '"'
