"""The HTTP app: `POST /mcp` served statelessly by the MCP SDK, `GET /health`,
and the checks in front of them, in the reference order (docs/http.md).

For every request, on the path alone (the query string never matters):

1. `/health`, any method → 200 `{"status":"ok"}`. Nothing is checked behind it,
   on purpose: a probe must not restart pods over an outage they cannot fix.
2. with UI_ENABLED=1, `/ui` and below → the web view (docs/web.md), with its own checks;
   anything else but exactly `/mcp` → 404.
3. an `Origin` header, whatever its value → 403 (no browser page may drive us).
4. with MCP_API_KEY set, an address that sent 10 wrong keys within a minute (here or at
   /ui/login: core/wrong_keys.py) → 429 with Retry-After, the right key included; no
   matching bearer token → 401 with a challenge.
   With OAuth (server/http/oauth.py) the key still works, and any other bearer is
   checked as a JWT: 401 pointing at the protected-resource document, which
   is served (RFC 9728) before step 2 under /.well-known/.
5. any method but POST → 405. A stateless server has nothing to push on a
   GET stream (the SDK would hold one open, silent, until shutdown) and no
   session for a DELETE to end.
6. limits (server/http/backpressure.py): the process already answering its cap → 503;
   the tenant holding its share of the cap, or over its rate → 429; all with
   Retry-After, at once, before the body is read (the connection's next
   request is then read no sooner than Retry-After says).
7. a body over 1 MiB → 413, decided on Content-Length before reading any of
   it, or by counting a chunked body and stopping at the limit.
   A JSON array (a batch) → 400; arrays or objects nested deeper than
   json_limits.MAX_DEPTH → 400 (our own parses and the SDK's then never
   meet a body deep enough to exhaust the stack); a request whose id is null,
   true, 1.5, an object or an array → 400 `-32600` with id null (the SDK would
   answer 202 and never the request).
8. with OAuth, a tool call the token's scopes do not cover → 403
   insufficient_scope naming the scope.
9. the SDK's stateless Streamable HTTP handler: any replica answers any
   request, and both protocol eras share the endpoint.

Our answers are hand-written JSON with `content-type: application/json`. The
SDK's own DNS-rebinding Host check is off: step 3 already refuses every
browser, and a Host allowlist would refuse pods reached by IP or service name.

The tenant and conversation are read from the request's headers only when a
tool runs (`caller_from_request`), through headers.caller_from_headers.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from mcp_memory.config import CallLimits, OAuthSettings
from mcp_memory.core.errors import ContextError
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.core.wrong_keys import WrongKeys
from mcp_memory.server.bounded_json import MAX_DEPTH, ODD_ID_REASON, request_without_an_answerable_id, too_deep
from mcp_memory.server.http.auth import WWW_AUTHENTICATE, bearer_matches
from mcp_memory.server.http.backpressure import HOLD_KEY, TenantBuckets, retry_after
from mcp_memory.server.http.headers import (
    CONVERSATION_HEADER,
    STAMPED_TENANT_HEADER,
    TENANT_HEADER,
    caller_from_headers,
    tenant_required_message,
)
from mcp_memory.server.http.metrics import Metrics, MetricsLog
from mcp_memory.server.http.oauth import FULL_GRANT, GRANT_KEY, WELL_KNOWN, Grant, TokenRefused
from mcp_memory.server.protocol.tools import ToolLayer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
UI_PATH = "/ui"
#: Request bodies above this are refused with 413 (docs/http.md).
MAX_BODY_BYTES = 1024 * 1024

HEALTH_BODY = {"status": "ok"}
NOT_FOUND_BODY = {"error": "not found"}
ORIGIN_BODY = {"jsonrpc": "2.0", "id": None, "error": {"code": -32002, "message": "browser origins are not allowed"}}
AUTH_BODY = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "missing or invalid bearer token"}}
METHOD_BODY = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "method not allowed: use POST"}}
TOO_LARGE_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": f"request body is larger than {MAX_BODY_BYTES} bytes"},
}
WRONG_KEYS_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32001, "message": "too many wrong keys from this address: try again later"},
}
SCOPE_BODY = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "insufficient scope"}}
RATE_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32000, "message": "rate limit: too many requests for this tenant"},
}
SHARE_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32000, "message": "rate limit: too many calls at once for this tenant"},
}
BUSY_BODY = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "server busy: try again shortly"}}
FAILED_BODY = {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "internal error"}}
#: A JSON array of messages: MCP has no batches since 2025-06-18, and the SDK's refusal of one
#: quotes the start and the end of it (memory content, a query) back in its error text.
BATCH_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "batch requests are not supported: send one JSON-RPC message per request"},
}
DEEP_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": f"the request nests arrays or objects deeper than {MAX_DEPTH} levels"},
}

#: A request whose id is null, true, 1.5, an object or an array: the SDK takes it for a
#: notification and answers 202 with no body, so the client waits for an answer that never comes.
ODD_ID_BODY = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": f"Invalid request: {ODD_ID_REASON}"}}


def caller_from_request(ctx: Any) -> Caller:
    """The caller of a tool call, from the HTTP request the SDK hands over.

    In both eras `ctx.request` is the Starlette request; `getlist` keeps a
    header sent twice as two values, so it is refused as sent more than once
    instead of being joined into one value.
    """
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is None:  # not an HTTP request: there is nowhere a tenant could come from
        raise ContextError(tenant_required_message(TENANT_HEADER))
    grant = getattr(request, "scope", {}).get(GRANT_KEY)
    if isinstance(grant, Grant) and grant.tenants is not None:  # MCP_TENANT_CLAIM: the token's tenants only
        return grant.caller(
            headers.getlist(TENANT_HEADER), headers.getlist(STAMPED_TENANT_HEADER), headers.getlist(CONVERSATION_HEADER)
        )
    return caller_from_headers(
        headers.getlist(TENANT_HEADER),
        headers.getlist(STAMPED_TENANT_HEADER),
        headers.getlist(CONVERSATION_HEADER),
    )


def caller_from_headers_of(request: Any) -> Caller:
    """The caller of a web view request (a Starlette request), read as a tool call's is."""
    headers = request.headers
    return caller_from_headers(
        headers.getlist(TENANT_HEADER),
        headers.getlist(STAMPED_TENANT_HEADER),
        headers.getlist(CONVERSATION_HEADER),
    )


