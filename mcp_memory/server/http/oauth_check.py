"""`mcp-memory oauth check`: the OAuth settings serve-http would run with, what the issuer
publishes, and whether a given token would be accepted and why not (docs/oauth.md#checking-a-setup).

The token is checked by the very verifiers serve-http builds (server/http/oauth.py, and
server/http/introspection.py for opaque tokens), so a verdict here is serve-http's. Nothing printed
holds the token or the introspection secret: a refusal is the verifier's own reason, which never
quotes the token.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp_memory.config import OAuthSettings
from mcp_memory.core.logs import JsonLog

METADATA_TIMEOUT_S = 5.0
METADATA_MAX_BYTES = 1024 * 1024


@dataclass
class Report:
    """Lines to print, and whether serve-http would accept the token (None: no token given)."""

    lines: list[str] = field(default_factory=list)
    accepted: bool | None = None
    #: Accepted, but able to do nothing: no scope serve-http asks for, or no tenant it may use.
    useless: bool = False

    def add(self, text: str) -> None:
        self.lines.append(text)


class _Warnings(JsonLog):
    """Keeps the verifiers' warning lines (why a JWKS fetch failed) to print them."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def _write(self, stream: Any, record: dict[str, Any]) -> None:
        if record.get("level") in ("warn", "error"):
            self.messages.append(str(record.get("message", record.get("event"))))


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer publishes its metadata: RFC 8414 (the well-known part before the issuer's
    path), then OpenID Connect Discovery (after it)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


