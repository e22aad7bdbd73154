"""A test authorization server on 127.0.0.1: aiohttp serving a JWKS of keys generated
in the test, and the tokens it signs (PyJWT)."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec, rsa

ISSUER = "https://issuer.example.test"
RESOURCE = "https://memory.example.test/mcp"
#: The resource server's credentials at the introspection endpoint.
CLIENT_ID = "memory-server"
CLIENT_SECRET = "introspection-s3cret-value"


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Issuer:
    url: str = ""
    keys: dict[str, Any] = field(default_factory=dict)
    down: bool = False
    #: The JWKS endpoint answers nothing until `release` is set (a hanging issuer).
    hang: bool = False
    hanging: int = 0
    release: asyncio.Event = field(default_factory=asyncio.Event)
    fetches: int = 0
    #: opaque token -> its introspection answer (RFC 7662); any other token is inactive
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    introspections: int = 0

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    @property
    def introspection_url(self) -> str:
        return self.url + "/introspect"

    def opaque(self, **answer: Any) -> str:
        """A new opaque token and what introspection says of it (active, for RESOURCE, by default)."""
        token = secrets.token_urlsafe(24)
        base = {
            "active": True,
            "iss": ISSUER,
            "aud": RESOURCE,
            "client_id": "agent",
            "sub": "user-1",
            "exp": int(time.time()) + 300,
            "scope": "memory:read memory:write memory:forget",
        }
        self.answers[token] = {k: v for k, v in {**base, **answer}.items() if v is not None}
        return token

    def publish(self, kid: str, key: Any | None = None) -> Any:
        key = key or rsa_key()
        self.keys[kid] = key
        return key

    def jwks(self) -> dict[str, Any]:
        out = []
        for kid, key in self.keys.items():
            algorithm = (
                jwt.algorithms.ECAlgorithm
                if isinstance(key, ec.EllipticCurvePrivateKey)
                else jwt.algorithms.RSAAlgorithm
            )
            jwk = json.loads(algorithm.to_jwk(key.public_key()))
            out.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": out}

    def token(self, kid: str = "k1", *, alg: str = "RS256", key: Any = None, **claims: Any) -> str:
        now = int(time.time())
        body = {
            "iss": ISSUER,
            "aud": RESOURCE,
            "sub": "user-1",
            "client_id": "agent",
            "iat": now,
            "exp": now + 300,
            "scope": "memory:read memory:write memory:forget",
            **claims,
        }
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key if key is not None else self.keys[kid], algorithm=alg, headers={"kid": kid})


@asynccontextmanager
async def issuer_server() -> AsyncIterator[Issuer]:
    issuer = Issuer()

    async def jwks(request: web.Request) -> web.Response:
        issuer.fetches += 1
        if issuer.hang:
            issuer.hanging += 1
            await issuer.release.wait()
        if issuer.down:
            return web.Response(status=503)
        return web.json_response(issuer.jwks())

    async def introspect(request: web.Request) -> web.Response:
        issuer.introspections += 1
        if issuer.down:
            return web.Response(status=503)
        expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if request.headers.get("authorization") != expected:
            return web.json_response({"error": "invalid_client"}, status=401)
        form = await request.post()
        answer = issuer.answers.get(str(form.get("token", "")), {"active": False})
        return web.json_response(answer)

    async def metadata(request: web.Request) -> web.Response:  # RFC 8414
        return web.json_response(
            {"issuer": issuer.url, "jwks_uri": issuer.jwks_url, "introspection_endpoint": issuer.introspection_url}
        )

    app = web.Application()
    app.router.add_get("/.well-known/oauth-authorization-server", metadata)
    app.router.add_get("/jwks", jwks)
    app.router.add_post("/introspect", introspect)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    issuer.url = f"http://127.0.0.1:{port}"
    try:
        yield issuer
    finally:
        issuer.release.set()
        await runner.cleanup()
