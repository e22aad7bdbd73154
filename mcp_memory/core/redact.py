"""Secrets out of what is shown: a database URL fit for a log line or an error.

Why a module of its own: a password must never reach a log or a message, so the one place that
takes it out is shared by the settings and the stores.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact_url"]

#: libpq also takes the password as a query parameter.
_PASSWORD_PARAM = re.compile(r"((?:^|&)password=)[^&]*", re.IGNORECASE)


def redact_url(url: str) -> str:
    """The URL with any password replaced by `***`; `<database url>` when that cannot be
    done safely.

    A password may sit in the userinfo or in a `password=` query parameter. A libpq
    `key=value` string, or a URL whose password holds an unescaped `/`, `?`, `#` or `@`
    that moves the split, could carry it anywhere: those are never echoed.
    """
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a malformed port, e.g. a password cut at '/'
    except ValueError:
        return "<database url>"
    if not parts.scheme or url.count("@") != parts.netloc.count("@"):
        return "<database url>"
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, hostport = netloc.rpartition("@")
        netloc = f"{userinfo.split(':', 1)[0]}:***@{hostport}"
    query = _PASSWORD_PARAM.sub(r"\1***", parts.query)
    if netloc == parts.netloc and query == parts.query:
        return url
    redacted = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    if not netloc and url.startswith(f"{parts.scheme}://"):  # urlunsplit drops an empty authority
        redacted = f"{parts.scheme}://{redacted[len(parts.scheme) + 1 :]}"
    return redacted