def tenant_in_headers(request: Any) -> bool:
    """Whether a web view request's headers name a tenant (a gateway's): then they, not a
    person's choice, decide it (docs/web.md#choosing-the-tenant)."""
    headers = request.headers
    return any(v.strip() for v in (*headers.getlist(TENANT_HEADER), *headers.getlist(STAMPED_TENANT_HEADER)))


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value
    return None


def _has_header(scope: Scope, name: bytes) -> bool:
    return any(key == name for key, _ in scope.get("headers", ()))


def _json_bytes(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


async def send_json(send: Send, status: int, body: Any, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """One complete hand-written JSON answer."""
    payload = _json_bytes(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode("ascii")),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class HttpApp:
    """The ASGI application. One per process; it holds no per-client state.

    `in_flight` counts MCP requests being answered, so shutdown (and a test)
    can see that calls started before a stop were allowed to finish.
    """

    def __init__(
        self,
        tools: ToolLayer,
        log: JsonLog,
        *,
        api_key: str | None = None,
        max_body: int = MAX_BODY_BYTES,
        oauth: OAuthSettings | None = None,
        verifier: Any = None,
        call_limits: CallLimits | None = None,
        metrics: Metrics | None = None,
        mcp_server: Any = None,
        ui: Any = None,
        wrong_keys: WrongKeys | None = None,
    ) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        self.log = log
        #: The web view (mcp_memory/web/), served at /ui with UI_ENABLED=1; None: /ui is 404.
        self.ui = ui
        self.api_key = api_key or None
        #: Wrong keys per source address, shared with the web view's login (run_http hands both one).
        self.wrong_keys = wrong_keys or WrongKeys()
        self.max_body = max_body
        self.in_flight = 0
        self.oauth = oauth
        self.verifier = verifier
        self.metadata: Any = None
        if oauth is not None:
            from mcp_memory.server.http.oauth import JwtVerifier, metadata_router

            if verifier is None:
                verifier = JwtVerifier(oauth, log)
                if oauth.introspection_url is not None:  # opaque tokens too (RFC 7662)
                    from mcp_memory.server.http.introspection import IntrospectionVerifier, TokenVerifiers

                    verifier = TokenVerifiers(verifier, IntrospectionVerifier(oauth, log))
            self.verifier = verifier
            self.metadata = metadata_router(oauth)
        self.limits = call_limits or CallLimits()
        self.buckets = TenantBuckets(self.limits)
        #: MCP requests being answered, per tenant (only tenants with one or more).
        self.tenant_in_flight: dict[str, int] = {}
        self._refusals = {body_id: _json_bytes(body) for body_id, body in (("rate", RATE_BODY), ("share", SHARE_BODY))}
        self.metrics = metrics
        if metrics is not None:
            tools.log = MetricsLog(tools.log, metrics)  # the store's and embedder's timers: app.open_service
        self.manager = StreamableHTTPSessionManager(
            app=mcp_server if mcp_server is not None else _default_server(tools),
            stateless=True,
            json_response=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=max_body,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        # nothing else is served (websockets are switched off in the server)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Run the SDK's request task group for as long as the server runs."""
        await receive()  # lifespan.startup
        started = False
        try:
            async with self.manager.run():
                await send({"type": "lifespan.startup.complete"})
                started = True
                await receive()  # lifespan.shutdown
        except Exception as exc:
            self.log.error("mcp_handler_failed", exc)
            phase = "shutdown" if started else "startup"
            await send({"type": f"lifespan.{phase}.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path == HEALTH_PATH:
            await send_json(send, 200, HEALTH_BODY)
            return
        if self.metadata is not None and (path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/")):
            await self.metadata(scope, receive, send)  # the SDK's RFC 9728 route (404 for another resource)
            return
        if self.ui is not None and (path == UI_PATH or path.startswith(UI_PATH + "/")):
            await self.ui(scope, receive, send)  # its own login, session, CSRF and headers (docs/web.md)
            return
        if path != MCP_PATH:
            await send_json(send, 404, NOT_FOUND_BODY)
            return
        if _has_header(scope, b"origin"):
            self._reject("origin")
            await send_json(send, 403, ORIGIN_BODY)
            return
        grant = await self._authenticate(scope, send)
        if grant is None:
            return
        if scope["method"] != "POST":
            await send_json(send, 405, METHOD_BODY, [(b"allow", b"POST")])
            return
        admitted, tenant = await self._admit(scope, grant, send)
        if not admitted:
            return
        limited = await self._limited(scope, receive, send)
        if limited is None:
            return
        receive, body = limited
        if body.lstrip()[:1] == b"[":
            await send_json(send, 400, BATCH_BODY)
            return
        if too_deep(body):
            await send_json(send, 400, DEEP_BODY)
            return
        if _odd_id(body):
            await send_json(send, 400, ODD_ID_BODY)
            return
        if self.oauth is not None and grant.scopes is not None:
            from mcp_memory.server.http.oauth import challenge, required_scopes

            missing = grant.missing(required_scopes(body, self.oauth))
            if missing:
                self._reject("scope")
                value = challenge(
                    self.oauth, "insufficient_scope", f"this call needs the scope {' '.join(missing)}", missing
                )
                await send_json(send, 403, SCOPE_BODY, [(b"www-authenticate", value.encode("ascii"))])
                return
        scope[GRANT_KEY] = grant
        await self._mcp(scope, receive, send, tenant)

    def _reject(self, reason: str) -> None:
        if self.metrics is not None:
            self.metrics.reject(reason)

    async def _authenticate(self, scope: Scope, send: Send) -> Grant | None:
        """What the request may do, or None once 401 has been sent.

        The static key alone answers as it always has. With OAuth, the key (when
        also set) still lets its holder in with every scope; any other bearer is
        checked as a JWT access token.
        """
        authorization = _header(scope, b"authorization")
        peer = scope.get("client")
        source = peer[0] if peer else None
        if self.api_key:
            wait_ms = self.wrong_keys.wait_ms(source)
            if wait_ms:
                self._reject("auth")
                await send_json(send, 429, WRONG_KEYS_BODY, [(b"retry-after", retry_after(wait_ms / 1000))])
                return None
        if self.oauth is None:
            if self.api_key and not bearer_matches(authorization, self.api_key):
                if authorization is not None:  # a key that is wrong, not a client configured without one
                    self.wrong_keys.wrong(source)
                self._reject("auth")
                await send_json(send, 401, AUTH_BODY, [(b"www-authenticate", WWW_AUTHENTICATE.encode("ascii"))])
                return None
            return FULL_GRANT
        from mcp_memory.server.http.oauth import challenge

        if self.api_key and bearer_matches(authorization, self.api_key):
            return FULL_GRANT
        scheme, _, token = (authorization or b"").decode("latin-1").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            self._reject("auth")
            value = challenge(self.oauth, scope=self.oauth.scopes)
            await send_json(send, 401, AUTH_BODY, [(b"www-authenticate", value.encode("ascii"))])
            return None
        try:
            return await self.verifier.grant(token, client=source)
        except TokenRefused as exc:
            if self.api_key and self.oauth.introspection_url is None and token.count(".") != 2:
                self.wrong_keys.wrong(source)  # no token shape this server accepts: a guess at the key
            self._reject("auth")
            value = challenge(self.oauth, "invalid_token", str(exc))
            await send_json(send, 401, AUTH_BODY, [(b"www-authenticate", value.encode("ascii"))])
            return None

    async def _admit(self, scope: Scope, grant: Grant, send: Send) -> tuple[bool, str | None]:
        """Whether the request may go on, and its tenant when it can be told now.

        False once 503 (this process is full) or 429 (the tenant holds its share of
        the cap, or is over its rate) has been sent. A 429 leaves its wait in the
        scope, so the protocol holds the connection's next request until then.
        """
        from starlette.datastructures import Headers

        if self.in_flight >= self.limits.max_concurrent:
            self._reject("busy")
            await send_json(send, 503, BUSY_BODY, [(b"retry-after", b"1")])
            return False, None
        tenant = grant.transport_tenant(Headers(scope=scope))
        if tenant is None:
            return True, None
        if self.tenant_in_flight.get(tenant, 0) >= self.limits.tenant_share:
            await self._too_many(scope, send, "share", 1.0)
            return False, None
        wait = self.buckets.take(tenant)
        if wait > 0:
            await self._too_many(scope, send, "rate", wait)
            return False, None
        return True, tenant

    async def _too_many(self, scope: Scope, send: Send, which: str, wait: float) -> None:
        self._reject("rate")
        scope[HOLD_KEY] = wait
        payload = self._refusals[which]
        await send(
            {
                "type": "http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode("ascii")),
                    (b"retry-after", retry_after(wait)),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> tuple[Receive, bytes] | None:
        """`receive` replaying the whole body, and the body, within the limit; None once 413 has
        been sent, or when the client went away before its body was complete.

        A declared Content-Length over the limit is refused before reading any
        of it (the HTTP parser never delivers more than it declares). A chunked
        body is refused the moment it passes the limit. The body is read here,
        in full, before the SDK sees the request: a client that drops its body
        halfway is an info line (`request_body_incomplete`), not an error the
        SDK would log (the HTTP server's body timeout cuts a slow one).
        """
        declared = _header(scope, b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                size = None
            if size is not None and size > self.max_body:
                await self._too_large(send)
                return None
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # http.disconnect
                self.log.info("request_body_incomplete", method=scope.get("method"))
                return None
            body = message.get("body", b"")
            total += len(body)
            if total > self.max_body:
                await self._too_large(send)
                return None
            chunks.append(body)
            if not message.get("more_body", False):
                whole = b"".join(chunks)
                return _replay([{"type": "http.request", "body": whole, "more_body": False}], receive), whole

    async def _too_large(self, send: Send) -> None:
        self._reject("size")
        # No `connection: close`: closing with the body still arriving resets the
        # connection before the client reads this answer. The HTTP server
        # discards the rest of the body as it comes (nothing is kept), then the
        # connection is free for the next request.
        await send_json(send, 413, TOO_LARGE_BODY)

    async def _mcp(self, scope: Scope, receive: Receive, send: Send, tenant: str | None) -> None:
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        self.in_flight += 1
        if tenant is not None:
            self.tenant_in_flight[tenant] = self.tenant_in_flight.get(tenant, 0) + 1
        if self.metrics is not None:
            self.metrics.in_flight.inc()
        try:
            await self.manager.handle_request(scope, receive, tracked)
        except Exception as exc:  # the SDK answers protocol errors itself; this is a bug or an outage
            self.log.error("mcp_handler_failed", exc)
            if not started:
                await send_json(send, 500, FAILED_BODY)
        finally:
            self.in_flight -= 1
            if tenant is not None:
                left = self.tenant_in_flight[tenant] - 1
                if left:
                    self.tenant_in_flight[tenant] = left
                else:
                    del self.tenant_in_flight[tenant]
            if self.metrics is not None:
                self.metrics.in_flight.dec()


def _odd_id(body: bytes) -> bool:
    """Whether the body is one request whose id the SDK would read as none (ODD_ID_BODY).
    Its depth is checked already; a body that does not parse is left to the SDK's own error."""
    if body.lstrip()[:1] != b"{":
        return False
    try:
        return request_without_an_answerable_id(json.loads(body))
    except ValueError:
        return False


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def _default_server(tools: ToolLayer) -> Any:
    """The MCP server an app gets when it is not handed one (tests and embedders of the app)."""
    from mcp_memory.server.protocol.server import build_mcp_server

    return build_mcp_server(tools, caller_from_request)
