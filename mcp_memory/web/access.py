"""Who may use the web view: sessions, the one-time token, the key login and CSRF (docs/web.md#security).

A session is a cookie `<issued ms>.<nonce>.<HMAC>` signed with the view's secret: random per
`mcp-memory ui` process, derived from MCP_API_KEY under serve-http (so every replica accepts
it, and changing the key ends every session). Each change carries a CSRF token, the HMAC of
the session under another label, in a hidden form field.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_memory.core.wrong_keys import WrongKeys

COOKIE = "mcp_memory_ui"
#: A session lasts this long, then the view asks for the key (or a new `ui` link) again.
SESSION_MS = 12 * 3_600_000


def secret_base() -> str:
    """A path nobody can guess, under which `mcp-memory ui` serves every page and scopes its
    cookie: a browser sends a 127.0.0.1 cookie to every port of 127.0.0.1, but only under the
    cookie's Path, so another local server never receives it, nor can address a page (docs/web.md#security)."""
    return "/" + secrets.token_urlsafe(18)


def _sign(secret: bytes, label: str, value: str) -> str:
    return hmac.new(secret, f"{label}:{value}".encode(), hashlib.sha256).hexdigest()


@dataclass
class Access:
    """The view's secret and its login method: a one-time `token` (local) or the static `key`."""

    secret: bytes
    #: `mcp-memory ui`: the token in the printed URL, redeemed once for a session.
    token: str | None = None
    #: serve-http: the MCP_API_KEY the login form asks for.
    key: str | None = field(default=None, repr=False)
    clock: Callable[[], float] = field(default=lambda: time.time() * 1000.0)
    redeemed: bool = False
    #: Wrong keys per source address, shared with /mcp's bearer check under serve-http.
    wrong_keys: WrongKeys = field(default_factory=WrongKeys)
    #: Sessions logged out, with when they were issued: refused until they would have expired.
    ended: dict[str, float] = field(default_factory=dict)

    @classmethod
    def local(cls) -> Access:
        return cls(secrets.token_bytes(32), token=secrets.token_urlsafe(32))

    @classmethod
    def with_key(cls, key: str, wrong_keys: WrongKeys | None = None) -> Access:
        secret = hmac.new(key.encode(), b"mcp-memory web view session", hashlib.sha256).digest()
        return cls(secret, key=key, wrong_keys=wrong_keys or WrongKeys())

    def redeem(self, token: str) -> bool:
        """Whether `token` is the one-time token, not yet used; using it spends it."""
        if self.token is None or self.redeemed or not hmac.compare_digest(token.encode(), self.token.encode()):
            return False
        self.redeemed = True
        return True

    def key_matches(self, key: str) -> bool:
        return self.key is not None and hmac.compare_digest(key.encode(), self.key.encode())

    def new_session(self) -> str:
        value = f"{int(self.clock())}.{secrets.token_urlsafe(16)}"
        return f"{value}.{_sign(self.secret, 'session', value)}"

    def valid(self, session: str | None) -> bool:
        if not session or len(session) > 200 or session in self.ended:
            return False
        value, _, signature = session.rpartition(".")
        issued, _, _ = value.partition(".")
        if not hmac.compare_digest(signature, _sign(self.secret, "session", value)):
            return False
        return issued.isdigit() and 0 <= self.clock() - int(issued) < SESSION_MS

    def end(self, session: str) -> None:
        """Log `session` out: refused from now on, a copy of its cookie too (in this process)."""
        now = self.clock()
        self.ended = {s: at for s, at in self.ended.items() if now - at < SESSION_MS}
        issued = session.partition(".")[0]
        self.ended[session] = int(issued) if issued.isdigit() else now

    def csrf(self, session: str) -> str:
        return _sign(self.secret, "csrf", session)

    def csrf_matches(self, session: str, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self.csrf(session).encode())

    def signed(self, label: str, value: str) -> str:
        """`value` with a signature, for the operator's tenant choice."""
        return f"{value}.{_sign(self.secret, label, value)}"

    def unsigned(self, label: str, signed: str | None) -> str | None:
        if not signed:
            return None
        value, _, signature = signed.rpartition(".")
        return value if hmac.compare_digest(signature, _sign(self.secret, label, value)) else None
