"""Tenants (docs/web.md#choosing-the-tenant): where a person picks the tenant every page shows,
when the login allows more than one: `mcp-memory ui --all-tenants` (the operator), and
serve-http's static key (which may use every tenant at /mcp too) when no gateway header names
the tenant. Only a tenant the store lists can be picked, never a typed name; the choice is a
cookie signed together with the session, so it ends with the session.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from mcp_memory.web.access import COOKIE, Access
from mcp_memory.web.endpoint import Ctx, Refused, guarded
from mcp_memory.web.view import TENANT_COOKIE


def chosen_tenant(access: Access, request: Request) -> str | None:
    """The tenant this session chose on the Tenants page, or None."""
    session = request.cookies.get(COOKIE) or ""
    return access.unsigned(f"tenant {session}", request.cookies.get(TENANT_COOKIE))


@guarded("ui.tenant", before_tenant=True)
async def tenants(ctx: Ctx) -> Response:
    view = ctx.view
    if not view.chooses_tenant:
        return ctx.message(404, "Not found", "There is no such page.")
    if view.tenant_fixed(ctx.request):  # a gateway's header binds this view to one tenant
        if ctx.request.method == "POST":
            raise Refused(403, "Refused", "This view's tenant comes from your request's header; nothing was changed.")
        return ctx.page("tenants.html", title="Tenants", listed=None)
    listed = await view.service.tenants()
    if ctx.request.method == "POST":
        wanted = ctx.one("tenant")
        if wanted not in {t.tenant for t in listed.tenants}:
            raise Refused(
                400, "Not accepted", "Choose one of the tenants listed on the Tenants page; nothing was changed."
            )
        response = RedirectResponse(f"{ctx.base}/", 303)
        response.set_cookie(
            TENANT_COOKIE,
            view.access.signed(f"tenant {ctx.session}", wanted),
            httponly=True,
            samesite="strict",
            secure=ctx.request.url.scheme == "https" or ctx.request.headers.get("x-forwarded-proto") == "https",
            path=ctx.base or "/",
        )
        return response
    return ctx.page("tenants.html", title="Tenants", listed=listed)