async def _get_json(url: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object at `url`, or None and why not (HTTP status, timeout, not JSON)."""
    import asyncio

    import aiohttp

    from mcp_memory.server.bounded_json import JsonRefused, loads_bytes

    try:
        async with asyncio.timeout(METADATA_TIMEOUT_S):
            timeout = aiohttp.ClientTimeout(total=METADATA_TIMEOUT_S)
            async with aiohttp.ClientSession(timeout=timeout) as session:
                async with session.get(url, allow_redirects=False) as response:
                    if response.status != 200:
                        return None, f"HTTP {response.status}"
                    raw = await response.content.read(METADATA_MAX_BYTES + 1)
    except TimeoutError:
        return None, f"no answer in {METADATA_TIMEOUT_S:g} s"
    except aiohttp.ClientError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if len(raw) > METADATA_MAX_BYTES:
        return None, f"larger than {METADATA_MAX_BYTES} bytes"
    try:
        document = loads_bytes(raw)
    except JsonRefused:
        return None, "not JSON"
    return (document, "") if isinstance(document, dict) else (None, "not a JSON object")


def _settings_lines(settings: OAuthSettings, report: Report) -> None:
    report.add(f"issuer:        {settings.issuer}")
    report.add(f"JWKS:          {settings.jwks_url}")
    report.add(f"resource:      {settings.resource_url}")
    report.add(f"audience:      {settings.audience}")
    report.add(f"algorithms:    {', '.join(settings.algorithms)}")
    report.add(
        f"scopes:        read {settings.read_scope}, write {settings.write_scope}, forget {settings.forget_scope}"
    )
    if settings.tenant_claim:
        report.add(f"tenant claim:  {settings.tenant_claim} (a token may use only the tenants it lists)")
    else:
        report.add("tenant claim:  none (MCP_TENANT_CLAIM unset: any token may use any tenant its headers name)")
    if settings.introspection_url:
        secret = "set" if settings.client_secret else "NOT set"
        report.add(
            f"introspection: {settings.introspection_url} (client {settings.client_id or '(none)'}, secret {secret})"
        )
    else:
        report.add("introspection: none (opaque tokens are refused; JWTs only)")


async def _metadata_lines(settings: OAuthSettings, report: Report) -> None:
    reasons = []
    for url in metadata_urls(settings.issuer):
        document, why = await _get_json(url)
        if document is None:
            reasons.append(f"{url}: {why}")
            continue
        report.add(f"metadata:      {url}")
        for key, expected, name in (
            ("issuer", settings.issuer, "MCP_OAUTH_ISSUER"),
            ("jwks_uri", settings.jwks_url, "MCP_OAUTH_JWKS_URL"),
            ("introspection_endpoint", settings.introspection_url, "MCP_OAUTH_INTROSPECTION_URL"),
        ):
            published = document.get(key)
            if expected is None or published is None:
                continue
            if str(published).rstrip("/") == expected.rstrip("/"):
                report.add(f"  {key} is {name}")
            else:
                report.add(f'  WARNING: {key} is "{str(published)[:200]}", but {name} is "{expected}"')
        return
    report.add("metadata:      not published (serve-http does not need it: it reads MCP_OAUTH_JWKS_URL)")
    for reason in reasons:
        report.add(f"  {reason}")


def _verifier(settings: OAuthSettings, log: JsonLog) -> Any:
    """The verifier serve-http builds for these settings (server/http/app.py does the same)."""
    from mcp_memory.server.http.oauth import JwtVerifier

    verifier: Any = JwtVerifier(settings, log)
    if settings.introspection_url is not None:
        from mcp_memory.server.http.introspection import IntrospectionVerifier, TokenVerifiers

        verifier = TokenVerifiers(verifier, IntrospectionVerifier(settings, log))
    return verifier


def _jwt_verifier(verifier: Any) -> Any:
    return getattr(verifier, "jwt", verifier)


async def _keys_lines(verifier: Any, log: _Warnings, report: Report) -> None:
    keys = await _jwt_verifier(verifier).jwks.held_keys()
    if not keys:
        report.add("keys:          NONE: every JWT would be refused")
        for message in log.messages:
            report.add(f"  {message}")
        return
    described = []
    for kid, key in sorted(keys.items(), key=lambda item: str(item[0])):
        alg = getattr(key, "_jwk_data", {}).get("alg") or getattr(key, "key_type", "") or "?"
        described.append(f"{kid or '(no kid)'} ({alg})")
    noun = "key" if len(keys) == 1 else "keys"
    report.add(f"keys:          {len(keys)} signing {noun}: {', '.join(described)}")


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172_800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86_400} days"


async def _token_lines(settings: OAuthSettings, verifier: Any, token: str, tenant: str | None, report: Report) -> None:
    from mcp_memory.server.http.introspection import looks_like_jwt
    from mcp_memory.server.http.oauth import TokenRefused, grant_of

    kind = "a JWT" if looks_like_jwt(token) else "an opaque token"
    try:
        access = await verifier.check(token, "oauth-check") if hasattr(verifier, "jwt") else await verifier.check(token)
    except TokenRefused as refused:
        report.accepted = False
        report.add(f"token:         REFUSED ({kind}): {refused}")
        report.add('  serve-http answers 401 with error="invalid_token" and this reason')
        return
    report.accepted = True
    expires = access.expires_at
    left = f", expires in {_duration(expires - time.time())}" if expires and math.isfinite(expires) else ""
    report.add(f"token:         ACCEPTED ({kind}), client {access.client_id}{left}")
    grant = grant_of(access, settings.tenant_claim)
    scopes = grant.scopes or frozenset()
    uses = [
        (settings.read_scope, "recall, list_memories, memory_stats, search_docs"),
        (settings.write_scope, "remember"),
        (settings.forget_scope, "forget, and remember with replaces"),
    ]
    held = [scope for scope, _ in uses if scope in scopes]
    if not held:
        report.useless = True
    for scope, tools in uses:
        verdict = "allowed" if scope in scopes else "REFUSED with 403 insufficient_scope"
        report.add(f"  {scope}: {tools}: {verdict}")
    if grant.tenants is None:
        report.add("  tenants: any the request's tenant header names")
        return
    if not grant.tenants:
        report.useless = True
        report.add(f'  tenants: NONE: the token has no valid tenant in its "{settings.tenant_claim}" claim')
        return
    report.add(f"  tenants: {', '.join(sorted(grant.tenants))} (its {settings.tenant_claim} claim)")
    if tenant is not None:
        if tenant in grant.tenants:
            report.add(f"  tenant {tenant}: allowed")
        else:
            report.useless = True
            report.add(f'  tenant {tenant}: REFUSED: "{tenant}" is not one this token may use')


async def check(settings: OAuthSettings, token: str | None = None, tenant: str | None = None) -> Report:
    """The report on `settings`, the issuer, and `token` when one is given."""
    report = Report()
    log = _Warnings()
    _settings_lines(settings, report)
    await _metadata_lines(settings, report)
    verifier = _verifier(settings, log)
    await _keys_lines(verifier, log, report)
    if token is not None:
        await _token_lines(settings, verifier, token, tenant, report)
    return report
