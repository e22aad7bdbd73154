"""The serve section: where serve-http listens, its timeouts, OAuth, limits, metrics and the web view.

A library script never serves, so `open_service()` does not read this section: a broken
RATE_LIMIT_PER_TENANT or OAuth variable refuses serve-http at start, not a script that remembers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp_memory.config import Env, scrub
from mcp_memory.core.errors import ConfigError

PORT_MAX = 65_535
#: The algorithms a token may be signed with: asymmetric only. `none` and the HS* family are never
#: accepted (an HS256 token "signed" with the issuer's public key would otherwise pass).
ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
DEFAULT_SCOPES = ("memory:read", "memory:write", "memory:forget")


@dataclass(frozen=True)
class HttpLimits:
    """How long each phase of an HTTP request may take, and how many connections may be open
    (server/http/connections.py). Times in milliseconds; `max_connections` None: 1000, or fewer when
    the process may not open that many files."""

    header_timeout_ms: int = 10_000
    body_timeout_ms: int = 30_000
    keep_alive_ms: int = 5_000
    max_connections: int | None = None


@dataclass(frozen=True)
class OAuthSettings:
    """An OAuth 2.1 resource server (server/http/oauth.py): JWT access tokens from `issuer`, checked
    against its JWKS, issued for `audience` (by default this server's resource URL)."""

    issuer: str
    jwks_url: str
    resource_url: str
    audience: str
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    leeway_s: int = 30
    #: How long fetched keys are trusted without a successful refetch; then requests fail closed.
    jwks_cache_s: int = 3600
    #: The least time between two JWKS fetches (an unknown `kid` cannot make us fetch in a loop).
    jwks_min_refresh_s: int = 10
    #: The longest one JWKS fetch may take (connecting, the answer, the body).
    jwks_timeout_s: float = 5.0
    read_scope: str = DEFAULT_SCOPES[0]
    write_scope: str = DEFAULT_SCOPES[1]
    forget_scope: str = DEFAULT_SCOPES[2]
    #: The claim listing the tenants a token may use (a string or a list); None: headers decide.
    tenant_claim: str | None = None
    #: http:// issuer and JWKS URLs on a loopback address (tests only).
    allow_http_loopback: bool = False
    #: RFC 7662 introspection for opaque tokens (server/http/introspection.py), with the client's credentials.
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    #: How long an active introspection answer is used at most (and never past the token's exp).
    introspection_cache_s: int = 60

    @property
    def scopes(self) -> tuple[str, str, str]:
        return self.read_scope, self.write_scope, self.forget_scope


@dataclass(frozen=True)
class CallLimits:
    """Per-process backpressure on `serve-http` (server/http/backpressure.py): a token bucket per tenant
    (`rate_per_s` sustained, `burst` at once), a cap on requests being answered at once, and
    the share of that cap one tenant may hold (`per_tenant`; None: a quarter of it)."""

    rate_per_s: float = 20.0
    burst: int = 40
    max_concurrent: int = 64
    per_tenant: int | None = None

    @property
    def tenant_share(self) -> int:
        """How many requests one tenant may have answered at once in this process."""
        share = self.per_tenant if self.per_tenant is not None else self.max_concurrent // 4
        return max(1, min(share, self.max_concurrent))


@dataclass(frozen=True)
class MetricsSettings:
    """Prometheus metrics (server/http/metrics.py), served on their own port when `port` is set."""

    port: int | None = None
    host: str = "127.0.0.1"
    tenant_label: bool = False


@dataclass(frozen=True)
class ServeSection:
    """What serve-http (and its web view) needs beyond a service."""

    host: str = "127.0.0.1"
    port: int = 3000
    mcp_api_key: str | None = field(default=None, repr=False)
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    oauth: OAuthSettings | None = None
    call_limits: CallLimits = field(default_factory=CallLimits)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    #: UI_ENABLED: serve-http also serves the web view at /ui (docs/web.md).
    ui_enabled: bool = False


def listen(env: Env) -> dict[str, Any]:
    """HOST, PORT (0: any free port, as --port 0) and MCP_API_KEY."""
    return {
        "host": env.raw("HOST") or ServeSection.host,
        "port": env.integer("PORT", ServeSection.port, PORT_MAX, minimum=0),
        "mcp_api_key": env.raw("MCP_API_KEY"),
    }


def serving(env: Env) -> dict[str, Any]:
    """The timeouts, OAuth, the call limits, metrics and the web view."""
    return {
        "http_limits": _http_limits(env),
        "oauth": _oauth(env),
        "call_limits": _call_limits(env),
        "metrics": _metrics(env),
        "ui_enabled": env.flag("UI_ENABLED"),
    }


def _http_limits(env: Env) -> HttpLimits:
    connections = env.raw("HTTP_MAX_CONNECTIONS")
    return HttpLimits(
        header_timeout_ms=env.integer("HTTP_HEADER_TIMEOUT_MS", HttpLimits.header_timeout_ms),
        body_timeout_ms=env.integer("HTTP_BODY_TIMEOUT_MS", HttpLimits.body_timeout_ms),
        keep_alive_ms=env.integer("HTTP_KEEP_ALIVE_MS", HttpLimits.keep_alive_ms),
        max_connections=None if connections is None else env.integer("HTTP_MAX_CONNECTIONS", 1),
    )


def _https_url(env: Env, name: str, loopback_http: bool) -> str:
    """An https URL without credentials or fragment (http:// only on loopback, when allowed)."""
    raw = env.raw(name)
    if raw is None:
        raise ConfigError(f"{name} is required when MCP_OAUTH_ISSUER is set")
    try:
        parts = urlsplit(raw)
        _ = parts.port
    except ValueError:
        parts = None
    ok = parts is not None and bool(parts.hostname) and parts.username is None and not parts.fragment
    if ok and parts is not None and parts.scheme != "https":
        ok = parts.scheme == "http" and loopback_http and _is_loopback_host(parts.hostname or "")
    if not ok:
        hint = " (http:// only on a loopback address with MCP_OAUTH_ALLOW_HTTP_LOOPBACK=true)"
        raise ConfigError(f'{name} must be an https:// URL without credentials or fragment{hint}, got "{scrub(raw)}"')
    return raw


def _oauth(env: Env) -> OAuthSettings | None:
    issuer_raw = env.raw("MCP_OAUTH_ISSUER")
    if issuer_raw is None:
        for name in ("MCP_OAUTH_JWKS_URL", "MCP_RESOURCE_URL", "MCP_TENANT_CLAIM", "MCP_OAUTH_INTROSPECTION_URL"):
            if env.raw(name) is not None:
                raise ConfigError(f"{name} is set but MCP_OAUTH_ISSUER is not: set the issuer to turn OAuth on")
        return None
    loopback = env.flag("MCP_OAUTH_ALLOW_HTTP_LOOPBACK")
    issuer = _https_url(env, "MCP_OAUTH_ISSUER", loopback)
    jwks_url = _https_url(env, "MCP_OAUTH_JWKS_URL", loopback)
    resource = _https_url(env, "MCP_RESOURCE_URL", loopback)
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    raw_algs = env.raw("MCP_OAUTH_ALGORITHMS")
    if raw_algs is not None:
        algorithms = tuple(a.strip() for a in raw_algs.split(",") if a.strip())
        refused = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if refused or not algorithms:
            raise ConfigError(
                f'MCP_OAUTH_ALGORITHMS may name only {", ".join(ASYMMETRIC_ALGORITHMS)}, got "{raw_algs}"'
            )
    scopes = []
    for name, default in zip(("MCP_SCOPE_READ", "MCP_SCOPE_WRITE", "MCP_SCOPE_FORGET"), DEFAULT_SCOPES):
        scope = env.raw(name) or default
        if not re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", scope):  # RFC 6749 scope-token
            raise ConfigError(f'{name} must be one scope token (printable ASCII, no spaces or quotes), got "{scope}"')
        scopes.append(scope)
    claim = env.raw("MCP_TENANT_CLAIM")
    introspection = None
    client_id = client_secret = None
    if env.raw("MCP_OAUTH_INTROSPECTION_URL") is not None:
        introspection = _https_url(env, "MCP_OAUTH_INTROSPECTION_URL", loopback)
        client_id, client_secret = env.raw("MCP_OAUTH_CLIENT_ID"), env.raw("MCP_OAUTH_CLIENT_SECRET")
        if client_id is None or client_secret is None:
            raise ConfigError(
                "MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET are required with MCP_OAUTH_INTROSPECTION_URL"
            )
    return OAuthSettings(
        issuer=issuer,
        jwks_url=jwks_url,
        resource_url=resource,
        audience=env.raw("MCP_OAUTH_AUDIENCE") or resource,
        algorithms=algorithms,
        leeway_s=env.integer("MCP_OAUTH_LEEWAY_S", OAuthSettings.leeway_s, 300),
        jwks_cache_s=env.integer("MCP_OAUTH_JWKS_CACHE_S", OAuthSettings.jwks_cache_s, 86_400),
        read_scope=scopes[0],
        write_scope=scopes[1],
        forget_scope=scopes[2],
        tenant_claim=claim,
        allow_http_loopback=loopback,
        introspection_url=introspection,
        client_id=client_id,
        client_secret=client_secret,
        introspection_cache_s=env.integer("MCP_OAUTH_INTROSPECTION_CACHE_S", OAuthSettings.introspection_cache_s, 3600),
    )


def _call_limits(env: Env) -> CallLimits:
    raw = env.raw("RATE_LIMIT_PER_TENANT")
    rate = CallLimits.rate_per_s
    if raw is not None:
        try:
            rate = float(raw)
        except ValueError:
            rate = float("nan")
        if not 0 < rate <= 100_000:
            raise ConfigError(f'RATE_LIMIT_PER_TENANT must be requests per second, above 0, got "{raw}"')
    return CallLimits(
        rate_per_s=rate,
        burst=env.integer("RATE_LIMIT_BURST", CallLimits.burst, 100_000),
        max_concurrent=env.integer("MAX_CONCURRENT_CALLS", CallLimits.max_concurrent, 10_000),
        per_tenant=env.integer("MAX_CONCURRENT_PER_TENANT", 0, 10_000) or None,  # 0: a quarter
    )


def _metrics(env: Env) -> MetricsSettings:
    port = None if env.raw("METRICS_PORT") is None else env.integer("METRICS_PORT", 0, PORT_MAX)
    return MetricsSettings(
        port=port,
        host=env.raw("METRICS_HOST") or MetricsSettings.host,
        tenant_label=env.flag("METRICS_TENANT_LABEL"),
    )


def _is_loopback_host(host: str) -> bool:
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
