"""The web view's application: its routes, one page module per route family, and the security
headers on every answer (docs/web.md).

Browse, Search, a Memory, Curate (edit, forget, forget many, export) and Stats, for the tenant
`caller_of` names: the local command's, or the one serve-http's headers name, never a form
field. Every page answers only a valid session; every change also needs its CSRF token and a
same-origin request, and is logged as a tool call is (endpoint.py). Every answer carries a
Content-Security-Policy allowing nothing but this server's stylesheet: the pages have no script.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from mcp_memory.core.model import Caller
from mcp_memory.web.access import Access
from mcp_memory.web.pages import browse, export, forget_many, login, memory, search, stats, tenants
from mcp_memory.web.pages.tenants import chosen_tenant
from mcp_memory.web.view import View, view_of

__all__ = ["CSP", "View", "build_ui", "chosen_tenant", "local_caller"]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


def build_ui(view: View) -> Any:
    """The Starlette app of the view, with its security headers on every answer."""
    base = view.base
    routes = [
        Route(f"{base}/login", login.login, methods=["GET", "POST"]),
        Route(f"{base}/logout", login.logout, methods=["POST"]),
        Route(f"{base}/ui.css", stylesheet),
        Route("/favicon.ico", no_icon),  # asked for at the root whatever the base
        Route(f"{base}/", browse.browse),
        Route(f"{base}/search", search.search),
        Route(f"{base}/m/{{memory_id}}", memory.memory),
        Route(f"{base}/m/{{memory_id}}/edit", memory.edit, methods=["POST"]),
        Route(f"{base}/m/{{memory_id}}/forget", memory.forget_confirm),
        Route(f"{base}/m/{{memory_id}}/forget", memory.forget, methods=["POST"]),
        Route(f"{base}/forget", forget_many.preview),
        Route(f"{base}/forget", forget_many.forget_many, methods=["POST"]),
        Route(f"{base}/export", export.export),
        Route(f"{base}/stats", stats.stats),
        Route(f"{base}/tenants", tenants.tenants, methods=["GET", "POST"]),
    ]
    if base:
        routes += [Route(base, to_base), Route(f"{base}/favicon.ico", no_icon)]
    app = Starlette(routes=routes)
    app.state.view = view
    return SecurityHeaders(app)


async def stylesheet(request: Request) -> Response:
    return Response(view_of(request).stylesheet, media_type="text/css", headers={"cache-control": "max-age=3600"})


async def no_icon(request: Request) -> Response:
    return Response(status_code=204)


async def to_base(request: Request) -> Response:
    return RedirectResponse(f"{view_of(request).base}/", 307)


def local_caller(access: Access, default: Caller, operator: bool) -> Callable[[Request], Caller]:
    """`mcp-memory ui`'s caller: its tenant, or in operator mode the tenant chosen on the Tenants page."""

    def caller_of(request: Request) -> Caller:
        if operator:
            chosen = chosen_tenant(access, request)
            if chosen:
                return Caller(chosen, default.conversation)
        return default

    return caller_of


class SecurityHeaders:
    """Adds the CSP and the other security headers to every answer of `app`."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in self.extra if h[0] not in present)]
            await send(message)

        await self.app(scope, receive, with_headers)
