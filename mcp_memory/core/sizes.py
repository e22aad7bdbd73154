"""Size limits every edge and every backend shares.

The content limit comes from S3 Vectors' metadata budget (stores/records.py checks
the rest of that budget); it is checked once, here, and each caller words the
refusal in its own terms.
"""

from __future__ import annotations

__all__ = ["CONTENT_MAX_BYTES", "content_overflow"]

#: The most a single memory's content may hold, in UTF-8 bytes.
CONTENT_MAX_BYTES = 32_000


def content_overflow(content: str) -> int | None:
    """The size of `content` in UTF-8 bytes when it is over CONTENT_MAX_BYTES, else None."""
    size = len(content.encode("utf-8"))
    return size if size > CONTENT_MAX_BYTES else None
