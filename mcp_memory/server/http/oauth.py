"""serve-http as an OAuth 2.1 resource server (the MCP authorization specification).

- `JwtVerifier` is the MCP SDK's `TokenVerifier`: a JWT access token is checked
  with PyJWT against the issuer's keys (`JwksCache`): an allow-list of
  asymmetric algorithms (never `none`, never HS*), the signature, `iss`, `aud`
  (this server's resource URL), `exp` and `nbf` with a small leeway.
- The protected-resource document (RFC 9728) is the SDK's own model and route
  (`create_protected_resource_routes`), served at the path RFC 9728 derives from
  the resource URL and at the bare `/.well-known/oauth-protected-resource`.
- `Grant` is what a request may do once authenticated: its scopes and, with
  MCP_TENANT_CLAIM, the tenants it may use. The tenant headers then only choose
  among those tenants.

The SDK's `BearerAuthBackend`/`RequireAuthMiddleware` are not used: they need a
Starlette app and one scope set per route, where a scope here depends on the
tool named inside the JSON-RPC body, and they cannot coexist with the static
MCP_API_KEY's byte-for-byte answers. The checks they make are made here.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.provider import AccessToken

from mcp_memory.config import OAuthSettings
from mcp_memory.core.errors import ContextError, StartupError
from mcp_memory.core.identity import parse_conversation, parse_tenant
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.http.headers import (
    CONVERSATION_HEADER,
    STAMPED_TENANT_HEADER,
    TENANT_HEADER,
    caller_from_headers,
)

#: Where the request's Grant is kept in the ASGI scope (read again when a tool runs).
GRANT_KEY = "mcp_memory.grant"
WELL_KNOWN = "/.well-known/oauth-protected-resource"
#: Tools that only read; `remember` writes; `forget` (and `remember` with `replaces`) forgets.
READ_TOOLS = frozenset({"recall", "list_memories", "memory_stats", "search_docs"})
JWKS_MAX_BYTES = 1024 * 1024
JWKS_TIMEOUT_S = 5.0


class TokenRefused(Exception):
    """A bearer token that is not accepted; the text is the `error_description` (never the token)."""


@dataclass(frozen=True)
class Grant:
    """What an authenticated request may do. `scopes` None: everything (no OAuth, or the
    static key). `tenants` None: any tenant the headers name (today's rules)."""

    scopes: frozenset[str] | None = None
    tenants: frozenset[str] | None = None
    claim: str | None = None

    def missing(self, needed: Sequence[str]) -> list[str]:
        if self.scopes is None:
            return []
        return [scope for scope in needed if scope not in self.scopes]

    def caller(self, explicit: Sequence[str], stamped: Sequence[str], conversation: Sequence[str]) -> Caller:
        """The caller, by today's header rules, restricted to the token's tenants."""
        if self.tenants is None:
            return caller_from_headers(explicit, stamped, conversation)
        if not self.tenants:
            raise ContextError(f'this token names no tenant in its "{self.claim}" claim, so it may use none')
        if not any(v.strip() for v in (*explicit, *stamped)):
            conv = parse_conversation(conversation, CONVERSATION_HEADER)
            if len(self.tenants) == 1:
                return Caller(next(iter(self.tenants)), conv)
            names = ", ".join(sorted(self.tenants))
            raise ContextError(f"this token may use the tenants {names}: choose one with the {TENANT_HEADER} header")
        caller = caller_from_headers(explicit, stamped, conversation)
        if caller.tenant not in self.tenants:
            raise ContextError(f'tenant "{caller.tenant}" is not one this token may use (its "{self.claim}" claim)')
        return caller

    def transport_tenant(self, headers: Any) -> str | None:
        """The tenant a request will use, when it can be told before the body is read; None
        when the headers are wrong (the tool call then says why)."""
        try:
            return self.caller(
                headers.getlist(TENANT_HEADER),
                headers.getlist(STAMPED_TENANT_HEADER),
                headers.getlist(CONVERSATION_HEADER),
            ).tenant
        except ContextError:
            return None


FULL_GRANT = Grant()


#: Methods that return memories, and so need the read scope as the reading tools do.
READ_METHODS = frozenset({"resources/list", "resources/read", "prompts/get"})


def required_scopes(body: bytes, settings: OAuthSettings) -> list[str]:
    """The scopes a JSON-RPC body needs: by the tool each `tools/call` names, and the read scope
    for the methods that return memories (READ_METHODS). Anything else (the handshake, the
    lists of tools, templates and prompts, a malformed body the SDK will refuse) needs none
    beyond a valid token."""
    from mcp_memory.server.bounded_json import JsonRefused, loads_bytes

    try:
        parsed = loads_bytes(body)
    except JsonRefused:
        return []
    messages = parsed if isinstance(parsed, list) else [parsed]
    needed: list[str] = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") in READ_METHODS:
            needed.append(settings.read_scope)  # a resource or the prompt holds memories
            continue
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            continue
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        name = params.get("name")
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        if name in READ_TOOLS:
            needed.append(settings.read_scope)
        elif name == "remember":
            needed.append(settings.write_scope)
            if arguments.get("replaces") not in (None, "", []):
                needed.append(settings.forget_scope)
        elif name == "forget":
            needed.append(settings.forget_scope)
    return list(dict.fromkeys(needed))


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """`scope` (space-separated, RFC 9068) or `scp` (a list or a string, as some issuers send)."""
    found: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(v for v in value if isinstance(v, str))
    return frozenset(found)


def tenants_of(claims: Mapping[str, Any], claim: str) -> frozenset[str]:
    """The valid tenant names in `claim` (a string or a list of strings); others are dropped."""
    value = claims.get(claim)
    values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    tenants: set[str] = set()
    for item in values:
        if isinstance(item, str):
            try:
                tenants.add(parse_tenant(item, claim))
            except ContextError:
                continue
    return frozenset(tenants)


class JwksCache:
    """The issuer's signing keys, fetched over HTTPS with aiohttp (off the event loop's
    critical path: nothing blocks) and kept for `max_age_s` after the last good fetch.

    A refetch is tried when the keys are past half their age or a token names an unknown
    `kid` (key rotation), at most once per `min_refresh_s` whatever tokens arrive. Fetches
    are single-flight: every request that needs one while it runs waits for that same
    fetch, and it takes at most `timeout_s` (connecting, the answer and the body), so a
    slow or hanging issuer ties up one fetch, never one per request. A request whose key is
    held never waits for a refetch: past half the age the refetch runs beside it. When the
    issuer cannot be reached the keys already held keep working until `max_age_s`; after
    that every token is refused (fail closed) until a fetch succeeds.
    """

    def __init__(
        self,
        url: str,
        log: JsonLog,
        *,
        max_age_s: float,
        min_refresh_s: float,
        timeout_s: float = JWKS_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.log = log
        self.max_age_s = max_age_s
        self.min_refresh_s = min_refresh_s
        self.timeout_s = timeout_s
        self.clock = clock
        self._keys: dict[str | None, Any] | None = None
        self._fetched_at = 0.0
        self._tried_at: float | None = None
        self._fetch: asyncio.Task[None] | None = None
        self.fetches = 0

    def _fresh(self, now: float) -> bool:
        return self._keys is not None and now - self._fetched_at <= self.max_age_s

    def _held(self, kid: str | None) -> bool:
        keys = self._keys or {}
        return kid in keys or (kid is None and len(keys) == 1)

    async def key(self, kid: str | None) -> Any:
        now = self.clock()
        if not self._fresh(now) or not self._held(kid):
            fetch = self._start_fetch(now)
            if fetch is not None:
                # shielded: a request that goes away does not cancel the fetch the others wait for
                await asyncio.shield(fetch)
        elif now - self._fetched_at > self.max_age_s / 2:
            self._start_fetch(now)  # refreshed beside this request, which uses the keys held
        if not self._fresh(self.clock()):
            raise TokenRefused("the authorization server's signing keys are unavailable; try again later")
        keys = self._keys or {}
        if kid is None and len(keys) == 1:
            return next(iter(keys.values()))
        if kid not in keys:
            raise TokenRefused("the token is signed with a key the authorization server does not publish")
        return keys[kid]

    async def held_keys(self) -> dict[str | None, Any]:
        """The signing keys by `kid`, fetched first unless fresh ones are held; empty when none
        can be had (the reason is the `jwks_fetch_failed` warning). For `mcp-memory oauth check`."""
        now = self.clock()
        if not self._fresh(now):
            fetch = self._start_fetch(now)
            if fetch is not None:
                await asyncio.shield(fetch)
        return dict(self._keys or {}) if self._fresh(self.clock()) else {}

    def _start_fetch(self, now: float) -> asyncio.Task[None] | None:
        """The fetch running now, or a new one when the last try is `min_refresh_s` old; else None."""
        if self._fetch is not None and not self._fetch.done():
            return self._fetch
        if self._tried_at is not None and now - self._tried_at < self.min_refresh_s:
            return None
        self._tried_at = now
        self._fetch = asyncio.create_task(self._refresh(), name="jwks-fetch")
        return self._fetch

    async def _refresh(self) -> None:
        import aiohttp
        import jwt

        from mcp_memory.server.bounded_json import loads_bytes

        self.fetches += 1
        try:
            async with asyncio.timeout(self.timeout_s):
                timeout = aiohttp.ClientTimeout(total=self.timeout_s)
                async with aiohttp.ClientSession(timeout=timeout) as session:
                    async with session.get(self.url, allow_redirects=False) as response:
                        if response.status != 200:
                            raise ValueError(f"HTTP {response.status}")
                        raw = await response.content.read(JWKS_MAX_BYTES + 1)
            if len(raw) > JWKS_MAX_BYTES:
                raise ValueError(f"larger than {JWKS_MAX_BYTES} bytes")
            document = loads_bytes(raw)
            keys = [k for k in document.get("keys", []) if isinstance(k, dict) and k.get("use", "sig") == "sig"]
            jwks = jwt.PyJWKSet.from_dict({"keys": keys})
        except TimeoutError:
            self.log.warn(
                "jwks_fetch_failed", f"could not fetch the JWKS from {self.url}: no answer in {self.timeout_s:g} s"
            )
            return
        except Exception as exc:  # an outage, a bad document: the keys held stay until their age
            self.log.warn("jwks_fetch_failed", f"could not fetch the JWKS from {self.url}: {type(exc).__name__}: {exc}")
            return
        self._keys = {k.key_id: k for k in jwks.keys}
        self._fetched_at = self.clock()


class JwtVerifier:
    """The MCP SDK's TokenVerifier for JWT access tokens (RFC 9068) from one issuer."""

    def __init__(self, settings: OAuthSettings, log: JsonLog, *, clock: Callable[[], float] = time.monotonic) -> None:
        try:
            import jwt  # noqa: F401  # pyjwt[crypto]: the `oauth` extra
            from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: F401
        except ImportError:
            from mcp_memory.core.version import install_hint

            raise StartupError(f"MCP_OAUTH_ISSUER needs PyJWT with cryptography: {install_hint('oauth')}") from None
        self.settings = settings
        self.jwks = JwksCache(
            settings.jwks_url,
            log,
            max_age_s=settings.jwks_cache_s,
            min_refresh_s=settings.jwks_min_refresh_s,
            timeout_s=settings.jwks_timeout_s,
            clock=clock,
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's interface: the token's access info, or None when it is refused."""
        try:
            return await self.check(token)
        except TokenRefused:
            return None

    async def check(self, token: str) -> AccessToken:
        """The token's access info, or TokenRefused saying why (never quoting the token)."""
        import jwt

        s = self.settings
        try:
            header = jwt.get_unverified_header(token)
        except (jwt.PyJWTError, RecursionError):  # a header nested thousands deep is not one either
            raise TokenRefused("the token is not a well-formed JWT") from None
        alg = header.get("alg")
        if alg not in s.algorithms:
            raise TokenRefused(f"tokens signed with {str(alg)[:20]!r} are not accepted")
        kid = header.get("kid")
        jwk = await self.jwks.key(kid if isinstance(kid, str) else None)
        declared = getattr(jwk, "_jwk_data", {}).get("alg")
        if declared and declared != alg:
            raise TokenRefused("the token's algorithm is not its key's")
        try:
            claims = jwt.decode(
                token,
                key=jwk.key,
                algorithms=[alg],
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway_s,
                # the times are checked below, once they are known to be numbers
                options={
                    "require": ["exp", "iss", "aud"],
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.InvalidIssuerError:
            raise TokenRefused("the token was issued by another issuer") from None
        except jwt.InvalidAudienceError:
            raise TokenRefused("the token was issued for another resource") from None
        except jwt.MissingRequiredClaimError as exc:
            raise TokenRefused(f"the token has no {exc.claim} claim") from None
        except (jwt.PyJWTError, ValueError, TypeError, RecursionError):
            raise TokenRefused("the token's signature does not verify") from None
        check_times(claims)
        now = time.time()
        if claims["exp"] <= now - s.leeway_s:
            raise TokenRefused("the token has expired")
        if any((claims.get(name) or 0) > now + s.leeway_s for name in ("nbf", "iat")):
            raise TokenRefused("the token is not valid yet")
        aud = claims.get("aud")
        client = claims.get("client_id") or claims.get("azp") or claims.get("sub") or "unknown"
        return AccessToken(
            token=token,
            client_id=str(client),
            scopes=sorted(scopes_of(claims)),
            expires_at=int(claims["exp"]),
            resource=s.audience if isinstance(aud, list) else str(aud),
            subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
            claims=claims,
        )

    async def grant(self, token: str, client: str | None = None) -> Grant:
        """`client` is for the introspection verifier's failure budget; a JWT is checked locally."""
        return grant_of(await self.check(token), self.settings.tenant_claim)


TIME_CLAIMS = ("exp", "nbf", "iat")


def check_times(claims: Mapping[str, Any]) -> None:
    """`exp`, `nbf` and `iat`, when present, are finite numbers (RFC 7519 NumericDate): PyJWT
    would read the string "9999999999" as a date; a boolean, NaN or Infinity is no date either."""
    for name in TIME_CLAIMS:
        value = claims.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise TokenRefused(f"the token's {name} claim is not a number")


def grant_of(access: AccessToken, tenant_claim: str | None) -> Grant:
    """What a validated token may do: its scopes and, with a tenant claim configured, its tenants
    (the same for a JWT and for an introspected token)."""
    tenants = tenants_of(access.claims or {}, tenant_claim) if tenant_claim else None
    return Grant(scopes=frozenset(access.scopes), tenants=tenants, claim=tenant_claim)


def metadata_url(settings: OAuthSettings) -> str:
    """Where the protected-resource document is (RFC 9728 section 3.1, the SDK's derivation)."""
    from mcp.server.auth.routes import build_resource_metadata_url
    from pydantic import AnyHttpUrl

    return str(build_resource_metadata_url(AnyHttpUrl(settings.resource_url)))


def metadata_router(settings: OAuthSettings) -> Any:
    """The SDK's RFC 9728 route for this resource, also answered at the bare well-known path."""
    from mcp.server.auth.routes import create_protected_resource_routes
    from pydantic import AnyHttpUrl
    from starlette.routing import Route, Router

    routes = create_protected_resource_routes(
        resource_url=AnyHttpUrl(settings.resource_url),
        authorization_servers=[AnyHttpUrl(settings.issuer)],
        scopes_supported=list(settings.scopes),
        resource_name="mcp-memory",
    )
    extra: list[Any] = []
    for route in routes:
        if isinstance(route, Route) and route.path != WELL_KNOWN:
            extra.append(Route(WELL_KNOWN, endpoint=route.endpoint, methods=list(route.methods or ())))
    return Router(routes=[*routes, *extra])


def challenge(
    settings: OAuthSettings, error: str | None = None, description: str | None = None, scope: Sequence[str] = ()
) -> str:
    """A `WWW-Authenticate: Bearer …` value pointing at the protected-resource document."""
    parts = []
    if error:
        parts.append(f'error="{error}"')
    if description:
        parts.append(f'error_description="{_quoted(description)}"')
    if scope:
        parts.append(f'scope="{" ".join(scope)}"')
    parts.append(f'resource_metadata="{metadata_url(settings)}"')
    return "Bearer " + ", ".join(parts)


def _quoted(text: str) -> str:
    return "".join(ch for ch in text if " " <= ch <= "~" and ch not in '"\\')
