"""What every page shares: its session, its form, its CSRF and origin checks, its errors and its
log line (docs/web.md#security).

A page is a plain `async def page(ctx: Ctx) -> Response` in `pages/`; `guarded` makes it a
Starlette endpoint that answers only a valid session, refuses a change without its CSRF token or
from another origin, words the service's errors as the form's labels name the fields, and logs
every change as a tool call is (`ui_call`: the action, the tenant, the time, never content).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from mcp_memory.core import arguments
from mcp_memory.core.errors import ContextError, InvalidArgument, MemoryServerError
from mcp_memory.core.model import Caller
from mcp_memory.web.access import COOKIE
from mcp_memory.web.view import NoTenantChosen, View, view_of

#: A form larger than this is refused (a memory is at most 32,000 bytes; URL-encoding triples it).
FORM_MAX_BYTES = 256 * 1024
#: How the view names a field in its errors: the form's label.
LABELS = {
    "type": "Type",
    "tags": "Tags",
    "tag": "Tag",
    "scope": "Scope",
    "since": "From",
    "until": "To",
    "limit": "Page size",
    "cursor": "Page",
    "content": "Content",
    "category": "Category",
    "query": "Search",
    "mode": "Mode",
    "replaces": "Replaces",
}
TERMS = arguments.Terms(
    name=lambda f: f"“{LABELS.get(f, f)}”",
    no_conversation="A conversation note needs a conversation; this view is not in one.",
)


@dataclass
class Ctx:
    """One request to a page: its view, its caller, its session and its form."""

    view: View
    request: Request
    caller: Caller
    session: str
    form: dict[str, list[str]]

    def one(self, name: str, default: str = "") -> str:
        values = self.form.get(name) or self.request.query_params.getlist(name)
        return values[0] if values else default

    def many(self, name: str) -> list[str]:
        values = self.form.get(name) or self.request.query_params.getlist(name)
        return [v.strip() for value in values for v in value.split(",") if v.strip()]

    @property
    def base(self) -> str:
        return self.view.base

    def page(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        return self.view.render(template, status, session=self.session, caller=self.caller, **values)

    def message(self, status: int, title: str, text: str, **values: Any) -> HTMLResponse:
        return self.page("message.html", status, title=title, message=text, **values)


Page = Callable[[Ctx], Awaitable[Response]]


class Refused(Exception):
    """A request the view will not serve, with the page that says why."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


async def read_form(request: Request) -> dict[str, list[str]]:
    """A POST's form, at most FORM_MAX_BYTES; a GET has none."""
    if request.method != "POST":
        return {}
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_MAX_BYTES:
            raise Refused(413, "Too large", f"This form is larger than {FORM_MAX_BYTES} bytes; nothing was changed.")
    try:
        return parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=100)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "Unreadable form", "This form could not be read; nothing was changed.") from None


def same_origin(request: Request) -> bool:
    """A browser names the page a form came from; it must be this server (a client without an
    Origin still needs the CSRF token)."""
    origin = request.headers.get("origin")
    return origin is None or origin == f"{request.url.scheme}://{request.url.netloc}"


def guarded(
    action: str | None = None, *, before_tenant: bool = False
) -> Callable[[Page], Callable[[Request], Awaitable[Response]]]:
    """Make `page` an endpoint behind the session; `action` names it in the `ui_call` log line
    (every POST, and the export). `before_tenant`: the page serves a session that has not
    chosen its tenant yet (the Tenants page); every other page sends it there."""

    def endpoint_of(page: Page) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return await serve(request, page, action, before_tenant)

        endpoint.__name__ = endpoint.__qualname__ = page.__name__
        endpoint.__doc__ = page.__doc__
        return endpoint

    return endpoint_of


async def serve(request: Request, page: Page, action: str | None, before_tenant: bool = False) -> Response:
    """Answer `request` with `page` when its session is valid (and, for a POST, its CSRF token
    and origin), or with the page that says why not."""
    view = view_of(request)
    session = request.cookies.get(COOKIE)
    if not view.access.valid(session):
        if request.method == "GET":
            return RedirectResponse(f"{view.base}/login", 303)
        return view.message(403, "Not logged in", "Log in first; nothing was changed.")
    assert session is not None
    started = time.perf_counter()
    caller: Caller | None = None
    ok = False
    try:
        try:
            caller = view.caller_of(request)
        except NoTenantChosen:
            if not before_tenant:
                if request.method == "GET":
                    return RedirectResponse(f"{view.base}/tenants", 303)
                raise
            caller = Caller("")  # none yet: the Tenants page is where one is chosen
        form = await read_form(request)
        ctx = Ctx(view, request, caller, session, form)
        if request.method == "POST" and (
            not same_origin(request) or not view.access.csrf_matches(session, (form.get("csrf") or [""])[0])
        ):
            raise Refused(
                403,
                "Refused",
                "This form did not come from this page, or it has expired: reload the page "
                "and try again. Nothing was changed.",
            )
        response = await page(ctx)
        ok = response.status_code < 400
        return response
    except Refused as refused:
        return view.message(refused.status, refused.title, refused.message)
    except ContextError as exc:
        return view.message(400, "No tenant", str(exc))
    except InvalidArgument as exc:
        text = exc.worded(TERMS.name) + " Nothing was changed."
        if caller is None:
            return view.message(400, "Not accepted", text)
        return Ctx(view, request, caller, session, {}).message(400, "Not accepted", text)
    except MemoryServerError as exc:
        view.log.error("ui_failed", exc, tenant=caller.tenant if caller else None, tool=action)
        return view.message(503, "The store failed", "The memory store could not complete this request.")
    finally:
        if action is not None and (request.method == "POST" or action == "ui.export"):
            view.log.info(
                "ui_call",
                tenant=caller.tenant if caller else None,
                tool=action,
                ms=round((time.perf_counter() - started) * 1000),
                ok=ok,
                inConversation=bool(caller and caller.conversation),
            )
