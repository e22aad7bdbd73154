"""The dedup rule read as a diagnosis: which difference keeps two texts apart, whatever their
cosine and word overlap. Only the tests ask that; production reads `dedup.same` (remember) and
`dedup.judge` (the web view's memory page), where the gates come first.
"""

from __future__ import annotations

from mcp_memory.core.dedup import compare


def difference(a: str, b: str) -> str | None:
    """The first way `a` and `b` say different things ("number", "identifier", "symbol",
    "negation", "opposite", "wording"), or None when they say the same."""
    return compare(a, b).reason
