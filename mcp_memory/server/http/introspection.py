"""RFC 7662 token introspection, for opaque access tokens (those that are not JWTs).

With MCP_OAUTH_INTROSPECTION_URL set, a bearer token that is not shaped like a JWT is
POSTed to the authorization server's introspection endpoint (the client authenticating
with HTTP Basic, MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET), and the answer is held
to the same rules as a JWT's claims: `active` must be true, `iss` (when given) this
issuer, `aud` this server's audience, `exp` and `nbf` with the leeway; its `scope` and
the tenant claim are applied as a JWT's are. JWTs still go to `JwtVerifier`.

An active answer is cached under the token's SHA-256 (never the token itself) until the
token's `exp` or `cache_s` (MCP_OAUTH_INTROSPECTION_CACHE_S, 60 s), whichever is first,
for at most MAX_CACHED tokens; a refused one is refused for REFUSED_CACHE_S without asking
again (in a cache of its own, so refusals never evict good tokens); a token being
introspected is introspected once, however many requests carry it. Each client address may
cause FAILURE_BURST failed introspections at once and FAILURES_PER_S after that: past it, a
token it sends that is not already cached is refused without an outbound call, so a flood of
random tokens cannot make one call each. All addresses together are held to ALL_FAILURE_BURST
and ALL_FAILURES_PER_S the same way, so a flood spread over many addresses (a /64, loopback's
whole /8) is bounded too (issue 36). When the endpoint cannot be reached or answers anything but a
JSON object with `active`, the token is refused (fail closed). The client secret and the
tokens never appear in a log line or an answer.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote_plus

from mcp.server.auth.provider import AccessToken

from mcp_memory.config import OAuthSettings
from mcp_memory.core.logs import JsonLog
from mcp_memory.server.bounded_json import JsonRefused, loads_bytes
from mcp_memory.server.http.oauth import Grant, JwtVerifier, TokenRefused, check_times, grant_of, scopes_of

#: Tokens whose introspection is cached at most (the least recently used go first); the
#: refused ones are held apart, so a flood of bad tokens cannot push the good ones out.
MAX_CACHED = 10_000
MAX_REFUSED = 10_000
#: How long a refused token (inactive, another audience, …) is refused without asking again.
REFUSED_CACHE_S = 60
#: Failed authentications one client address may cause at once, and per second after that,
#: before its new opaque tokens are refused without asking the authorization server.
FAILURE_BURST = 20
FAILURES_PER_S = 1.0
#: Failed authentications all addresses together may cause at once, and per second after that.
ALL_FAILURE_BURST = 100
ALL_FAILURES_PER_S = 5.0
#: Client addresses whose failures are remembered at most (the least recently failed go first).
MAX_CLIENTS = 10_000
ANSWER_MAX_BYTES = 64 * 1024
INTROSPECTION_TIMEOUT_S = 5.0
_JWT_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


def basic_auth(settings: OAuthSettings) -> str:
    """client_secret_basic (RFC 6749 section 2.3.1): both form-encoded, then Base64."""
    pair = f"{quote_plus(settings.client_id or '')}:{quote_plus(settings.client_secret or '')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


def looks_like_jwt(token: str) -> bool:
    return _JWT_SHAPE.fullmatch(token) is not None


class FailureBudget:
    """A token bucket of failed authentications per client address: `wait(client)` is 0
    while it may cause another, else the seconds until it may; `spend(client)` counts one."""

    def __init__(self, clock: Callable[[], float], burst: int = FAILURE_BURST, per_s: float = FAILURES_PER_S) -> None:
        self.clock = clock
        self.burst = float(burst)
        self.per_s = per_s
        self._left: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _tokens(self, client: str, now: float) -> float:
        left, at = self._left.get(client, (self.burst, now))
        return min(self.burst, left + (now - at) * self.per_s)

    def wait(self, client: str) -> float:
        tokens = self._tokens(client, self.clock())
        return 0.0 if tokens >= 1 else (1 - tokens) / self.per_s

    def spend(self, client: str) -> None:
        now = self.clock()
        self._left[client] = (max(0.0, self._tokens(client, now) - 1), now)
        self._left.move_to_end(client)
        while len(self._left) > MAX_CLIENTS:
            self._left.popitem(last=False)


class IntrospectionVerifier:
    """Opaque tokens, checked by the authorization server (RFC 7662)."""

    def __init__(
        self,
        settings: OAuthSettings,
        log: JsonLog,
        *,
        clock: Callable[[], float] = time.time,
        timeout_s: float = INTROSPECTION_TIMEOUT_S,
    ) -> None:
        assert settings.introspection_url is not None
        self.settings = settings
        self.url = settings.introspection_url
        self.log = log
        self.clock = clock
        self.timeout_s = timeout_s
        self._cache: OrderedDict[str, tuple[float, AccessToken | TokenRefused]] = OrderedDict()
        self._refused: OrderedDict[str, tuple[float, AccessToken | TokenRefused]] = OrderedDict()
        self._running: dict[str, asyncio.Task[AccessToken]] = {}
        self.failures = FailureBudget(clock)
        self.all_failures = FailureBudget(clock, burst=ALL_FAILURE_BURST, per_s=ALL_FAILURES_PER_S)
        self.calls = 0

    async def check(self, token: str, client: str | None = None) -> AccessToken:
        """The token's access info, or TokenRefused. `client` (the peer's address) is held to
        FailureBudget: past it, a token not already known is refused without an outbound call."""
        digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
        for cache in (self._cache, self._refused):
            cached = cache.get(digest)
            if cached is None:
                continue
            until, verdict = cached
            if self.clock() < until:
                cache.move_to_end(digest)
                if isinstance(verdict, TokenRefused):
                    raise verdict
                return verdict
            del cache[digest]
        task = self._running.get(digest)
        started = task is None
        if task is None:
            if client is not None and (wait := self.failures.wait(client)) > 0:
                raise TokenRefused(
                    f"too many failed authentications from this address; try again in {math.ceil(wait)} s"
                )
            if (wait := self.all_failures.wait("")) > 0:
                raise TokenRefused(f"too many failed authentications; try again in {math.ceil(wait)} s")
            task = self._running[digest] = asyncio.create_task(self._introspect(token, digest))
            task.add_done_callback(lambda _: self._running.pop(digest, None))
        try:
            return await asyncio.shield(task)
        except TokenRefused:
            if started:
                self.all_failures.spend("")
                if client is not None:
                    self.failures.spend(client)
            raise

    async def _introspect(self, token: str, digest: str) -> AccessToken:
        answer = await self._ask(token)  # an outage raises here, and is not cached
        now = self.clock()
        try:
            access = self._accept(answer, token)
        except TokenRefused as refused:  # the server's verdict: asked again only after a while
            self._remember(digest, now + min(REFUSED_CACHE_S, self.settings.introspection_cache_s), refused)
            raise
        until = now + self.settings.introspection_cache_s
        if access.expires_at is not None:
            until = min(until, float(access.expires_at))
        self._remember(digest, until, access)
        return access

    def _remember(self, digest: str, until: float, verdict: AccessToken | TokenRefused) -> None:
        cache, cap = (self._refused, MAX_REFUSED) if isinstance(verdict, TokenRefused) else (self._cache, MAX_CACHED)
        cache[digest] = (until, verdict)
        while len(cache) > cap:
            cache.popitem(last=False)

    async def _ask(self, token: str) -> Mapping[str, Any]:
        import aiohttp

        s = self.settings
        self.calls += 1
        try:
            async with asyncio.timeout(self.timeout_s):
                async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s)) as session:
                    async with session.post(
                        self.url,
                        data={"token": token, "token_type_hint": "access_token"},
                        headers={"accept": "application/json", "authorization": basic_auth(s)},
                        allow_redirects=False,
                    ) as response:
                        if response.status != 200:
                            raise ValueError(f"HTTP {response.status}")
                        raw = await response.content.read(ANSWER_MAX_BYTES + 1)
            if len(raw) > ANSWER_MAX_BYTES:
                raise ValueError(f"larger than {ANSWER_MAX_BYTES} bytes")
            answer = loads_bytes(raw)
            if not isinstance(answer, dict) or not isinstance(answer.get("active"), bool):
                raise ValueError('not a JSON object with a boolean "active"')
        except TimeoutError:
            reason = f"no answer in {self.timeout_s:g} s"
        except Exception as exc:  # an outage or a bad answer: fail closed
            reason = str(exc) if isinstance(exc, JsonRefused) else f"{type(exc).__name__}: {exc}"
        else:
            return answer
        self.log.warn("introspection_failed", f"could not introspect a token at {self.url}: {reason}")
        raise TokenRefused("the authorization server cannot check the token now; try again later")

    def _accept(self, answer: Mapping[str, Any], token: str) -> AccessToken:
        s = self.settings
        if answer.get("active") is not True:
            raise TokenRefused("the authorization server says the token is not active")
        check_times(answer)
        now = self.clock()
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if exp is not None and (not isinstance(exp, int | float) or exp + s.leeway_s <= now):
            raise TokenRefused("the token has expired")
        if nbf is not None and (not isinstance(nbf, int | float) or nbf - s.leeway_s > now):
            raise TokenRefused("the token is not valid yet")
        iss = answer.get("iss")
        if iss is not None and iss != s.issuer:
            raise TokenRefused("the token was issued by another issuer")
        aud = answer.get("aud")
        audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if s.audience not in audiences:
            raise TokenRefused("the token was issued for another resource")
        client = answer.get("client_id") or answer.get("sub") or "unknown"
        sub = answer.get("sub")
        return AccessToken(
            token=token,
            client_id=str(client),
            scopes=sorted(scopes_of(answer)),
            expires_at=int(exp) if exp is not None else None,
            resource=s.audience,
            subject=sub if isinstance(sub, str) else None,
            claims=dict(answer),
        )


class TokenVerifiers:
    """JWTs to `JwtVerifier`, any other token to introspection (when it is configured)."""

    def __init__(self, jwt: JwtVerifier, introspection: IntrospectionVerifier) -> None:
        self.jwt = jwt
        self.introspection = introspection

    async def check(self, token: str, client: str | None = None) -> AccessToken:
        if looks_like_jwt(token):
            return await self.jwt.check(token)
        return await self.introspection.check(token, client)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The MCP SDK's TokenVerifier interface."""
        try:
            return await self.check(token)
        except TokenRefused:
            return None

    async def grant(self, token: str, client: str | None = None) -> Grant:
        return grant_of(await self.check(token, client), self.jwt.settings.tenant_claim)
