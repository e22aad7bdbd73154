"""Logging in and out (docs/web.md#opening-it): serve-http's key form, or `mcp-memory ui`'s
one-time link, each exchanged for a session cookie."""

from __future__ import annotations

import math

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from mcp_memory.web.access import COOKIE
from mcp_memory.web.endpoint import Ctx, Refused, guarded, read_form, same_origin
from mcp_memory.web.view import View, view_of


async def login(request: Request) -> Response:
    """The key form (serve-http) or the one-time link (`mcp-memory ui`)."""
    view = view_of(request)
    if view.key_login:
        return await _key_login(view, request)
    token = request.query_params.get("token")
    if token is None and view.access.valid(request.cookies.get(COOKIE)):
        return RedirectResponse(f"{view.base}/", 303)
    if token is None or not view.access.redeem(token):
        view.log.info("ui_login", ok=False)
        return view.message(
            403,
            "Refused",
            "This view opens only from the link `mcp-memory ui` printed, and that link works once. "
            "Run `mcp-memory ui` again for a new one.",
        )
    view.log.info("ui_login", ok=True)
    # A page that moves on by itself rather than a redirect: a browser started on the launcher
    # file (cli/ui.py) arrives from another site, and a SameSite=Strict cookie is not sent on a
    # redirect of that navigation; the page's own refresh is a navigation of this site.
    page = view.message(200, "Logged in", "Logged in: opening Browse.", back=True, refresh=f"{view.base}/")
    return _with_session(view, request, page)


async def _key_login(view: View, request: Request) -> Response:
    if request.method == "GET":
        return view.render("login.html", title="Log in")
    try:
        form = await read_form(request)
    except Refused as refused:
        return view.message(refused.status, refused.title, refused.message)
    if not same_origin(request):
        return view.message(403, "Refused", "This login did not come from this page.")
    key = (form.get("key") or [""])[0]
    source = request.client.host if request.client else None
    wait_ms = view.access.wrong_keys.wait_ms(source)
    if wait_ms:
        view.log.info("ui_login", ok=False)
        seconds = math.ceil(wait_ms / 1000)
        too_many = view.message(
            429, "Too many tries", f"Too many wrong keys from this address: try again in {seconds} s."
        )
        too_many.headers["retry-after"] = str(seconds)
        return too_many
    if not view.access.key_matches(key):
        view.access.wrong_keys.wrong(source)
        view.log.info("ui_login", ok=False)
        return view.render("login.html", 401, title="Log in", wrong=True)
    view.log.info("ui_login", ok=True)
    return _with_session(view, request, RedirectResponse(f"{view.base}/", 303))


def _with_session(view: View, request: Request, response: Response) -> Response:
    secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(
        COOKIE,
        view.access.new_session(),
        httponly=True,
        samesite="strict",
        secure=secure,
        path=view.base or "/",
    )
    return response


@guarded("ui.logout")
async def logout(ctx: Ctx) -> Response:
    ctx.view.access.end(ctx.session)
    response = RedirectResponse(f"{ctx.base}/login", 303)
    response.delete_cookie(COOKIE, path=ctx.base or "/")
    return response
