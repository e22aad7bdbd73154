"""Who may reach the HTTP endpoint (docs/http.md, docs/operations.md), as pure functions.

Tenancy is not authentication: the tenant headers say *whose* memories a call
uses, and any caller can send any tenant. What keeps strangers out is the
network, plus MCP_API_KEY when it is set. A browser page must never drive the
server (a DNS-rebinding page would otherwise reach a loopback port), so any
request carrying an `Origin` header is refused before auth is even checked.
"""

from __future__ import annotations

import hmac
import ipaddress

#: The challenge sent with every 401 (docs/http.md, step 4).
WWW_AUTHENTICATE = 'Bearer realm="mcp"'


def bearer_matches(authorization: str | bytes | None, key: str | None) -> bool:
    """Whether an `Authorization` header value carries `key` as its bearer token.

    No key (None or empty) lets everyone in. Otherwise the value must be
    `<scheme> <token>` with the scheme `bearer` in any case; the token is what
    follows the first space with leading whitespace dropped (trailing whitespace
    is kept, so it does not match). The comparison takes the same time whatever
    the token's content: lengths first, then `hmac.compare_digest` on bytes.
    """
    if not key:
        return True
    if authorization is None:
        return False
    raw = authorization.encode("utf-8") if isinstance(authorization, str) else authorization
    scheme, space, rest = raw.partition(b" ")
    if not space or scheme.lower() != b"bearer":
        return False
    token = rest.lstrip()
    expected = key.encode("utf-8")
    if not token or len(token) != len(expected):
        return False
    return hmac.compare_digest(token, expected)


def is_loopback(host: str) -> bool:
    """Whether `host` only accepts connections from this machine."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def auth_lines(key: str | None, host: str) -> tuple[list[str], list[str]]:
    """The start-up lines describing the auth mode: (stdout lines, stderr warnings).

    Without a key every caller that can reach the port is served; that is
    said on stderr, and louder when the port is not on a loopback address.
    """
    if key:
        return ["auth: MCP_API_KEY is set; every request must present it as a bearer token"], []
    warning = (
        "warning: MCP_API_KEY is NOT set: this server answers ANY caller that can reach it. "
        "That is only safe while nothing routes to it from outside the cluster."
    )
    if is_loopback(host):
        return [], [warning]
    loud = (
        f"WARNING: HOST={host} is not a loopback address and MCP_API_KEY is NOT set: ANY caller on the "
        "network can read and write every tenant's memories (the tenant is just a header). "
        "Set MCP_API_KEY, or listen on 127.0.0.1."
    )
    return [], [warning, loud]
