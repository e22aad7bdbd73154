"""Secrets out of what is shown: a database URL fit for a log line or an error.

Why a module of its own: a password must never reach a log or a message, so the one place that
takes it out is shared by the settings and the stores.
"""

from __future__ import annotations

import re

__all__ = ["redact_url"]

#: A URL's scheme and the `//` of its authority.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: A password given as a URL query parameter (libpq takes `password=` and `sslpassword=`).
_QUERY_PASSWORD = re.compile(r"([?&][A-Za-z_]*password=)[^&#]*", re.IGNORECASE)
#: A password in a libpq `key=value` string: quoted (with `\'` and `\\` escapes) or up to a blank.
#: A host and port as libpq takes them (a name, an IPv4 or a bracketed IPv6 address; a numeric port).
_PLACE = re.compile(r"(\[[^\]]*\]|[^:\[\]]*)(:\d*)?")
_KV_PASSWORD = re.compile(r"(\b[A-Za-z_]*password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE)


def redact_url(url: str) -> str:
    """The URL as written, with any password replaced by `***`, so a user sees their mistake
    (`x`, a port that is not a number, a missing host) and never the password.

    A password may sit in the user-info (everything between the user's `:` and the last `@`:
    a password may hold `@`, `/`, `?` or `#` unescaped), in a `password=` query parameter, or
    in a libpq `key=value` string; a URL with no `@` whose authority reads `user:word` where a
    port should be a number has `word` masked too (a password with the `@host` left off).
    """
    scheme = _SCHEME.match(url)
    if scheme is None:
        return _KV_PASSWORD.sub(r"\1***", url) if "=" in url else url
    head, rest = url[: scheme.end()], _QUERY_PASSWORD.sub(r"\1***", url[scheme.end() :])
    if "@" in rest:
        userinfo, _, after = rest.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        return f"{head}{user}:***@{after}" if colon else f"{head}{rest}"
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if all(_PLACE.fullmatch(place) for place in authority.split(",")):
        return f"{head}{rest}"
    return f"{head}{authority.partition(':')[0]}:***{rest[len(authority) :]}"
