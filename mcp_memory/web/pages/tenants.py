"""Tenants (docs/web.md#opening-it): `mcp-memory ui --all-tenants` only, where the operator picks
the tenant every page shows; a signed cookie carries the choice."""

from __future__ import annotations

from starlette.responses import RedirectResponse, Response

from mcp_memory.core.identity import parse_tenant
from mcp_memory.web.endpoint import Ctx, guarded

TENANT_COOKIE = "mcp_memory_ui_tenant"


@guarded("ui.tenant")
async def tenants(ctx: Ctx) -> Response:
    view = ctx.view
    if not view.operator:
        return ctx.message(404, "Not found", "There is no such page.")
    if ctx.request.method == "POST":
        chosen = parse_tenant(ctx.one("tenant"), "tenant")
        response = RedirectResponse(f"{ctx.base}/", 303)
        response.set_cookie(
            TENANT_COOKIE, view.access.signed("tenant", chosen), httponly=True, samesite="strict", path=ctx.base or "/"
        )
        return response
    listed = await view.service.tenants()
    return ctx.page("tenants.html", title="Tenants", listed=listed)
